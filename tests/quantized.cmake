# int8 (eager-mode quantized) input models (Note [Quantized modules] in
# lib/loaders/torchscript/lifter_quantized.cpp), included from the top-level CMakeLists.txt.
# scripts/gen_quantized_models.py quantizes torchvision's quantizable models and small models of
# most torch.ao.nn.quantized modules (post-training, dynamic, QAT) on the qnnpack engine and saves
# them traced and scripted into ${TT_TESTMODELS_DIR}/quantized at test time. Each converts with
# --quantized-engine qnnpack --verify, and the generated code, run on that engine, must reproduce
# the archive bit for bit (tolerance 0 in NAME.json).
set(TT_QUANTIZED_DIR ${TT_TESTMODELS_DIR}/quantized)
tt_generator_test(gen_models_quantized ${CMAKE_SOURCE_DIR}/scripts/gen_quantized_models.py
                  ${TT_QUANTIZED_DIR} tt_models_quantized "setup;quantized" 100)
tt_script_list(tt_quantized_models ${CMAKE_SOURCE_DIR}/scripts/gen_quantized_models.py)
foreach(name IN LISTS tt_quantized_models)
  add_test(NAME e2e_${name}
           COMMAND ${TT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/run_convert.py
                   $<TARGET_FILE:tinytrace> ${TT_QUANTIZED_DIR}/${name}.pt ${TT_E2E_OUT}/${name}
                   --verify)
  set_tests_properties(e2e_${name} PROPERTIES LABELS "e2e;quantized" ENVIRONMENT "${TT_TEST_ENV}"
                       FIXTURES_REQUIRED tt_models_quantized TIMEOUT 300)
endforeach()
# nnqd.LSTM / nnqd.GRU (Note [Dynamic quantized LSTM and GRU] in the TorchScript lifter) are in
# the list above: NAME.pth holds their cells' tensors, which the generated helper classes pack
# again (Note [Python helper definitions] in lib/ir/py_helpers.h). The interpreter is checked bit
# for bit too (--tolerance 1e-300 keeps --verify from rounding a difference away).
foreach(name IN ITEMS q_dynamic_lstm q_dynamic_gru_s)
  add_test(NAME e2e_${name}_verify
           COMMAND $<TARGET_FILE:tinytrace> convert ${TT_QUANTIZED_DIR}/${name}.pt
                   -o ${TT_E2E_OUT}/${name}_verify --emit report --quantized-engine qnnpack
                   --verify --tolerance 1e-300
                   --verify-inputs ${TT_QUANTIZED_DIR}/${name}.inputs.pt)
  set_tests_properties(e2e_${name}_verify PROPERTIES LABELS "e2e;quantized"
                       ENVIRONMENT "${TT_TEST_ENV}" FIXTURES_REQUIRED tt_models_quantized
                       TIMEOUT 300)
endforeach()
foreach(t IN ITEMS badinput_quantized_embedding_4bit badinput_name_clashes_with_helper)
  if(TEST ${t})
    set_tests_properties(${t} PROPERTIES LABELS "badinput;quantized"
                         FIXTURES_REQUIRED "tt_models_small;tt_models_quantized")
  endif()
endforeach()
# --dequantize (passes/dequantize.cpp): the float twin of an int8 model, its outputs within
# cosine similarity 0.99 of the int8 original's (tests/e2e/check_dequantize.py). q_qat: Quantize,
# ConvReLU2d, Linear, DeQuantize; q_dynamic: nnqd.Linear; q_dynamic_lstm/gru: nnqd.LSTM/GRU; q_zoo: the activations, QFunctional
# (scripted) and the quantized::* calls a trace keeps (add_scalar, mul_scalar); q_embedding:
# nn.Embedding / nn.EmbeddingBag (sum, 2-d input and offsets with per-sample weights); the torchvision
# models: Conv2d, ConvReLU2d, QFunctional.add_relu / cat, Linear, on a whole network.
# "NAME:K" runs on inputs randn * K.
#
# Note [Calibration range of the test models]
# scripts/gen_quantized_models.py calibrates on randn * 2, not on the plain randn that --verify and
# the saved inputs feed. With random weights the int8 models' own error on plain randn is large:
# measured against each model's own float model before quantization (fused, same weights), the
# cosine similarity of the outputs on randn, calibrated on randn / on randn * 2, is
#   resnet18 0.9958 / 0.983, mobilenet_v2 0.912 / 0.853, shufflenet_v2_x0_5 0.959 / 0.962
# (mobilenet_v2 stays at 0.904 with 8 calibration batches of 8; with per-channel weights
# mobilenet_v2 reaches 0.935 and shufflenet 0.965), while on randn * 2 after calibrating on randn * 2 all three are above 0.99
# (0.9986, 0.9926, 0.9926). No float twin is closer to the int8 model than the float model it came
# from, so calibrating on plain randn would not let these tests run on plain randn: they keep the
# calibration and run the torchvision models on randn * 2. mobilenet_v3_large needed more than that
# (Note [A random MobileNetV3 quantizes badly] in the generator).
function(tt_dequantize_test prefix entry)
  string(REPLACE ":" ";" parts "${entry}")
  list(GET parts 0 name)
  set(extra ${ARGN})
  list(LENGTH parts n)
  if(n GREATER 1)
    list(GET parts 1 scale)
    list(APPEND extra --input-scale ${scale})
  endif()
  add_test(NAME e2e_${prefix}_${name}
           COMMAND ${TT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/check_dequantize.py
                   $<TARGET_FILE:tinytrace> ${TT_QUANTIZED_DIR}/${name}.pt
                   ${TT_E2E_OUT}/${prefix}_${name} ${extra})
  set_tests_properties(e2e_${prefix}_${name} PROPERTIES LABELS "e2e;quantized;dequantize"
                       ENVIRONMENT "${TT_TEST_ENV}" FIXTURES_REQUIRED tt_models_quantized
                       TIMEOUT 300)
endfunction()
foreach(entry IN ITEMS q_qat q_qat_s q_dynamic q_dynamic_s q_dynamic_lstm q_dynamic_lstm_s q_dynamic_gru
                       q_dynamic_gru_s q_zoo q_zoo_s q_embedding q_embedding_s "q_resnet18:2"
                       "q_resnet18_s:2" "q_mobilenet_v2:2" "q_mobilenet_v2_s:2" "q_shufflenet:2"
                       "q_shufflenet_s:2" "q_googlenet:2" "q_googlenet_s:2" "q_inception:2"
                       "q_inception_s:2" "q_mobilenet_v3:2"
                       "q_mobilenet_v3_s:2")
  tt_dequantize_test(dequantize "${entry}")
endforeach()
# --dequantize --quant-prep: a float model ready for a new PTQ run (prepare, calibrate, convert
# in check_dequantize.py --quant-prep).
foreach(entry IN ITEMS q_qat q_zoo_s "q_resnet18:2" "q_mobilenet_v2_s:2"
                       "q_mobilenet_v3:2")
  tt_dequantize_test(dequantize_prep "${entry}" --quant-prep)
endforeach()
# inspect's quantization table and diff's quantization parameter changes, on two int8 models
# that differ only in calibration (tests/e2e/check_quant_inspect.py makes them).
foreach(variant IN ITEMS traced script)
  set(extra "")
  if(variant STREQUAL "script")
    set(extra --script)
  endif()
  add_test(NAME e2e_quant_inspect_diff_${variant}
           COMMAND ${TT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/check_quant_inspect.py
                   $<TARGET_FILE:tinytrace> ${TT_E2E_OUT}/quant_inspect_${variant} ${extra})
  set_tests_properties(e2e_quant_inspect_diff_${variant} PROPERTIES
                       LABELS "e2e;quantized;tools" ENVIRONMENT "${TT_TEST_ENV}" TIMEOUT 300)
endforeach()
