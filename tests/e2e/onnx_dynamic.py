#!/usr/bin/python3
"""ONNX dynamic-batch driver: the code converted from a model exported with a dynamic batch axis
works at the export's batch size and at another one.

    onnx_dynamic.py TINYTRACE MODEL.onnx OUT_DIR

Runs tests/e2e/run_convert.py (convert + scripts/check_model.py on MODEL.inputs.pt), then
check_model.py again on MODEL.inputs_b.pt / MODEL.expected_b.pt (another batch size, written by
scripts/gen_onnx_models.py), and asserts the two input sets really differ in batch size.
"""
import zygote
zygote.delegate()  # first, before torch is imported: Note [Torch zygote]
import json
import os
import subprocess
import sys

import torch

from e2e_outputs import kept_env, passed

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PYTHON = "/usr/bin/python3"


def die(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def main():
    if len(sys.argv) != 4:
        die(__doc__)
    tinytrace, model, out_dir = sys.argv[1:4]
    base = os.path.splitext(model)[0]
    name = os.path.basename(base)
    a = torch.load(base + ".inputs.pt")
    b = torch.load(base + ".inputs_b.pt")
    if a[0].shape[0] == b[0].shape[0]:
        die("the two input sets have the same batch size")
    r = subprocess.run([PYTHON, os.path.join(HERE, "run_convert.py"), tinytrace, model, out_dir],
                       env=kept_env())
    if r.returncode != 0:
        die(f"run_convert.py failed (exit {r.returncode})")
    with open(base + ".json") as f:
        tol = json.load(f).get("tolerance", 1e-4)
    check = [PYTHON, os.path.join(REPO, "scripts", "check_model.py"), out_dir, name, model,
             "--tol", str(tol), "--state-dict-from", "none",
             "--inputs", base + ".inputs_b.pt", "--expected", base + ".expected_b.pt"]
    print("+", " ".join(check), flush=True)
    r = subprocess.run(check)
    if r.returncode != 0:
        die(f"check_model.py failed at batch {b[0].shape[0]} (exit {r.returncode})")
    print(f"onnx_dynamic: OK at batch {a[0].shape[0]} and {b[0].shape[0]}")
    return passed(out_dir)


if __name__ == "__main__":
    sys.exit(main())
