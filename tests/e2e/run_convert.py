#!/usr/bin/python3
"""End-to-end test driver for one model: `tinytrace convert`, then scripts/check_model.py.

    run_convert.py TINYTRACE MODEL.pt|MODEL.onnx OUT_DIR [extra convert args...]

With --verify in the convert arguments the CLI's verdict line must say OK.

Reads MODEL.json (written by scripts/gen_models.py) for the --input-shape arguments, the tolerance
and the warnings the report must contain; "skip_state_dict": true (ONNX models, from
scripts/gen_onnx_models.py) skips the check that the original's state_dict loads; "expect_ops"
lists ops the report's op histogram must contain; "no_fallback": true (scripts/gen_op_models.py)
requires NAME.py without torch.ops.aten calls and NAME.json without aten-fallback warnings;
"convert_args" are added to the convert command (--load-library, --quantized-engine),
"op_libraries", "allow_imports" and "quantized_engine" go to the checker
(scripts/gen_oplib_models.py, scripts/gen_quantized_models.py). OUT_DIR is
emptied first. Fails when the CLI exits non-zero, prints an error, leaves files other than NAME.py/.pth/.json in OUT_DIR (a temporary
file that was never renamed, say), modifies the input, or when the checker fails.
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time

from e2e_outputs import passed

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CHECKER = os.path.join(REPO, "scripts", "check_model.py")
PYTHON = "/usr/bin/python3"


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def die(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def main():
    if len(sys.argv) < 4:
        die(__doc__)
    tinytrace, model, out_dir = sys.argv[1:4]
    extra = sys.argv[4:]
    base = os.path.splitext(model)[0] if model.endswith((".pt", ".pt2", ".onnx")) else model
    name = os.path.basename(base)
    meta_path = base + ".json"
    if not os.path.isfile(meta_path):
        die(f"{meta_path} not found — run scripts/gen_models.py --out {os.path.dirname(model)}")
    with open(meta_path) as f:
        meta = json.load(f)

    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    before = sha256(model)
    cmd = [tinytrace, "convert", model, "-o", out_dir]
    for spec in meta["input_shape_args"]:
        cmd += ["--input-shape", spec]
    cmd += meta.get("convert_args", []) + extra
    print("+", " ".join(cmd), flush=True)
    t0 = time.time()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired:
        die("tinytrace convert did not finish in 900 s")
    elapsed = time.time() - t0
    sys.stdout.write(r.stdout)
    sys.stderr.write(r.stderr)
    if r.returncode != 0:
        die(f"tinytrace convert exited {r.returncode} (expected 0)")
    if any(line.startswith("error:") for line in r.stderr.splitlines()):
        die("tinytrace convert exited 0 but printed an error")
    print(f"convert: {elapsed:.2f} s", flush=True)

    if sha256(model) != before:
        die(f"the input {model} was modified")
    # The report's source hash (OpenSSL's, Note [Source hash]) is the file's SHA-256 as hashlib
    # computes it.
    report_path = os.path.join(out_dir, name + ".json")
    if os.path.isfile(report_path):
        with open(report_path, encoding="utf-8") as f:
            reported = json.load(f)["source"]["sha256"]
        if reported != before:
            die(f"NAME.json's source.sha256 is {reported}, hashlib says {before}")
    # Default --emit is python,weights,report; with other --emit values only check leftovers.
    expected_files = {name + ext for ext in (".py", ".pth", ".json")}
    present = set(os.listdir(out_dir))
    if "--verify" in extra and "verify (interpreter): OK" not in r.stdout:
        die("--verify was given but the CLI printed no 'verify (interpreter): OK' verdict")
    if not any(a.startswith("--emit") for a in extra):
        missing = expected_files - present
        if missing:
            die(f"not written: {', '.join(sorted(missing))}")
        leftovers = present - expected_files
        if leftovers:
            die(f"unexpected files left in {out_dir}: {', '.join(sorted(leftovers))}")

    # "expect_ops": ops the converted graph must contain (nn.TransformerEncoderLayer lifted from its
    # fused kernel, not left as a torch.ops.aten call; the right numbers alone would not show it).
    if meta.get("expect_ops"):
        with open(os.path.join(out_dir, name + ".json"), encoding="utf-8") as f:
            hist = json.load(f)["summary"]["op_histogram"]
        missing = [op for op in meta["expect_ops"] if not hist.get(op)]
        if missing:
            die(f"{name}: {missing} not in the converted graph (ops: {sorted(hist)})")

    # "no_fallback" (scripts/gen_op_models.py): every op is spelled as PyTorch code, so NAME.py
    # has no torch.ops.aten call and NAME.json no aten-fallback warning.
    if meta.get("no_fallback"):
        with open(os.path.join(out_dir, name + ".py"), encoding="utf-8") as f:
            calls = [line.strip() for line in f if "torch.ops.aten" in line]
        if calls:
            die(f"{name}: NAME.py still calls torch.ops.aten: {calls[:3]}")
        with open(os.path.join(out_dir, name + ".json"), encoding="utf-8") as f:
            diags = json.load(f).get("diagnostics", [])
        fallbacks = [d["message"] for d in diags if d.get("code") == "aten-fallback"]
        if fallbacks:
            die(f"{name}: aten-fallback warnings in NAME.json: {fallbacks[:3]}")

    tol = meta.get("tolerance", 1e-4)
    check = [PYTHON, CHECKER, out_dir, name, model, "--tol", str(tol)]
    for w in meta.get("expect_warnings", []):
        check += ["--expect-warning", w]
    for mod in meta.get("allow_imports", []):
        check += ["--allow-import", mod]
    for lib in meta.get("op_libraries", []):
        check += ["--op-library", lib]
    if meta.get("quantized_engine"):
        check += ["--quantized-engine", meta["quantized_engine"]]
    if meta.get("skip_state_dict"):
        # ONNX models: the converted state_dict's keys are the ONNX initializer names.
        check += ["--state-dict-from", "none"]
    print("+", " ".join(check), flush=True)
    sys.stdout.flush()
    r = subprocess.run(check)
    if r.returncode != 0:
        die(f"check_model.py failed for {name} (exit {r.returncode})")
    return passed(out_dir)


if __name__ == "__main__":
    sys.exit(main())
