#!/usr/bin/python3
"""check_tolerance.py: --verify's tolerance, proven with a perturbation of known size (issue 5).

    check_tolerance.py TINYTRACE MODEL.pt WORK_DIR --input-shape SPEC

The test-only pass test-perturb-weight{delta=D} adds D to one weight element. The relative
difference R it causes is read from the report of a run with --tolerance 1; D is then scaled so
that R lies between 1e-4 and 1e-3, and:
- without --tolerance the default 1e-4 rejects it (exit 5, nothing written);
- with --fuse (BatchNorm folded) the default 1e-3 accepts it;
- --tolerance R/2 rejects it and --tolerance 2R accepts it.
Exit 0 and one OK line on success; `FAIL: ...` and exit 1 otherwise.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys


def fail(msg, r=None):
    print(f"FAIL: {msg}", flush=True)
    if r is not None:
        print(f"--- exit {r.returncode}\n--- stdout:\n{r.stdout}--- stderr:\n{r.stderr}", flush=True)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tinytrace")
    ap.add_argument("model")
    ap.add_argument("work")
    ap.add_argument("--input-shape", required=True)
    args = ap.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    n = [0]

    def convert(delta, *extra, want):
        n[0] += 1
        out = os.path.join(args.work, f"run{n[0]}")
        passes = f"test-perturb-weight{{delta={delta!r}}}"
        cmd = [args.tinytrace, "convert", args.model, "-o", out, "--name", "m", "--input-shape",
               args.input_shape, "--verify", "--passes", passes, *extra]
        # test-perturb-weight is a test-only pass: the CLI knows it only with TT_TEST_PASSES=1.
        r = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "TT_TEST_PASSES": "1"})
        if r.returncode != want:
            fail(f"{' '.join(cmd)}: exit {r.returncode}, expected {want}", r)
        if want == 5:
            if os.path.exists(out) and os.listdir(out):
                fail(f"exit 5 but {out} holds {os.listdir(out)}")
            if "FAILED" not in r.stderr.splitlines()[0]:
                fail("exit 5 without a FAILED verdict on the error line", r)
            return None
        if "max |diff|" not in r.stdout or "max relative difference" not in r.stdout:
            fail("the verdict line lacks the figures", r)
        with open(os.path.join(out, "m.json"), encoding="utf-8") as f:
            return json.load(f)["verification"]

    def rel_of(delta):
        v = convert(delta, "--tolerance", "1", want=0)
        return v["results"][0]["max_rel_diff"]

    delta = 1e-3
    rel = rel_of(delta)
    if not rel > 0:
        fail(f"a perturbation of {delta} changed nothing (relative difference {rel})")
    delta *= 3e-4 / rel  # aim at a relative difference of 3e-4 (the map is nearly linear)
    rel = rel_of(delta)
    if not 1.5e-4 < rel < 7e-4:
        fail(f"could not place the relative difference between 1e-4 and 1e-3 (got {rel})")

    convert(delta, want=5)                        # default 1e-4
    v = convert(delta, "--fuse", want=0)          # BatchNorm folded: default 1e-3
    if v["results"][0]["tolerance"] != 1e-3:
        fail(f"--fuse: tolerance {v['results'][0]['tolerance']}, expected the 1e-3 default")
    convert(delta, "--tolerance", repr(rel / 2), want=5)
    v = convert(delta, "--tolerance", repr(rel * 2), want=0)
    if abs(v["results"][0]["tolerance"] - rel * 2) > 1e-12:
        fail(f"--tolerance not used: the report says {v['results'][0]['tolerance']}")
    print(f"OK: relative difference {rel:.3g}: rejected by the 1e-4 default and by --tolerance "
          f"{rel / 2:.3g}, accepted with --fuse (1e-3) and by --tolerance {rel * 2:.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
