#!/usr/bin/python3
"""Generates the torch.export archives (.pt2) of the "export" end-to-end tests.

Run with Debian 13's /usr/bin/python3 (torch 2.6, torchvision 0.21). Nothing is downloaded: every
model is randomly initialised with a fixed seed and re-randomised like scripts/gen_models.py does
(its randomize_: no all-zero tensor, BatchNorm with realistic statistics). For each model NAME it
writes, in --out, the sidecars of scripts/gen_models.py:

  NAME.pt2          torch.export.save(torch.export.export(model.eval(), inputs[, dynamic_shapes]))
  NAME.inputs.pt    torch.save of the example input tuple
  NAME.expected.pt  torch.save of ep.module()(*inputs) (the exported program's own outputs)
  NAME.json         input shapes/dtypes, --input-shape arguments, tolerance, the ATen ops of the
                    program, "dynamic" (the dims exported as torch.export.Dim) and the generator
                    stamp (written last; a re-run skips models whose stamp is current)

"decomposed" models are saved after ep.run_decompositions() (the core ATen opset: convolution,
_native_batch_norm_legit_no_training, addmm). Models with "dynamic" dims are exported with Dim("batch") on dim 0 of every input; the tests
check the converted code at a second batch size (tests/e2e/check_export_dynamic.py). The
"unsupported" entries are archives tinytrace must refuse with exit 4 naming the op (torch.cond)
or the layout (a torch >= 2.7 package, faked: torch 2.6 cannot write one); `--list` prints
"NAME KIND [EXPECTED]" per entry for tests/export.cmake.
"""
import json
import os
import sys
import warnings
import zipfile

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.export import Dim

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_models  # noqa: E402  (randomize_, Spec, shape_arg, atomic_write, flatten)

SEED = 20250601
GROUP = "export"

# --------------------------------------------------------------------------------------------
# Registry


class Spec:
    def __init__(self, name, build, inputs, kind="small", dynamic=False, decompose=False, tol=1e-4,
                 expect=None):
        self.name = name
        self.build = build        # () -> nn.Module (called after torch.manual_seed)
        self.inputs = inputs      # [shape] (float32) or [(shape, "int64", high)] (in [0, high))
        self.kind = kind          # small | conv (also --fuse) | unsupported
        self.dynamic = dynamic    # dim 0 of every input exported as Dim("batch")
        self.decompose = decompose  # ep.run_decompositions(): the core ATen opset (addmm, convolution, ...)
        self.tol = tol
        self.expect = expect      # unsupported: text (no spaces) the exit-4 message must contain


SPECS = {}


def register(name, build, inputs, **kw):
    SPECS[name] = Spec(name, build, inputs, **kw)


def _tv(fn_name, **kwargs):
    def build():
        import torchvision
        return getattr(torchvision.models, fn_name)(weights=None, **kwargs)
    return build


# --------------------------------------------------------------------------------------------
# Models


class SmallCnn(nn.Module):
    """Conv, BatchNorm, ReLU modules, a functional relu, a flatten through x.shape[0], Linear."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.act = nn.ReLU()
        self.conv2 = nn.Conv2d(8, 8, 3, stride=2, padding=1, bias=False)
        self.pool = nn.AdaptiveAvgPool2d(4)
        self.fc = nn.Linear(8 * 4 * 4, 10)

    def forward(self, x):
        y = self.act(self.bn(self.conv(x)))
        y = self.pool(F.relu(self.conv2(y)))
        return self.fc(y.view(y.shape[0], -1))


class ViewBatch(nn.Module):
    """Reshapes with sizes computed from x.shape (a dynamic batch must stay x.size(0))."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 32)
        self.norm = nn.LayerNorm(8)

    def forward(self, x):  # x: (B, 4, 16)
        b, t, _ = x.shape
        y = self.proj(x)                          # (B, 4, 32)
        y = y.reshape(b, t * 4, 8)                # (B, 16, 8)
        y = self.norm(y).transpose(1, 2)          # (B, 8, 16)
        z = y.reshape(y.shape[0], -1)             # (B, 128)
        return z.view(b * 2, -1) + 1.0, z.new_zeros(b, 3) + x.shape[0]


class Unusual(nn.Module):
    """Ops a plain CNN does not have: multi-output ops (max with indices, chunk), advanced indexing
    with a lifted constant, cumsum, where with a scalar, a dtype cast, F.pad, interpolate, a module
    called twice, and a nested result structure."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(12, 12)
        self.act = nn.GELU()

    def forward(self, x):  # x: (B, 3, 12)
        h = self.act(self.act(self.fc(x)))
        m, idx = h.max(dim=-1)
        a, b, c = h.chunk(3, dim=-1)
        sel = h[:, torch.tensor([2, 0, 1])]
        cs = torch.cumsum(b, dim=-1)
        w = torch.where(c > 0, c, 0.5)
        img = F.pad(h.unsqueeze(1), (1, 1, 2, 0), value=0.25)
        up = F.interpolate(img, scale_factor=2, mode="nearest")
        return (m * 2 + 1, idx), {"sel": sel, "cs": cs.to(torch.float64), "w": w - a, "up": up}


class OpsMix(nn.Module):
    """A tour of common ATen ops with a dynamic batch and an int64 input: embedding, group norm, a
    sliced buffer, arange/zeros/full factories, softmax, masked_fill, div with rounding, einsum,
    stack, topk/sort (tuple results), gather, integer comparisons and casts, bmm."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 8)
        self.gn = nn.GroupNorm(2, 8)
        self.register_buffer("scale", torch.linspace(0.5, 1.5, 8))

    def forward(self, x, ids):  # x: (B, 8, 6), ids: (B, 6) in [0, 10)
        e = self.emb(ids).transpose(1, 2)
        h = self.gn(x + e) * self.scale[:, None]
        h = h + torch.arange(h.shape[-1], device=h.device).float()
        z = torch.zeros(h.shape[0], 1, h.shape[-1]) + torch.full((1, 8, 1), 0.5)
        h = torch.cat([h, z], 1)
        s = F.softmax(h, dim=-1) + F.log_softmax(h, dim=1)
        m = s.masked_fill(s > 0.1, -1.0)
        d = torch.div(m, 3, rounding_mode="floor") + m.type_as(h).clamp(min=0.0)
        q = torch.einsum("bij,bkj->bik", d, h)
        st = torch.stack([q, q.flip(-1)], dim=1).sum(dim=(1, 2), keepdim=True)
        v, i = torch.topk(h, 2, dim=-1)
        srt, _ = torch.sort(h, dim=1, descending=True)
        g = torch.gather(h, 1, ids[:, None, :].clamp(max=8))
        eq = (ids == 3).int() + (ids % 2 == 0).long()
        r = torch.rsqrt(h.abs() + 1).repeat(1, 2, 1).roll(1, 2)
        return st, v, i, srt, h.argmax(dim=-1), r, g, eq, h.mean(dim=[1, 2]), torch.bmm(h, h.transpose(1, 2))


class IndexWrites(nn.Module):
    """Tensor indexing as Swin's relative position bias (table[index], aten.index.Tensor) and
    writes: a slice filled with a number, a masked assignment and an index_put_ with an index
    tensor (Tensor?[] indices in the schema)."""

    def __init__(self):
        super().__init__()
        self.table = nn.Parameter(torch.randn(7, 2))
        self.register_buffer("index", torch.randint(0, 7, (6, 6)))

    def forward(self, x):  # x: (B, 4, 6)
        bias = self.table[self.index.view(-1)].view(6, 6, 2).permute(2, 0, 1)
        y = x.clone()
        y[:, 0:2] = 0.5
        y[x > 1] = 0.0
        y[:, :, torch.tensor([1, 3])] = -1.0
        return y @ bias[0] + bias[1].sum()


class WithCond(nn.Module):
    """Data-dependent control flow through torch.cond (a higher-order op): exit 4."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda t: self.fc(t), lambda t: t * 2, (x,))


register("exp_small_cnn", SmallCnn, [(2, 3, 16, 16)], kind="conv")
register("exp_small_cnn_dyn", SmallCnn, [(2, 3, 16, 16)], kind="conv", dynamic=True)
register("exp_small_cnn_decomposed", SmallCnn, [(2, 3, 16, 16)], kind="conv", decompose=True)
register("exp_view_batch_dyn", ViewBatch, [(2, 4, 16)], dynamic=True)
register("exp_unusual", Unusual, [(2, 3, 12)])
register("exp_ops_mix_dyn", OpsMix, [(2, 8, 6), ((2, 6), "int64", 10)], dynamic=True)
register("exp_index_writes_dyn", IndexWrites, [(2, 4, 6)], dynamic=True)


def _vit_small():
    """vit_b_16's class (torchvision's VisionTransformer: patch conv, class token, position
    embedding, EncoderBlocks of nn.MultiheadAttention and MLPBlock, heads) at 2 layers and width
    64: the same ops and code paths as vit_b_16 (12 layers, width 768, 86M parameters, 2 x 330 MB
    of .pt2), in 0.1M parameters. The full-size vit_b_16 is converted traced (e2e_vit_b_16)."""
    from torchvision.models.vision_transformer import VisionTransformer
    return VisionTransformer(image_size=64, patch_size=16, num_layers=2, num_heads=4, hidden_dim=64,
                             mlp_dim=128, num_classes=10)


# exp_vit_b_16*: vit_b_16's class at a small size (_vit_small); the names stay those of the tests.
for _name, _build in [("resnet18", _tv("resnet18")), ("mobilenet_v3_small", _tv("mobilenet_v3_small")),
                      ("vit_b_16", _vit_small)]:
    register(f"exp_{_name}", _build, [(1, 3, 64, 64)], kind="conv")
    register(f"exp_{_name}_dyn", _build, [(2, 3, 64, 64)], kind="conv", dynamic=True)
register("exp_cond", WithCond, [(2, 4)], kind="unsupported", expect="torch.ops.higher_order.cond")
register("exp_package_layout", None, [], kind="unsupported", expect="archive_format")

# ViT has no BatchNorm: --fuse there only checks that nothing breaks (it stays "conv" for that).

# --------------------------------------------------------------------------------------------
# Generation


def input_specs(spec):
    """[(shape, dtype, high)] in the form of scripts/gen_models.py."""
    return [(tuple(i[0]), i[1], i[2]) if len(i) == 3 and isinstance(i[1], str) else (tuple(i), "float32", None)
            for i in spec.inputs]


def make_inputs(spec, gen):
    return tuple(torch.randint(0, high, shape, generator=gen, dtype=torch.int64) if dtype == "int64"
                 else torch.randn(shape, generator=gen) for shape, dtype, high in input_specs(spec))


def is_current(out_dir, name, st):
    exts = (".pt2",) if SPECS[name].kind == "unsupported" else (".pt2", ".inputs.pt", ".expected.pt")
    return gen_models.is_current(out_dir, name, st, exts)


def export(spec, model, inputs):
    dynamic = None
    if spec.dynamic:
        batch = Dim("batch", min=1, max=1024)
        dynamic = tuple({0: batch} for _ in inputs)
    # With grad enabled, as export is normally called (under no_grad nn.MultiheadAttention takes
    # its fused fast path, which dynamo cannot export with a dynamic batch).
    ep = torch.export.export(model, inputs, dynamic_shapes=dynamic)
    return ep.run_decompositions() if spec.decompose else ep


def write_meta(base, meta):
    def write(p):
        with open(p, "w") as f:
            json.dump(meta, f, indent=1)
            f.write("\n")
    gen_models.atomic_write(base + ".json", write)


def generate_unsupported(spec, out_dir, st):
    base = os.path.join(out_dir, spec.name)
    if spec.build is None:  # the package layout of torch >= 2.7 (what its torch.export.save writes)
        def write(p):
            with zipfile.ZipFile(p, "w") as z:
                z.writestr(f"{spec.name}/archive_format", "pt2")
                z.writestr(f"{spec.name}/archive_version", "0")
                z.writestr(f"{spec.name}/models/model.json", "{}")
        gen_models.atomic_write(base + ".pt2", write)
    else:
        torch.manual_seed(SEED)
        model = spec.build().eval()
        ep = export(spec, model, make_inputs(spec, torch.Generator().manual_seed(SEED)))
        gen_models.atomic_write(base + ".pt2", lambda p: torch.export.save(ep, p))
    write_meta(base, {"name": spec.name, "group": GROUP, "generator": st, "kind": spec.kind,
                      "expect": spec.expect, "input_shape_args": [], "tolerance": spec.tol})
    return 0.0, os.path.getsize(base + ".pt2")


def generate(spec, out_dir, st):
    if spec.kind == "unsupported":
        return generate_unsupported(spec, out_dir, st)
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED + 1)
    model = spec.build()
    model.eval()
    gen_models.randomize_(model, gen_models.Spec(spec.name, GROUP, spec.build, input_specs(spec)), gen)
    model.eval()
    inputs = make_inputs(spec, gen)
    with torch.no_grad():
        eager = model(*inputs)
    ep = export(spec, model, inputs)
    base = os.path.join(out_dir, spec.name)
    gen_models.atomic_write(base + ".pt2", lambda p: torch.export.save(ep, p))
    # The reference is the archive as torch loads it back.
    loaded = torch.export.load(base + ".pt2")
    with torch.no_grad():
        expected = loaded.module()(*inputs)

    exp_flat, max_abs = gen_models.check_capture(spec.name, eager, expected, "exported", exact_ints=True)

    gen_models.atomic_write(base + ".inputs.pt", lambda p: torch.save(inputs, p))
    gen_models.atomic_write(base + ".expected.pt", lambda p: torch.save(expected, p))
    ops = sorted({str(n.target) for n in ep.graph.nodes if n.op == "call_function"})
    write_meta(base, {
        "name": spec.name,
        "group": GROUP,
        "generator": st,
        "kind": spec.kind,
        "dynamic": [0] if spec.dynamic else [],
        "inputs": [{"shape": list(s), "dtype": d, "high": h} for s, d, h in input_specs(spec)],
        "input_shape_args": [gen_models.shape_arg(s, d) for s, d, _ in input_specs(spec)],
        "outputs": [{"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", "")}
                    for t in exp_flat],
        "tolerance": spec.tol,
        "expect_warnings": [],
        "max_abs_output": max_abs,
        "num_parameters": sum(p.numel() for p in model.parameters()),
        "torch_ops": ops,
    })
    return max_abs, os.path.getsize(base + ".pt2")


def main():
    ap = gen_models.one_group_parser(__doc__, GROUP, "print 'NAME KIND [dynamic|EXPECTED]' per model and exit")
    args = ap.parse_args()

    if args.list:
        for spec in SPECS.values():
            extra = spec.expect or ("dynamic" if spec.dynamic else "")  # expect: no spaces
            print(f"{spec.name} {spec.kind} {extra}".rstrip())
        return 0
    if not args.out:
        ap.error("--out DIR is required")
    names = gen_models.select_names(ap, args.only, GROUP, SPECS)
    st = gen_models.stamp(__file__)

    def generate_one(name):
        spec = SPECS[name]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            max_abs, size = generate(spec, args.out, st)
        return (f"{spec.kind}{' dynamic' if spec.dynamic else ''}, "
                f"max|output| = {max_abs:.4g}, {size} bytes")
    if gen_models.run_generation(names, args.out, st, args.force, generate_one, is_current):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
