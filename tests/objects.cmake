# Scripted models with TorchScript objects and attribute writes (issue 15: Note [Objects while
# lifting], Note [Module attributes written in forward]), included from the top-level
# CMakeLists.txt. scripts/gen_object_models.py scripts them at test time into
# ${CMAKE_BINARY_DIR}/testmodels_objects (reused while the generator is unchanged). Labels: setup
# (the fixture), e2e, control_flow and objects (each model through --verify --verify-inputs and the
# generated Python, tests/e2e/run_scripted.py), badinput (the refusals: exit 4 naming the op).

# (tests/control_flow.cmake, included before this file, defines TT_SC_* and tt_scripted_tests.)
set(TT_OB_GEN ${CMAKE_SOURCE_DIR}/scripts/gen_object_models.py)
set(TT_OB_DIR ${CMAKE_BINARY_DIR}/testmodels_objects)
tt_generator_test(gen_models_objects ${TT_OB_GEN} ${TT_OB_DIR} tt_models_objects
                  "setup;objects" 300)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${CMAKE_SOURCE_DIR}/scripts/gen_scripted_models.py)
tt_scripted_tests(${TT_OB_GEN} ${TT_OB_DIR} ${CMAKE_BINARY_DIR}/e2e_objects_out
                  tt_models_objects "control_flow;objects")
