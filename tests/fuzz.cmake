# Fuzz targets (issue 19; README "Reliability"), included from the top-level CMakeLists.txt. One
# executable per entry point, tests/fuzz/fuzz_<target>.cpp, with the oracle of Note [Fuzz oracle]:
#   fuzz_tir        the .tir parser, then printer, verifier and re-parse
#   fuzz_onnx       the ONNX loader
#   fuzz_archive    format detection and the zip checks made before LibTorch reads a file
#   fuzz_cli_specs  --input-shape and --passes parsing
# With clang and TT_SANITIZE (build-asan/, Note [Sanitizer build]) they are libFuzzer binaries;
# otherwise they link the plain driver tests/fuzz/fuzz_main.cpp (Note [Plain fuzz driver]), so the
# default build runs them with no extra compiler. The seed corpus of each is testdata/fuzz/<target>
# (regression inputs of fixed findings included) plus the testdata files of its format.
# Label fuzz: fuzz_short_<target> replays the seeds, then mutates them for TT_FUZZ_SECONDS.
# Longer runs: scripts/fuzz.sh TARGET SECONDS.
set(TT_FUZZ_SECONDS 20 CACHE STRING "Seconds of mutation per fuzz target in the suite")
set(TT_FUZZ_SEEDS_tir ${CMAKE_SOURCE_DIR}/testdata/fuzz/tir ${CMAKE_SOURCE_DIR}/testdata/tir
    ${CMAKE_SOURCE_DIR}/testdata/passes)
set(TT_FUZZ_SEEDS_onnx ${CMAKE_SOURCE_DIR}/testdata/fuzz/onnx)
set(TT_FUZZ_SEEDS_archive ${CMAKE_SOURCE_DIR}/testdata/fuzz/archive ${CMAKE_SOURCE_DIR}/testdata/models)
set(TT_FUZZ_SEEDS_cli_specs ${CMAKE_SOURCE_DIR}/testdata/fuzz/cli_specs)
foreach(target tir onnx archive cli_specs)
  set(exe fuzz_${target})
  add_executable(${exe} ${CMAKE_SOURCE_DIR}/tests/fuzz/${exe}.cpp)
  target_include_directories(${exe} PRIVATE ${CMAKE_SOURCE_DIR}/tests/fuzz)
  target_link_libraries(${exe} PRIVATE tt_loaders)
  if(TT_LIBFUZZER)
    target_link_options(${exe} PRIVATE -fsanitize=fuzzer)
  else()
    target_sources(${exe} PRIVATE ${CMAKE_SOURCE_DIR}/tests/fuzz/fuzz_main.cpp)
  endif()
  # libFuzzer adds what it finds to its first corpus directory: a scratch one, never testdata.
  set(work ${CMAKE_BINARY_DIR}/fuzz_work/${target})
  add_test(NAME fuzz_short_${target}
           COMMAND ${CMAKE_COMMAND} -E env TMPDIR=${work}
                   $<TARGET_FILE:${exe}> -max_total_time=${TT_FUZZ_SECONDS} -seed=1
                   -rss_limit_mb=4096 ${work}/corpus ${TT_FUZZ_SEEDS_${target}}
           WORKING_DIRECTORY ${work})
  set_tests_properties(fuzz_short_${target} PROPERTIES LABELS fuzz TIMEOUT 600)
  file(MAKE_DIRECTORY ${work}/corpus)
endforeach()
