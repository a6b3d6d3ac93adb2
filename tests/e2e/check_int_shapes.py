#!/usr/bin/python3
"""The int-shapes import pass end to end: traced shape arithmetic comes out as Python ints.

    check_int_shapes.py TINYTRACE OUT_DIR MODEL[:strict]...

For each MODEL (a generated test model: MODEL.pt, .json, .inputs.pt, .expected.pt beside it):
tests/e2e/run_convert.py with --verify (the outputs on the saved inputs, scripts/check_model.py),
then NAME.py has no `int(` round trip (and with `:strict` no `torch.tensor(` either), and the
generated module still computes sizes from its input: at batch 2 its outputs match the original
TorchScript model's. Then a model traced here with every rewritten op (add, sub, rsub, mul, neg,
floor_divide, remainder, div floor/trunc, true division), negative intermediate values included,
is converted and compared with the traced module at several input shapes.
"""
import zygote
zygote.delegate()  # first, before torch is imported: Note [Torch zygote]
import importlib.util
import os
import re
import subprocess
import sys

import torch

from e2e_outputs import kept_env, passed

HERE = os.path.dirname(os.path.abspath(__file__))
RUN_CONVERT = os.path.join(HERE, "run_convert.py")
ROUND_TRIPS = {"int": re.compile(r"(?<![\w.])int\("), "torch.tensor": re.compile(r"torch\.tensor\(")}


def die(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def load_generated(out_dir, name):
    spec = importlib.util.spec_from_file_location(f"gen_{name}", os.path.join(out_dir, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    classes = [c for c in vars(mod).values() if isinstance(c, type)
               and issubclass(c, torch.nn.Module) and c.__module__ == mod.__name__]
    top = [c for c in classes if c.__name__.lower() == name.replace("_", "").lower()] or classes[-1:]
    m = top[0]()
    m.load_state_dict(torch.load(os.path.join(out_dir, name + ".pth")), strict=True)
    return m.eval()


def close(a, b, tol=1e-4):
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(close(x, y, tol) for x, y in zip(a, b))
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if not a.is_floating_point():
        return torch.equal(a, b)
    return (a - b).abs().max().item() <= tol * max(1.0, b.abs().max().item())


def check_round_trips(py_path, strict):
    text = open(py_path, encoding="utf-8").read()
    for what, pat in ROUND_TRIPS.items():
        if what == "torch.tensor" and not strict:
            continue
        hits = [line.strip() for line in text.splitlines() if pat.search(line)]
        if hits:
            die(f"{py_path}: {what}(...) round trip left: {hits[:3]}")


def check_model(tinytrace, out_root, spec):
    model, _, flag = spec.partition(":")
    name = os.path.splitext(os.path.basename(model))[0]
    out_dir = os.path.join(out_root, name)
    r = subprocess.run([sys.executable, RUN_CONVERT, tinytrace, model, out_dir, "--verify"],
                       env=kept_env())
    if r.returncode != 0:
        die(f"{name}: run_convert.py failed")
    check_round_trips(os.path.join(out_dir, name + ".py"), flag == "strict")
    inputs = torch.load(os.path.splitext(model)[0] + ".inputs.pt")
    inputs = list(inputs) if isinstance(inputs, (tuple, list)) else [inputs]
    batch2 = [torch.cat([x, x.flip(0) * 0.5]) if x.is_floating_point() else torch.cat([x, x])
              for x in inputs]
    orig = torch.jit.load(model).eval()
    gen = load_generated(out_dir, name)
    with torch.no_grad():
        want, got = orig(*batch2), gen(*batch2)
    if not close(got, want):
        die(f"{name}: at batch 2 the generated module differs from the original")
    print(f"ok {name}: no round trips, batch 2 matches")


class IntOps(torch.nn.Module):
    def forward(self, x):
        b, c, h, w = x.shape  # traced: 0-dim tensors (prim.NumToTensor)
        a = (h - 10) // 3  # negative when h < 10
        r = (h - 10) % 4
        r2 = h % -3
        t = torch.div(w, 2, rounding_mode="trunc")
        f = torch.div(h - 10, 4, rounding_mode="floor")
        t_neg = torch.div(h - 10, 3, rounding_mode="trunc")  # may be negative: stays a tensor op
        q = w / 4  # true division: a float tensor
        s = 5 - h
        n = -a
        y = x.reshape(b * c, h * w)[:, : t + 1]
        z = y * (a + r + r2 + f + n + s)  # a real tensor use of an int
        return z, a + r2, t_neg, q, b * c * t


def check_traced(tinytrace, out_root):
    out_dir = os.path.join(out_root, "int_ops")
    os.makedirs(out_dir, exist_ok=True)
    model = os.path.join(out_dir, "int_ops.pt")
    traced = torch.jit.trace(IntOps(), torch.randn(2, 3, 8, 6), check_trace=False)
    traced.save(model)
    conv = os.path.join(out_dir, "out")
    r = subprocess.run([tinytrace, "convert", model, "-o", conv, "--input-shape", "2,3,8,6",
                        "--verify"], capture_output=True, text=True)
    if r.returncode != 0 or "verify (interpreter): OK" not in r.stdout:
        die(f"int_ops: convert failed:\n{r.stdout}{r.stderr}")
    check_round_trips(os.path.join(conv, "int_ops.py"), False)
    text = open(os.path.join(conv, "int_ops.py"), encoding="utf-8").read()
    for want in ("//", "%"):
        if want not in text:
            die(f"int_ops.py: no `{want}`: the int arithmetic was not rewritten")
    gen = load_generated(conv, "int_ops")
    for shape in [(2, 3, 8, 6), (1, 2, 13, 4), (3, 1, 5, 9), (2, 2, 10, 7), (1, 1, 1, 1)]:
        x = torch.randn(*shape)
        with torch.no_grad():
            want, got = traced(x), gen(x)
        if not close(got, want):
            die(f"int_ops at {shape}: {got} != {want}")
    print("ok int_ops: every op matches the traced module at 5 input shapes")


def main():
    if len(sys.argv) < 3:
        die(__doc__)
    tinytrace, out_root = sys.argv[1:3]
    for spec in sys.argv[3:]:
        check_model(tinytrace, out_root, spec)
    check_traced(tinytrace, out_root)
    return passed(out_root)


if __name__ == "__main__":
    sys.exit(main())
