# Scripted models that use TorchScript's builtins (issue 15), included from the top-level
# CMakeLists.txt. scripts/gen_builtin_models.py scripts them at test time into
# ${CMAKE_BINARY_DIR}/testmodels_builtins (reused while the generator is unchanged), with input
# sets that together take every branch. Labels: setup (the fixture), e2e, control_flow and
# builtins (each model plain and with --fuse through --verify --verify-inputs and the generated
# Python, tests/e2e/run_scripted.py), badinput (a builtin whose result tinytrace cannot
# reproduce exactly: exit 4 naming the op and its source line).

# (tests/control_flow.cmake, included before this file, defines TT_SC_* and tt_scripted_tests.)
set(TT_BI_GEN ${CMAKE_SOURCE_DIR}/scripts/gen_builtin_models.py)
set(TT_BI_DIR ${CMAKE_BINARY_DIR}/testmodels_builtins)
tt_generator_test(gen_models_builtins ${TT_BI_GEN} ${TT_BI_DIR} tt_models_builtins "setup;builtins" 100)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${CMAKE_SOURCE_DIR}/scripts/gen_scripted_models.py)
tt_scripted_tests(${TT_BI_GEN} ${TT_BI_DIR} ${CMAKE_BINARY_DIR}/e2e_builtins_out tt_models_builtins
                  "control_flow;builtins")
