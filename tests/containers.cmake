# Scripted models that change lists and dicts in place (issue 15, item 1: container mutation as
# effects), included from the top-level CMakeLists.txt. scripts/gen_container_models.py scripts
# them at test time into ${CMAKE_BINARY_DIR}/testmodels_containers (reused while the generator is
# unchanged), with input sets that together take every branch. Labels: setup (the fixture), e2e,
# control_flow and containers (each model plain and with --fuse through --verify --verify-inputs
# and the generated Python, tests/e2e/run_scripted.py).

# (tests/control_flow.cmake, included before this file, defines TT_SC_* and tt_scripted_tests.)
set(TT_CT_GEN ${CMAKE_SOURCE_DIR}/scripts/gen_container_models.py)
set(TT_CT_DIR ${CMAKE_BINARY_DIR}/testmodels_containers)
tt_generator_test(gen_models_containers ${TT_CT_GEN} ${TT_CT_DIR} tt_models_containers
                  "setup;containers" 100)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${CMAKE_SOURCE_DIR}/scripts/gen_scripted_models.py)
tt_scripted_tests(${TT_CT_GEN} ${TT_CT_DIR} ${CMAKE_BINARY_DIR}/e2e_containers_out
                  tt_models_containers "control_flow;containers")
