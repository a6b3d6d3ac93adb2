#!/usr/bin/env bash
# Benchmark (not a test, not run by CI): inference time of a converted model at deployment speed,
# for resnet50 and mobilenet_v2 (issue 17, "the converted model at deployment speed"). Per model,
# side by side in one Python process (alternating rounds, medians), with ratios to the original:
#
#   original      the original TorchScript archive (torch.jit.load)
#   py_plain      the generated Python module (tinytrace convert), weights loaded
#   py_fuse       the same with --fuse (BatchNorm folded)
#   ts_fuse       NAME.pt of --fuse --emit torchscript
#   orig_ofi      the original after torch.jit.freeze + torch.jit.optimize_for_inference, in
#                 memory (LibTorch's MKLDNN conversion included: it cannot be saved)
#   ts_ofi        NAME.pt of --fuse --emit torchscript --optimize-for-inference (frozen and
#                 optimized by LibTorch, saved; Note [Optimizing NAME.pt for inference])
#
#   scripts/bench_fuse.sh [MODEL_NAME...]     (default: resnet50 mobilenet_v2)
#   BENCH_REPS=30 BENCH_SIZE=224 BENCH_THREADS=2 scripts/bench_fuse.sh
#
# Defaults: 15 rounds (BENCH_REPS), input 1x3x224x224 (BENCH_SIZE), 2 threads (BENCH_THREADS).
# BENCH_TEXPR=1 leaves LibTorch's TensorExpr (NNC) fuser on; by default it is off for every
# variant. Debian 13's LibTorch 2.6 compiles the fusion groups of a frozen graph with LLVM on the
# second call, and on this project's 2-core VM that compile of resnet50's frozen graph (orig_ofi
# and ts_ofi alike) had not finished after 5 minutes: the benchmark never got past its warm-up.
# Every variant runs under torch.inference_mode() after 3 warm-up calls (the profiling executor
# optimizes TorchScript graphs on the first calls). A variant that cannot run prints "n/a" and
# its error on stderr; the script never fails on timing noise. Models come from
# scripts/gen_models.py into build/testmodels (generated when missing); they are traced at 64x64
# but are fully convolutional up to the adaptive pool, so BENCH_SIZE sets the input size.
set -euo pipefail
# On a Debian older than 13 this re-runs the script inside the Debian 13 root (scripts/debian13.sh).
source "$(dirname "${BASH_SOURCE[0]}")/debian13.sh"
tt_debian13_reexec "$0" "$@"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
reps=${BENCH_REPS:-15}
texpr=${BENCH_TEXPR:-0}
texpr_state=$([[ $texpr == 1 ]] && echo on || echo off)
size=${BENCH_SIZE:-224}
threads=${BENCH_THREADS:-2}
models=("$@")
((${#models[@]})) || models=(resnet50 mobilenet_v2)
if [[ ! -x $build/tinytrace ]]; then
  echo "error: $build/tinytrace not found — run scripts/build.sh first" >&2
  exit 2
fi
models_dir=$build/testmodels
only=$(IFS=,; echo "${models[*]}")
/usr/bin/python3 "$root/scripts/gen_models.py" --out "$models_dir" --only "$only" >&2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo |
  cut -d: -f2 | sed 's/^ *//')), load $(cut -d' ' -f1-3 /proc/loadavg); input 1x3x${size}x${size}," \
  "${threads} threads, TensorExpr fuser ${texpr_state}, median of ${reps} alternating rounds: ms" \
  "(time / the original's time)"
printf '%-13s %16s %16s %16s %16s %16s %16s\n' model original py_plain py_fuse ts_fuse orig_ofi ts_ofi
for m in "${models[@]}"; do
  tt=("$build/tinytrace" convert "$models_dir/$m.pt" -q)
  "${tt[@]}" -o "$tmp/$m/plain" --emit python,weights > /dev/null
  "${tt[@]}" -o "$tmp/$m/fuse" --fuse --emit python,weights,torchscript > /dev/null
  # --input-shape: the size the convs' weights are prepacked for (Note [Prepacked convolutions in
  # NAME.pt]); the models were traced at 64x64.
  "${tt[@]}" -o "$tmp/$m/ofi" --fuse --emit torchscript --optimize-for-inference \
    --input-shape "1,3,${size},${size}" > /dev/null
  /usr/bin/python3 - "$models_dir/$m.pt" "$tmp/$m" "$m" "$reps" "$size" "$threads" "$texpr" <<'PY'
import importlib.util, os, statistics, sys, time
import torch
path, out, name = sys.argv[1], sys.argv[2], sys.argv[3]
reps, size, threads = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
torch.set_num_threads(threads)
torch._C._jit_set_texpr_fuser_enabled(sys.argv[7] == "1")


def generated(d):
    spec = importlib.util.spec_from_file_location(f"{name}_{os.path.basename(d)}",
                                                  os.path.join(d, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    cls = [v for v in vars(mod).values() if isinstance(v, type)
           and issubclass(v, torch.nn.Module) and v.__module__ == mod.__name__][-1]
    net = cls()
    net.load_state_dict(torch.load(os.path.join(d, name + ".pth"), weights_only=True),
                        strict=True)
    return net.eval()


def original_ofi():
    return torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.load(path).eval()))


makers = {
    "original": lambda: torch.jit.load(path).eval(),
    "py_plain": lambda: generated(os.path.join(out, "plain")),
    "py_fuse": lambda: generated(os.path.join(out, "fuse")),
    "ts_fuse": lambda: torch.jit.load(os.path.join(out, "fuse", name + ".pt")).eval(),
    "orig_ofi": original_ofi,
    "ts_ofi": lambda: torch.jit.load(os.path.join(out, "ofi", name + ".pt")).eval(),
}
x = torch.randn(1, 3, size, size)
nets = {}
with torch.inference_mode():
    for label, make in makers.items():
        try:
            f = make()
            for _ in range(3):  # warm-up: the profiling executor specializes on the first calls
                f(x)
            nets[label] = f
        except Exception as e:  # a variant that cannot run is reported, not fatal
            print(f"{name} {label}: n/a ({str(e).strip().splitlines()[-1][:200]})",
                  file=sys.stderr)
    times = {label: [] for label in nets}
    for _ in range(reps):
        for label, f in nets.items():
            t0 = time.perf_counter()
            f(x)
            times[label].append((time.perf_counter() - t0) * 1e3)
med = {label: statistics.median(t) for label, t in times.items()}
base = med.get("original")
cells = []
for label in makers:
    if label not in med:
        cells.append("n/a")
    elif base:
        cells.append(f"{med[label]:.1f} ({med[label] / base:.2f}x)")
    else:
        cells.append(f"{med[label]:.1f}")
print(f"{name:13s} " + " ".join(f"{c:>16s}" for c in cells))
PY
done
