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

# --- --fuse end to end (labels e2e, fuse) ------------------------------------------------------
# tests/e2e/check_fuse.py: convert with --fuse --verify-each, no foldable BatchNorm left, the
# report lists the fuse passes with their counts, outputs within 1e-3 and a strict state_dict load
# of NAME.pth (scripts/check_model.py). Models come from the fixtures of tests/tests.cmake.
if(DEFINED TT_TESTMODELS_DIR)
  set(TT_FUSE_MODELS
      "resnet18:torchvision" "resnet50:torchvision" "mobilenet_v2:torchvision"
      "mobilenet_v3_large:torchvision" "efficientnet_b0:torchvision" "googlenet:torchvision"
      "densenet121:torchvision" "shufflenet_v2_x1_0:torchvision" "nested_seq_bn:small")
  foreach(entry IN LISTS TT_FUSE_MODELS)
    string(REPLACE ":" ";" parts ${entry})
    list(GET parts 0 name)
    list(GET parts 1 group)
    add_test(NAME fuse_${name}
             COMMAND ${TT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/check_fuse.py
                     $<TARGET_FILE:tinytrace> ${TT_TESTMODELS_DIR}/${name}.pt
                     ${CMAKE_BINARY_DIR}/fuse_out/${name})
    set_tests_properties(fuse_${name} PROPERTIES LABELS "e2e;fuse" TIMEOUT 900
                         FIXTURES_REQUIRED tt_models_${group})
  endforeach()
endif()

# --- the first three --quant-prep passes end to end (labels e2e, quant) ---------------------------
# tests/e2e/check_quant_passes.py: convert with --passes functional-to-module,unshare-modules,
# float-functional --verify-each --verify; no module path called twice, no functional activation
# left, the report's module_copies, expected FloatFunctional counts, scripts/check_model.py.
if(DEFINED TT_TESTMODELS_DIR)
  set(TT_QUANT_PASS_MODELS
      "quant_prep_misc:small:FloatFunctional.add_relu=1:FloatFunctional.mul_scalar=3:copies=1"
      "shared_relu:small:copies=3" "two_inputs_add:small:FloatFunctional.add=2"
      "functional_acts:small:FloatFunctional.cat=1"
      "resnet18:torchvision:FloatFunctional.add_relu=8" "mobilenet_v2:torchvision:FloatFunctional.add=10")
  foreach(entry IN LISTS TT_QUANT_PASS_MODELS)
    string(REPLACE ":" ";" parts ${entry})
    list(GET parts 0 name)
    list(GET parts 1 group)
    list(SUBLIST parts 2 -1 expects)
    add_test(NAME quant_passes_${name}
             COMMAND ${TT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/check_quant_passes.py
                     $<TARGET_FILE:tinytrace> ${TT_TESTMODELS_DIR}/${name}.pt
                     ${CMAKE_BINARY_DIR}/quant_passes_out/${name} ${expects})
    set_tests_properties(quant_passes_${name} PROPERTIES LABELS "e2e;quant" TIMEOUT 900
                         FIXTURES_REQUIRED tt_models_${group})
  endforeach()
endif()
