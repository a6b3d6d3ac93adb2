#!/usr/bin/python3
"""--fuse / --quant-prep structure parity between the ONNX and the TorchScript export of one
model (issue 7).

    onnx_fuse_parity.py TINYTRACE NAME.onnx WORK_DIR [FLAG]

Converts NAME.onnx and NAME.ts.pt (both from scripts/gen_onnx_models.py) with FLAG (default
`--fuse`; `--quant-prep` for the eager-quantization preparation) and compares the op histograms of the two reports, after mapping each op to the computation it
stands for: a module op and its functional form count as the same (nn.ReLU == F.relu,
nn.MaxPool2d == F.max_pool2d), prim.* ops (constants, lists) and eval-mode no-ops (nn.Dropout,
nn.Identity) are left out. Then checks the ONNX conversion's outputs with
scripts/check_model.py. Fails with the differing counts.
"""
import collections
import json
import os
import re
import shutil
import subprocess
import sys

from e2e_outputs import passed

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKER = os.path.join(os.path.dirname(os.path.dirname(HERE)), "scripts", "check_model.py")
PYTHON = "/usr/bin/python3"
NO_OPS = {"dropout", "identity"}
# Module class (lower case, no separators) -> the functional name it computes.
ALIASES = {"maxpool1d": "max_pool1d", "maxpool2d": "max_pool2d", "maxpool3d": "max_pool3d",
           "avgpool1d": "avg_pool1d", "avgpool2d": "avg_pool2d", "avgpool3d": "avg_pool3d",
           "adaptiveavgpool1d": "adaptive_avg_pool1d", "adaptiveavgpool2d": "adaptive_avg_pool2d",
           "adaptiveavgpool3d": "adaptive_avg_pool3d", "leakyrelu": "leaky_relu",
           "logsoftmax": "log_softmax"}


def die(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def normalise(hist):
    out = collections.Counter()
    for op, n in hist.items():
        if op.startswith("prim."):
            continue
        key = re.sub(r"^(nn|F|torch|Tensor)\.", "", op)
        key = ALIASES.get(key.lower(), key.lower())
        if key in NO_OPS:
            continue
        out[key] += n
    return out


def convert(tinytrace, model, out_dir, shapes, flag):
    shutil.rmtree(out_dir, ignore_errors=True)
    cmd = [tinytrace, "convert", model, "-o", out_dir, flag]
    for s in shapes:
        cmd += ["--input-shape", s]
    print("+", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    sys.stderr.write(r.stderr)
    if r.returncode != 0:
        die(f"tinytrace convert {flag} {os.path.basename(model)} exited {r.returncode}")
    reports = [f for f in os.listdir(out_dir) if f.endswith(".json")]
    if len(reports) != 1:
        die(f"expected one report in {out_dir}, found {reports}")
    with open(os.path.join(out_dir, reports[0])) as f:
        return json.load(f)["summary"]["op_histogram"]


def main():
    if len(sys.argv) not in (4, 5):
        die(__doc__)
    tinytrace, onnx_model, work = sys.argv[1:4]
    flag = sys.argv[4] if len(sys.argv) == 5 else "--fuse"
    base = os.path.splitext(onnx_model)[0]
    name = os.path.basename(base)
    with open(base + ".json") as f:
        meta = json.load(f)
    shapes = meta["input_shape_args"]
    h_onnx = convert(tinytrace, onnx_model, os.path.join(work, name), shapes, flag)
    h_ts = convert(tinytrace, base + ".ts.pt", os.path.join(work, name + "_ts"), shapes, flag)
    a, b = normalise(h_onnx), normalise(h_ts)
    if a != b:
        diff = {k: (a.get(k, 0), b.get(k, 0)) for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)}
        die(f"{flag} structures differ (op: onnx count, torchscript count): {diff}")
    print(f"onnx_fuse_parity: {name}: same {flag} structure: {dict(sorted(a.items()))}", flush=True)
    check = [PYTHON, CHECKER, os.path.join(work, name), name, onnx_model,
             "--tol", str(meta.get("tolerance", 1e-4)), "--state-dict-from", "none"]
    print("+", " ".join(check), flush=True)
    if subprocess.run(check).returncode != 0:
        die(f"check_model.py failed for the {flag} ONNX conversion")
    return passed(os.path.join(work, name), os.path.join(work, name + "_ts"))


if __name__ == "__main__":
    sys.exit(main())
