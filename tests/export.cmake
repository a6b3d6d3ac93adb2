# torch.export archives (.pt2 of torch 2.6's torch.export.save), included from the top-level
# CMakeLists.txt. scripts/gen_export_models.py exports the models at test time into
# ${CMAKE_BINARY_DIR}/testmodels_export (reused while the generator and scripts/gen_models.py are
# unchanged): a small CNN, a view through x.shape[0], a tour of common ops, multi-output and
# nested-result ops, resnet18, mobilenet_v3_small and a small vit_b_16 (its class at 2 layers,
# width 64), each static and/or with a torch.export.Dim batch. Labels: setup and export (the fixture), e2e and export (each model through
# tests/e2e/check_export.py: --verify, scripts/check_model.py, and for a dynamic batch the
# generated code at two other batch sizes), e2e, fuse and export (the conv models through
# tests/e2e/check_fuse.py), badinput and export (torch.cond and the torch >= 2.7 package layout:
# exit 4 naming them).

set(TT_EX_PYTHON /usr/bin/python3)
set(TT_EX_GEN ${CMAKE_SOURCE_DIR}/scripts/gen_export_models.py)
set(TT_EX_DIR ${CMAKE_BINARY_DIR}/testmodels_export)
set(TT_EX_OUT ${CMAKE_BINARY_DIR}/e2e_export_out)
set(TT_EX_CHECK ${CMAKE_SOURCE_DIR}/tests/e2e/check_export.py)
tt_generator_test(gen_models_export ${TT_EX_GEN} ${TT_EX_DIR} tt_models_export "setup;export" 300)
tt_script_list(tt_ex_lines ${TT_EX_GEN})
foreach(line IN LISTS tt_ex_lines)
  string(REPLACE " " ";" fields "${line}")
  list(GET fields 0 name)
  list(GET fields 1 kind)
  if(kind STREQUAL "unsupported")
    list(GET fields 2 expect)  # what the error line must contain
    add_test(NAME badinput_${name}
             COMMAND ${TT_EX_PYTHON} ${TT_EX_CHECK} --expect-exit 4 "${expect}"
                     $<TARGET_FILE:tinytrace> ${TT_EX_DIR}/${name}.pt2 ${TT_EX_OUT}/${name})
    set_tests_properties(badinput_${name} PROPERTIES LABELS "badinput;export" TIMEOUT 300
                         FIXTURES_REQUIRED tt_models_export)
    continue()
  endif()
  add_test(NAME e2e_${name}
           COMMAND ${TT_EX_PYTHON} ${TT_EX_CHECK} $<TARGET_FILE:tinytrace> ${TT_EX_DIR}/${name}.pt2
                   ${TT_EX_OUT}/${name})
  set_tests_properties(e2e_${name} PROPERTIES LABELS "e2e;export" TIMEOUT 900
                       FIXTURES_REQUIRED tt_models_export)
  if(kind STREQUAL "conv")
    # --fuse: BatchNorm folded into the convolutions of the lifted modules, still equivalent.
    add_test(NAME e2e_fuse_${name}
             COMMAND ${TT_EX_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/check_fuse.py $<TARGET_FILE:tinytrace>
                     ${TT_EX_DIR}/${name}.pt2 ${TT_EX_OUT}/fuse_${name})
    set_tests_properties(e2e_fuse_${name} PROPERTIES LABELS "e2e;fuse;export" TIMEOUT 900
                         FIXTURES_REQUIRED tt_models_export)
  endif()
endforeach()
# No export model is big: vit_b_16's class runs at a small size here (scripts/gen_export_models.py,
# _vit_small); the full-size vit_b_16 is e2e_vit_b_16 (tests/tests.cmake).
