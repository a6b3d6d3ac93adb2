#!/usr/bin/python3
"""Converts every model of one group of scripts/gen_onnx_op_models.py and checks each (issue 21).

    onnx_batch.py TINYTRACE MODELS_DIR GROUP WORK_DIR [--only NAME,...]

For each model of MODELS_DIR/GROUP.json:
  - "refused": TEXT: `tinytrace convert` exits 4 with one `error:` line naming an ONNX op and
    containing TEXT (then only `note:` lines, one placing the error at its node) and writes
    nothing;
  - otherwise `tinytrace convert` exits 0, and the generated NAME.py with NAME.pth loaded strictly
    gives the torch module's outputs on every saved input set (max|d| / max|expected| <= the
    model's tolerance; integer and boolean outputs exactly; NaN/inf in the same places); then
    the same with `--fuse` (tolerance 1e-3) when the model says so;
  - pyflakes is quiet on every NAME.py written.
Prints one line per conversion and exits 1 when any fails.
"""
import zygote
zygote.delegate()  # first, before torch is imported: Note [Torch zygote]
import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys

import torch

from e2e_outputs import passed


def compare(got, expected, tol):
    if not isinstance(got, torch.Tensor):
        got = torch.tensor(got)
    if tuple(got.shape) != tuple(expected.shape):
        return f"shape {tuple(got.shape)}, expected {tuple(expected.shape)}"
    if got.dtype != expected.dtype:
        return f"dtype {got.dtype}, expected {expected.dtype}"
    if not expected.is_floating_point():
        return None if torch.equal(got, expected) else f"{int((got != expected).sum())} element(s) differ"
    if not torch.equal(got.isnan(), expected.isnan()):
        return "NaN in other places"
    inf = expected.isinf()
    if not torch.equal(got[inf], expected[inf]):
        return "infinities differ"
    fin = expected.isfinite()
    if not fin.any():
        return None
    diff = float((got[fin].double() - expected[fin].double()).abs().max())
    scale = max(float(expected[fin].abs().max()), 1e-6)
    return None if diff / scale <= tol else f"max|d| {diff:.3g} (relative {diff / scale:.3g} > {tol})"


def outputs_problem(got, expected, tol):
    """None when the output lists agree (count, then compare per output), else what differs."""
    if len(got) != len(expected):
        return f"{len(got)} outputs, expected {len(expected)}"
    for j, (g, e) in enumerate(zip(got, expected)):
        why = compare(g, e, tol)
        if why:
            return f"output {j}: {why}"
    return None


def flatten(x):
    if isinstance(x, (tuple, list)):
        return [t for item in x for t in flatten(item)]
    return [x]


def load(out_dir, name):
    """The module class NAME.py defines (the one named NAME), built, NAME.pth loaded strictly."""
    spec = importlib.util.spec_from_file_location(f"gen_{name}_{abs(hash(out_dir))}",
                                                  os.path.join(out_dir, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    classes = [v for v in vars(mod).values() if isinstance(v, type) and
               issubclass(v, torch.nn.Module) and v.__module__ == mod.__name__]
    top = [c for c in classes if c.__name__ == name] or classes
    m = top[-1]()
    m.load_state_dict(torch.load(os.path.join(out_dir, name + ".pth")), strict=True)
    return m.eval()


def refusal_problem(r, texts, out_dir):
    """None when the finished conversion `r` refused as it must: exit 4, one `error:` line holding
    every text of `texts`, then only `note:` lines (one placing the error at its node), nothing
    left in out_dir; else what is wrong."""
    err = [line for line in r.stderr.splitlines() if line.strip()]
    if r.returncode != 4:
        return f"exit {r.returncode}, expected 4: {r.stderr.strip()[:300]}"
    if not err or not err[0].startswith("error:") or \
            any(not line.startswith("note:") for line in err[1:]):
        return f"expected one error: line then note: lines, got {err}"
    missing = [t for t in texts if t not in err[0]]
    if missing:
        return f"the error does not say {missing}: {err[0]}"
    if not any(line.startswith("note: at node %") for line in err[1:]):
        return f"no note placing the error at its node: {err}"
    return f"files left behind: {os.listdir(out_dir)}" if os.listdir(out_dir) else None


def pyflakes_problem(paths):
    """None when pyflakes is quiet on every file of `paths`, else what it says."""
    if not paths:
        return None
    r = subprocess.run([sys.executable, "-m", "pyflakes"] + paths, capture_output=True, text=True)
    if r.stdout.strip() or r.returncode != 0:
        return "pyflakes: " + (r.stdout + r.stderr).strip()[:2000]
    return None


def convert(tinytrace, models, name, out_dir, extra):
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    cmd = [tinytrace, "convert", os.path.join(models, name + ".onnx"), "-o", out_dir,
           "--name", name] + extra
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


def check(tinytrace, models, entry, work, extra, tol):
    """None when the model passes, else what fails."""
    name = entry["name"]
    out_dir = os.path.join(work, name + ("_fuse" if extra else ""))
    r = convert(tinytrace, models, name, out_dir, extra)
    if entry.get("refused"):
        return refusal_problem(r, ["ONNX op ", entry["refused"]], out_dir)
    if r.returncode != 0:
        return f"exit {r.returncode}: {r.stderr.strip()[:500]}"
    try:
        m = load(out_dir, name)
        sets = torch.load(os.path.join(models, name + ".inputs.pt"))
        expected = torch.load(os.path.join(models, name + ".expected.pt"))
        for k, (ins, exp) in enumerate(zip(sets, expected)):
            with torch.no_grad():
                got = flatten(m(*[t.clone() for t in ins]))
            why = outputs_problem(got, exp, tol)
            if why:
                return f"input set {k}: {why}"
    except Exception as e:  # the generated code must run
        return f"the generated code fails: {type(e).__name__}: {str(e)[:400]}"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tinytrace")
    ap.add_argument("models")
    ap.add_argument("group")
    ap.add_argument("work")
    ap.add_argument("--only")
    args = ap.parse_args()
    with open(os.path.join(args.models, args.group + ".json")) as f:
        entries = json.load(f)["models"]
    if args.only:
        entries = [e for e in entries if e["name"] in args.only.split(",")]
    if not entries:
        print(f"FAIL: no models in group {args.group}", file=sys.stderr)
        return 1
    os.makedirs(args.work, exist_ok=True)
    failures, written = [], []
    for e in entries:
        runs = [([], e["tol"])]
        if e.get("fuse") and not e.get("refused"):
            runs.append((["--fuse"], max(e["tol"], 1e-3)))
        for extra, tol in runs:
            why = check(args.tinytrace, args.models, e, args.work, extra, tol)
            what = e["name"] + (" --fuse" if extra else "")
            print(f"{'ok  ' if not why else 'FAIL'} {what}{': ' + why if why else ''}", flush=True)
            if why:
                failures.append(f"{what}: {why}")
            elif not e.get("refused"):
                written.append(os.path.join(args.work, e["name"] + ("_fuse" if extra else ""),
                                            e["name"] + ".py"))
    why = pyflakes_problem(written)
    if why:
        failures.append(why)
    for f in failures:
        print(f"FAIL: {f}", file=sys.stderr)
    print(f"{len(entries)} model(s), {len(failures)} failure(s)")
    return 1 if failures else passed(args.work)


if __name__ == "__main__":
    sys.exit(main())
