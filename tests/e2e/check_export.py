#!/usr/bin/python3
"""End-to-end checks of torch.export archives (.pt2, scripts/gen_export_models.py).

    check_export.py TINYTRACE MODEL.pt2 OUT_DIR [extra convert args...]
    check_export.py --expect-exit CODE TEXT TINYTRACE MODEL.pt2 OUT_DIR

First form: tests/e2e/run_convert.py (convert with the --input-shape of MODEL.json, the CLI's
verdict, scripts/check_model.py against ep.module()'s saved outputs and the archive's state_dict)
with --verify and the extra arguments; then, for a model exported with a dynamic batch
(MODEL.json "dynamic"), the generated class with NAME.pth must give what
torch.export.load(MODEL).module() gives at two other batch sizes (3 and 5), and where the program
computes with the batch size (aten.sym_size.int) the forward must read it (`.size(0)`), not hold
the example's number.

Second form: the conversion must exit CODE with exactly one error line containing TEXT, no stack
trace, and write nothing.
Exit 0 and one OK line on success; `FAIL: ...` and exit 1 otherwise.
"""
import zygote
zygote.delegate()  # first, before torch is imported: Note [Torch zygote]
import importlib.util
import json
import os
import subprocess
import sys

from e2e_outputs import kept_env, passed

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PYTHON = "/usr/bin/python3"


def die(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def expect_exit(code, text, tinytrace, model, out_dir):
    cmd = [tinytrace, "convert", model, "-o", out_dir]
    print("+", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    sys.stderr.write(r.stderr)
    if r.returncode != int(code):
        die(f"exit {r.returncode}, expected {code}")
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    if len(errors) != 1:
        die(f"expected exactly one error line, got {len(errors)}")
    if text not in errors[0]:
        die(f"the error does not say '{text}': {errors[0]}")
    if "Traceback" in r.stderr or "terminate called" in r.stderr:
        die("the CLI printed a stack trace")
    if os.path.exists(out_dir) and os.listdir(out_dir):
        die(f"files were written to {out_dir}: {os.listdir(out_dir)}")
    print(f"OK: exit {code} with '{text}'")
    return 0


def load_checker():
    spec = importlib.util.spec_from_file_location("check_model", os.path.join(REPO, "scripts", "check_model.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def check_dynamic(model, out_dir, meta):
    import torch
    cm = load_checker()
    name = os.path.splitext(os.path.basename(model))[0]
    py_path = os.path.join(out_dir, name + ".py")
    try:
        _, generated, _ = cm.load_generated(py_path, name)
        generated.load_state_dict(cm.load_state_dict_file(os.path.join(out_dir, name + ".pth")), strict=True)
        src = open(py_path, encoding="utf-8").read()
        forward = src[src.index("def forward"):]
        # Where the program computes with the batch size, so must the generated code.
        if "aten.sym_size.int" in meta.get("torch_ops", []) and ".size(0)" not in forward:
            cm.fail(f"{py_path}: the program reads the dynamic batch size, the generated forward never "
                    "calls .size(0)")
        original = torch.export.load(model).module()
        gen = torch.Generator().manual_seed(7)
        worst = 0.0
        for batch in (3, 5):
            inputs = []
            for i in meta["inputs"]:
                shape = [batch] + i["shape"][1:]
                if i["dtype"] == "int64":
                    inputs.append(torch.randint(0, i.get("high") or 10, shape, generator=gen))
                else:
                    inputs.append(torch.randn(shape, generator=gen))
            with torch.no_grad():
                expected = original(*inputs)
            got = cm.run(generated, inputs, f"batch {batch}")
            rel, _ = cm.compare(got, expected, meta.get("tolerance", 1e-4), f"{name} at batch {batch}")
            worst = max(worst, rel)
    except cm.CheckFailed as e:
        die(str(e))
    print(f"check_export: {name} dynamic batch OK at 3 and 5 (rel_err={worst:.2e})")


def main():
    args = sys.argv[1:]
    if args and args[0] == "--expect-exit":
        if len(args) != 6:
            die(__doc__)
        return expect_exit(*args[1:])
    if len(args) < 3:
        die(__doc__)
    tinytrace, model, out_dir = args[:3]
    extra = args[3:]
    if "--verify" not in extra:
        extra = ["--verify"] + extra
    r = subprocess.run(
        [PYTHON, os.path.join(HERE, "run_convert.py"), tinytrace, model, out_dir] + extra,
        env=kept_env())
    if r.returncode != 0:
        die(f"run_convert.py failed for {model}")
    with open(os.path.splitext(model)[0] + ".json") as f:
        meta = json.load(f)
    if meta.get("dynamic"):
        check_dynamic(model, out_dir, meta)
    return passed(out_dir)


if __name__ == "__main__":
    sys.exit(main())
