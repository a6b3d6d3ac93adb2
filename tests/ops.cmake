# Op spellings (group "ops"), included from the top-level CMakeLists.txt after tests/tests.cmake:
# scripts/gen_op_models.py writes one small traced model per op family into
# ${CMAKE_BINARY_DIR}/testmodels_ops (reused while the generator and scripts/gen_models.py are
# unchanged): activations, dropouts, windows, stft/istft, torch.fft, complex tensors (also as
# model inputs), nearest-exact interpolation and unfold/fold, x[idx] in its forms, nn.RNN, and the
# torch / Tensor / F / torch.linalg / torch.special families of lib/ir/op_table_aten.cpp.
# e2e_<family>: tests/e2e/run_convert.py with --verify, then scripts/check_model.py (outputs,
# strict state_dict load, pyflakes, python3 NAME.py), and NAME.py without a torch.ops.aten call,
# NAME.json without an aten-fallback warning ("no_fallback" in NAME.json).
# exec_torchscript_<family>: the families marked "torchscript" by the generator's --list, through
# --emit torchscript (tests/e2e/check_torchscript.py). Labels: setup;ops, e2e;ops, exec;ops.

set(TT_OPS_GEN ${CMAKE_SOURCE_DIR}/scripts/gen_op_models.py)
set(TT_OPS_DIR ${CMAKE_BINARY_DIR}/testmodels_ops)
set(TT_OPS_OUT ${CMAKE_BINARY_DIR}/e2e_ops_out)
tt_generator_test(gen_models_ops ${TT_OPS_GEN} ${TT_OPS_DIR} tt_models_ops "setup;ops" 100)
tt_script_list(tt_ops_lines ${TT_OPS_GEN})
foreach(line IN LISTS tt_ops_lines)
  string(REPLACE " " ";" fields "${line}")
  list(GET fields 0 name)
  list(GET fields 1 emit)
  add_test(NAME e2e_${name}
           COMMAND ${TT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/run_convert.py
                   $<TARGET_FILE:tinytrace> ${TT_OPS_DIR}/${name}.pt ${TT_OPS_OUT}/${name} --verify)
  set_tests_properties(e2e_${name} PROPERTIES LABELS "e2e;ops" TIMEOUT 300
                       FIXTURES_REQUIRED tt_models_ops)
  if(emit STREQUAL "torchscript")
    add_test(NAME exec_torchscript_${name}
             COMMAND ${TT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/check_torchscript.py
                     $<TARGET_FILE:tinytrace> ${TT_OPS_DIR} ${TT_OPS_OUT}/torchscript_${name} ${name})
    set_tests_properties(exec_torchscript_${name} PROPERTIES LABELS "exec;ops" TIMEOUT 300
                         FIXTURES_REQUIRED tt_models_ops)
  endif()
endforeach()
# --quant-prep on a model whose complex values (stft, rfft) lie between real ones: stubs and
# FloatFunctional only on real tensors, then prepare -> calibrate -> convert runs
# (tests/e2e/check_quant.py; Note [Complex values] in lib/ir/dtype_analysis.h).
foreach(mode IN ITEMS ptq qat)
  set(args --fallback=torch.stft)
  if(mode STREQUAL "qat")
    list(APPEND args --qat)
  endif()
  add_test(NAME quant_${mode}_ops_spectrogram
           COMMAND ${TT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/check_quant.py
                   $<TARGET_FILE:tinytrace> ${TT_OPS_DIR}/ops_spectrogram.pt
                   ${TT_OPS_OUT}/quant_${mode}_ops_spectrogram ${args})
  set_tests_properties(quant_${mode}_ops_spectrogram PROPERTIES LABELS "e2e;quant;ops"
                       TIMEOUT 300 FIXTURES_REQUIRED tt_models_ops)
endforeach()
