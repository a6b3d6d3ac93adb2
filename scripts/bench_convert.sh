#!/usr/bin/env bash
# Benchmark (not a test, not run by CI): `tinytrace convert MODEL --input-shape ...` against two
# floors taken in the same run (issue #17):
#   load — build/jit_load_floor: a process that only calls torch::jit::load on the file;
#   cp   — cp of the file into the output directory: the cost of writing that many bytes once.
# The goal is convert / (load + cp) <= 1.3 with convert's peak RSS no higher than the load
# floor's. Each repetition runs load, cp and convert back to back (alternating, after one warm-up
# each, so the file is in the page cache for all); the medians of the wall times are printed with
# the ratio and the peak RSS of each (/usr/bin/time -v).
#
#   scripts/bench_convert.sh [MODEL_NAME...]   (default: resnet50 vit_b_16 vit_l_16)
#   BENCH_REPS=5 scripts/bench_convert.sh      (repetitions, default 3)
#   BENCH_VERIFY=1 scripts/bench_convert.sh    (also convert --input-shape ... --verify)
#
# resnet50 and vit_b_16 come from scripts/gen_models.py into build/testmodels (generated when
# missing; that vit_b_16 has image_size=64: the parameters of the 224 one except a shorter
# position embedding). vit_l_16 (torchvision, traced at 224, 1.2 GiB, random weights with a fixed
# seed) is generated here, at benchmark time, into build/benchmodels (never committed).
set -euo pipefail
# On a Debian older than 13 this re-runs the script inside the Debian 13 root (scripts/debian13.sh).
source "$(dirname "${BASH_SOURCE[0]}")/debian13.sh"
tt_debian13_reexec "$0" "$@"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
reps=${BENCH_REPS:-3}
verify=${BENCH_VERIFY:-0}
models=("$@")
((${#models[@]})) || models=(resnet50 vit_b_16 vit_l_16)

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
bench_dir=$build/benchmodels
test_models=()
for name in "${models[@]}"; do
  [[ $name == vit_l_16 ]] || test_models+=("$name")
done
if ((${#test_models[@]})); then
  only=$(IFS=,; echo "${test_models[*]}")
  /usr/bin/python3 "$root/scripts/gen_models.py" --out "$models_dir" --only "$only" >&2
fi

# model_file NAME: the archive; model_shapes NAME: its --input-shape arguments, one a line.
model_file() {
  if [[ $1 == vit_l_16 ]]; then echo "$bench_dir/vit_l_16.pt"; else echo "$models_dir/$1.pt"; fi
}
model_shapes() {
  if [[ $1 == vit_l_16 ]]; then
    echo 1,3,224,224
  else
    /usr/bin/python3 -c 'import json, sys; print("\n".join(json.load(open(sys.argv[1]))["input_shape_args"]))' \
      "$models_dir/$1.json"
  fi
}
for name in "${models[@]}"; do
  if [[ $name == vit_l_16 && ! -s $bench_dir/vit_l_16.pt ]]; then
    mkdir -p "$bench_dir"
    echo "generating $bench_dir/vit_l_16.pt (torchvision vit_l_16, traced at 1x3x224x224)" >&2
    /usr/bin/python3 - "$bench_dir/vit_l_16.pt" <<'PY'
import sys
import torch
import torchvision

torch.manual_seed(0)
m = torchvision.models.vit_l_16(weights=None).eval()
with torch.no_grad():
    torch.jit.trace(m, torch.randn(1, 3, 224, 224)).save(sys.argv[1] + ".partial")
import os
os.replace(sys.argv[1] + ".partial", sys.argv[1])
PY
  fi
done

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

printf '%-10s %9s %7s %7s %9s %7s %9s %9s %11s %11s\n' model size_MiB load_s cp_s convert_s ratio \
  verify_s load_MB convert_MB verify_MB
for name in "${models[@]}"; do
  model=$(model_file "$name")
  out=$tmp/out_$name
  shape_args=()
  while IFS= read -r a; do shape_args+=(--input-shape "$a"); done < <(model_shapes "$name")
  rm -f "$tmp/load" "$tmp/cp" "$tmp/convert" "$tmp/verify"
  convert=("$build/tinytrace" convert "$model" -o "$out" "${shape_args[@]}")
  "$build/jit_load_floor" "$model" >/dev/null  # warm-ups
  rm -rf "$out" && mkdir -p "$out" && cp "$model" "$out/copy.pt"
  rm -rf "$out" && "${convert[@]}" >/dev/null 2>&1
  for ((i = 0; i < reps; i++)); do
    run_once load "$build/jit_load_floor" "$model"
    rm -rf "$out" && mkdir -p "$out"
    run_once cp cp "$model" "$out/copy.pt"
    rm -rf "$out"
    run_once convert "${convert[@]}"
    if [[ $verify == 1 ]]; then
      rm -rf "$out"
      run_once verify "${convert[@]}" --verify
    fi
  done
  rm -rf "$out"
  [[ $verify == 1 ]] || { echo "0 0" >"$tmp/verify"; }
  awk -v n="$name" -v mib="$(($(stat -c %s "$model") / 1048576))" \
    -v lt="$(median "$tmp/load" 1)" -v pt="$(median "$tmp/cp" 1)" -v ct="$(median "$tmp/convert" 1)" \
    -v vt="$(median "$tmp/verify" 1)" -v lr="$(median "$tmp/load" 2)" -v cr="$(median "$tmp/convert" 2)" \
    -v vr="$(median "$tmp/verify" 2)" 'BEGIN {
    printf "%-10s %9d %7.3f %7.3f %9.3f %7.2f %9.3f %9.1f %11.1f %11.1f\n", n, mib, lt, pt, ct,
      ct / (lt + pt), vt, lr / 1024, cr / 1024, vr / 1024
  }'
done
echo "(medians of $reps runs each, alternating load, cp, convert; convert = tinytrace convert MODEL" \
     "--input-shape ... writing NAME.py, NAME.pth, NAME.json; ratio = convert_s / (load_s + cp_s);" \
     "*_MB = peak RSS; verify_s (BENCH_VERIFY=1) = the same with --verify; $(nproc) cores," \
     "$(date -u '+%F %H:%M UTC'), load average at the end: $(cut -d' ' -f1-3 /proc/loadavg))"
