# In-place ops on views, "exit 0 means correct" (the mutation tests), included from the top-level
# CMakeLists.txt. scripts/gen_mutation_models.py writes, at test time, into
# ${CMAKE_BINARY_DIR}/testmodels_mutation (reused while the script and its arguments are
# unchanged) the named regression cases and 150 seeded random models of view ops and in-place
# ops, each traced and scripted. tests/e2e/check_mutation.py converts every archive of its shard
# plainly, with --fuse and (a third of them) with --quant-prep, and compares the generated code
# with PyTorch: each conversion must exit 0 and reproduce the original exactly, or exit 4 with
# one `error:` line. Labels: setup (the fixture), e2e and mutation (the shards).
# By hand: check_mutation.py build/tinytrace build/testmodels_mutation OUT --shard 1/6 -v;
# more models: gen_mutation_models.py --out DIR --seed S --count N.

set(TT_MUT_PYTHON /usr/bin/python3)
set(TT_MUT_GEN ${CMAKE_SOURCE_DIR}/scripts/gen_mutation_models.py)
set(TT_MUT_DIR ${CMAKE_BINARY_DIR}/testmodels_mutation)
set(TT_MUT_OUT ${CMAKE_BINARY_DIR}/e2e_mutation_out)
set(TT_MUT_DRIVER ${CMAKE_SOURCE_DIR}/tests/e2e/check_mutation.py)
set(TT_MUT_SHARDS 6)

tt_generator_test(gen_models_mutation ${TT_MUT_GEN} ${TT_MUT_DIR} tt_models_mutation "setup;mutation" 200)

foreach(k RANGE 1 ${TT_MUT_SHARDS})
  # Each shard runs two conversions at a time (PROCESSORS 2 for ctest -j).
  add_test(NAME e2e_mutation_${k}
           COMMAND ${TT_MUT_PYTHON} ${TT_MUT_DRIVER} $<TARGET_FILE:tinytrace> ${TT_MUT_DIR}
                   ${TT_MUT_OUT}/shard${k} --shard ${k}/${TT_MUT_SHARDS} --jobs 2)
  set_tests_properties(e2e_mutation_${k} PROPERTIES LABELS "e2e;mutation" TIMEOUT 900
                       PROCESSORS 2 COST 100 FIXTURES_REQUIRED tt_models_mutation)
endforeach()
