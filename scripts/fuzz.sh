#!/usr/bin/env bash
# Runs one fuzz target for a while: scripts/fuzz.sh TARGET SECONDS [extra libFuzzer flags]
#   TARGET: tir | onnx | archive | cli_specs (tests/fuzz/fuzz_TARGET.cpp, tests/fuzz.cmake)
# With libFuzzer (clang, the default here): builds build-asan/ if needed (scripts/build.sh
# --sanitize: ASan + UBSan + coverage-guided), seeds a work corpus in build-asan/fuzz_corpus/TARGET
# from testdata/fuzz/TARGET and the testdata files of its format (kept between runs, so runs
# continue where the last one stopped) and runs the target for SECONDS. FUZZ_ENGINE=plain uses the
# default build's plain driver instead (build/, Note [Plain fuzz driver]; no sanitizers).
# A finding is written to crash-* in the current directory; copy it to testdata/fuzz/TARGET/ as a
# regression input once it is fixed (the suite replays that directory on every run).
# The last line is the count of inputs run.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/debian13.sh"
tt_debian13_reexec "$0" "$@"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if (($# < 2)); then
  echo "usage: scripts/fuzz.sh TARGET SECONDS [libFuzzer flags]   (TARGET: tir onnx archive cli_specs)" >&2
  exit 2
fi
target=$1 seconds=$2
shift 2
case $target in
  tir) seeds=("$root/testdata/fuzz/tir" "$root/testdata/tir") ;;
  onnx) seeds=("$root/testdata/fuzz/onnx") ;;
  archive) seeds=("$root/testdata/fuzz/archive" "$root/testdata/models" "$root/testdata/models/torch113") ;;
  cli_specs) seeds=("$root/testdata/fuzz/cli_specs") ;;
  *) echo "error: fuzz.sh: unknown target '$target' — one of tir, onnx, archive, cli_specs" >&2; exit 2 ;;
esac
if [[ $target == tir ]]; then
  while IFS= read -r d; do seeds+=("$d"); done < <(find "$root/testdata/passes" -mindepth 1 -type d | sort)
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:suppressions=$root/tests/sanitize/ubsan.supp}
if [[ ${FUZZ_ENGINE:-libfuzzer} == plain ]]; then
  build_dir=${BUILD_DIR:-$root/build}
  [[ -x $build_dir/fuzz_$target ]] || BUILD_DIR=$build_dir "$root/scripts/build.sh"
  exec "$build_dir/fuzz_$target" -max_total_time="$seconds" "$@" "${seeds[@]}"
fi
build_dir=${BUILD_DIR:-$root/build-asan}
[[ -x $build_dir/fuzz_$target ]] || BUILD_DIR=$build_dir "$root/scripts/build.sh" --sanitize
corpus=$build_dir/fuzz_corpus/$target
mkdir -p "$corpus" "$build_dir/fuzz_tmp"
# libFuzzer reads the seed directories but adds new inputs to the first one only: the work corpus.
set +e
start=$SECONDS
TMPDIR=$build_dir/fuzz_tmp "$build_dir/fuzz_$target" -max_total_time="$seconds" -rss_limit_mb=4096 \
  -print_final_stats=1 "$@" "$corpus" "${seeds[@]}" 2>&1 | tee "$build_dir/fuzz_$target.log" |
  grep -E '^(#[0-9]+ +(INITED|DONE|pulse)|stat::number_of_executed_units|==[0-9]+==|SUMMARY|fuzz finding|artifact_prefix|Test unit written)'
status=${PIPESTATUS[0]}
set -e
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$build_dir/fuzz_$target.log" | tail -1)
echo "fuzz.sh: $target: ${runs:-?} inputs in $((SECONDS - start)) s (limit $seconds s), exit $status (log: $build_dir/fuzz_$target.log)"
exit "$status"
