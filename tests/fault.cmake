# Fault-injection tests (issue 19; README "Reliability"), included from the top-level
# CMakeLists.txt: tests/e2e/fault_injection.py converts the committed testdata/models/tiny_cnn.pt
# under one system fault per test (full disk, file size limit, read-only or removed output
# directory, out of memory, SIGINT/SIGTERM/SIGHUP while loading and while writing) and checks the
# exit code, the one error line, an empty output directory and an untouched input. The faults
# that need a precise moment come from the LD_PRELOAD shim tests/fault/fault_shim.cpp (Note [Fault
# shim]); the copy_* cases trace their small model in the test (torch). Label: fault.
add_library(tt_fault_shim MODULE ${CMAKE_SOURCE_DIR}/tests/fault/fault_shim.cpp)
target_link_libraries(tt_fault_shim PRIVATE ${CMAKE_DL_LIBS})

tt_script_list(tt_fault_cases ${CMAKE_SOURCE_DIR}/tests/e2e/fault_injection.py)
foreach(case IN LISTS tt_fault_cases)
  add_test(NAME fault_${case}
           COMMAND ${TT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/fault_injection.py
                   $<TARGET_FILE:tinytrace> $<TARGET_FILE:tt_fault_shim>
                   ${CMAKE_SOURCE_DIR}/testdata/models/tiny_cnn.pt ${CMAKE_BINARY_DIR}/fault_work
                   ${case})
  set_tests_properties(fault_${case} PROPERTIES LABELS fault SKIP_RETURN_CODE 77 TIMEOUT 300)
endforeach()
