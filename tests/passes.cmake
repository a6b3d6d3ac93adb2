# .tir pass tests (label `passes`): one CTest test per file testdata/passes/<pass>/<case>.tir.
# Each runs every `// -----` case of the file through `tinytrace opt ... --verify-each` and checks
# the output with scripts/tir_check.py (CHECK / CHECK-NOT / CHECK-NEXT / CHECK-LABEL /
# EXPECT-ERROR lines; see that script). Run them with `ctest --test-dir build -L passes`, one
# with `-R passes/fold-batchnorm/`. Included from the top-level CMakeLists.txt.

if(NOT DEFINED TT_PYTHON)
  set(TT_PYTHON /usr/bin/python3)
endif()

file(GLOB_RECURSE TT_PASS_TEST_FILES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/testdata/passes/*.tir)
foreach(f IN LISTS TT_PASS_TEST_FILES)
  file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR}/testdata/passes ${f})
  string(REGEX REPLACE "\\.tir$" "" rel ${rel})
  add_test(NAME passes/${rel}
           COMMAND ${TT_PYTHON} ${CMAKE_SOURCE_DIR}/scripts/tir_check.py
                   --tinytrace $<TARGET_FILE:tinytrace> ${f})
  set_tests_properties(passes/${rel} PROPERTIES LABELS passes TIMEOUT 300)
endforeach()
