# CTest registrations, included from the top-level CMakeLists.txt. Labels:
#   unit      the doctest binary (IR, parser/printer, verifier, passes, loaders, emitters)
#   setup     model generation fixtures (scripts/gen_models.py, make_loader_testmodels.py)
#   e2e       convert one model with the CLI, then check the generated code (scripts/check_model.py)
#   badinput  one malformed input or argument per test: exit code, one-line error, no leftovers
#   lint      pyflakes over the repository's own Python scripts
# Run one group with `ctest --test-dir build -L e2e`, one test with `-R e2e_resnet18`.
#
# Models are generated at test time into ${CMAKE_BINARY_DIR}/testmodels (never committed, never
# downloaded) and reused on the next run while scripts/gen_models.py is unchanged. Two fixtures
# instead of one so that the small models' tests run while the torchvision ones are generated.

set(TT_PYTHON /usr/bin/python3)  # Debian's python3-torch; a python3 earlier on PATH may lack it

# The cases a script lists with --list, one line each ("name field ..."): sets ${out} to the
# non-empty lines (split one with string(REPLACE " " ";" ...)). The script becomes a configure
# dependency; a failing --list stops the configure with its message.
function(tt_script_list out script)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${script})
  execute_process(COMMAND ${TT_PYTHON} ${script} --list
                  OUTPUT_VARIABLE text RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "'${TT_PYTHON} ${script} --list' failed (${rc}): ${err}\n"
                        "Run scripts/setup.sh to install python3-torch.")
  endif()
  string(REPLACE "\n" ";" lines "${text}")
  list(FILTER lines EXCLUDE REGEX "^$")
  set(${out} "${lines}" PARENT_SCOPE)
endfunction()

# A model generator as the setup test `name` of fixture `fixture`: `script --out dir` (it reuses
# what is current). Extra arguments after `cost` go to the script.
function(tt_generator_test name script dir fixture labels cost)
  add_test(NAME ${name} COMMAND ${TT_PYTHON} ${script} --out ${dir} ${ARGN})
  set_tests_properties(${name} PROPERTIES FIXTURES_SETUP ${fixture} LABELS "${labels}"
                       TIMEOUT 900 COST ${cost})
endfunction()
set(TT_TESTMODELS_DIR ${CMAKE_BINARY_DIR}/testmodels)
set(TT_E2E_OUT ${CMAKE_BINARY_DIR}/e2e_out)
set(TT_GEN ${CMAKE_SOURCE_DIR}/scripts/gen_models.py)
set(TT_LOADER_GEN ${CMAKE_SOURCE_DIR}/scripts/make_loader_testmodels.py)
set(TT_TEST_ENV "TT_TESTMODELS_DIR=${TT_TESTMODELS_DIR}" "TT_SOURCE_DIR=${CMAKE_SOURCE_DIR}")

# Re-configure when the loader generator appears (the listing scripts are configure dependencies
# through tt_script_list).
file(GLOB TT_LOADER_GEN_FOUND CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/scripts/make_loader_testmodels*.py)

# --- fixtures: generate the models ----------------------------------------------------------
add_test(NAME gen_models_small
         COMMAND ${TT_PYTHON} ${TT_GEN} --out ${TT_TESTMODELS_DIR} --only small,badinput)
set_tests_properties(gen_models_small PROPERTIES FIXTURES_SETUP tt_models_small LABELS setup
                     TIMEOUT 600)
add_test(NAME gen_models_torchvision
         COMMAND ${TT_PYTHON} ${TT_GEN} --out ${TT_TESTMODELS_DIR} --only torchvision)
set_tests_properties(gen_models_torchvision PROPERTIES FIXTURES_SETUP tt_models_torchvision
                     LABELS setup TIMEOUT 1200 COST 1000)
set(TT_UNIT_FIXTURES tt_models_small)
if(EXISTS ${TT_LOADER_GEN})
  add_test(NAME gen_loader_testmodels COMMAND ${TT_PYTHON} ${TT_LOADER_GEN} --out ${TT_TESTMODELS_DIR})
  set_tests_properties(gen_loader_testmodels PROPERTIES FIXTURES_SETUP tt_models_loader
                       LABELS setup TIMEOUT 600)
  list(APPEND TT_UNIT_FIXTURES tt_models_loader)
endif()

# --- unit tests (doctest) --------------------------------------------------------------------
# The "torchscript roundtrip" cases need the torchvision models: tests/exec.cmake runs them as
# exec_torchscript_roundtrip_cpp with that fixture, so the plain unit run leaves them out.
add_test(NAME unit COMMAND tinytrace_tests "-tce=*torchscript roundtrip*")
set_tests_properties(unit PROPERTIES LABELS unit ENVIRONMENT "${TT_TEST_ENV}"
                     FIXTURES_REQUIRED "${TT_UNIT_FIXTURES}" TIMEOUT 900)

# --- end-to-end: one test per generated model -------------------------------------------------
tt_script_list(tt_model_lines ${TT_GEN})
foreach(line IN LISTS tt_model_lines)
  string(REPLACE " " ";" fields "${line}")
  list(GET fields 0 name)
  list(GET fields 1 group)
  if(group STREQUAL "example")
    # Committed example: converted straight from testdata/, no generation needed.
    set(model ${CMAKE_SOURCE_DIR}/testdata/models/${name}.pt)
    set(fixture "")
    set(timeout 300)
  else()
    set(model ${TT_TESTMODELS_DIR}/${name}.pt)
    set(fixture tt_models_${group})
    set(timeout 900)
  endif()
  # Every conversion also runs --verify: the interpreter must agree with torch::jit.
  add_test(NAME e2e_${name}
           COMMAND ${TT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/run_convert.py
                   $<TARGET_FILE:tinytrace> ${model} ${TT_E2E_OUT}/${name} --verify)
  set_tests_properties(e2e_${name} PROPERTIES LABELS e2e ENVIRONMENT "${TT_TEST_ENV}"
                       TIMEOUT ${timeout})
  if(fixture)
    set_tests_properties(e2e_${name} PROPERTIES FIXTURES_REQUIRED ${fixture})
  endif()
endforeach()
# Archives saved by torch 1.13 (committed, generated once by scripts/gen_torch113_archives.py):
# tinytrace on LibTorch 2.x must keep converting what older PyTorch saved.
file(GLOB tt_torch113_metas CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/testdata/models/torch113/*.json)
foreach(meta IN LISTS tt_torch113_metas)
  get_filename_component(name ${meta} NAME_WE)
  add_test(NAME e2e_${name}
           COMMAND ${TT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/run_convert.py
                   $<TARGET_FILE:tinytrace> ${CMAKE_SOURCE_DIR}/testdata/models/torch113/${name}.pt
                   ${TT_E2E_OUT}/${name} --verify)
  set_tests_properties(e2e_${name} PROPERTIES LABELS "e2e;torch113" ENVIRONMENT "${TT_TEST_ENV}"
                       TIMEOUT 300)
endforeach()
# The biggest models first, so the two CTest slots stay busy until the end.
foreach(big vit_b_16 swin_t resnet50 densenet121)
  if(TEST e2e_${big})
    set_tests_properties(e2e_${big} PROPERTIES COST 500)
  endif()
endforeach()

# The readability figures of issue #14 (classes per module type, containers, no getattr/setattr,
# line limits, int shape arithmetic) and --flat.
add_test(NAME e2e_readable_figures
         COMMAND ${TT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/check_readable.py
                 $<TARGET_FILE:tinytrace> ${TT_TESTMODELS_DIR} ${TT_E2E_OUT}/readable)
set_tests_properties(e2e_readable_figures PROPERTIES LABELS e2e ENVIRONMENT "${TT_TEST_ENV}"
                     FIXTURES_REQUIRED tt_models_torchvision TIMEOUT 900 COST 300)

# Forward defaults (Note [Forward defaults] in lib/ir/ir.h): NAME.py, NAME.pt, NAME.json and
# NAME.tir keep the original forward's defaults, and calls leaving arguments out compute what the
# original computes; an int argument used as a dtype gets none.
add_test(NAME e2e_forward_defaults
         COMMAND ${TT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/check_defaults.py
                 $<TARGET_FILE:tinytrace> ${TT_E2E_OUT}/forward_defaults)
set_tests_properties(e2e_forward_defaults PROPERTIES LABELS e2e ENVIRONMENT "${TT_TEST_ENV}"
                     TIMEOUT 300)

# --- a model larger than the memory it converts in (issue #17) ----------------------------------
# Note [Weights mapped from the archive] (lib/loaders/mapped_records.cpp): 512 MiB of weights
# convert (with --verify) in a memory cgroup of 192 MiB where loading them into memory is killed;
# NAME.pth and NAME.py then reproduce the original exactly. Once as a TorchScript archive, once as
# a torch.export .pt2 (its state dict a zip inside the zip, mapped, or its aligned copy mapped).
# Skipped (77) where no memory cgroup can be created. Mostly disk time (the model is written,
# synced and evicted first).
foreach(fmt IN ITEMS torchscript export)
  set(name e2e_mapped_weights_over_memory)
  if(fmt STREQUAL "export")
    set(name e2e_mapped_export_over_memory)
  endif()
  add_test(NAME ${name}
           COMMAND ${TT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/check_mapped_weights.py
                   $<TARGET_FILE:tinytrace> $<TARGET_FILE:jit_load_floor>
                   ${CMAKE_BINARY_DIR}/mapped_work_${fmt} ${fmt})
  set_tests_properties(${name} PROPERTIES LABELS "e2e;memory" ENVIRONMENT "${TT_TEST_ENV}"
                       SKIP_RETURN_CODE 77 TIMEOUT 600 COST 120)
endforeach()

# --- ZIP64 archives (issue #17) -----------------------------------------------------------------
# Note [ZIP64] (lib/loaders/loader.cpp): a small TorchScript archive and .pt2 (the latter with its
# state dict zip too) rewritten into ZIP64 form convert with --verify to the same NAME.py and
# NAME.pth as the originals, the 128 KiB weight mapped and copied from the input. Seconds each.
# export_over_4g puts 4 GiB of zeros first (a sparse file: no disk, no memory), so every
# offset needs ZIP64; its time is reading those zeros once (the report's sha256); the script
# also takes torchscript_over_4g (not registered: the same time again).
foreach(fmt IN ITEMS torchscript export export_over_4g)
  add_test(NAME e2e_zip64_${fmt}
           COMMAND ${TT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/check_zip64.py
                   $<TARGET_FILE:tinytrace> ${CMAKE_BINARY_DIR}/zip64_work_${fmt} ${fmt})
  set_tests_properties(e2e_zip64_${fmt} PROPERTIES LABELS "e2e;export" ENVIRONMENT "${TT_TEST_ENV}"
                       TIMEOUT 300)
endforeach()

# --- bad input: one test per case of issue 2 --------------------------------------------------
tt_script_list(tt_bad_cases ${CMAKE_SOURCE_DIR}/tests/e2e/bad_input.py)
foreach(case IN LISTS tt_bad_cases)
  add_test(NAME badinput_${case}
           COMMAND ${TT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/bad_input.py
                   $<TARGET_FILE:tinytrace> ${TT_TESTMODELS_DIR} ${CMAKE_BINARY_DIR}/badinput_work
                   ${case})
  set_tests_properties(badinput_${case} PROPERTIES LABELS badinput FIXTURES_REQUIRED tt_models_small
                       SKIP_RETURN_CODE 77 TIMEOUT 300)
endforeach()

# --- lint: the repository's own Python ---------------------------------------------------------
file(GLOB TT_PY_SCRIPTS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/scripts/*.py
     ${CMAKE_SOURCE_DIR}/tests/e2e/*.py ${CMAKE_SOURCE_DIR}/tests/*.py)
if(TT_PY_SCRIPTS)
  add_test(NAME lint_python COMMAND ${TT_PYTHON} -m pyflakes ${TT_PY_SCRIPTS})
  set_tests_properties(lint_python PROPERTIES LABELS lint TIMEOUT 120)
endif()
# The layering of lib/, passes/ and tools/ (each layer one library; ARCHITECTURE.md).
add_test(NAME lint_layers COMMAND ${TT_PYTHON} ${CMAKE_SOURCE_DIR}/scripts/check_layers.py ${CMAKE_SOURCE_DIR})
set_tests_properties(lint_layers PROPERTIES LABELS lint TIMEOUT 60)
