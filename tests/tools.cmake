# The analysis commands of issue 8 (inspect, diff, profile, --emit dot / inspect --dot), included
# from the top-level CMakeLists.txt. Label: tools. One CTest test per case of
# tests/e2e/check_tools.py; every expected value is computed there with PyTorch.

set(TT_TOOLS_CHECK ${CMAKE_SOURCE_DIR}/tests/e2e/check_tools.py)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${TT_TOOLS_CHECK})
execute_process(COMMAND /usr/bin/python3 ${TT_TOOLS_CHECK} --list
                OUTPUT_VARIABLE tt_tools_cases RESULT_VARIABLE tt_tools_rc)
if(NOT tt_tools_rc EQUAL 0)
  message(FATAL_ERROR "tests/tools.cmake: '${TT_TOOLS_CHECK} --list' failed")
endif()
string(REPLACE "\n" ";" tt_tools_cases "${tt_tools_cases}")
foreach(case IN LISTS tt_tools_cases)
  if(case STREQUAL "")
    continue()
  endif()
  add_test(NAME tools_${case}
           COMMAND /usr/bin/python3 ${TT_TOOLS_CHECK} $<TARGET_FILE:tinytrace>
                   ${CMAKE_BINARY_DIR}/testmodels ${CMAKE_BINARY_DIR}/tools_work ${case})
  # Every case uses resnet18 (torchvision fixture); the small ones too.
  set_tests_properties(tools_${case} PROPERTIES LABELS tools TIMEOUT 900 SKIP_RETURN_CODE 77
                       FIXTURES_REQUIRED "tt_models_torchvision;tt_models_small")
endforeach()
