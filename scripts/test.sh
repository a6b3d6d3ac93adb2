#!/usr/bin/env bash
# THE test command: installs what is missing, builds, and runs every test (unit, e2e, bad input,
# lint) through CTest. .ci/run calls exactly this. Extra arguments go to ctest (-L e2e, -R resnet).
set -euo pipefail
# On a Debian older than 13 this re-runs the script inside the Debian 13 root (scripts/debian13.sh).
source "$(dirname "${BASH_SOURCE[0]}")/debian13.sh"
tt_debian13_reexec "$0" "$@"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# --sanitize: only the sanitizer label (README "Reliability"; Note [Sanitizer tests in the default
# suite] in tests/sanitize.cmake), which the plain run includes: it builds build/asan/ (ASan +
# UBSan) and runs the unit, .tir pass, bad-input and fault tests and a few small e2e models there,
# on this build's generated models. Same as `scripts/test.sh -L sanitize`.
if [[ ${1:-} == --sanitize ]]; then
  shift
  set -- -L sanitize "$@"
fi
build_dir=${BUILD_DIR:-$root/build}
"$root/scripts/setup.sh"
BUILD_DIR=$build_dir "$root/scripts/build.sh"

start=$SECONDS
junit=$build_dir/Testing/junit.xml
rm -f "$junit"
status=0
ctest --test-dir "$build_dir" --output-on-failure -j2 --output-junit "$junit" "$@" || status=$?

# One plain summary line ("N passed, N failed, N skipped") from CTest's JUnit file.
attr() { sed -n "s/^[[:space:]]*$1=\"\([0-9]*\)\".*/\1/p" "$junit" | head -1; }
echo
if [[ -f $junit ]]; then
  total=$(attr tests) failed=$(attr failures) skipped=$(attr skipped) disabled=$(attr disabled)
  skipped=$((${skipped:-0} + ${disabled:-0}))
  echo "test.sh: $((total - failed - skipped)) passed, $failed failed, $skipped skipped" \
       "($((SECONDS - start)) s)"
fi
if ((status != 0)); then
  echo "test.sh: FAILED (ctest exit $status); rerun one test with:" \
       "ctest --test-dir $build_dir -R NAME --output-on-failure -V"
fi
exit "$status"
