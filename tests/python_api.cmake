# The Python package over the CLI (tools/python/tinytrace, issue 18) and the installation, included
# from the top-level CMakeLists.txt. Labels:
#   python_api  tests/python/check_api.py, one test per case (live alexnet, the three model-
#               preparer examples through PTQ, a QAT loop, scripted models, errors, the tools),
#               and the docstring examples of the package (tests/python/run_doctests.py)
#   install     tests/python/check_install.py: cmake --install into a temporary prefix, cpack -G
#               DEB inspected with dpkg-deb and extracted into a throwaway root, bash completion
# The package under test is the checkout's (tools/python); TINYTRACE_BIN points it at this build.

set(TT_PYAPI_CHECK ${CMAKE_SOURCE_DIR}/tests/python/check_api.py)
set(TT_PYAPI_ENV "TINYTRACE_BIN=$<TARGET_FILE:tinytrace>"
                 "PYTHONPATH=${CMAKE_SOURCE_DIR}/tools/python")
tt_script_list(tt_pyapi_cases ${TT_PYAPI_CHECK})
foreach(case IN LISTS tt_pyapi_cases)
  add_test(NAME python_api_${case}
           COMMAND ${TT_PYTHON} ${TT_PYAPI_CHECK} ${case} ${CMAKE_BINARY_DIR}/python_api_work)
  set_tests_properties(python_api_${case} PROPERTIES LABELS python_api TIMEOUT 900
                       ENVIRONMENT "${TT_PYAPI_ENV}")
endforeach()
if(TEST python_api_alexnet)
  set_tests_properties(python_api_alexnet PROPERTIES COST 200)  # 61M parameters: start it early
endif()
add_test(NAME python_api_doctests
         COMMAND ${TT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/python/run_doctests.py
                 ${CMAKE_BINARY_DIR}/python_api_work/doctests)
set_tests_properties(python_api_doctests PROPERTIES LABELS python_api TIMEOUT 900
                     ENVIRONMENT "${TT_PYAPI_ENV}")

foreach(case IN ITEMS install deb completion)
  add_test(NAME install_${case}
           COMMAND ${TT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/python/check_install.py
                   ${CMAKE_BINARY_DIR} ${CMAKE_BINARY_DIR}/install_work/${case} ${case})
  set_tests_properties(install_${case} PROPERTIES LABELS "python_api;install" TIMEOUT 900)
endforeach()

# The package's Python and its tests pass pyflakes (tests/tests.cmake lints scripts/ and tests/e2e).
file(GLOB TT_PYAPI_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tools/python/tinytrace/*.py
     ${CMAKE_SOURCE_DIR}/tests/python/*.py)
add_test(NAME lint_python_package COMMAND ${TT_PYTHON} -m pyflakes ${TT_PYAPI_SOURCES})
set_tests_properties(lint_python_package PROPERTIES LABELS lint TIMEOUT 120)
