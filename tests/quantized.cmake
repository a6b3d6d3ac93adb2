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
# nnqd.LSTM / nnqd.GRU (Note [Dynamic quantized LSTM and GRU] in the TorchScript lifter): lifted
# and run by the interpreter bit for bit against the archive (--verify, tolerance 1e-300 on the
# generator's inputs); NAME.pth cannot hold their packed cells yet, so only the report is written.
foreach(name IN ITEMS q_dynamic_lstm q_dynamic_lstm_s q_dynamic_gru q_dynamic_gru_s)
  add_test(NAME e2e_${name}_verify
           COMMAND $<TARGET_FILE:tinytrace> convert ${TT_QUANTIZED_DIR}/${name}.pt
                   -o ${TT_E2E_OUT}/${name}_verify --emit report --quantized-engine qnnpack
                   --verify --tolerance 1e-300
                   --verify-inputs ${TT_QUANTIZED_DIR}/${name}.inputs.pt)
  set_tests_properties(e2e_${name}_verify PROPERTIES LABELS "e2e;quantized"
                       ENVIRONMENT "${TT_TEST_ENV}" FIXTURES_REQUIRED tt_models_quantized
                       TIMEOUT 300)
endforeach()
if(TEST badinput_quantized_dynamic_lstm)
  set_tests_properties(badinput_quantized_dynamic_lstm PROPERTIES LABELS "badinput;quantized"
                       FIXTURES_REQUIRED "tt_models_small;tt_models_quantized")
endif()
# --dequantize (passes/dequantize.cpp): the float twin of an int8 model, its outputs within
# cosine similarity 0.99 of the int8 original's (tests/e2e/check_dequantize.py). q_qat: Quantize,
# ConvReLU2d, Linear, DeQuantize; q_dynamic: nnqd.Linear; q_resnet18: Conv2d, ConvReLU2d,
# QFunctional.add_relu, Linear, on inputs of the calibration's range (randn * 2: on randn its own
# int8 error alone gives cosine 0.986, while the twin is at 0.999 on the calibrated range).
foreach(entry IN ITEMS q_qat q_qat_s q_dynamic q_dynamic_s "q_resnet18:2" "q_resnet18_s:2")
  string(REPLACE ":" ";" parts "${entry}")
  list(GET parts 0 name)
  set(scale_args "")
  list(LENGTH parts n)
  if(n GREATER 1)
    list(GET parts 1 scale)
    set(scale_args --input-scale ${scale})
  endif()
  add_test(NAME e2e_dequantize_${name}
           COMMAND ${TT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/check_dequantize.py
                   $<TARGET_FILE:tinytrace> ${TT_QUANTIZED_DIR}/${name}.pt
                   ${TT_E2E_OUT}/dequantize_${name} ${scale_args})
  set_tests_properties(e2e_dequantize_${name} PROPERTIES LABELS "e2e;quantized;dequantize"
                       ENVIRONMENT "${TT_TEST_ENV}" FIXTURES_REQUIRED tt_models_quantized
                       TIMEOUT 300)
endforeach()
