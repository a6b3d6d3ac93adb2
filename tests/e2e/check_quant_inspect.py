#!/usr/bin/python3
"""`tinytrace inspect` and `tinytrace diff` on int8 models (issue 16, item 4).

    check_quant_inspect.py TINYTRACE OUT_DIR [--script]

Builds one small float model (QuantStub, Conv2d+ReLU fused, Conv2d, Hardswish, FloatFunctional
add, Linear, DeQuantStub), quantizes two copies of it on qnnpack that differ only in calibration
(randn vs randn * 3: same weights, other activation ranges) and saves them traced (or scripted
with --script) as A.pt and B.pt in OUT_DIR. Then:
- `inspect A.pt --json`: its `quantization` section gives, for every quantized module of the
  eager model, the module's output scale and zero point and (conv/linear) its weight's dtype,
  scheme, per-channel scales, zero points and axis, equal to what PyTorch's module holds; the text
  form prints a quantization table naming every such module;
- `diff A.pt A.pt` exits 0 (identical);
- `diff A.pt B.pt` exits 1 with the same ops and no added/removed modules or parameters, and
  counts the output scale / zero point changes: every module whose scale or zero point differs in
  PyTorch is listed in `quantization` with A's and B's values, and no other; the text form
  names them.
"""
import zygote
zygote.delegate()  # first, before torch is imported: Note [Torch zygote]
import json
import os
import subprocess
import sys

import torch
import torch.ao.nn.quantized as nnq
import torch.ao.quantization as tq
import torch.nn as nn


def die(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = tq.QuantStub()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.relu1 = nn.ReLU()
        self.conv2 = nn.Conv2d(8, 8, 1)
        self.act = nn.Hardswish()
        self.add = nnq.FloatFunctional()
        self.fc = nn.Linear(8, 4)
        self.dequant = tq.DeQuantStub()

    def forward(self, x):
        x = self.quant(x)
        y = self.relu1(self.conv1(x))
        z = self.add.add(self.act(self.conv2(y)), y)
        return self.dequant(self.fc(z.mean((2, 3))))


def quantize(calibration_scale):
    torch.manual_seed(7)
    model = Small().eval()
    tq.fuse_modules(model, [["conv1", "relu1"]], inplace=True)
    model.qconfig = tq.get_default_qconfig("qnnpack")
    tq.prepare(model, inplace=True)
    gen = torch.Generator().manual_seed(8)
    with torch.no_grad():
        for _ in range(3):
            model(torch.randn(2, 3, 8, 8, generator=gen) * calibration_scale)
    return tq.convert(model, inplace=False)


def run(cmd, codes):
    cmd = cmd + ["--quantized-engine", "qnnpack"]  # the engine the models are packed for
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if r.returncode not in codes:
        die(f"{' '.join(cmd)} exited {r.returncode} (expected {codes}):\n{r.stdout}{r.stderr}")
    return r


def expected_qparams(model):
    """module path -> (output scale, zero point, weight or None) of the eager int8 model."""
    out = {}
    for path, m in model.named_modules():
        if not type(m).__module__.startswith("torch.ao.nn.") or ".quantized" not in type(m).__module__:
            continue
        if not hasattr(m, "scale"):
            continue
        w = m.weight() if callable(getattr(m, "weight", None)) else None
        out[path] = (float(m.scale), int(m.zero_point), w)
    return out


def main():
    args = sys.argv[1:]
    script = "--script" in args
    if script:
        args.remove("--script")
    if len(args) != 2:
        die(__doc__)
    tinytrace, out_dir = args
    os.makedirs(out_dir, exist_ok=True)
    torch.backends.quantized.engine = "qnnpack"
    example = torch.randn(2, 3, 8, 8, generator=torch.Generator().manual_seed(9))
    models, paths = [], []
    for tag, k in (("A", 1.0), ("B", 3.0)):
        q = quantize(k)
        archive = torch.jit.script(q) if script else torch.jit.trace(q, example, check_trace=False)
        path = os.path.join(out_dir, tag + ".pt")
        archive.save(path)
        models.append(q)
        paths.append(path)
    qa, qb = (expected_qparams(m) for m in models)
    if not qa:
        die("the test model has no quantized module")

    # inspect
    doc = json.loads(run([tinytrace, "inspect", paths[0], "--json"], (0,)).stdout)
    q = doc.get("quantization")
    if not q:
        die("inspect --json of an int8 model has no quantization section")
    if q["engine"] != "qnnpack":
        die(f"inspect: engine {q['engine']!r}, expected qnnpack")
    got = {m["module"]: m for m in q["modules"]}
    for path, (scale, zp, w) in qa.items():
        m = got.get(path)
        if m is None or "output" not in m:
            die(f"inspect: no output quantization parameters for module {path!r}: {sorted(got)}")
        o = m["output"]
        if abs(o["scale"] - scale) > 1e-12 * max(1.0, scale) or o["zero_point"] != zp:
            die(f"inspect: {path} output scale/zero point {o['scale']}/{o['zero_point']}, "
                f"PyTorch says {scale}/{zp}")
        if w is None:
            continue
        mw = m.get("weight")
        if mw is None:
            die(f"inspect: {path} lists no weight quantization")
        if w.qscheme() in (torch.per_channel_affine, torch.per_channel_symmetric):
            if mw["scheme"] != "per_channel_affine" or mw["axis"] != w.q_per_channel_axis():
                die(f"inspect: {path} weight scheme {mw['scheme']} axis {mw.get('axis')}, "
                    f"PyTorch says {w.qscheme()} axis {w.q_per_channel_axis()}")
            if (mw["scales"] != w.q_per_channel_scales().double().tolist()
                    or mw["zero_points"] != w.q_per_channel_zero_points().tolist()):
                die(f"inspect: {path} per-channel scales/zero points differ from PyTorch's")
        else:
            if mw["scale"] != w.q_scale() or mw["zero_point"] != w.q_zero_point():
                die(f"inspect: {path} weight scale/zero point differ from PyTorch's")
        if mw["dtype"] != "qi8":
            die(f"inspect: {path} weight dtype {mw['dtype']}, expected qi8")
    text = run([tinytrace, "inspect", paths[0]], (0,)).stdout
    if "quantization (engine qnnpack)" not in text:
        die("inspect's text has no quantization table")
    for path in qa:
        if not any(line.split()[:1] == [path] for line in text.splitlines()):
            die(f"inspect's quantization table has no row for {path}")

    # diff
    same = run([tinytrace, "diff", paths[0], paths[0]], (0,))
    if "identical" not in same.stdout:
        die("diff of a model with itself is not 'identical'")
    d = json.loads(run([tinytrace, "diff", paths[0], paths[1], "--json"], (1,)).stdout)
    s = d["summary"]
    if s["ops_added"] or s["ops_removed"] or s["modules_added"] or s["modules_removed"]:
        die(f"diff of two calibrations reports structural changes: {s}")
    want = {p for p in qa if qa[p][:2] != qb[p][:2]}
    if not want:
        die("the two calibrations gave the same quantization parameters: the test proves nothing")
    listed = {c["name"] for c in d["quantization"] if c["what"] == "output"}
    if listed != want:
        die(f"diff lists output quantization changes for {sorted(listed)}, PyTorch's differ at "
            f"{sorted(want)}")
    for c in d["quantization"]:
        if c["what"] == "output":
            a, b = c["a"], c["b"]
            if (a["scale"], a["zero_point"]) != qa[c["name"]][:2] or \
                    (b["scale"], b["zero_point"]) != qb[c["name"]][:2]:
                die(f"diff: {c['name']} {a} -> {b} are not PyTorch's values")
    if s["qparams_changed"] != len(d["quantization"]):
        die("diff: summary qparams_changed does not count the quantization entries")
    text = run([tinytrace, "diff", paths[0], paths[1]], (1,)).stdout
    if "quantization parameters" not in text or not all(p in text for p in want):
        die(f"diff's text does not name the quantization changes:\n{text}")
    print(f"OK: inspect lists {len(qa)} quantized modules with PyTorch's parameters; diff of two "
          f"calibrations counts {s['qparams_changed']} quantization parameter change(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
