#!/usr/bin/python3
"""End-to-end test of `tinytrace convert --dequantize` on one int8 model (passes/dequantize.cpp).

    check_dequantize.py TINYTRACE MODEL.pt OUT_DIR [--input-scale K] [--quant-prep]

With --input-scale K both checks run on seeded inputs randn(shape) * K (saved next to OUT_DIR and
given to --verify-inputs) instead of the saved ones: the distribution the model was calibrated on
(scripts/gen_quantized_models.py calibrates on randn * 2); on inputs outside the calibrated range
the int8 model clips, and its difference from the float twin is its own quantization error.

MODEL.json (scripts/gen_quantized_models.py) gives the input shapes, the engine and the convert
arguments. Converts with --dequantize --verify (the CLI's verdict must say OK with a cosine
similarity), then checks the float twin on its own, in Python:
- NAME.pth holds only float tensors, loads with load_state_dict(strict=True) into NAME.py's class,
  and NAME.py uses no quantized module (torch.ao.nn.quantized / intrinsic.quantized / QuantStub);
- the report's module table (module_classes) names no int8 class (torch.ao.nn.quantized...), and
  neither do the generated classes;
- its outputs on the saved inputs against the int8 archive's (run on the model's engine): cosine
  similarity of every output >= 0.99 (Note [Verifying a dequantized model] in
  lib/driver/convert.cpp), and not bit-identical (an int8 model left in place would be).
With --quant-prep the conversion is `--dequantize --quant-prep` (a float model ready for a new
PTQ run): the generated model must also run torch.ao.quantization's prepare, a calibration on the
inputs' distribution and convert on its own (qnnpack), come out quantized (Quantize stubs, int8
modules), and the re-quantized model's outputs must be within cosine MIN_REQUANT_COSINE of the
int8 original's (two int8 approximations of one float model; each has its own rounding).
"""
import zygote
zygote.delegate()  # first, before torch is imported: Note [Torch zygote]
import importlib.util
import json
import os
import shutil
import subprocess
import sys

import torch

from e2e_outputs import passed

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
MIN_COSINE = 0.99
MIN_REQUANT_COSINE = 0.98
sys.path.insert(0, os.path.join(REPO, "scripts"))
from gen_models import flatten  # noqa: E402


def die(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def checker():
    spec = importlib.util.spec_from_file_location(
        "tt_check_model", os.path.join(REPO, "scripts", "check_model.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def cosine(a, b):
    a = a.detach().double().flatten()
    b = b.detach().double().flatten()
    na, nb = a.norm().item(), b.norm().item()
    if na == 0 and nb == 0:
        return 1.0
    if na == 0 or nb == 0:
        return 0.0
    return (a @ b).item() / (na * nb)


def main():
    args = sys.argv[1:]
    quant_prep = "--quant-prep" in args
    if quant_prep:
        args.remove("--quant-prep")
    if len(args) not in (3, 5) or (len(args) == 5 and args[3] != "--input-scale"):
        die(__doc__)
    tinytrace, model_path, out_dir = args[:3]
    scale = float(args[4]) if len(args) == 5 else None
    base = os.path.splitext(model_path)[0]
    name = os.path.basename(base)
    with open(base + ".json") as f:
        meta = json.load(f)
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    cmd = [tinytrace, "convert", model_path, "-o", out_dir, "--dequantize", "--verify"]
    if quant_prep:
        cmd.append("--quant-prep")
    for s in meta["input_shape_args"]:
        cmd += ["--input-shape", s]
    inputs_path = base + ".inputs.pt"
    if scale is not None:
        gen = torch.Generator().manual_seed(0)
        inputs = tuple(torch.randn(i["shape"], generator=gen) * scale for i in meta["inputs"])
        inputs_path = out_dir.rstrip("/") + ".inputs.pt"
        torch.save(inputs, inputs_path)
        cmd += ["--verify-inputs", inputs_path]
    cmd += meta.get("convert_args", [])
    print("+", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    sys.stdout.write(r.stdout)
    sys.stderr.write(r.stderr)
    if r.returncode != 0:
        die(f"tinytrace convert --dequantize exited {r.returncode} (expected 0)")
    if "verify (interpreter): OK" not in r.stdout or "min cosine similarity" not in r.stdout:
        die("no 'verify (interpreter): OK ... min cosine similarity' verdict")

    engine = meta.get("quantized_engine")
    if engine:
        torch.backends.quantized.engine = engine
    cm = checker()
    _, model, _ = cm.load_generated(os.path.join(out_dir, name + ".py"), name)
    src = open(os.path.join(out_dir, name + ".py"), encoding="utf-8").read()
    int8_words = ["nniq.", "nnqd.", "QFunctional", "quantize_per_tensor", "dequantize"]
    if not quant_prep:  # --quant-prep adds QuantStubs and nnq.FloatFunctional
        int8_words += ["ao.nn.quantized", "nnq.", "QuantStub"]
    for q in int8_words:
        if q in src:
            die(f"{name}.py still mentions {q!r}: the float twin must have no quantized part")
    sd = cm.load_state_dict_file(os.path.join(out_dir, name + ".pth"))
    bad = [k for k, v in sd.items()
           if v is None or v.is_quantized or (v.is_floating_point() and v.dtype != torch.float32)]
    if bad:
        die(f"{name}.pth: not float32 tensors: {bad[:5]}")
    if not any(v.is_floating_point() for v in sd.values()):
        die(f"{name}.pth holds no float tensor")
    cm.load_strict(model, sd, name + ".pth")
    with open(os.path.join(out_dir, name + ".json")) as f:
        report = json.load(f)
    int8_classes = {p: c for p, c in report.get("module_classes", {}).items()
                    if ".quantized." in c or c.startswith("torch.ao.nn.quantized")}
    if int8_classes:
        die(f"{name}.json module_classes still names int8 classes: {sorted(int8_classes.items())[:3]}")
    for sub in model.modules():
        mod = type(sub).__module__
        if ".quantized" in mod and not (quant_prep and type(sub).__name__ == "FloatFunctional"):
            die(f"{name}.py builds a {mod}.{type(sub).__name__}: not a float module")

    inputs = torch.load(inputs_path)
    inputs = (inputs,) if isinstance(inputs, torch.Tensor) else tuple(inputs)
    original = torch.jit.load(model_path, map_location="cpu").eval()
    with torch.no_grad():
        expected = flatten(original(*inputs))
    got = flatten(cm.run(model, inputs, name + ".pth"))
    if len(got) != len(expected):
        die(f"{len(got)} outputs, the int8 model has {len(expected)}")
    for i, (g, e) in enumerate(zip(got, expected)):
        e = e.dequantize() if e.is_quantized else e
        if g.shape != e.shape:
            die(f"output {i}: shape {tuple(g.shape)}, the int8 model's is {tuple(e.shape)}")
        if g.is_quantized or not g.is_floating_point():
            die(f"output {i} is {g.dtype}, not a float tensor")
        c = cosine(g, e)
        print(f"output {i}: cosine similarity to the int8 model {c:.6f}, "
              f"max |diff| {(g - e).abs().max().item():.4g}", flush=True)
        if not c >= MIN_COSINE:
            die(f"output {i}: cosine similarity {c:.6f} < {MIN_COSINE}")
    if all(torch.equal(g, e) for g, e in zip(got, expected)):
        die("the float twin's outputs equal the int8 model's bit for bit: nothing was dequantized")
    if quant_prep:
        requantize(model, inputs, expected, scale or 1.0)
    return passed(out_dir)


def requantize(model, inputs, expected, scale):
    """PTQ of the generated --dequantize --quant-prep model, compared with the int8 original."""
    import copy

    import torch.ao.quantization as tq
    torch.backends.quantized.engine = "qnnpack"
    m = copy.deepcopy(model).eval()
    m.qconfig = tq.get_default_qconfig("qnnpack")
    prepared = tq.prepare(m, inplace=False)
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for _ in range(3):
            prepared(*[torch.randn(x.shape, generator=gen) * scale for x in inputs])
    q = tq.convert(prepared, inplace=False)
    kinds = {type(sub).__module__ for sub in q.modules()}
    if not any(k.startswith("torch.ao.nn.quantized") for k in kinds):
        die("after prepare/calibrate/convert the generated model holds no quantized module")
    with torch.no_grad():
        got = flatten(q(*inputs))
    for i, (g, e) in enumerate(zip(got, expected)):
        g = g.dequantize() if g.is_quantized else g
        e = e.dequantize() if e.is_quantized else e
        c = cosine(g, e)
        print(f"output {i}: re-quantized (PTQ of the generated model) vs the int8 original: "
              f"cosine similarity {c:.6f}", flush=True)
        if not c >= MIN_REQUANT_COSINE:
            die(f"output {i}: re-quantized cosine similarity {c:.6f} < {MIN_REQUANT_COSINE}")


if __name__ == "__main__":
    sys.exit(main())
