#!/usr/bin/env bash
# Configures and builds tinytrace into build/ (RelWithDebInfo): the CLI, the unit-test binary, the
# jit_load_floor benchmark helper, the test op library (tests/oplib.cmake) and the man page and
# bash completion (tinytrace_doc; tools/install.cmake), so that `cmake --install build` and cpack
# find everything they install. BUILD_DIR overrides the directory.
#
# --sanitize: build-asan/ instead (BUILD_DIR overrides it too), with clang++ and TT_SANITIZE=ON
# (AddressSanitizer + UBSan, and libFuzzer for the fuzz targets; Note [Sanitizer build] in
# CMakeLists.txt): the CLI, the unit tests, the fault shim and the fuzz targets. scripts/fuzz.sh
# uses its fuzz targets; `ctest --test-dir build-asan -L sanitize` runs the label there.
# --sanitize-suite: what the default suite's sanitize label runs (Note [Sanitizer tests in the
# default suite] in tests/sanitize.cmake; its setup test sanitize_build calls this with
# BUILD_DIR=build/asan): the same sanitizers at -O0 without the libFuzzer instrumentation (Note
# [Sanitizer build]), and only the CLI, the unit tests and the fault shim.
set -euo pipefail
# On a Debian older than 13 this re-runs the script inside the Debian 13 root (scripts/debian13.sh).
source "$(dirname "${BASH_SOURCE[0]}")/debian13.sh"
tt_debian13_reexec "$0" "$@"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
sanitize=0 libfuzzer=ON opt=-O1
case ${1:-} in
  --sanitize) sanitize=1; shift ;;
  --sanitize-suite) sanitize=1 libfuzzer=OFF opt=-O0; shift ;;
esac
if ((sanitize)); then
  build_dir=${BUILD_DIR:-$root/build-asan}
else
  build_dir=${BUILD_DIR:-$root/build}
fi
jobs=$(nproc 2>/dev/null || echo 2)

# A build directory configured on another system (a Debian 12 host build, an older LibTorch)
# would mix libraries: start its CMake cache afresh (objects are rebuilt, ccache makes it cheap).
system="$(cat /etc/debian_version 2>/dev/null) libtorch $(dpkg-query -W -f='${Version}' libtorch-dev 2>/dev/null)"
if [[ -f $build_dir/CMakeCache.txt && $(cat "$build_dir/.tt-system" 2>/dev/null) != "$system" ]]; then
  echo "build: $build_dir was configured on another system; reconfiguring" >&2
  rm -rf "$build_dir/CMakeCache.txt" "$build_dir/CMakeFiles"
fi
fuzz_targets=(fuzz_tir fuzz_onnx fuzz_archive fuzz_cli_specs)
if ((sanitize)); then
  if ! command -v clang++ >/dev/null; then
    echo "build: --sanitize needs clang++ and its sanitizer runtimes (clang, libclang-rt-dev): run scripts/setup.sh" >&2
    exit 2
  fi
  cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
    -DTT_SANITIZE=ON -DTT_SANITIZE_FUZZER=$libfuzzer -DTT_SANITIZE_OPT=$opt >/dev/null
  echo "$system" >"$build_dir/.tt-system"
  targets=(tinytrace tinytrace_tests tt_fault_shim)
  [[ $libfuzzer == ON ]] && targets+=("${fuzz_targets[@]}")
  cmake --build "$build_dir" -j"$jobs" --target "${targets[@]}"
  echo "build: ok ($build_dir, ASan + UBSan)" >&2
  exit 0
fi
cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
echo "$system" >"$build_dir/.tt-system"
cmake --build "$build_dir" -j"$jobs" --target tinytrace tinytrace_tests jit_load_floor tt_test_ops tt_fault_shim \
  "${fuzz_targets[@]}" tinytrace_doc
echo "build: ok ($build_dir)" >&2
