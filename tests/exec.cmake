# CTest registrations for running the IR (label `exec`): infer-shapes against PyTorch's forward
# hooks, and --emit torchscript archives loaded back in Python. Included from CMakeLists.txt after
# tests/tests.cmake (which defines TT_PYTHON, TT_TESTMODELS_DIR and the model fixtures).
# Run them with `ctest --test-dir build -L exec`.

if(NOT DEFINED TT_PYTHON)
  set(TT_PYTHON /usr/bin/python3)
endif()
if(NOT DEFINED TT_TESTMODELS_DIR)
  set(TT_TESTMODELS_DIR ${CMAKE_BINARY_DIR}/testmodels)
endif()
set(TT_EXEC_OUT ${CMAKE_BINARY_DIR}/exec_out)

add_test(NAME exec_shapes_resnet18
         COMMAND ${TT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/check_shapes.py
                 $<TARGET_FILE:tinytrace> ${TT_TESTMODELS_DIR} ${TT_EXEC_OUT}/shapes_resnet18 resnet18)
set_tests_properties(exec_shapes_resnet18 PROPERTIES LABELS exec TIMEOUT 600
                     FIXTURES_REQUIRED tt_models_torchvision)

# The same archives loaded with torch::jit::load in C++ (the doctest's "torchscript roundtrip"
# cases, left out of the plain `unit` run because they need the torchvision models).
add_test(NAME exec_torchscript_roundtrip_cpp COMMAND tinytrace_tests "-tc=*torchscript roundtrip*")
set_tests_properties(exec_torchscript_roundtrip_cpp PROPERTIES LABELS exec TIMEOUT 900
                     ENVIRONMENT "${TT_TEST_ENV}" FIXTURES_REQUIRED tt_models_torchvision)

# Small models through --emit torchscript: nn.MultiheadAttention (mha), ops with several results
# unpacked from one call (multi_output_ops), nn.Upsample / F.interpolate / padding with None and
# annotated arguments (upsample_shuffle_pad).
foreach(model mha multi_output_ops upsample_shuffle_pad)
  add_test(NAME exec_torchscript_${model}_plain
           COMMAND ${TT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/check_torchscript.py
                   $<TARGET_FILE:tinytrace> ${TT_TESTMODELS_DIR} ${TT_EXEC_OUT}/torchscript_${model}_plain ${model})
  set_tests_properties(exec_torchscript_${model}_plain PROPERTIES LABELS exec TIMEOUT 300
                       FIXTURES_REQUIRED tt_models_small)
endforeach()

foreach(model resnet18 mobilenet_v2)
  foreach(mode plain fuse)
    set(extra "")
    if(mode STREQUAL "fuse")
      set(extra --fuse)
    endif()
    add_test(NAME exec_torchscript_${model}_${mode}
             COMMAND ${TT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/check_torchscript.py
                     $<TARGET_FILE:tinytrace> ${TT_TESTMODELS_DIR}
                     ${TT_EXEC_OUT}/torchscript_${model}_${mode} ${model} ${extra})
    set_tests_properties(exec_torchscript_${model}_${mode} PROPERTIES LABELS exec TIMEOUT 600
                         FIXTURES_REQUIRED tt_models_torchvision)
  endforeach()
endforeach()

# --optimize-for-inference: NAME.pt frozen and optimized by LibTorch (BatchNorm folded into the
# convs), loaded in Python and compared with the original; one small CNN, a few seconds.
add_test(NAME exec_torchscript_mobilenet_v2_optimized
         COMMAND ${TT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/check_torchscript.py
                 $<TARGET_FILE:tinytrace> ${TT_TESTMODELS_DIR}
                 ${TT_EXEC_OUT}/torchscript_mobilenet_v2_optimized mobilenet_v2
                 --optimize-for-inference)
set_tests_properties(exec_torchscript_mobilenet_v2_optimized PROPERTIES LABELS "exec;e2e"
                     TIMEOUT 600 FIXTURES_REQUIRED tt_models_torchvision)

# --optimize-for-inference's prepacked convs on inputs other than the packing size (unbatched,
# channels-last, autograd, wrong dtypes refused): a scripted 3-conv model, a few seconds.
add_test(NAME exec_torchscript_optimized_inputs
         COMMAND ${TT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/check_prepacked_inputs.py
                 $<TARGET_FILE:tinytrace> ${TT_EXEC_OUT}/torchscript_optimized_inputs)
set_tests_properties(exec_torchscript_optimized_inputs PROPERTIES LABELS "exec;e2e" TIMEOUT 300)

# --verify's tolerance: the 1e-4 default, the 1e-3 default after BatchNorm folding and --tolerance,
# each against a perturbation whose relative difference lies between them.
add_test(NAME exec_verify_tolerance
         COMMAND ${TT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/check_tolerance.py
                 $<TARGET_FILE:tinytrace> ${TT_TESTMODELS_DIR}/badinput/valid.pt
                 ${TT_EXEC_OUT}/verify_tolerance --input-shape 1,3,32,32)
set_tests_properties(exec_verify_tolerance PROPERTIES LABELS exec TIMEOUT 300
                     FIXTURES_REQUIRED tt_models_small)
