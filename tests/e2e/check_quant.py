#!/usr/bin/python3
"""check_quant.py: end-to-end check of `tinytrace convert --quant-prep` on one model (issue 4).

    check_quant.py TINYTRACE MODEL.pt OUT_DIR [--qat] [--yardstick resnet18|resnet50]
                   [--residual-adds N]

1. converts MODEL.pt with --quant-prep [--qat] --verify (the --input-shape of MODEL.json) and
   emits NAME.py/.pth/.json/.tir;
2. (a) scripts/check_model.py with tolerance 1e-3: NAME.pth loads strictly into the generated
   class and its float outputs match the original's;
3. (b) structure, observed by running the generated model with hooks: every float input goes
   straight into a QuantStub, every float output comes straight out of a DeQuantStub, no module
   instance is reachable under two names or called from two call sites, no BatchNorm reads the output of a Conv/Linear (PTQ
   would have to fold it), the report lists every rewrite (rule, node, scope);
4. (c) PTQ: qnnpack qconfig → torch.ao.quantization.prepare → calibration on 4 random inputs →
   convert → runs; prints the cosine similarity of the int8 output to the float output;
   nn.Embedding ends up as a quantized (weight-only) Embedding, nn.LSTM/GRU/MultiheadAttention
   stay float modules (their `qconfig = None` in the generated code);
   (d) with --qat: prepare_qat → one SGD step → convert → runs;
5. --yardstick NET: the counts (QuantStub, DeQuantStub, FloatFunctional used as add_relu,
   ConvReLU2d, Conv2d outside a fused module) equal those of torchvision's hand-written
   torchvision.models.quantization.NET after fuse_model(), computed here on both sides;
   --fallback OPS: the report's quant_fallback regions (each with its reason) contain these ops;
   --residual-adds N: exactly N FloatFunctional instances used as `add`, and as many nn.ReLU6
   modules as the original model has (quant-prep never changes what the model computes).
Exit 0 and one OK line on success; `FAIL: ...` and exit 1 otherwise.
"""
import zygote
zygote.delegate()  # first, before torch is imported: Note [Torch zygote]
import argparse
import copy
import importlib.util
import json
import os
import subprocess
import sys

import torch

from e2e_outputs import passed
import torch.ao.nn.intrinsic as nni
import torch.ao.nn.quantized as nnq
import torch.ao.quantization as tq

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FF_METHODS = ("add", "add_scalar", "mul", "mul_scalar", "cat", "add_relu")


def fail(msg):
    print(f"FAIL: {msg}", flush=True)
    sys.exit(1)


def flat_tensors(x):
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (tuple, list)):
        return [t for item in x for t in flat_tensors(item)]
    if isinstance(x, dict):
        return [t for k in sorted(x) for t in flat_tensors(x[k])]
    return []


def load_generated(out_dir, name):
    path = os.path.join(out_dir, name + ".py")
    spec = importlib.util.spec_from_file_location(f"tt_quant_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    classes = [v for v in vars(mod).values() if isinstance(v, type)
               and issubclass(v, torch.nn.Module) and v.__module__ == mod.__name__]
    if len(classes) > 1:  # one class per module type: the model is the one named like NAME
        camel = "".join(p[:1].upper() + p[1:] for p in name.split("_"))
        classes = [c for c in classes if c.__name__ == camel]
    if len(classes) != 1:
        fail(f"{path} defines no single model class (looked for the one named like {name})")
    model = classes[0]()
    model.load_state_dict(torch.load(os.path.join(out_dir, name + ".pth")), strict=True)
    return model.eval()


class FFUse:
    """Records which FloatFunctional instances are called through which method."""

    def __init__(self):
        self.uses = {}  # id(instance) -> set of method names
        self.saved = {}

    def __enter__(self):
        for meth in FF_METHODS:
            orig = getattr(nnq.FloatFunctional, meth)
            self.saved[meth] = orig

            def wrapped(ff, *args, _m=meth, _orig=orig, **kw):
                self.uses.setdefault(id(ff), set()).add(_m)
                return _orig(ff, *args, **kw)
            setattr(nnq.FloatFunctional, meth, wrapped)
        return self

    def __exit__(self, *exc):
        for meth, orig in self.saved.items():
            setattr(nnq.FloatFunctional, meth, orig)

    def count(self, meth):
        return sum(1 for ms in self.uses.values() if meth in ms)


def fused_children(model):
    """ids of modules that live inside an intrinsic (fused) module."""
    inner = set()
    for m in model.modules():
        if isinstance(m, nni._FusedModule):
            inner.update(id(c) for c in m.modules() if c is not m)
    return inner


def structure(model, inputs):
    """Runs the float model once with hooks; returns (counts, problems)."""
    problems = []
    inner = fused_children(model)
    stub_in, dequant_out, conv_out = [], [], []
    stub_args = []  # (name, input) of every QuantStub / DeQuantStub call
    bn_inputs = []
    hooks = []
    calls = {}  # id(module) -> (name, number of calls): each call site needs its own instance
    for name, m in model.named_modules():
        if isinstance(m, (tq.QuantStub, tq.DeQuantStub)):
            hooks.append(m.register_forward_pre_hook(
                lambda mod, inp, _n=name: stub_args.append((_n, inp[0]))))
        if name and not isinstance(m, torch.nn.Identity):
            hooks.append(m.register_forward_hook(
                lambda mod, inp, out, _n=name: calls.__setitem__(
                    id(mod), (_n, calls.get(id(mod), (_n, 0))[1] + 1))))
        if isinstance(m, tq.QuantStub):
            hooks.append(m.register_forward_pre_hook(lambda mod, inp: stub_in.append(inp[0])))
        elif isinstance(m, tq.DeQuantStub):
            hooks.append(m.register_forward_hook(lambda mod, inp, out: dequant_out.append(out)))
        elif id(m) not in inner and isinstance(m, (torch.nn.Conv1d, torch.nn.Conv2d,
                                                   torch.nn.Conv3d, torch.nn.Linear)):
            hooks.append(m.register_forward_hook(lambda mod, inp, out: conv_out.append(out)))
        elif id(m) not in inner and isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            hooks.append(m.register_forward_pre_hook(
                lambda mod, inp, _n=name: bn_inputs.append((_n, inp[0]))))
    with FFUse() as ff, torch.no_grad():
        out = model(*inputs)
    for h in hooks:
        h.remove()

    for i, x in enumerate(inputs):
        if isinstance(x, torch.Tensor) and x.is_floating_point():
            if not any(s is x for s in stub_in):
                problems.append(f"float input {i} does not go into a QuantStub")
    for i, y in enumerate(flat_tensors(out)):
        if y.is_floating_point() and not any(d is y for d in dequant_out):
            problems.append(f"float output {i} does not come out of a DeQuantStub")
    for stub, x in stub_args:
        if not (isinstance(x, torch.Tensor) and x.is_floating_point()):
            what = f"a {x.dtype} tensor" if isinstance(x, torch.Tensor) else type(x).__name__
            problems.append(f"stub '{stub}' receives {what}: only float tensors are quantized")
    for bn_name, x in bn_inputs:
        if any(c is x for c in conv_out):
            problems.append(f"BatchNorm '{bn_name}' reads a Conv/Linear output (PTQ would fold it)")

    for n, k in calls.values():
        if k > 1:
            problems.append(f"module '{n}' is called {k} times (shared between call sites)")
    seen = {}
    for name, m in model.named_modules(remove_duplicate=False):
        if name and id(m) in seen and not isinstance(m, torch.nn.Identity):
            problems.append(f"module '{name}' is the same instance as '{seen[id(m)]}'")
        seen.setdefault(id(m), name)

    counts = count_modules(model, ff)
    return counts, problems


def count_modules(model, ff):
    inner = fused_children(model)
    mods = list(model.modules())
    fused = {}
    for m in mods:
        if isinstance(m, nni._FusedModule):
            fused[type(m).__name__] = fused.get(type(m).__name__, 0) + 1
    return {**{k: v for k, v in fused.items() if k != "ConvReLU2d"}, **{
        "QuantStub": sum(isinstance(m, tq.QuantStub) for m in mods),
        "DeQuantStub": sum(isinstance(m, tq.DeQuantStub) for m in mods),
        "FloatFunctional.add_relu": ff.count("add_relu"),
        "FloatFunctional.add": ff.count("add"),
        "ConvReLU2d": sum(isinstance(m, nni.ConvReLU2d) for m in mods),
        "Conv2d (unfused)": sum(type(m) is torch.nn.Conv2d and id(m) not in inner for m in mods),
        "ReLU6": sum(isinstance(m, torch.nn.ReLU6) for m in mods),
        "FloatFunctional": sum(isinstance(m, nnq.FloatFunctional) for m in mods),
    }}


YARDSTICK_KEYS = ("QuantStub", "DeQuantStub", "FloatFunctional.add_relu", "ConvReLU2d",
                  "Conv2d (unfused)")


def torchvision_counts(net, inputs):
    import torchvision.models.quantization as tvq
    ref = getattr(tvq, net)(weights=None, quantize=False).eval()
    ref.fuse_model()
    with FFUse() as ff, torch.no_grad():
        ref(*inputs)
    return count_modules(ref, ff)


def random_like(inputs, gen, batch=None):
    """Random float inputs shaped like `inputs` (with leading dimension `batch` when given)."""
    out = []
    for x in inputs:
        if x.is_floating_point():
            shape = list(x.shape)
            if batch is not None and len(shape) >= 2 and shape[0] == 1:
                shape[0] = batch  # BatchNorm cannot train on one value per channel
            x = torch.randn(shape, generator=gen, dtype=x.dtype)
        out.append(x)
    return out


def cosine(a, b):
    a = torch.cat([t.dequantize().flatten().double() if t.is_quantized else t.flatten().double()
                   for t in flat_tensors(a)])
    b = torch.cat([t.flatten().double() for t in flat_tensors(b)])
    return float(torch.nn.functional.cosine_similarity(a, b, dim=0))


def ptq(model, inputs, gen):
    torch.backends.quantized.engine = "qnnpack"
    m = copy.deepcopy(model).eval()
    m.qconfig = tq.get_default_qconfig("qnnpack")
    prepared = tq.prepare(m, inplace=False)
    with torch.no_grad():
        for _ in range(4):
            prepared(*random_like(inputs, gen))
    q = tq.convert(prepared, inplace=False)
    with torch.no_grad():
        out = q(*inputs)
        ref = model(*inputs)
    check_output_dtypes(out, ref)
    return cosine(out, ref), q


def check_output_dtypes(out, ref):
    """The converted model hands back what the float model does: every output (also inside
    nested tuples/lists) dequantized, integer outputs (topk indices, x.long()) still integers."""
    a, b = flat_tensors(out), flat_tensors(ref)
    if len(a) != len(b):
        fail(f"the converted model returns {len(a)} tensors, the float model {len(b)}")
    for i, (x, y) in enumerate(zip(a, b)):
        if x.is_quantized or x.dtype != y.dtype:
            fail(f"output tensor {i}: {x.dtype} after convert, {y.dtype} before "
                 "(a missing or misplaced DeQuantStub)")


def qat(model, inputs, gen):
    torch.backends.quantized.engine = "qnnpack"
    m = copy.deepcopy(model).train()
    m.qconfig = tq.get_default_qat_qconfig("qnnpack")
    prepared = tq.prepare_qat(m, inplace=False)
    opt = torch.optim.SGD(prepared.parameters(), lr=1e-4)
    out = prepared(*random_like(inputs, gen, batch=2))
    loss = sum(t.float().pow(2).mean() for t in flat_tensors(out))
    opt.zero_grad()
    loss.backward()
    opt.step()
    prepared.eval()
    q = tq.convert(prepared, inplace=False)
    with torch.no_grad():
        out = q(*inputs)
        ref = prepared(*inputs)  # the trained step moved the weights: compare with fake-quant
    check_output_dtypes(out, ref)
    return cosine(out, ref)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tinytrace")
    ap.add_argument("model")
    ap.add_argument("out_dir")
    ap.add_argument("--qat", action="store_true")
    ap.add_argument("--yardstick", choices=["resnet18", "resnet50"])
    ap.add_argument("--residual-adds", type=int)
    ap.add_argument("--fallback", type=lambda s: s.split(","), default=[],
                    help="comma-separated ops the report must list in a float fallback region")
    args = ap.parse_args()
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1234)

    name = os.path.splitext(os.path.basename(args.model))[0]
    with open(os.path.splitext(args.model)[0] + ".json", encoding="utf-8") as f:
        meta = json.load(f)
    shapes = [a for s in meta.get("input_shape_args", []) for a in ("--input-shape", s)]
    cmd = [args.tinytrace, "convert", args.model, "-o", args.out_dir, "--quant-prep",
           "--emit", "python,weights,report,tir"] + shapes
    if args.qat:
        cmd.append("--qat")
    if shapes:
        cmd.append("--verify")
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"{' '.join(cmd)} exited {r.returncode}:\n{r.stderr.strip()}")

    # (a) float parity and a strict load of NAME.pth (the original state_dict cannot load:
    # BatchNorm folding and fused modules rename and remove keys).
    check = subprocess.run(["/usr/bin/python3", os.path.join(REPO, "scripts", "check_model.py"),
                            args.out_dir, name, args.model, "--tol", "1e-3",
                            "--state-dict-from", "none"], capture_output=True, text=True)
    if check.returncode != 0:
        fail(f"check_model.py: {(check.stdout + check.stderr).strip()}")

    # The report lists every rewrite with its rule, node and scope.
    with open(os.path.join(args.out_dir, name + ".json"), encoding="utf-8") as f:
        report = json.load(f)
    rewrites = sum(p.get("rewrites", 0) for p in report["pipeline"])
    logged = [e for p in report["pipeline"] for e in p.get("log", [])]
    if rewrites == 0 or len(logged) != rewrites:
        fail(f"report: {rewrites} rewrite(s) counted but {len(logged)} listed in pipeline[].log")
    if any(not e.get("rule") for e in logged):
        fail("report: a rewrite without a rule")
    # Each rewrite names the node it made or changed (its value name) where there is one.
    made = {e["node"] for e in logged if e.get("node")}
    if not made:
        fail("report: no rewrite names its node")
    # Float fallback: every region says why; the expected float-only ops are in a region.
    regions = report.get("quant_fallback")
    if regions is None:
        fail("report: no quant_fallback list after --quant-prep")
    if any(not r.get("reason") or not r.get("ops") for r in regions):
        fail("report: a float fallback region without its ops and reason")
    fallback_ops = {op for r in regions for op in r["ops"]}
    missing = [op for op in args.fallback if op not in fallback_ops]
    if missing:
        fail(f"report: {missing} not in any float fallback region (regions: {sorted(fallback_ops)})")

    # (b) structure
    model = load_generated(args.out_dir, name)
    inputs = list(torch.load(os.path.splitext(args.model)[0] + ".inputs.pt"))
    counts, problems = structure(model, inputs)
    if problems:
        fail(f"{name}: " + "; ".join(problems[:5]) +
             (f" (+{len(problems) - 5} more)" if len(problems) > 5 else ""))
    if args.yardstick:
        ref = torchvision_counts(args.yardstick, inputs)
        ours = {k: counts[k] for k in YARDSTICK_KEYS}
        theirs = {k: ref[k] for k in YARDSTICK_KEYS}
        if ours != theirs:
            fail(f"{name}: structure {ours} differs from torchvision.models.quantization."
                 f"{args.yardstick} after fuse_model() {theirs}")
    if args.residual_adds is not None:
        if counts["FloatFunctional.add"] != args.residual_adds:
            fail(f"{name}: {counts['FloatFunctional.add']} FloatFunctional used as add, expected "
                 f"{args.residual_adds}")
        original = torch.jit.load(args.model)
        relu6 = sum(1 for m in original.modules() if getattr(m, "original_name", "") == "ReLU6")
        if counts["ReLU6"] != relu6:
            fail(f"{name}: {counts['ReLU6']} nn.ReLU6 modules, the original has {relu6}")

    # (c) / (d) eager quantization without hand edits
    try:
        if args.qat:
            cos = qat(model, inputs, gen)
            mode = "prepare_qat+step+convert (cosine vs the fake-quantized model)"
        else:
            cos, q = ptq(model, inputs, gen)
            mode = "prepare+calibrate+convert"
            # Embeddings are quantized weight-only (their own qconfig in the generated code);
            # recurrent and attention modules stay float modules.
            n_emb = sum(type(m) is torch.nn.Embedding for m in model.modules())
            q_emb = sum(isinstance(m, nnq.Embedding) for m in q.modules())
            if q_emb != n_emb:
                fail(f"{name}: {q_emb} of {n_emb} nn.Embedding quantized by convert")
            for kind in (torch.nn.LSTM, torch.nn.GRU, torch.nn.MultiheadAttention):
                before = sum(type(m) is kind for m in model.modules())
                after = sum(type(m) is kind for m in q.modules())
                if before != after:
                    fail(f"{name}: convert replaced {before - after} {kind.__name__} module(s)")
    except Exception as e:  # any failure here is the finding: say which step and why
        fail(f"{name}: eager quantization failed: {type(e).__name__}: {str(e).splitlines()[0]}")
    if cos != cos:
        fail(f"{name}: the quantized model's output is NaN")
    shown = {k: v for k, v in counts.items() if v}
    print(f"OK: {name} --quant-prep{' --qat' if args.qat else ''}: {check.stdout.strip()}; "
          f"{len(logged)} rewrites; {shown}; {mode} runs, int8 vs float cosine {cos:.4f}",
          flush=True)
    return passed(args.out_dir)


if __name__ == "__main__":
    sys.exit(main())
