#!/usr/bin/python3
"""End-to-end driver for one torch.jit.script'ed model (issue 6: control flow).

    run_scripted.py TINYTRACE MODEL.pt OUT_DIR [extra convert args...]
    run_scripted.py --expect-unsupported OP TINYTRACE MODEL.pt OUT_DIR

MODEL.json (scripts/gen_scripted_models.py) lists the model's input sets; together they take every
branch of the model. For each input set K:
  1. `tinytrace convert --verify --verify-inputs MODEL.inputs.K.pt` must exit 0 with the
     interpreter's OK verdict (the interpreter reproduces the original on exactly those inputs);
  2. scripts/check_model.py checks the generated NAME.py on input set K against the scripted
     model's outputs (MODEL.inputs.K.pt / MODEL.expected.K.pt). A model with module state
     ("sequence" in MODEL.json) is checked once instead, calling one instance on every input set
     in order (check_model.py --sequence), as the expected outputs were made.
With --expect-unsupported, the conversion must instead exit 4 with one error line naming OP and a
source location (file.py:line), and write nothing.
With --fuse / --quant-prep among the extra arguments, the report must also show the passes acted:
no BatchNorm left, and (--quant-prep) stubs on the inputs and outputs; --any-model skips that check
(--fuse on models without BatchNorm, tests/builtins.cmake).
"""
import zygote
zygote.delegate()  # first, before torch is imported: Note [Torch zygote]
import json
import os
import re
import shutil
import subprocess
import sys

from e2e_outputs import passed

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CHECKER = os.path.join(REPO, "scripts", "check_model.py")
PYTHON = "/usr/bin/python3"


def die(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def run(cmd):
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd).returncode


def convert(tinytrace, model, out_dir, args, timeout):
    """`tinytrace convert MODEL -o OUT_DIR ARGS` into an emptied OUT_DIR, its output echoed."""
    shutil.rmtree(out_dir, ignore_errors=True)
    cmd = [tinytrace, "convert", model, "-o", out_dir] + args
    print("+", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    sys.stdout.write(r.stdout)
    sys.stderr.write(r.stderr)
    return r


def expect_unsupported(op, tinytrace, model, out_dir):
    r = convert(tinytrace, model, out_dir, [], 300)
    if r.returncode != 4:
        die(f"exit {r.returncode}, expected 4 (unsupported construct)")
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    if len(errors) != 1:
        die(f"expected exactly one error line, got {len(errors)}")
    if op not in errors[0]:
        die(f"the error does not name {op}: {errors[0]}")
    if not re.search(r"\.py:\d+", errors[0]):
        die(f"the error has no source location (file.py:line): {errors[0]}")
    if "Traceback" in r.stderr or "terminate called" in r.stderr:
        die("the CLI printed a stack trace")
    if os.path.exists(out_dir) and os.listdir(out_dir):
        die(f"files were written to {out_dir}: {os.listdir(out_dir)}")
    print(f"OK: exit 4 naming {op} with a source location")
    return 0


def main():
    args = sys.argv[1:]
    if args and args[0] == "--expect-unsupported":
        return expect_unsupported(*args[1:5])
    if len(args) < 3:
        die(__doc__)
    tinytrace, model, out_dir = args[:3]
    extra = args[3:]
    # --any-model: --fuse on a model that may have no BatchNorm (it must still compute the same)
    any_model = "--any-model" in extra
    extra = [a for a in extra if a != "--any-model"]
    base = os.path.splitext(model)[0]
    name = os.path.basename(base)
    with open(base + ".json") as f:
        meta = json.load(f)
    n_sets = meta.get("input_sets", 1)
    for k in range(n_sets):
        inputs, expected = f"{base}.inputs.{k}.pt", f"{base}.expected.{k}.pt"
        convert_args = list(extra)
        if "--verify" not in convert_args:
            convert_args.append("--verify")
        convert_args += ["--verify-inputs", inputs]
        set_args = meta.get("set_input_shape_args", [])  # input sets of different shapes
        specs = set_args[k] if k < len(set_args) else meta["input_shape_args"]
        shapes = [a for spec in specs for a in ("--input-shape", spec)]
        r = convert(tinytrace, model, out_dir, shapes + convert_args, 900)
        if r.returncode != 0:
            die(f"{name}: tinytrace convert exited {r.returncode} (input set {k}: {meta['branches'][k]})")
        if "verify (interpreter): OK" not in r.stdout:
            die(f"{name}: no 'verify (interpreter): OK' verdict (input set {k})")
        if k == 0:
            check_stderr_warnings(name, r.stderr, os.path.join(out_dir, name + ".json"))
        # Folding BatchNorm reassociates float arithmetic: 1e-3 then, as --verify allows.
        restructured = "--fuse" in extra or "--quant-prep" in extra
        tol = 1e-3 if restructured else meta.get("tolerance", 1e-4)
        check = [PYTHON, CHECKER, out_dir, name, model, "--tol", str(tol),
                 "--inputs", inputs, "--expected", expected]
        for mod in meta.get("allow_imports", []):  # torchvision, whose import registers nms
            check += ["--allow-import", mod]
        if restructured:
            check += ["--state-dict-from", "none"]  # folded/fused modules: the keys differ by design
        if meta.get("sequence"):  # module state: one instance called on every set in order
            if k > 0:
                continue
            for j in range(n_sets):
                check += ["--sequence", f"{base}.inputs.{j}.pt", f"{base}.expected.{j}.pt"]
        if run(check) != 0:
            die(f"{name}: the generated NAME.py differs from the original on input set {k} "
                f"(branches {meta['branches'][k]})")
    if not any_model:
        check_structure(name, model, os.path.join(out_dir, name + ".json"), extra, meta)
    check_expected_ops(name, os.path.join(out_dir, name + ".json"), meta)
    print(f"OK: {name}: {n_sets} input set(s) covering {meta['branches']}")
    return passed(out_dir)


def check_stderr_warnings(name, stderr, report_path):
    """Note [Repeated diagnostics on stderr]: each warning of the report shows on stderr once, at
    its first location, with "(and N more like it)" counting the others of the same code and text;
    the report keeps them all."""
    with open(report_path, encoding="utf-8") as f:
        warnings = [d for d in json.load(f)["diagnostics"] if d["severity"] == "warning"]
    groups = {}  # (code, message) -> how many, in first-seen order
    for d in warnings:
        key = (d["code"], d["message"])
        groups[key] = groups.get(key, 0) + 1
    lines = [line for line in stderr.splitlines() if line.startswith("warning: ")]
    if len(lines) != len(groups):
        die(f"{name}: {len(lines)} warning line(s) on stderr for {len(groups)} distinct warning(s) "
            f"({len(warnings)} in all) in the report:\n" + "\n".join(lines))
    for line, ((_, message), n) in zip(lines, groups.items()):
        more = f" (and {n - 1} more like it)" if n > 1 else ""
        if not line.startswith("warning: " + message) or not line.endswith(more) or (
                n == 1 and "more like it)" in line):
            die(f"{name}: stderr line {line!r} does not show the report's warning {message!r} "
                f"x{n}")


def check_expected_ops(name, report_path, meta):
    """The ops MODEL.json says the conversion produces (a scripted nn.LSTM lifted as the nn.LSTM
    module op, not inlined; the right numbers alone would not show the difference)."""
    with open(report_path, encoding="utf-8") as f:
        hist = json.load(f)["summary"]["op_histogram"]
    missing = [op for op in meta.get("expect_ops", []) if not hist.get(op)]
    if missing:
        die(f"{name}: {missing} not in the converted graph (ops: {sorted(hist)})")


def check_structure(name, model, report_path, extra, meta):
    """--fuse / --quant-prep really ran on the scripted graph (equivalence alone would also hold if
    the passes did nothing): no BatchNorm is left, and --quant-prep put a QuantStub on every
    input and a DeQuantStub before the output."""
    if "--fuse" not in extra and "--quant-prep" not in extra:
        return
    import importlib
    import torch
    for mod in meta.get("allow_imports", []):  # torchvision: registers the ops the archive calls
        importlib.import_module(mod)
    bns = sum(1 for m in torch.jit.load(model).modules()
              if getattr(m, "original_name", "").startswith("BatchNorm"))
    with open(report_path, encoding="utf-8") as f:
        hist = json.load(f)["summary"]["op_histogram"]
    left = {op: n for op, n in hist.items() if op.startswith("nn.BatchNorm")}
    if bns == 0:
        die(f"{name}: the model has no BatchNorm, so --fuse/--quant-prep prove nothing here")
    if left:
        die(f"{name}: {left} left after {' '.join(extra)} (the model had {bns} BatchNorm modules)")
    if "--quant-prep" in extra:
        q, dq = hist.get("quant.QuantStub", 0), hist.get("quant.DeQuantStub", 0)
        if q < len(meta["inputs"]) or dq < 1:
            die(f"{name}: {q} QuantStub / {dq} DeQuantStub after --quant-prep")


if __name__ == "__main__":
    sys.exit(main())
