#!/usr/bin/python3
"""Exports the small torch modules of the ONNX op tests (issue 21) with torch.onnx.export.

Run with Debian's /usr/bin/python3. Each module is exported at several opsets (the TorchScript
exporter, dynamo=False); scripted modules (data-dependent `if`, `for`, `while`, lists built in
loops) export as ONNX If/Loop/Sequence ops. Inputs are random with a fixed seed, and the
activation tests write the functions' thresholds into them (0, +-0.5, +-1, +-3, 6, ...).
Models with control flow get several input sets that together take every branch. For each model
NAME (module name + _opK) it writes into --out:

  NAME.onnx          the exported model
  NAME.inputs.pt     torch.save of the list of input tuples (the input sets)
  NAME.expected.pt   the torch module's outputs on each set (a list, flattened per set)
  GROUP.json         per group: its models, their tolerance, whether --fuse is checked too, and
                     "refused": the text the exit-4 error must contain (a model whose ONNX has no
                     exact PyTorch form); written last, with the generator stamp

--list prints the groups, one per line (tests/onnx.cmake registers one test per group: the
driver, tests/e2e/onnx_batch.py, converts every model of the group plainly and with --fuse).
Models are reused while this file (and gen_models.py) are unchanged.
"""
import argparse
import json
import os
import sys
import warnings
from typing import List

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_models as gm  # noqa: E402

SEED = 20250521
# name -> Spec; filled by @model
SPECS = {}
# Inputs at the activations' thresholds, written into the first elements of each float input.
SPECIAL = [-6.0, -3.0, -2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0, 6.0, -0.0]


class Spec:
    def __init__(self, name, group, build, inputs, opsets, script, tol, fuse, dynamic, refused):
        self.name, self.group, self.build, self.inputs = name, group, build, inputs
        self.opsets, self.script, self.tol, self.fuse = opsets, script, tol, fuse
        self.dynamic, self.refused = dynamic, refused


def model(name, group, inputs, opsets=(11, 13, 17), script=False, tol=1e-4, fuse=True,
          dynamic=None, refused=None):
    """Registers a module class (or factory). inputs(gen) -> list of input tuples; dynamic: the
    dynamic_axes of the export; refused: {opset: text} for exports tinytrace must refuse."""
    def deco(build):
        SPECS[name] = Spec(name, group, build, inputs, opsets, script, tol, fuse, dynamic,
                           refused or {})
        return build
    return deco


def rand(gen, *shape, scale=2.0, special=True):
    t = torch.randn(*shape, generator=gen) * scale
    if special:
        flat = t.view(-1)
        k = min(len(SPECIAL), flat.numel())
        flat[:k] = torch.tensor(SPECIAL[:k])
    return t


def one(*shapes, special=True):
    return lambda gen: [tuple(rand(gen, *s, special=special) for s in shapes)]


# ---- activations -----------------------------------------------------------------------------

@model("acts_f", "acts", one((2, 4, 6)), opsets=(12, 13, 17, 20))
class ActsF(nn.Module):
    """The functional activations, each returned (threshold inputs: SPECIAL)."""

    def forward(self, x):
        return (F.relu(x), F.relu6(x), F.hardtanh(x, -2.0, 2.0), F.leaky_relu(x, 0.2), F.elu(x, 0.5),
                F.celu(x, 1.5), F.selu(x), F.gelu(x), F.gelu(x, approximate="tanh"), F.silu(x),
                F.mish(x), F.softplus(x), F.softplus(x, beta=2.0), F.softsign(x), F.hardsigmoid(x),
                F.hardswish(x), F.hardshrink(x, 0.5), F.softshrink(x, 0.5), F.tanhshrink(x),
                F.logsigmoid(x), torch.sigmoid(x), torch.tanh(x),
                F.glu(x, -1), F.softmin(x, 1), F.log_softmax(x, 1), F.softmax(x, 0))


@model("acts_f9", "acts", one((2, 4, 6)), opsets=(9, 10))
class ActsF9(nn.Module):
    """What opsets 9/10 can write of the above (no celu; hardswish/hardsigmoid as HardSigmoid)."""

    def forward(self, x):
        return (F.relu(x), F.relu6(x), F.hardtanh(x, -2.0, 2.0), F.leaky_relu(x, 0.2), F.elu(x, 0.5),
                F.selu(x), F.gelu(x), F.silu(x), F.softplus(x), F.softsign(x), F.hardsigmoid(x),
                F.hardswish(x), F.hardshrink(x, 0.5), F.softshrink(x, 0.5),
                F.log_softmax(x, 1), F.softmax(x, 0))


@model("acts_nn", "acts", one((2, 3, 4, 5), (2, 3, 7), (5, 3)), opsets=(9, 13, 17))
class ActsNN(nn.Module):
    """Activation modules; nn.PReLU with one and with per-channel weights on 4-d, 3-d (the
    exporter unsqueezes the weight to [C, 1]) and 2-d inputs."""

    def __init__(self):
        super().__init__()
        self.prelu1 = nn.PReLU()
        self.prelu4 = nn.PReLU(3)
        self.prelu3 = nn.PReLU(3)
        self.prelu2 = nn.PReLU(3)
        self.rrelu = nn.RReLU()
        self.hardtanh = nn.Hardtanh(-1.0, 3.0)
        self.relu6 = nn.ReLU6()
        with torch.no_grad():
            for p in (self.prelu4, self.prelu3, self.prelu2):
                p.weight.copy_(torch.tensor([0.1, 0.3, -0.2]))

    def forward(self, x, y, z):
        return (self.prelu1(x), self.prelu4(x), self.prelu3(y), self.prelu2(z), self.rrelu(x),
                self.hardtanh(z), self.relu6(x))


# ---- pooling ---------------------------------------------------------------------------------

@model("max_pool_indices", "pool", one((2, 3, 8), (2, 3, 6, 6), (1, 2, 4, 4, 4)),
       opsets=(9, 11, 13, 17))
class MaxPoolIndices(nn.Module):
    """Max pooling returning indices (1-d/2-d/3-d, F and nn forms, adaptive)."""

    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(3, 2, padding=1, return_indices=True)
        self.adaptive = nn.AdaptiveMaxPool2d((3, 3), return_indices=True)

    def forward(self, x1, x2, x3):
        a, ia = F.max_pool1d(x1, 2, return_indices=True)
        b, ib = self.pool(x2)
        c, ic = F.max_pool3d(x3, 2, return_indices=True)
        d, i_d = self.adaptive(x2)
        e, ie = F.adaptive_max_pool1d(x1, 4, return_indices=True)
        return a, ia, b, ib, c, ic, d, i_d, e, ie


@model("pools", "pool", one((2, 3, 9, 9)), opsets=(9, 11, 13, 17))
class Pools(nn.Module):
    """Average pooling (ceil mode, padding not counted), LP pooling, local response norm."""

    def forward(self, x):
        return (F.avg_pool2d(x, 3, 2, padding=1, ceil_mode=True, count_include_pad=False),
                F.avg_pool2d(x, 2, ceil_mode=True), F.lp_pool2d(x.abs(), 2.0, 3),
                F.local_response_norm(x, 3), F.local_response_norm(x, 4),
                F.adaptive_avg_pool2d(x, 3), F.max_pool2d(x, 3, 2, ceil_mode=True))


# ---- convolutions and normalization with computed parameters ---------------------------------

@model("conv_functional", "conv_norm",
       lambda gen: [(rand(gen, 1, 4, 8, 8), rand(gen, 6, 2, 3, 3, special=False),
                     rand(gen, 6, special=False), rand(gen, 1, 3, 9, special=False),
                     rand(gen, 4, 3, 3, special=False), rand(gen, 4, 2, 3, 3, special=False))])
class ConvFunctional(nn.Module):
    """F.conv*d with weights and biases that are inputs or computed from them."""

    def forward(self, x, w, b, x1, w1, wt):
        return (F.conv2d(x, w, b, stride=2, padding=1, groups=2),
                F.conv1d(x1, w1 * 0.5, padding=2),
                F.conv_transpose2d(x, wt, stride=2, padding=1, output_padding=1),
                F.conv2d(x, w.flip(-1), None, dilation=2, groups=2))


@model("norm_computed", "conv_norm",
       lambda gen: [(rand(gen, 2, 4, 6), rand(gen, 2, 4, 5, 5), rand(gen, 4, special=False),
                     torch.rand(4, generator=gen) + 0.5, rand(gen, 5, special=False))],
       opsets=(9, 13, 17))
class NormComputed(nn.Module):
    """Norms whose statistics or affine parameters are computed: nn.InstanceNorm with
    track_running_stats (Tile of the running statistics), F.batch_norm / F.layer_norm /
    F.instance_norm with tensor arguments, GroupNorm."""

    def __init__(self):
        super().__init__()
        self.in1 = nn.InstanceNorm1d(4, track_running_stats=True)
        self.in2 = nn.InstanceNorm2d(4, affine=True, track_running_stats=True)
        self.gn = nn.GroupNorm(2, 4)
        with torch.no_grad():
            for m in (self.in1, self.in2):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 1.5)
            self.in2.weight.uniform_(0.5, 1.5)

    def forward(self, x1, x2, m, v, w):
        return (self.in1(x1), self.in2(x2),
                F.batch_norm(x1, m, v, v * 2, m, training=False),
                F.layer_norm(x2, (5,), w, w * 0.5),
                F.instance_norm(x2, weight=v, bias=m), self.gn(x2))


# ---- logic, indexing, reductions -------------------------------------------------------------

def logic_inputs(gen):
    x = rand(gen, 3, 4)
    y = rand(gen, 3, 4)
    x[0, 0] = float("nan")
    x[0, 1] = float("inf")
    return [(x, y)]


@model("logic", "index", logic_inputs, opsets=(11, 13, 18))
class Logic(nn.Module):
    """Logical ops (the exporter writes bitwise ops on booleans only), isnan/isinf, where,
    masked_fill."""

    def forward(self, x, y):
        a, b = x > 0, y < 0.5
        return (a & b, a | b, a ^ b, ~a, torch.logical_and(a, b), torch.logical_or(a, y > 1),
                torch.logical_xor(a, b), torch.logical_not(b),
                torch.isnan(x), torch.isinf(x), torch.where(a, x, y), y.masked_fill(b, -1.0),
                torch.where(torch.isnan(x), torch.zeros_like(x), x))


def index_inputs(gen):
    return [(rand(gen, 2, 5, 6), torch.tensor([4, 0, 2]), torch.tensor([[1, 0], [2, 4]]),
             rand(gen, 2, 3, special=False))]


@model("index", "index", index_inputs, opsets=(14, 16, 17))
class Index(nn.Module):
    """flip, roll (Swin's window shift), indexing with tensors (Gather/GatherND), index_put,
    scatter, gather, one_hot, tril/triu, cumsum, topk, sort, nonzero-free reductions."""

    def forward(self, x, idx, idx2, v):
        y = x.clone()
        y[:, idx[:2]] = y[:, idx[:2]] * 2 + v[:, :2].unsqueeze(-1)
        z = x.clone()
        z[0, idx2[0], idx2[1]] = 7.0
        return (x.flip(-1), x.flip(1, 2), torch.roll(x, shifts=(1, -2), dims=(1, 2)),
                x[:, idx], x[:, idx2], x[0, idx2[0], idx2[1]], y, z,
                torch.scatter(x, 2, idx2.expand(2, 2, 2) % 6, 5.0),
                torch.scatter_add(x, 1, idx.view(1, 3, 1).expand(2, 3, 6), x[:, :3]),
                torch.gather(x, 2, (idx2 % 6).expand(2, 2, 2)),
                F.one_hot(idx, 5), x.tril(1), x.triu(-1), x.cumsum(2), torch.topk(x, 2, dim=1),
                torch.sort(x, dim=-1, descending=True), x.argmax(1), x.argmin(-1, keepdim=True))


@model("reduce", "index", one((2, 3, 4)), opsets=(11, 13, 17, 18))
class Reduce(nn.Module):
    """Reductions the exporter writes as ReduceProd/LogSumExp/L1/L2/Max/Min/Mean/SumSquare."""

    def forward(self, x):
        return (x.prod(1), x.prod(-1, keepdim=True), torch.logsumexp(x, (1, 2)), x.amax((0, 2)),
                x.amin(1), x.std(2), x.var((1, 2), unbiased=False), x.norm(p=1, dim=1),
                x.norm(dim=2), x.mean((0, 1), keepdim=True), x.sum(), x.abs().max())


def unique_inputs(gen):
    return [(torch.randint(0, 4, (3, 5), generator=gen).float(), rand(gen, 3, 5))]


@model("unique_nonzero", "index", unique_inputs, opsets=(11, 13, 17))
class UniqueNonzero(nn.Module):
    """torch.unique (sorted, inverse, counts), nonzero, masked_select. (ONNX's Unique gives the
    inverse flattened, so the model flattens it too.)"""

    def forward(self, x, y):
        u, inv, cnt = torch.unique(x, sorted=True, return_inverse=True, return_counts=True)
        return u, inv.flatten(), cnt, torch.nonzero(x), y[y > 0.5], torch.unique(x, dim=1)


def dyn_inputs(gen):
    """Two sets of different sizes (the export's, then others): the code must be shape-general."""
    return [(rand(gen, 2, 6, 4),), (rand(gen, 3, 10, 4, special=False),)]


@model("dyn_ops", "index", dyn_inputs, opsets=(11, 13, 17),
       dynamic={"x": {0: "batch", 1: "n"}})
class DynOps(nn.Module):
    """Slices, top-k, splits and masks whose sizes come from the dynamic input sizes."""

    def forward(self, x):
        n = x.size(1) // 2
        head = x[:, :n]
        v, i = torch.topk(x, n, dim=1)
        a, b = torch.split(x, [n, x.size(1) - n], dim=1)
        y = x.clone()
        y[y > 1.0] = 0.0
        return head, v, i, a * 2, b, y, x.flip(1)[:, 1:], torch.nonzero(x > 1.5)


# ---- resampling ------------------------------------------------------------------------------

@model("interp", "resample", one((1, 2, 5, 6)), opsets=(11, 13, 17))
class Interp(nn.Module):
    """F.interpolate by scale factors and sizes, every mode."""

    def forward(self, x):
        return (F.interpolate(x, scale_factor=2.0, mode="nearest"),
                F.interpolate(x, scale_factor=(2.0, 3.0), mode="nearest"),
                F.interpolate(x, size=(7, 9), mode="nearest"),
                F.interpolate(x, scale_factor=2.0, mode="bilinear", align_corners=False),
                F.interpolate(x, size=(8, 8), mode="bilinear", align_corners=True),
                F.interpolate(x, scale_factor=1.5, mode="bilinear", recompute_scale_factor=True),
                F.interpolate(x, scale_factor=2.0, mode="bicubic", align_corners=False),
                F.pixel_shuffle(x.repeat(1, 2, 1, 1), 2), F.pixel_unshuffle(x[..., :4, :4], 2))


@model("interp9", "resample", one((1, 2, 5, 6)), opsets=(9, 10))
class Interp9(nn.Module):
    """Nearest upsampling at opsets 9/10 (Upsample, Resize-10)."""

    def forward(self, x):
        return (F.interpolate(x, scale_factor=2.0, mode="nearest"),
                F.interpolate(x, size=(10, 18), mode="nearest"))


@model("interp9_bilinear", "resample", one((1, 2, 5, 6)), opsets=(9,),
       refused={9: "coordinate_transformation_mode asymmetric"})
class Interp9Bilinear(nn.Module):
    """Bilinear upsampling at opset 9: ONNX's Upsample samples at x / scale (asymmetric), not at
    PyTorch's pixel centres, so the exported model computes something else: refused."""

    def forward(self, x):
        return F.interpolate(x, scale_factor=2.0, mode="bilinear")


@model("interp_dyn", "resample", one((2, 2, 5, 6)), opsets=(11, 13, 17),
       dynamic={"x": {0: "batch", 2: "h", 3: "w"}})
class InterpDyn(nn.Module):
    """F.interpolate by scale factors on dynamic sizes (the exporter computes the output size from
    Shape -> Cast to float -> Mul -> Cast back)."""

    def forward(self, x):
        return (F.interpolate(x, scale_factor=2.0, mode="nearest"),
                F.interpolate(x, scale_factor=2.0, mode="bilinear"),
                F.interpolate(x, scale_factor=1.5, mode="nearest", recompute_scale_factor=True))


@model("grid", "resample",
       lambda gen: [(rand(gen, 2, 3, 5, 6), torch.rand(2, 4, 4, 2, generator=gen) * 2.4 - 1.2)],
       opsets=(16, 17, 20))
class Grid(nn.Module):
    """F.grid_sample in every mode and padding mode."""

    def forward(self, x, g):
        return (F.grid_sample(x, g, align_corners=False),
                F.grid_sample(x, g, mode="nearest", padding_mode="border", align_corners=True),
                F.grid_sample(x, g, mode="bicubic", padding_mode="reflection", align_corners=False))


@model("affine_grid", "resample",
       lambda gen: [(rand(gen, 2, 3, 5, 6), torch.randn(2, 2, 3, generator=gen) * 0.5)],
       opsets=(20,))
class AffineGrid(nn.Module):
    """F.affine_grid (opset 20) sampled by F.grid_sample."""

    def forward(self, x, theta):
        g = F.affine_grid(theta, [2, 3, 4, 4], align_corners=False)
        return g, F.grid_sample(x, g, align_corners=False)


# ---- recurrent ------------------------------------------------------------------------------

@model("rnn_plain", "rnn", one((5, 2, 4), (2, 5, 4), (4, 5, 6), special=False))
class RnnPlain(nn.Module):
    """nn.RNN: tanh, two layers; relu, bidirectional, batch_first; with an initial state."""

    def __init__(self):
        super().__init__()
        self.tanh = nn.RNN(4, 6, num_layers=2)
        self.relu = nn.RNN(4, 5, nonlinearity="relu", bidirectional=True, batch_first=True)

    def forward(self, x, xb, h0):
        y1, h1 = self.tanh(x)
        y2, h2 = self.relu(xb, h0[:2, :2, :5].contiguous())
        return y1, h1, y2, h2


# ---- control flow (scripted) -----------------------------------------------------------------

def sign_sets(*shapes):
    """Two input sets: the first input's sum positive, then negative."""
    def make(gen):
        base = tuple(rand(gen, *s, special=False) for s in shapes)
        pos = (base[0].abs() + 0.1,) + base[1:]
        neg = (-base[0].abs() - 0.1,) + base[1:]
        return [pos, neg]
    return make


@model("if_gate", "control", sign_sets((2, 3, 5, 5)), script=True)
class IfGate(nn.Module):
    """A data-dependent branch around modules (conv + BN + ReLU in one, a linear map in the
    other), so --fuse folds BatchNorm inside a branch."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.alt = nn.Conv2d(3, 4, 1)

    def forward(self, x):
        if bool(x.sum() > 0):
            y = torch.relu(self.bn(self.conv(x)))
        else:
            y = self.alt(x) * 2.0
        return y


@model("loop_cell", "control", one((4, 2, 6), (2, 6), special=False), script=True)
class LoopCell(nn.Module):
    """for i in range(xs.size(0)): a recurrent cell with a branch inside; also the loop's
    iteration number used as a value."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 6)

    def forward(self, xs, h):
        acc = torch.zeros_like(h)
        for i in range(xs.size(0)):
            h = torch.tanh(self.lin(xs[i]) + h)
            if bool(h.mean() > 0):
                acc = acc + h * float(i)
            else:
                acc = acc - h
        return h, acc


@model("while_loop", "control",
       lambda gen: [(torch.randn(2, 3, generator=gen) * 0.01,), (torch.randn(2, 3, generator=gen) * 5,)],
       script=True)
class WhileLoop(nn.Module):
    """A while loop whose condition depends on the data (and a counter)."""

    def forward(self, x):
        n = 0
        while bool(x.abs().sum() < 20.0) and n < 12:
            x = x * 1.5 + 0.1
            n += 1
        return x, torch.tensor(n)


@model("list_loop", "control", one((5, 3), special=False), script=True)
class ListLoop(nn.Module):
    """A list appended to in a loop (ONNX sequences), then stacked and concatenated."""

    def forward(self, x):
        outs: List[torch.Tensor] = []
        for i in range(x.size(0)):
            outs.append(x[i] * float(i + 1))
        parts = torch.split(x, 2, 0)
        return torch.stack(outs), torch.cat(outs), torch.cat([p.sum(0, keepdim=True) for p in parts])


def stamp():
    return gm.stamp(__file__)


def names():
    return {f"{n}_op{o}": (s, o) for n, s in SPECS.items() for o in s.opsets}


def export(name, spec, opset, out_dir):
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED + 1)
    m = spec.build()
    m.eval()
    with torch.no_grad():
        for p in m.parameters():
            if p.dim() > 1:
                p.copy_(torch.randn(p.shape, generator=gen) * (1.0 / p[0].numel() ** 0.5))
    bns = [b for b in m.modules() if isinstance(b, nn.BatchNorm2d)]
    with torch.no_grad():
        for b in bns:
            b.running_mean.uniform_(-0.5, 0.5, generator=gen)
            b.running_var.uniform_(0.5, 1.5, generator=gen)
            b.weight.uniform_(0.5, 1.5, generator=gen)
    sets = spec.inputs(gen)
    target = torch.jit.script(m) if spec.script else m
    with torch.no_grad():
        expected = [gm.flatten(target(*s)) for s in sets]
    base = os.path.join(out_dir, name)
    ins = sets[0]
    input_names = [f"x{i}" for i in range(len(ins))] if len(ins) > 1 else ["x"]
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gm.atomic_write(base + ".onnx", lambda p: torch.onnx.export(
            target, ins, p, opset_version=opset, input_names=input_names, dynamo=False,
            dynamic_axes=spec.dynamic))
    gm.atomic_write(base + ".inputs.pt", lambda p: torch.save(sets, p))
    gm.atomic_write(base + ".expected.pt", lambda p: torch.save(expected, p))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out")
    ap.add_argument("--only", help="comma-separated groups or model names")
    ap.add_argument("--list", action="store_true", help="print the groups")
    ap.add_argument("--force", action="store_true")
    args = ap.parse_args()
    groups = sorted({s.group for s in SPECS.values()})
    if args.list:
        for g in groups:
            print(g)
        return 0
    if not args.out:
        ap.error("--out DIR is required")
    os.makedirs(args.out, exist_ok=True)
    st = stamp()
    all_names = names()
    wanted = set(args.only.split(",")) if args.only else None
    failed = []
    for g in groups:
        meta = os.path.join(args.out, g + ".json")
        members = {n: so for n, so in all_names.items() if so[0].group == g}
        if wanted and g not in wanted and not wanted & set(members):
            continue
        try:
            with open(meta) as f:
                current = json.load(f).get("generator") == st and not args.force
        except (OSError, ValueError):
            current = False
        if current and all(os.path.exists(os.path.join(args.out, n + ".expected.pt"))
                           for n in members):
            print(f"{g}: cached")
            continue
        entries = []
        for n, (spec, opset) in members.items():
            if not wanted or g in wanted or n in wanted:
                try:
                    export(n, spec, opset, args.out)
                    print(f"{n}: exported")
                except Exception as e:
                    print(f"error: {n}: {type(e).__name__}: {e}", file=sys.stderr)
                    failed.append(n)
                    continue
            entries.append({"name": n, "tol": spec.tol, "fuse": spec.fuse,
                            "refused": spec.refused.get(opset)})
        def write_meta(p):
            with open(p, "w") as f:
                json.dump({"generator": st, "models": entries}, f, indent=1)
        gm.atomic_write(meta, write_meta)
    if failed:
        print(f"error: export failed for: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
