#!/usr/bin/python3
"""--emit torchscript end to end: NAME.pt loads with torch.jit.load, has the original's forward
signature and state_dict keys (equal to NAME.pth's, in order), and matches the original model.

    check_torchscript.py TINYTRACE TESTMODELS_DIR OUT_DIR MODEL [--fuse]

Relative difference max|ours - original| / max|original| must be <= 1e-4 (1e-3 with --fuse, which
folds BatchNorm), on the example inputs scripts/gen_models.py saved (MODEL.inputs.pt).
The conversion also runs --verify with MODEL.json's --input-shape: the CLI must print an OK
verdict for the emitted NAME.pt ("verify (torchscript): OK") and NAME.json must carry its figures.
"""
import json
import os
import shutil
import subprocess
import sys


def die(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def flat(x):
    import torch
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for e in x for t in flat(e)]
    if isinstance(x, dict):
        return [t for k in x for t in flat(x[k])]
    return []


def main():
    if len(sys.argv) < 5:
        die(__doc__)
    tinytrace, models_dir, out_dir, name = sys.argv[1:5]
    fuse = "--fuse" in sys.argv[5:]
    tol = 1e-3 if fuse else 1e-4
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    original_path = os.path.join(models_dir, name + ".pt")
    with open(os.path.join(models_dir, name + ".json")) as f:
        shape_args = json.load(f)["input_shape_args"]
    cmd = [tinytrace, "convert", original_path, "-o", out_dir, "--emit", "weights,torchscript,report",
           "--verify"]
    for a in shape_args:
        cmd += ["--input-shape", a]
    if fuse:
        cmd.append("--fuse")
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        die(f"{' '.join(cmd)} exited {r.returncode}: {r.stderr.strip()}")
    written = sorted(os.listdir(out_dir))
    if written != sorted([name + ".pt", name + ".pth", name + ".json"]):
        die(f"expected {name}.pt, {name}.pth and {name}.json in {out_dir}, found {written}")
    if "verify (torchscript): OK" not in r.stdout:
        die(f"--verify --emit torchscript printed no 'verify (torchscript): OK' verdict: {r.stdout.strip()}")
    with open(os.path.join(out_dir, name + ".json")) as f:
        verification = json.load(f)["verification"]
    ts = [e for e in verification["results"] if e["engine"] == "torchscript"]
    if len(ts) != 1 or not ts[0]["passed"] or not verification["passed"]:
        die(f"NAME.json has no passing torchscript verification entry: {verification}")
    if not ts[0]["outputs"] or not ts[0]["max_rel_diff"] <= tol:
        die(f"torchscript verification figures missing or beyond {tol:g}: {ts[0]}")

    import torch

    ours = torch.jit.load(os.path.join(out_dir, name + ".pt")).eval()
    original = torch.jit.load(original_path).eval()

    weights = torch.load(os.path.join(out_dir, name + ".pth"))
    keys, want_keys = list(ours.state_dict().keys()), list(weights.keys())
    if keys != want_keys:
        extra = sorted(set(keys) - set(want_keys))[:5]
        lacking = sorted(set(want_keys) - set(keys))[:5]
        die(f"state_dict keys differ from {name}.pth (extra {extra}, missing {lacking}, "
            f"{len(keys)} vs {len(want_keys)})")
    for k, v in ours.state_dict().items():
        if not torch.equal(v, weights[k]):
            die(f"state_dict[{k!r}] differs from {name}.pth")

    def arg_types(m):
        return [str(a.type) for a in m.forward.schema.arguments[1:]]

    if arg_types(ours) != arg_types(original):
        die(f"forward signature differs: {arg_types(ours)} vs original {arg_types(original)}")

    inputs = torch.load(os.path.join(models_dir, name + ".inputs.pt"))
    if not isinstance(inputs, (tuple, list)):
        inputs = (inputs,)
    with torch.no_grad():
        want = flat(original(*[i.clone() for i in inputs]))
        got = flat(ours(*[i.clone() for i in inputs]))
    if len(want) != len(got):
        die(f"{len(got)} output tensor(s), the original has {len(want)}")
    worst = 0.0
    for i, (a, b) in enumerate(zip(got, want)):
        if a.shape != b.shape:
            die(f"output {i}: shape {list(a.shape)}, the original's {list(b.shape)}")
        if b.is_complex():  # compared as (real, imaginary) pairs
            a, b = torch.view_as_real(a.resolve_conj()), torch.view_as_real(b.resolve_conj())
        if not b.is_floating_point():  # integer and bool outputs: equal
            if a.dtype != b.dtype or not torch.equal(a, b):
                die(f"output {i}: {a.dtype} values differ from the original's {b.dtype} ones")
            continue
        denom = b.abs().max().item() if b.numel() else 0.0
        diff = (a.double() - b.double()).abs().max().item() if b.numel() else 0.0
        rel = diff / denom if denom > 0 else diff
        worst = max(worst, rel)
        if not rel <= tol:
            die(f"output {i}: relative difference {rel:.3g} > {tol:g} (max |diff| {diff:.3g})")
    print(f"OK: {name}{' --fuse' if fuse else ''}: NAME.pt loads, {len(keys)} state_dict keys equal "
          f"NAME.pth's, worst relative difference {worst:.3g} <= {tol:g}")


if __name__ == "__main__":
    main()
