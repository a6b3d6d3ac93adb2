# ONNX input tests (issue 7), included from the top-level CMakeLists.txt. All carry the label
# "onnx" (ctest -L onnx), and one of those in
# tests/tests.cmake: setup (export fixture), e2e (convert + scripts/check_model.py per model, a
# dynamic batch checked at two batch sizes, and the --fuse structure comparison), badinput
# (malformed ONNX files, a missing external data file, an op without a mapping).
# scripts/gen_onnx_models.py exports into ${CMAKE_BINARY_DIR}/testmodels_onnx at test time and
# reuses what is current.

set(TT_ONNX_PYTHON /usr/bin/python3)
set(TT_ONNX_GEN ${CMAKE_SOURCE_DIR}/scripts/gen_onnx_models.py)
set(TT_ONNX_DIR ${CMAKE_BINARY_DIR}/testmodels_onnx)
set(TT_ONNX_OUT ${CMAKE_BINARY_DIR}/e2e_onnx_out)
# ONNX is required (CMakeLists.txt stops without it), so these tests are always registered.

tt_generator_test(gen_onnx_models ${TT_ONNX_GEN} ${TT_ONNX_DIR} tt_models_onnx "setup;onnx" 900)
tt_script_list(tt_onnx_lines ${TT_ONNX_GEN})
foreach(line IN LISTS tt_onnx_lines)
  string(REPLACE " " ";" fields "${line}")
  list(GET fields 0 name)
  list(GET fields 1 kind)
  if(kind STREQUAL "e2e")
    add_test(NAME e2e_onnx_${name}
             COMMAND ${TT_ONNX_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/run_convert.py
                     $<TARGET_FILE:tinytrace> ${TT_ONNX_DIR}/${name}.onnx ${TT_ONNX_OUT}/${name})
    set_tests_properties(e2e_onnx_${name} PROPERTIES LABELS "e2e;onnx" TIMEOUT 600
                         FIXTURES_REQUIRED tt_models_onnx)
  elseif(kind STREQUAL "dynamic")
    # Exported with a dynamic batch: convert + check at the export's batch, then the same
    # generated code at another batch size.
    add_test(NAME e2e_onnx_${name}
             COMMAND ${TT_ONNX_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/onnx_dynamic.py
                     $<TARGET_FILE:tinytrace> ${TT_ONNX_DIR}/${name}.onnx ${TT_ONNX_OUT}/${name})
    set_tests_properties(e2e_onnx_${name} PROPERTIES LABELS "e2e;onnx" TIMEOUT 600
                         FIXTURES_REQUIRED tt_models_onnx)
  elseif(kind STREQUAL "parity")
    add_test(NAME e2e_onnx_fuse_parity_${name}
             COMMAND ${TT_ONNX_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/onnx_fuse_parity.py
                     $<TARGET_FILE:tinytrace> ${TT_ONNX_DIR}/${name}.onnx ${TT_ONNX_OUT}/fuse)
    set_tests_properties(e2e_onnx_fuse_parity_${name} PROPERTIES LABELS "e2e;onnx" TIMEOUT 600
                         FIXTURES_REQUIRED tt_models_onnx)
    add_test(NAME e2e_onnx_quant_prep_parity_${name}
             COMMAND ${TT_ONNX_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/onnx_fuse_parity.py
                     $<TARGET_FILE:tinytrace> ${TT_ONNX_DIR}/${name}.onnx ${TT_ONNX_OUT}/quant_prep
                     --quant-prep)
    set_tests_properties(e2e_onnx_quant_prep_parity_${name} PROPERTIES LABELS "e2e;onnx" TIMEOUT 600
                         FIXTURES_REQUIRED tt_models_onnx)
  elseif(kind STREQUAL "unsupported")
    # An op tinytrace cannot reproduce exactly (an AveragePool it cannot pad exactly): exit 4, naming the op type and the node (fields 3 and 4 of the --list line), and
    # a note placing the error at the node's output value (Note [Located errors]).
    list(GET fields 2 op_type)
    list(GET fields 3 node)
    add_test(NAME badinput_onnx_unsupported_${name}
             COMMAND ${TT_ONNX_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/onnx_expect_fail.py
                     $<TARGET_FILE:tinytrace> ${TT_ONNX_DIR}/${name}.onnx
                     ${TT_ONNX_OUT}/fail_${name} 4 "ONNX op ${op_type}" "node '${node}'"
                     "note: at node %")
    set_tests_properties(badinput_onnx_unsupported_${name} PROPERTIES LABELS "badinput;onnx" TIMEOUT 300
                         FIXTURES_REQUIRED tt_models_onnx)
  elseif(name STREQUAL "missing_external_data")
    # The .onnx names an external data file that is not there: exit 3 saying which file.
    add_test(NAME badinput_onnx_${name}
             COMMAND ${TT_ONNX_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/onnx_expect_fail.py
                     $<TARGET_FILE:tinytrace> ${TT_ONNX_DIR}/badinput/${name}.onnx
                     ${TT_ONNX_OUT}/bad_${name} 3 "external_data_op13.data")
    set_tests_properties(badinput_onnx_${name} PROPERTIES LABELS "badinput;onnx" TIMEOUT 300
                         FIXTURES_REQUIRED tt_models_onnx)
  else()
    add_test(NAME badinput_onnx_${name}
             COMMAND ${TT_ONNX_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/onnx_expect_fail.py
                     $<TARGET_FILE:tinytrace> ${TT_ONNX_DIR}/badinput/${name}.onnx
                     ${TT_ONNX_OUT}/bad_${name} 3)
    set_tests_properties(badinput_onnx_${name} PROPERTIES LABELS "badinput;onnx" TIMEOUT 300
                         FIXTURES_REQUIRED tt_models_onnx)
  endif()
endforeach()

# A node with fewer inputs than its schema allows (a fuzz find, testdata/fuzz/onnx): exit 3 naming
# the node's type, its name and both counts (Note [ONNX node arity] in lib/loaders/onnx/importer.cpp).
add_test(NAME badinput_onnx_arity
         COMMAND ${TT_ONNX_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/onnx_expect_fail.py
                 $<TARGET_FILE:tinytrace> ${CMAKE_SOURCE_DIR}/testdata/fuzz/onnx/crash-reshape-arity.onnx
                 ${TT_ONNX_OUT}/bad_arity 3 "Reshape node 'x' has 1 input and 1 output"
                 "opset 9 allows 2 inputs and 1 output")
set_tests_properties(badinput_onnx_arity PROPERTIES LABELS "badinput;onnx" TIMEOUT 300)

# Issue 21: small torch modules exported at several opsets (scripts/gen_onnx_op_models.py: the
# activations at their thresholds, pooling with indices, functional convolutions and computed
# norm statistics, logic/indexing/reductions, resampling, nn.RNN, and scripted control flow that
# exports as If/Loop/Sequence ops), one test per group (tests/e2e/onnx_batch.py converts each
# model plainly and with --fuse and compares with the torch module on every input set).
set(TT_ONNX_OPS_GEN ${CMAKE_SOURCE_DIR}/scripts/gen_onnx_op_models.py)
set(TT_ONNX_OPS_DIR ${CMAKE_BINARY_DIR}/testmodels_onnx_ops)
tt_generator_test(gen_onnx_op_models ${TT_ONNX_OPS_GEN} ${TT_ONNX_OPS_DIR} tt_models_onnx_ops
                  "setup;onnx" 300)
tt_script_list(tt_onnx_ops_groups ${TT_ONNX_OPS_GEN})
foreach(group IN LISTS tt_onnx_ops_groups)
  add_test(NAME e2e_onnx_ops_${group}
           COMMAND ${TT_ONNX_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/onnx_batch.py
                   $<TARGET_FILE:tinytrace> ${TT_ONNX_OPS_DIR} ${group} ${TT_ONNX_OUT}/ops_${group})
  set_tests_properties(e2e_onnx_ops_${group} PROPERTIES LABELS "e2e;onnx" TIMEOUT 900
                       FIXTURES_REQUIRED tt_models_onnx_ops)
endforeach()

# The op-coverage test: every op the installed torch's exporter can write is classified in
# testdata/onnx/exporter_ops.txt, and each listed op's models (tests/e2e/onnx_op_cases.py) convert
# and match ONNX's reference implementation, or are refused with the recorded reason. Two shards.
foreach(shard 1 2)
  add_test(NAME e2e_onnx_op_coverage_${shard}
           COMMAND ${TT_ONNX_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/onnx_op_coverage.py
                   $<TARGET_FILE:tinytrace> ${TT_ONNX_OUT}/op_coverage_${shard} --shard ${shard}/2)
  # ~130 s each with no fixture to wait for: a COST starts them early, not last on one core.
  set_tests_properties(e2e_onnx_op_coverage_${shard} PROPERTIES LABELS "e2e;onnx" TIMEOUT 900
                       COST 150)
endforeach()
