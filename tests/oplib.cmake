# Custom op libraries (Note [Op libraries] in lib/ir/model.h), included from the top-level
# CMakeLists.txt. tests/ops/tt_test_ops.cpp is a project's own op library (tt_test::); the
# generator scripts/gen_oplib_models.py traces models calling it and torchvision's ops into
# ${TT_TESTMODELS_DIR}/oplib at test time. Each converts (torchvision's library found by itself,
# tt_test's given with --load-library; NAME.json says how) with --verify and is checked like every
# e2e model; badinput_custom_op_library_* convert the tt_test model without the library, or with
# a path that is not one.
add_library(tt_test_ops SHARED ${CMAKE_SOURCE_DIR}/tests/ops/tt_test_ops.cpp)
target_link_libraries(tt_test_ops PRIVATE ${TORCH_LIBRARIES})

set(TT_OPLIB_DIR ${TT_TESTMODELS_DIR}/oplib)
tt_generator_test(gen_models_oplib ${CMAKE_SOURCE_DIR}/scripts/gen_oplib_models.py ${TT_OPLIB_DIR}
                  tt_models_oplib "setup;oplib" 100 --op-library $<TARGET_FILE:tt_test_ops>)
tt_script_list(tt_oplib_models ${CMAKE_SOURCE_DIR}/scripts/gen_oplib_models.py)
foreach(name IN LISTS tt_oplib_models)
  add_test(NAME e2e_${name}
           COMMAND ${TT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/e2e/run_convert.py
                   $<TARGET_FILE:tinytrace> ${TT_OPLIB_DIR}/${name}.pt ${TT_E2E_OUT}/${name} --verify)
  set_tests_properties(e2e_${name} PROPERTIES LABELS "e2e;oplib" ENVIRONMENT "${TT_TEST_ENV}"
                       FIXTURES_REQUIRED tt_models_oplib TIMEOUT 300)
endforeach()
foreach(case custom_op_library_not_loaded custom_op_library_missing)
  if(TEST badinput_${case})
    set_tests_properties(badinput_${case} PROPERTIES LABELS "badinput;oplib"
                         FIXTURES_REQUIRED "tt_models_small;tt_models_oplib")
  endif()
endforeach()
