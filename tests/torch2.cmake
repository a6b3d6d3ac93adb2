# What torch 2.x traces and scripts that torch 1.13 did not (group "torch2"), included from the
# top-level CMakeLists.txt. scripts/gen_torch2_models.py writes the models at test time into
# ${CMAKE_BINARY_DIR}/testmodels_torch2 (reused while the generator and scripts/gen_models.py are
# unchanged): torchvision's Swin (traced and scripted) and ViT (scripted, traced with grad) classes at small
# widths, F.scaled_dot_product_attention
# (plain, causal, float/bool masks, scale=, enable_gqa=; traced and scripted), the
# nn.TransformerEncoder / MultiheadAttention fast and slow paths, a decoder layer, nn.RMSNorm,
# Tensor.unflatten, torch._safe_softmax, parametrizations.weight_norm/spectral_norm and
# linalg_vector_norm, the device/grad queries of 2.x's fast-path checks. "expect_ops" in a
# model's NAME.json names the ops its conversion must produce (nn.TransformerEncoderLayer from the
# fused kernel, nn.RMSNorm, F.scaled_dot_product_attention). Labels: setup and torch2 (the fixture), e2e and torch2 (each model through
# tests/e2e/run_convert.py with --verify, then scripts/check_model.py).

set(TT_T2_PYTHON /usr/bin/python3)
set(TT_T2_GEN ${CMAKE_SOURCE_DIR}/scripts/gen_torch2_models.py)
set(TT_T2_DIR ${CMAKE_BINARY_DIR}/testmodels_torch2)
set(TT_T2_OUT ${CMAKE_BINARY_DIR}/e2e_torch2_out)
tt_generator_test(gen_models_torch2 ${TT_T2_GEN} ${TT_T2_DIR} tt_models_torch2 "setup;torch2" 300)
tt_script_list(tt_t2_lines ${TT_T2_GEN})
foreach(line IN LISTS tt_t2_lines)
  string(REPLACE " " ";" fields "${line}")
  list(GET fields 0 name)
  add_test(NAME e2e_${name}
           COMMAND ${TT_T2_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/run_convert.py
                   $<TARGET_FILE:tinytrace> ${TT_T2_DIR}/${name}.pt ${TT_T2_OUT}/${name} --verify)
  set_tests_properties(e2e_${name} PROPERTIES LABELS "e2e;torch2" TIMEOUT 900
                       FIXTURES_REQUIRED tt_models_torch2)
endforeach()
# The torchvision ones first, so the CTest slots stay busy until the end.
foreach(big t2_swin t2_vit_scripted t2_vit_traced_grad)
  if(TEST e2e_${big})
    set_tests_properties(e2e_${big} PROPERTIES COST 200)
  endif()
endforeach()
# The scripted ones that use list slices, numbers written into tensor slices, the tensor/device
# queries and a sequence-first encoder, also through --emit torchscript (loaded back in Python and
# compared).
foreach(model t2_scripted_checks t2_scripted_slices t2_encoder_seq_first_scripted)
  add_test(NAME exec_torchscript_${model}
           COMMAND ${TT_T2_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/check_torchscript.py
                   $<TARGET_FILE:tinytrace> ${TT_T2_DIR} ${TT_T2_OUT}/torchscript_${model} ${model})
  set_tests_properties(exec_torchscript_${model} PROPERTIES LABELS "exec;torch2" TIMEOUT 300
                       FIXTURES_REQUIRED tt_models_torch2)
endforeach()
# The int-shapes import pass (passes/int_shapes.cpp) end to end: traced shape arithmetic comes out
# as Python ints (no int(...) / torch.tensor(...) round trips in the traced ViT's and shufflenet's
# NAME.py), outputs still match, at batch 2 too, and a model traced in the script with every
# rewritten op matches at several input shapes (tests/e2e/check_int_shapes.py). The ViT is
# t2_vit_traced, vit_b_16's class at 2 layers and width 32, traced like vit_b_16 (no_grad); the
# full-size vit_b_16's NAME.py is checked for round trips by e2e_readable_figures.
add_test(NAME e2e_int_shapes
         COMMAND ${TT_T2_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/check_int_shapes.py
                 $<TARGET_FILE:tinytrace> ${CMAKE_BINARY_DIR}/int_shapes_out
                 ${TT_T2_DIR}/t2_vit_traced.pt:strict
                 ${TT_TESTMODELS_DIR}/shufflenet_v2_x1_0.pt:strict ${TT_T2_DIR}/t2_swin.pt
                 ${TT_T2_DIR}/t2_mha_cross.pt)
set_tests_properties(e2e_int_shapes PROPERTIES LABELS "e2e;int_shapes" TIMEOUT 900 COST 300
                     FIXTURES_REQUIRED "tt_models_torchvision;tt_models_torch2")
# The same archive converts to the same bytes whatever the heap layout: each scripted model five
# times, plain and --fuse, under different malloc settings (jemalloc's MALLOC_CONF, glibc's
# GLIBC_TUNABLES; tests/e2e/check_deterministic.py; Note [Constant propagation to a fixpoint]).
# bi_encoder_masked --fuse folded three lists fewer with jemalloc's thread cache than without
# (Value::serial).
add_test(NAME e2e_deterministic
         COMMAND ${TT_T2_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/check_deterministic.py
                 $<TARGET_FILE:tinytrace> ${CMAKE_BINARY_DIR}/deterministic_out
                 ${TT_T2_DIR}/t2_swin_scripted.pt ${TT_T2_DIR}/t2_vit_scripted.pt
                 ${TT_T2_DIR}/t2_encoder_scripted.pt
                 "${CMAKE_BINARY_DIR}/testmodels_builtins/bi_encoder_masked.pt:--input-shape 2,5,16")
set_tests_properties(e2e_deterministic PROPERTIES LABELS "e2e;torch2" TIMEOUT 600 COST 60
                     FIXTURES_REQUIRED "tt_models_torch2;tt_models_builtins")
