# The sanitizer label (issue 19; README "Reliability"), included from the top-level CMakeLists.txt.
# Only in a TT_SANITIZE build (build-asan/, Note [Sanitizer build]): the unit tests, the .tir pass
# tests, the bad-input and fault tests, the fuzz targets (libFuzzer) and a few small e2e models
# (one traced, one scripted, one ONNX-free int64 input, one torch 1.13 archive) get the label
# sanitize and run against the ASan/UBSan binaries. ASan's leak check stays on; LibTorch's own
# allocations that live until exit (operator registries, thread pools) are suppressed by
# tests/sanitize/lsan.supp, which names LibTorch's libraries only — a leak in our code still fails.
# UBSan stops at the first report (-fno-sanitize-recover); tests/sanitize/ubsan.supp holds what is
# LibTorch's.
if(NOT TT_SANITIZE)
  return()
endif()
set(TT_SANITIZE_ENV
    "ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1:detect_odr_violation=0"
    "LSAN_OPTIONS=suppressions=${CMAKE_SOURCE_DIR}/tests/sanitize/lsan.supp:print_suppressions=0"
    "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:suppressions=${CMAKE_SOURCE_DIR}/tests/sanitize/ubsan.supp")
# The two bad-input cases of a custom op library (tests/oplib.cmake) are left out: their fixture
# loads tt_test_ops into Python, which an ASan-instrumented library cannot join (no ASan runtime
# in python3), and scripts/build.sh --sanitize does not build it.
get_property(tt_all_tests DIRECTORY PROPERTY TESTS)
foreach(t IN LISTS tt_all_tests)
  if(t MATCHES "^badinput_custom_op_library_")
    continue()
  endif()
  if(t MATCHES "^(unit|passes/.*|badinput_.*|fault_.*|fuzz_short_.*|e2e_(tiny_cnn|functional_acts|nested_seq_bn|embedding|lstm|t113_traced_lstm))$")
    set_property(TEST ${t} APPEND PROPERTY LABELS sanitize)
    set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT ${TT_SANITIZE_ENV})
  endif()
endforeach()
