#!/usr/bin/env bash
# THE test command: installs what is missing, builds, and runs every test (unit, e2e, bad input)
# through CTest. .ci/run calls exactly this. Extra arguments go to ctest (e.g. -L e2e, -R resnet).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${BUILD_DIR:-$root/build}

"$root/scripts/setup.sh"
BUILD_DIR=$build_dir "$root/scripts/build.sh"

start=$SECONDS
status=0
ctest --test-dir "$build_dir" --output-on-failure -j2 "$@" || status=$?
echo
if ((status == 0)); then
  echo "test.sh: all tests passed in $((SECONDS - start)) s"
else
  echo "test.sh: FAILED (ctest exit $status) after $((SECONDS - start)) s;" \
       "rerun one test with: ctest --test-dir $build_dir -R NAME --output-on-failure -V"
fi
exit "$status"
