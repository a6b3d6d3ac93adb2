#!/usr/bin/env bash
# Benchmark (not a test, not run by CI): how much `tinytrace convert` costs compared with the
# floor of only loading the same file with torch::jit::load (build/jit_load_floor), for resnet50
# and vit_b_16; and the same for `convert --input-shape ... --verify` (which also runs the
# original through torch::jit and the IR through the interpreter on seeded inputs; the shapes are
# MODEL.json's --input-shape arguments). All three are measured in this run, alternating, after
# one warm-up each (so the file is in the page cache for all); the ratios of the medians to the
# floor are printed, with the peak RSS of each.
#
#   scripts/bench_convert.sh [MODEL_NAME...]     (default: resnet50 vit_b_16)
#   BENCH_REPS=7 scripts/bench_convert.sh        (repetitions, default 5)
#
# Models come from scripts/gen_models.py into build/testmodels (generated when missing). The
# vit_b_16 there is built with image_size=64: same parameters as the 224 one except a shorter
# position embedding, so loading costs the same.
set -euo pipefail
# On a Debian older than 13 this re-runs the script inside the Debian 13 root (scripts/debian13.sh).
source "$(dirname "${BASH_SOURCE[0]}")/debian13.sh"
tt_debian13_reexec "$0" "$@"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
reps=${BENCH_REPS:-5}
models=("$@")
((${#models[@]})) || models=(resnet50 vit_b_16)

for bin in tinytrace jit_load_floor; do
  if [[ ! -x $build/$bin ]]; then
    echo "error: $build/$bin not found — run scripts/build.sh first" >&2
    exit 2
  fi
done
if [[ ! -x /usr/bin/time ]]; then
  echo "error: /usr/bin/time not found — run scripts/setup.sh (package 'time')" >&2
  exit 2
fi

models_dir=$build/testmodels
only=$(IFS=,; echo "${models[*]}")
/usr/bin/python3 "$root/scripts/gen_models.py" --out "$models_dir" --only "$only" >&2

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# run_once LABEL CMD... : appends "wall_seconds peak_rss_kb" to $tmp/LABEL; fails loudly.
run_once() {
  local label=$1
  shift
  local t0 t1
  t0=$EPOCHREALTIME
  if ! /usr/bin/time -v -o "$tmp/time.txt" "$@" >"$tmp/stdout.txt" 2>"$tmp/stderr.txt"; then
    echo "error: '$*' failed:" >&2
    cat "$tmp/stderr.txt" >&2
    exit 1
  fi
  t1=$EPOCHREALTIME
  local rss
  rss=$(sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): //p' "$tmp/time.txt")
  awk -v a="$t0" -v b="$t1" -v r="$rss" 'BEGIN {printf "%.6f %d\n", b - a, r}' >>"$tmp/$label"
}

median() {  # median of column $2 of file $1
  sort -g -k"$2" "$1" | awk -v c="$2" '{v[NR]=$c} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'
}

printf '%-12s %10s %10s %7s %10s %7s %12s %12s %12s\n' model jit_load_s convert_s ratio verify_s \
  ratio jit_rss_MB convert_rss_MB verify_rss_MB
for name in "${models[@]}"; do
  model=$models_dir/$name.pt
  out=$tmp/out_$name
  shape_args=()
  while IFS= read -r a; do shape_args+=(--input-shape "$a"); done < <(
    /usr/bin/python3 -c 'import json, sys; print("\n".join(json.load(open(sys.argv[1]))["input_shape_args"]))' \
      "$models_dir/$name.json")
  rm -f "$tmp/convert" "$tmp/floor" "$tmp/verify"
  "$build/jit_load_floor" "$model" >/dev/null                       # warm-ups
  "$build/tinytrace" convert "$model" -o "$out" >/dev/null 2>&1 || true
  rm -rf "$out"
  "$build/tinytrace" convert "$model" -o "$out" "${shape_args[@]}" --verify >/dev/null 2>&1 || true
  for ((i = 0; i < reps; i++)); do
    run_once floor "$build/jit_load_floor" "$model"
    rm -rf "$out"
    run_once convert "$build/tinytrace" convert "$model" -o "$out"
    rm -rf "$out"
    run_once verify "$build/tinytrace" convert "$model" -o "$out" "${shape_args[@]}" --verify
  done
  ft=$(median "$tmp/floor" 1)
  ct=$(median "$tmp/convert" 1)
  vt=$(median "$tmp/verify" 1)
  fr=$(median "$tmp/floor" 2)
  cr=$(median "$tmp/convert" 2)
  vr=$(median "$tmp/verify" 2)
  awk -v n="$name" -v ft="$ft" -v ct="$ct" -v vt="$vt" -v fr="$fr" -v cr="$cr" -v vr="$vr" 'BEGIN {
    printf "%-12s %10.3f %10.3f %7.2f %10.3f %7.2f %12.1f %12.1f %12.1f\n", n, ft, ct, ct / ft, vt, vt / ft,
      fr / 1024, cr / 1024, vr / 1024
  }'
done
echo "(medians of $reps runs each, alternating; file: $(basename "$models_dir")/NAME.pt;" \
     "convert writes NAME.py, NAME.pth, NAME.json; verify_s = convert --input-shape ... --verify;" \
     "ratios are to jit_load_s)"
