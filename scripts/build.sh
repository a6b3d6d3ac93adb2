#!/usr/bin/env bash
# Configures and builds tinytrace into build/ (RelWithDebInfo): the CLI, the unit-test binary
# and the jit_load_floor benchmark helper. BUILD_DIR overrides the directory.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${BUILD_DIR:-$root/build}
jobs=$(nproc 2>/dev/null || echo 2)

cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build_dir" -j"$jobs" --target tinytrace tinytrace_tests jit_load_floor
echo "build: ok ($build_dir)" >&2
