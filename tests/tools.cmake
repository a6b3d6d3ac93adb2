# The analysis commands of issue 8 (inspect, diff, profile, --emit dot / inspect --dot), included
# from the top-level CMakeLists.txt. Label: tools. One CTest test per case of
# tests/e2e/check_tools.py; every expected value is computed there with PyTorch.

set(TT_TOOLS_CHECK ${CMAKE_SOURCE_DIR}/tests/e2e/check_tools.py)
tt_script_list(tt_tools_cases ${TT_TOOLS_CHECK})
foreach(case IN LISTS tt_tools_cases)
  add_test(NAME tools_${case}
           COMMAND /usr/bin/python3 ${TT_TOOLS_CHECK} $<TARGET_FILE:tinytrace>
                   ${CMAKE_BINARY_DIR}/testmodels ${CMAKE_BINARY_DIR}/tools_work ${case})
  # Every case uses resnet18 (torchvision fixture); the small ones too.
  set_tests_properties(tools_${case} PROPERTIES LABELS tools TIMEOUT 900 SKIP_RETURN_CODE 77
                       FIXTURES_REQUIRED "tt_models_torchvision;tt_models_small")
endforeach()
