#!/usr/bin/env bash
# Benchmark (not a test, not run by CI): inference time of the original TorchScript model vs the
# `tinytrace convert --fuse` output (the generated Python module with its weights), for resnet50
# and mobilenet_v2, measured side by side in one Python process (alternating rounds, median of
# each), printed as fused / original.
#
#   scripts/bench_fuse.sh [MODEL_NAME...]     (default: resnet50 mobilenet_v2)
#   BENCH_REPS=30 BENCH_SIZE=224 scripts/bench_fuse.sh
#
# Models come from scripts/gen_models.py into build/testmodels (generated when missing); they are
# traced at 64x64 but are fully convolutional up to the adaptive pool, so BENCH_SIZE (default 224)
# sets the benchmark input size.
set -euo pipefail
# On a Debian older than 13 this re-runs the script inside the Debian 13 root (scripts/debian13.sh).
source "$(dirname "${BASH_SOURCE[0]}")/debian13.sh"
tt_debian13_reexec "$0" "$@"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
reps=${BENCH_REPS:-20}
size=${BENCH_SIZE:-224}
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

printf '%-16s %12s %12s %8s\n' model original_ms fused_ms ratio
for m in "${models[@]}"; do
  "$build/tinytrace" convert "$models_dir/$m.pt" -o "$tmp/$m" --fuse -q > /dev/null
  /usr/bin/python3 - "$models_dir/$m.pt" "$tmp/$m" "$m" "$reps" "$size" <<'PY'
import importlib.util, os, statistics, sys, time
import torch
path, out, name, reps, size = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
torch.set_num_threads(os.cpu_count() or 1)
orig = torch.jit.load(path).eval()
spec = importlib.util.spec_from_file_location(name, os.path.join(out, name + ".py"))
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
cls = [v for v in vars(mod).values() if isinstance(v, type) and issubclass(v, torch.nn.Module)
       and v.__module__ == mod.__name__][0]
fused = cls()
fused.load_state_dict(torch.load(os.path.join(out, name + ".pth")), strict=True)
fused.eval()
x = torch.randn(1, 3, size, size)
times = {"orig": [], "fused": []}
with torch.no_grad():
    for f in (orig, fused):
        f(x)  # warm-up
    for _ in range(reps):
        for label, f in (("orig", orig), ("fused", fused)):
            t0 = time.perf_counter()
            f(x)
            times[label].append((time.perf_counter() - t0) * 1e3)
o, fz = statistics.median(times["orig"]), statistics.median(times["fused"])
print(f"{name:16s} {o:12.2f} {fz:12.2f} {fz / o:8.3f}")
PY
done
