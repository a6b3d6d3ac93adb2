# --quant-prep end to end (labels e2e, quant): tests/e2e/check_quant.py converts one generated
# model with --quant-prep (and --qat), checks float parity <= 1e-3, the stub/fusion/unsharing
# structure, the report's rewrite log, and runs torch.ao.quantization prepare -> calibrate ->
# convert (prepare_qat -> one step -> convert with --qat) on the generated code, unedited.
# resnet18/50 are compared with torchvision's hand-written quantizable models (--yardstick);
# mobilenet_v2 keeps its 10 residual adds as FloatFunctional adds and its ReLU6 modules.
# Models come from the fixtures of tests/tests.cmake. Included from the top-level CMakeLists.txt.

if(NOT DEFINED TT_TESTMODELS_DIR)
  return()
endif()
set(TT_QUANT_MODELS
    "resnet18:torchvision:--yardstick=resnet18" "resnet50:torchvision:--yardstick=resnet50"
    "mobilenet_v2:torchvision:--residual-adds=10" "mobilenet_v3_large:torchvision:"
    "shufflenet_v2_x1_0:torchvision:" "googlenet:torchvision:" "squeezenet1_1:torchvision:"
    "efficientnet_b0:torchvision:" "functional_relu:small:" "shared_relu:small:"
    "two_inputs_add:small:" "sub_div_neg_stack:small:" "attention_fallback:small:--fallback=torch.matmul,F.softmax,torch.bmm"
    "nested_seq_bn:small:" "lstm:small:--fallback=nn.LSTM" "gru:small:--fallback=nn.GRU"
    "embedding:small:--fallback=nn.Embedding" "mha:small:--fallback=nn.MultiheadAttention"
    "quant_outputs:small:" "dict_out:small:")
foreach(entry IN LISTS TT_QUANT_MODELS)
  string(REPLACE ":" ";" parts "${entry}")
  list(GET parts 0 name)
  list(GET parts 1 group)
  list(GET parts 2 extra)
  foreach(mode IN ITEMS ptq qat)
    set(args ${extra})
    if(mode STREQUAL "qat")
      set(args --qat)  # the yardstick counts are PTQ's (QAT keeps ConvBn modules)
      if(extra MATCHES "^--fallback")
        list(APPEND args ${extra})  # float fallback is the same with --qat
      endif()
    endif()
    add_test(NAME quant_${mode}_${name}
             COMMAND ${TT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/check_quant.py
                     $<TARGET_FILE:tinytrace> ${TT_TESTMODELS_DIR}/${name}.pt
                     ${CMAKE_BINARY_DIR}/quant_out/${mode}/${name} ${args})
    set_tests_properties(quant_${mode}_${name} PROPERTIES LABELS "e2e;quant" TIMEOUT 900
                         FIXTURES_REQUIRED tt_models_${group})
  endforeach()
endforeach()
