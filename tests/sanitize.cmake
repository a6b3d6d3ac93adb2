# The sanitizer label (issue 19; README "Reliability"), included from the top-level CMakeLists.txt
# as the last test file, so every test it selects is registered by then. The label runs the unit
# tests, the .tir pass tests, the bad-input and fault tests and a few small e2e models (one traced,
# one scripted, one int64 input, one LSTM, one torch 1.13 archive) against binaries built with
# AddressSanitizer and UBSan (Note [Sanitizer build]). ASan's leak check stays on; LibTorch's own
# allocations that live until exit (operator registries, thread pools) are suppressed by
# tests/sanitize/lsan.supp, which names LibTorch's libraries only — a leak in our code still fails.
# UBSan stops at the first report (-fno-sanitize-recover); tests/sanitize/ubsan.supp holds what is
# LibTorch's. See Note [Sanitizer tests in the default suite] for how the default build runs them.
#
# The two bad-input cases of a custom op library (tests/oplib.cmake) are left out: their fixture
# loads tt_test_ops into Python, which an ASan-instrumented library cannot join (no ASan runtime
# in python3), and the sanitizer builds do not build it.
set(TT_SANITIZE_TESTS
    "^(unit|passes/.*|badinput_.*|fault_.*|e2e_(tiny_cnn|functional_acts|nested_seq_bn|embedding|lstm|t113_traced_lstm))$")
set(TT_SANITIZE_EXCLUDE "^badinput_custom_op_library_")
# Instrumented code at -O0 runs slower: a selected test gets three times its own timeout.
function(tt_sanitize_timeout out test)
  get_test_property(${test} TIMEOUT timeout)
  if(NOT timeout)
    set(timeout 1500)  # CTest's default
  endif()
  math(EXPR timeout "${timeout} * 3")
  set(${out} ${timeout} PARENT_SCOPE)
endfunction()

if(TT_SANITIZE)
  # Inside a sanitizer build (build/asan/ of the suite, or build-asan/ of scripts/build.sh
  # --sanitize): the selected tests get the label and the sanitizer options. With libFuzzer
  # (build-asan/) the short fuzz runs join them, as coverage-guided runs under ASan + UBSan.
  set(TT_SANITIZE_ENV
      "ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1:detect_odr_violation=0"
      "LSAN_OPTIONS=suppressions=${CMAKE_SOURCE_DIR}/tests/sanitize/lsan.supp:print_suppressions=0"
      "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:suppressions=${CMAKE_SOURCE_DIR}/tests/sanitize/ubsan.supp")
  get_property(tt_all_tests DIRECTORY PROPERTY TESTS)
  foreach(t IN LISTS tt_all_tests)
    if(t MATCHES "${TT_SANITIZE_EXCLUDE}")
      continue()
    endif()
    if(t MATCHES "${TT_SANITIZE_TESTS}" OR (TT_LIBFUZZER AND t MATCHES "^fuzz_short_"))
      set_property(TEST ${t} APPEND PROPERTY LABELS sanitize)
      set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT ${TT_SANITIZE_ENV})
      tt_sanitize_timeout(timeout ${t})
      set_tests_properties(${t} PROPERTIES TIMEOUT ${timeout})
    endif()
  endforeach()
  return()
endif()

# Note [Sanitizer tests in the default suite]
# The default build runs the label too, so `scripts/test.sh` (what CI runs) proves it every time,
# at the lowest cost we found:
#   - the setup test sanitize_build (fixture tt_asan_build) builds build/asan/ with
#     `scripts/build.sh --sanitize-suite`: clang++, ASan + UBSan at -O0, no libFuzzer
#     instrumentation, and only what the label runs (the CLI, the unit tests, the fault shim);
#     it starts first (COST) and overlaps with the model generators and the other tests;
#   - each selected test T gets a twin asan/T that runs T of build/asan/ through its ctest, with
#     T's own fixtures plus tt_asan_build, but none of build/asan/'s fixtures (-FA): build/asan/
#     reads this build's generated models through links (build/asan/testmodels* ->
#     build/testmodels*), so nothing is generated twice. A twin whose T is missing fails
#     (--no-tests=error), and a skipped T shows as skipped, not passed.
# TT_SANITIZE_SUITE=OFF leaves it out (a machine without clang); CI runs it.
option(TT_SANITIZE_SUITE "Run the sanitize label (ASan + UBSan) in the default suite" ON)
if(NOT TT_SANITIZE_SUITE)
  return()
endif()
set(TT_SANITIZE_DIR ${CMAKE_BINARY_DIR}/asan)
file(MAKE_DIRECTORY ${TT_SANITIZE_DIR})
# Every directory of generated models a test file names (${CMAKE_BINARY_DIR}/testmodels*) is a
# link in build/asan/ to this build's, made now: the generators fill them later.
file(GLOB tt_test_files ${CMAKE_SOURCE_DIR}/tests/*.cmake)
set(tt_model_dirs)
foreach(f IN LISTS tt_test_files)
  file(STRINGS ${f} lines REGEX "CMAKE_BINARY_DIR}/testmodels")
  string(REGEX MATCHALL "CMAKE_BINARY_DIR}/testmodels[A-Za-z0-9_]*" found "${lines}")
  list(APPEND tt_model_dirs ${found})
endforeach()
list(TRANSFORM tt_model_dirs REPLACE "^CMAKE_BINARY_DIR}/" "")
list(REMOVE_DUPLICATES tt_model_dirs)
foreach(d IN LISTS tt_model_dirs)
  if(NOT IS_SYMLINK ${TT_SANITIZE_DIR}/${d})
    file(CREATE_LINK ${CMAKE_BINARY_DIR}/${d} ${TT_SANITIZE_DIR}/${d} SYMBOLIC)
  endif()
endforeach()
add_test(NAME sanitize_build
         COMMAND ${CMAKE_COMMAND} -E env BUILD_DIR=${TT_SANITIZE_DIR}
                 ${CMAKE_SOURCE_DIR}/scripts/build.sh --sanitize-suite)
set_tests_properties(sanitize_build PROPERTIES FIXTURES_SETUP tt_asan_build
                     LABELS "setup;sanitize" TIMEOUT 5400 COST 5000)
get_property(tt_all_tests DIRECTORY PROPERTY TESTS)
foreach(t IN LISTS tt_all_tests)
  if(t MATCHES "${TT_SANITIZE_EXCLUDE}" OR NOT t MATCHES "${TT_SANITIZE_TESTS}")
    continue()
  endif()
  string(REGEX REPLACE "([][.*+?^$(){}|\\\\])" "\\\\\\1" exact "${t}")
  add_test(NAME asan/${t}
           COMMAND ${CMAKE_CTEST_COMMAND} --test-dir ${TT_SANITIZE_DIR} -R "^${exact}$" -FA "."
                   --no-tests=error --output-on-failure)
  set(fixtures tt_asan_build)
  get_test_property(${t} FIXTURES_REQUIRED required)
  if(required)
    list(APPEND fixtures ${required})
  endif()
  tt_sanitize_timeout(timeout ${t})
  math(EXPR timeout "${timeout} + 60")  # the twin waits for the test's own timeout
  set_tests_properties(asan/${t} PROPERTIES LABELS sanitize FIXTURES_REQUIRED "${fixtures}"
                       SKIP_REGULAR_EXPRESSION "\\*\\*\\*Skipped" TIMEOUT ${timeout})
endforeach()
set_tests_properties(asan/unit PROPERTIES COST 600)  # the longest twin: first once the build is done

