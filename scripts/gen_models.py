#!/usr/bin/python3
"""Generates the traced TorchScript models the end-to-end tests convert.

Run with Debian's /usr/bin/python3 (the only Python here with torch). Nothing is downloaded:
every model is randomly initialised with a fixed seed. For each model NAME it writes, in --out:

  NAME.pt           the traced TorchScript archive (torch.jit.trace(...).save)
  NAME.inputs.pt    torch.save of the example input tuple
  NAME.expected.pt  torch.save of the traced model's outputs on those inputs
  NAME.json         what the test driver needs: input shapes/dtypes, the --input-shape
                    arguments, tolerance, expected warnings, and the generator stamp

NAME.json is written last and carries a stamp (hash of this file + torch version), so a re-run
skips models that are already there and current. The "badinput" group writes the malformed files
the bad-input tests feed to the CLI into --out/badinput/.

Why the weights are re-randomised: torchvision's default init leaves BatchNorm at mean 0 / var 1,
zero biases, a zero ViT head and class token. Outputs are then ~1e-10 (MobileNet, EfficientNet) or
exactly 0 (ViT), which makes any comparison meaningless and hides transposed or dropped weights.
So every all-zero float tensor gets small random values, BatchNorm gets random affine parameters
and running statistics calibrated on random data then perturbed, and each model's max |output|
is checked to be > 1e-3.
"""
import argparse
import hashlib
import io
import json
import os
import sys
import warnings
import zipfile

import torch
import torch.nn as nn
import torch.nn.functional as F

SEED = 20240601

# --------------------------------------------------------------------------------------------
# Registry


class Spec:
    def __init__(self, name, group, build, inputs, tol=1e-4, expect_warnings=(), note=""):
        self.name = name
        self.group = group        # "torchvision" | "small" | "example"
        self.build = build        # () -> nn.Module (called after torch.manual_seed)
        self.inputs = inputs      # [(shape, dtype, high)]; high bounds int64 inputs
        self.tol = tol
        self.expect_warnings = list(expect_warnings)
        self.note = note


SPECS = {}


def register(name, group, inputs, **kw):
    def deco(build):
        SPECS[name] = Spec(name, group, build, inputs, **kw)
        return build
    return deco


def f32(*shape):
    return (tuple(shape), "float32", None)


def i64(*shape, high):
    return (tuple(shape), "int64", high)


# --------------------------------------------------------------------------------------------
# torchvision models (64x64 inputs keep CI fast; every one of these accepts it)

def _tv(fn_name, **kwargs):
    def build():
        import torchvision
        return getattr(torchvision.models, fn_name)(weights=None, **kwargs)
    return build


for _name, _kw in [
    ("resnet18", {}),
    ("resnet50", {}),
    ("mobilenet_v2", {}),
    ("mobilenet_v3_large", {}),
    ("efficientnet_b0", {}),
    ("squeezenet1_1", {}),
    ("shufflenet_v2_x1_0", {}),
    ("densenet121", {}),
    ("googlenet", {"aux_logits": False, "init_weights": True}),
    # ViT's position embedding is sized by image_size; 64 gives 4x4 patches + class token.
    ("vit_b_16", {"image_size": 64}),
    # Shifted windows on 16x16, 8x8, 4x4 and 2x2 feature maps (padded to 7x7 windows).
    ("swin_t", {}),
]:
    SPECS[_name] = Spec(_name, "torchvision", _tv(_name, **_kw), [f32(1, 3, 64, 64)])


# --------------------------------------------------------------------------------------------
# Small hand-made models, each aimed at one feature of the loader/emitter.

@register("functional_acts", "small", [f32(2, 16)])
class FunctionalActs(nn.Module):
    """Functional activations (no modules): each result is kept so a wrong one shows."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)

    def forward(self, x):
        x = self.fc(x) * 3.0  # spread values past relu6/hardswish's corners
        outs = [
            F.relu(x), F.relu6(x * 2.0), F.hardswish(x), F.gelu(x), F.silu(x),
            torch.sigmoid(x), torch.tanh(x), F.leaky_relu(x, 0.1), F.elu(x, alpha=0.5),
            F.softmax(x, dim=-1),
        ]
        return torch.cat(outs, dim=1)


@register("shared_relu", "small", [f32(1, 4, 8, 8)])
class SharedRelu(nn.Module):
    """One nn.ReLU instance called four times (quant-prep must later unshare it)."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(4, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.conv3 = nn.Conv2d(8, 8, 3, stride=2, padding=1)
        self.fc = nn.Linear(8 * 4 * 4, 10)
        self.relu = nn.ReLU()

    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        x = self.relu(self.conv3(x))
        return self.relu(self.fc(torch.flatten(x, 1)))


@register("two_inputs_add", "small", [f32(1, 3, 8, 8), f32(1, 3, 8, 8)])
class TwoInputsAdd(nn.Module):
    """Two inputs, in order, combined with tensor adds."""

    def __init__(self):
        super().__init__()
        self.conv_a = nn.Conv2d(3, 6, 3, padding=1)
        self.conv_b = nn.Conv2d(3, 6, 1)

    def forward(self, x, y):
        s = x + y
        return self.conv_a(s) + self.conv_b(y)


@register("nested_seq_bn", "small", [f32(1, 3, 16, 16)])
class NestedSeqBn(nn.Module):
    """Nested nn.Sequential with BatchNorm: state_dict keys like features.1.0.weight."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU()),
            nn.Sequential(nn.Conv2d(8, 8, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(8),
                          nn.ReLU(inplace=True)),
            nn.Sequential(nn.Sequential(nn.Conv2d(8, 16, 1), nn.BatchNorm2d(16))),
        )
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 5),
                                  nn.BatchNorm1d(5))

    def forward(self, x):
        return self.head(self.features(x))


@register("tuple_out", "small", [f32(1, 3, 8, 8)])
class TupleOut(nn.Module):
    """A tuple of two outputs of different shapes."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.fc = nn.Linear(4, 7)

    def forward(self, x):
        feat = F.relu(self.conv(x))
        logits = self.fc(feat.mean(dim=(2, 3)))
        return logits, feat


@register("unknown_op", "small", [f32(2, 8)], expect_warnings=["_log_softmax"])
class UnknownOp(nn.Module):
    """A private ATen op called directly (torch._log_softmax) has no public spelling: it must fall
    back to torch.ops.aten."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return torch._log_softmax(torch.tanh(self.fc(x)), 1, False) * 0.5 + x


@register("slice_assign", "small", [f32(1, 3, 8, 8)])
class SliceAssign(nn.Module):
    """A traced slice assignment (Swin's shifted-window mask): aten::fill_ mutates a fresh tensor
    through a view; the interpreter and the generated code must do the same."""

    def forward(self, x):
        mask = x.new_zeros((x.shape[-2], x.shape[-1]))
        mask[0:2, 0:3] = 1.0
        return x + mask


@register("weight_norm", "small", [f32(2, 8)])
class WeightNorm(nn.Module):
    """nn.utils.weight_norm: the trace holds aten::_weight_norm (written torch._weight_norm, as
    nn.utils.weight_norm computes it) and the keys weight_g/weight_v."""

    def __init__(self):
        super().__init__()
        self.fc = nn.utils.weight_norm(nn.Linear(8, 6))

    def forward(self, x):
        return self.fc(x)


@register("conv_groups", "small", [f32(1, 4, 32), f32(1, 4, 6, 8, 8), f32(1, 4, 8, 8)])
class ConvGroups(nn.Module):
    """Conv1d / Conv3d / ConvTranspose2d with groups, strides, dilation and output_padding."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv1d(4, 8, 3, padding=2, dilation=2, groups=2)
        self.c1_dw = nn.Conv1d(8, 8, 3, stride=2, groups=8, bias=False)
        self.c3 = nn.Conv3d(4, 8, 3, padding=1, groups=4)
        self.ct = nn.ConvTranspose2d(4, 8, 3, stride=2, padding=1, output_padding=1, groups=2)

    def forward(self, x1, x3, x2):
        return self.c1_dw(self.c1(x1)), self.c3(x3), self.ct(x2)


@register("lstm", "small", [f32(2, 5, 8)])
class Lstm(nn.Module):
    """Two-layer batch_first LSTM; returns the head of the last step and the hidden state."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 16, num_layers=2, batch_first=True)
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        out, (h, c) = self.lstm(x)
        return self.fc(out[:, -1]), h, c


@register("gru", "small", [f32(5, 2, 8)])
class Gru(nn.Module):
    """Bidirectional, sequence-first GRU."""

    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(8, 12, bidirectional=True)

    def forward(self, x):
        out, h = self.gru(x)
        return out, h


@register("norms", "small", [f32(2, 4, 8, 8)])
class Norms(nn.Module):
    """LayerNorm, GroupNorm and InstanceNorm (affine) as modules."""

    def __init__(self):
        super().__init__()
        self.gn = nn.GroupNorm(2, 4)
        self.inorm = nn.InstanceNorm2d(4, affine=True)
        self.ln = nn.LayerNorm(8)
        self.ln2 = nn.LayerNorm([4, 8, 8], elementwise_affine=True)

    def forward(self, x):
        y = self.gn(x)
        y = self.inorm(y * 2.0 + x)
        return self.ln(y), self.ln2(x)


@register("embedding", "small", [i64(1, 12, high=100)])
class Embedding(nn.Module):
    """Embedding fed by an int64 input."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(100, 16)
        self.fc = nn.Linear(16, 5)

    def forward(self, ids):
        return self.fc(self.emb(ids).mean(dim=1))


@register("upsample_shuffle_pad", "small", [f32(1, 4, 8, 8)])
class UpsampleShufflePad(nn.Module):
    """Upsample / interpolate, PixelShuffle and padding, as modules and functions."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 16, 3, padding=1)
        self.shuffle = nn.PixelShuffle(2)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.pad = nn.ZeroPad2d((1, 2, 0, 1))

    def forward(self, x):
        y = self.pad(self.up(self.shuffle(self.conv(x))))
        z = F.interpolate(x, scale_factor=2.0, mode="bilinear", align_corners=False)
        z = F.pad(z, (1, 1, 2, 2), mode="constant", value=0.5)
        return y, z


class ScaleShift(nn.Module):
    """A custom module with its own parameters and a buffer (not a known leaf)."""

    def __init__(self, c):
        super().__init__()
        self.scale = nn.Parameter(torch.rand(1, c, 1, 1) + 0.5)
        self.shift = nn.Parameter(torch.randn(c) * 0.1)
        self.register_buffer("offset", torch.randn(1, c, 1, 1) * 0.1)

    def forward(self, x):
        return x * self.scale + self.shift.view(1, -1, 1, 1) + self.offset


@register("custom_param", "small", [f32(1, 3, 8, 8)])
class CustomParam(nn.Module):
    """A custom submodule with nn.Parameters, plus a parameter on the root module."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.block = ScaleShift(4)
        self.alpha = nn.Parameter(torch.tensor(0.7))

    def forward(self, x):
        return self.block(self.conv(x)) * self.alpha


@register("leaf_modules", "small", [f32(2, 3, 16, 16)])
class LeafModules(nn.Module):
    """Leaf modules the lifter knows, in one chain, so each one's hyperparameters matter."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.PReLU(8), nn.MaxPool2d(2), nn.Hardsigmoid(),
            nn.Conv2d(8, 8, 1), nn.Hardswish(), nn.AvgPool2d(3, stride=1, padding=1),
            nn.ELU(alpha=0.7), nn.Dropout(0.3), nn.Identity(), nn.LeakyReLU(0.2),
            nn.AdaptiveMaxPool2d(4), nn.SiLU(), nn.GELU(), nn.ReLU6(), nn.Tanh(),
            nn.AdaptiveAvgPool2d(2), nn.Flatten(), nn.Linear(32, 10), nn.Sigmoid(),
        )
        self.softmax = nn.Softmax(dim=1)

    def forward(self, x):
        y = self.body(x)
        return y, self.softmax(y * 4.0)


@register("mha", "small", [f32(2, 6, 16)])
class Mha(nn.Module):
    """nn.MultiheadAttention (batch_first), returning the attention weights too."""

    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(16, 4, batch_first=True)

    def forward(self, x):
        out, weights = self.attn(x, x, x)
        return out, weights


# --------------------------------------------------------------------------------------------
# quant-prep passes (functional-to-module, unshare-modules, float-functional): helper Q1's block.


@register("quant_prep_misc", "small", [f32(2, 8, 4, 4), f32(2, 8, 4, 4)])
class QuantPrepMisc(nn.Module):
    """Functional prelu (own parameter), hardsigmoid, hardtanh, dropout; a shared module;
    tensor/scalar add, mul, rsub, add+relu; int arithmetic on sizes and an alpha != 1 add that
    must stay."""

    def __init__(self):
        super().__init__()
        self.alpha = nn.Parameter(torch.full((8,), 0.2))
        self.conv = nn.Conv2d(8, 8, 1)
        self.act = nn.Hardswish()

    def forward(self, x, y):
        a = F.prelu(self.conv(x), self.alpha)
        b = F.hardsigmoid(a) * y + 1.0
        c = F.hardtanh(b * 3.0, -2.0, 2.0) + F.hardtanh(a, 0.0, 6.0)
        d = F.dropout(self.act(c), 0.3, training=self.training)
        e = F.relu(d + x) * 2.0
        f = 1.0 - self.act(e)
        g = torch.add(f, y, alpha=2.0)
        h = g[:, : g.size(1) // 2 + 1]
        return h, torch.cat([a, b], dim=1)


@register("quant_outputs", "small", [f32(2, 16)])
class QuantOutputs(nn.Module):
    """What a prepared model hands back: a float tensor inside a list inside the output tuple,
    topk's int64 indices, x.long(), and a tensor whose dtype comes from the input (type_as):
    after convert, floats are dequantized and integers stay integers."""

    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(16, 16)
        self.l2 = nn.Linear(16, 8)

    def forward(self, x):
        h = torch.tanh(self.l1(x))
        v, i = torch.topk(self.l2(h), 3, dim=1)
        ones = torch.ones(2, 8).type_as(x)
        return h, [v, i, (h > 0).long()], ones + 1.0


@register("dict_out", "small", [f32(1, 3, 16, 16)])
class DictOut(nn.Module):
    """Returns a dict like torchvision's segmentation models ({"out": ..., "aux": ...}), traced
    with strict=False: the generated forward returns the same dict."""

    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.head = nn.Conv2d(8, 4, 1)
        self.aux = nn.Conv2d(8, 4, 1)

    def forward(self, x):
        f = self.backbone(x)
        out = F.interpolate(self.head(f), scale_factor=2.0, mode="bilinear", align_corners=False)
        return {"out": out, "aux": self.aux(f)}


@register("multi_output_ops", "small", [f32(2, 12)])
class MultiOutputOps(nn.Module):
    """Ops with several results (topk, sort, max/min over a dim, chunk/split/unbind, std_mean,
    var_mean, aminmax, kthvalue) and nn.Upsample, whose TorchScript
    lowering passes None for the output size: --emit torchscript unpacks the results."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(12, 12)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")

    def forward(self, x):
        h = self.fc(x)
        v, i = torch.topk(h, 3, dim=1)
        s, si = torch.sort(h, dim=1, descending=True)
        mx, mxi = torch.max(h, dim=1)
        mn, mni = h.min(dim=1, keepdim=True)
        a, b, c, _ = h.chunk(4, dim=1)
        p, q = h.split([5, 7], dim=1)
        r0, r1 = h.unbind(0)
        sd, mu = torch.std_mean(h, dim=1)
        vr, mv = torch.var_mean(h, dim=1, unbiased=False)
        lo, hi = torch.aminmax(h, dim=1)
        kv, ki = torch.kthvalue(h, 2, dim=1)
        values = v * s[:, :3] + mx[:, None] - mn + a * b - c
        indices = i + si[:, :3] + mxi[:, None] + mni + ki[:, None]
        stats = p.sum(1) + q.mean(1) + (r0 - r1).sum() + sd + mu + vr + mv + lo + hi + kv
        return values, indices, stats, self.up(h.view(2, 3, 2, 2))


# --------------------------------------------------------------------------------------------
# --quant-prep end to end (tests/quant.cmake, tests/e2e/check_quant.py): the lead's block.


@register("functional_relu", "small", [f32(2, 3, 16, 16)])
class FunctionalRelu(nn.Module):
    """Only functional relus: conv+bn+F.relu and linear+F.relu must become fused modules."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, stride=2, padding=1)
        self.fc = nn.Linear(8, 6)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.conv2(x), inplace=True)
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return F.relu(self.fc(x))


@register("sub_div_neg_stack", "small", [f32(2, 4, 6, 6), f32(2, 4, 6, 6)])
class SubDivNegStack(nn.Module):
    """x - y, x / c, -x, torch.stack: each has a FloatFunctional spelling."""

    def __init__(self):
        super().__init__()
        self.conv_a = nn.Conv2d(4, 4, 3, padding=1)
        self.conv_b = nn.Conv2d(4, 4, 1)

    def forward(self, x, y):
        a = self.conv_a(x) - self.conv_b(y)
        b = a / 4.0
        c = -b
        s = torch.stack([a, b, c], dim=1)
        return s.flatten(1, 2) * 0.5


@register("attention_fallback", "small", [f32(2, 5, 16)])
class AttentionFallback(nn.Module):
    """Hand-written attention: matmul, softmax and a scale need float fallback around them."""

    def __init__(self):
        super().__init__()
        self.q = nn.Linear(16, 16)
        self.k = nn.Linear(16, 16)
        self.v = nn.Linear(16, 16)
        self.proj = nn.Linear(16, 16)
        self.norm = nn.LayerNorm(16)

    def forward(self, x):
        q, k, v = self.q(x), self.k(x), self.v(x)
        att = torch.softmax(torch.matmul(q, k.transpose(1, 2)) / 4.0, dim=-1)
        y = self.proj(torch.bmm(att, v))
        return self.norm(F.relu(y) + x)


# The example bundled in testdata/models/ (committed, < 100 KB): scripts/example.sh converts it.
@register("tiny_cnn", "example", [f32(1, 3, 32, 32)])
class TinyCnn(nn.Module):
    """A small conv/bn/relu/pool/linear classifier."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU(inplace=True)
        self.pool = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(16)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = self.pool(self.relu(self.bn1(self.conv1(x))))
        x = F.relu(self.bn2(self.conv2(x)))
        x = torch.flatten(self.avgpool(x), 1)
        return self.fc(x)


# --------------------------------------------------------------------------------------------
# Randomisation


def randomize_(model, spec, gen, before_stats=None):
    """Gives every float tensor a non-trivial value and BatchNorm realistic random statistics.
    before_stats(model), when given, runs after the BatchNorm affine parameters are drawn and
    before the statistics are measured (so they hold for what it changes)."""
    with torch.no_grad():
        for t in list(model.parameters()) + list(model.buffers()):
            if t.is_floating_point() and t.numel() > 0 and not bool(t.any()):
                t.copy_(torch.randn(t.shape, generator=gen) * 0.02)
        bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
        for bn in bns:
            if bn.affine:
                bn.weight.copy_(0.75 + 0.5 * torch.rand(bn.weight.shape, generator=gen))
                bn.bias.copy_(0.1 * torch.randn(bn.bias.shape, generator=gen))
        if before_stats is not None:
            before_stats(model)
        tracked = [bn for bn in bns if bn.track_running_stats]
        if not tracked:
            return
        # Calibrate the running statistics on random data (train mode, cumulative average), so
        # activations stay O(1) through deep nets, then perturb them so they are not exact.
        saved = [(bn, bn.momentum) for bn in tracked]
        for bn in tracked:
            bn.reset_running_stats()
            bn.momentum = None
        model.train()
        calib = make_inputs(spec, gen, batch=4)
        model(*calib)
        for bn, momentum in saved:
            bn.momentum = momentum
            std = bn.running_var.sqrt()
            bn.running_mean.add_(0.1 * std * torch.randn(std.shape, generator=gen))
            bn.running_var.mul_(torch.exp(0.2 * torch.randn(std.shape, generator=gen)))
            bn.running_var.clamp_(min=1e-3)
            bn.num_batches_tracked.fill_(100)
        model.eval()


def make_inputs(spec, gen, batch=None):
    out = []
    for shape, dtype, high in spec.inputs:
        shape = list(shape)
        if batch is not None and len(shape) >= 2:
            # seq-first recurrent inputs have their batch in dim 1; batch in dim 0 elsewhere.
            dim = 1 if spec.name == "gru" else 0
            shape[dim] = batch
        if dtype == "int64":
            out.append(torch.randint(0, high, shape, generator=gen, dtype=torch.int64))
        else:
            out.append(torch.randn(shape, generator=gen))
    return tuple(out)


# --------------------------------------------------------------------------------------------
# Generation


def flatten(x):
    """The output tensors in order. A None output (scripted GoogLeNet's unused aux logits) has no
    tensor: the e2e checkers (scripts/check_model.py) compare it by position themselves."""
    if isinstance(x, torch.Tensor):
        return [x]
    if x is None:
        return []
    if isinstance(x, (tuple, list)):
        return [t for item in x for t in flatten(item)]
    if isinstance(x, dict):
        return [t for k in sorted(x) for t in flatten(x[k])]
    raise TypeError(f"unexpected output type {type(x).__name__}")


def stamp(*also):
    """The generator stamp: a hash of this file (and of the generator files `also`, for the
    generators built on this one) and the torch version."""
    h = hashlib.sha256()
    for path in (*also, __file__):
        with open(os.path.abspath(path), "rb") as f:
            h.update(f.read())
    return f"{h.hexdigest()[:16]}-torch{torch.__version__}"


def one_group_parser(doc, group, list_help):
    """The command line of a one-group generator: --out, --only (names and/or `group`), --list
    (printing what list_help says) and --force."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--out", help="output directory (created if missing)")
    ap.add_argument("--only", help=f"comma-separated model names and/or the group '{group}' "
                    "(default: every model)")
    ap.add_argument("--list", action="store_true", help=list_help)
    ap.add_argument("--force", action="store_true", help="regenerate even when current")
    return ap


def select_names(ap, only, group, specs):
    """--only of a one-group generator: model names and/or the group name (default: the group)."""
    names = []
    for w in ([w.strip() for w in only.split(",") if w.strip()] if only else [group]):
        if w == group:
            names += list(specs)
        elif w in specs:
            names.append(w)
        else:
            ap.error(f"unknown model or group '{w}' (see --list)")
    return names


def shape_arg(shape, dtype):
    s = ",".join(str(d) for d in shape)
    return s if dtype == "float32" else f"{s}:{dtype}"


def atomic_write(path, write):
    tmp = path + ".tmp"
    write(tmp)
    os.replace(tmp, path)


def is_current(out_dir, name, st, exts=(".pt", ".inputs.pt", ".expected.pt")):
    """NAME.json carries the generator stamp `st` and every NAME<ext> of `exts` exists."""
    meta = os.path.join(out_dir, name + ".json")
    try:
        with open(meta) as f:
            if json.load(f).get("generator") != st:
                return False
    except (OSError, ValueError):
        return False
    return all(os.path.exists(os.path.join(out_dir, name + ext)) for ext in exts)


def random_tensor(shape, dtype, gen, high=None):
    """A seeded example input: randn for float32 and complex dtypes, int64 in [0, high), bool."""
    if dtype == "int64":
        return torch.randint(0, high, shape, generator=gen, dtype=torch.int64)
    if dtype == "bool":
        return torch.rand(shape, generator=gen) > 0.5
    return torch.randn(shape, generator=gen, dtype=getattr(torch, dtype))


def graph_nodes(graph):
    """Every node of a TorchScript graph, those of nested blocks too."""
    for n in graph.nodes():
        yield n
        for b in n.blocks():
            yield from graph_nodes(b)


def plain(x):
    """x with named tuples as plain tuples: a scripted model's NamedTuple class (GoogLeNetOutputs,
    made in torch._jit_internal) cannot be pickled by torch.save."""
    if isinstance(x, tuple):
        return tuple(plain(t) for t in x)
    if isinstance(x, list):
        return [plain(t) for t in x]
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    return x


def save_model_files(base, archive, inputs, expected, meta):
    """Writes BASE.pt (the archive), BASE.inputs.pt, BASE.expected.pt, then BASE.json (`meta`, last:
    its generator stamp marks the set as complete)."""
    atomic_write(base + ".pt", lambda p: archive.save(p))
    atomic_write(base + ".inputs.pt", lambda p: torch.save(inputs, p))
    atomic_write(base + ".expected.pt", lambda p: torch.save(plain(expected), p))

    def write_meta(p):
        with open(p, "w") as f:
            json.dump(meta, f, indent=1)
            f.write("\n")
    atomic_write(base + ".json", write_meta)


def check_capture(name, eager, captured, what, exact_ints=False):
    """The captured archive's outputs against eager ones: same structure, finite, rel <= 1e-5, and
    not vanishing (an all-zero output would make the e2e comparison meaningless); with exact_ints,
    integer and bool outputs equal. Returns the captured outputs flattened and their max |value|."""
    exp_flat, eager_flat = flatten(captured), flatten(eager)
    assert len(exp_flat) == len(eager_flat), f"{name}: the {what} archive changed the output structure"
    max_abs = 0.0
    for e, t in zip(eager_flat, exp_flat):
        if not t.is_floating_point():
            assert not exact_ints or torch.equal(e, t), f"{name}: {what} integer output differs"
            continue
        assert torch.isfinite(t).all(), f"{name}: non-finite output"
        scale = max(float(e.abs().max()), 1e-30)
        rel = float((e - t).abs().max()) / scale
        assert rel <= 1e-5, f"{name}: {what} and eager outputs differ (rel {rel:.2e})"
        max_abs = max(max_abs, float(t.abs().max()))
    assert max_abs > 1e-3, f"{name}: max |output| = {max_abs:.3e} is too small"
    return exp_flat, max_abs


def run_generation(names, out_dir, st, force, generate_one, current=None):
    """Generates every model in `names` that is not current in out_dir (`current`, default
    is_current; generate_one(name) generates and returns a summary to print); reports every
    failure and returns the failed names."""
    current = current or is_current
    os.makedirs(out_dir, exist_ok=True)
    torch.set_num_threads(max(1, int(os.environ.get("TT_GEN_THREADS", torch.get_num_threads()))))
    failed = []
    for name in names:
        if not force and current(out_dir, name, st):
            print(f"{name}: cached")
            continue
        try:
            print(f"{name}: {generate_one(name)}")
        except Exception as e:  # report every model, then fail
            print(f"error: {name}: {type(e).__name__}: {e}", file=sys.stderr)
            failed.append(name)
    if failed:
        print(f"error: generation failed for: {', '.join(failed)}", file=sys.stderr)
    return failed


def generate(spec, out_dir, st, extra_meta=None):
    """Traces spec's model and writes NAME.pt, .inputs.pt, .expected.pt and NAME.json (with the
    fields of extra_meta added); returns the largest |output|."""
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED + 1)
    model = spec.build()
    model.eval()
    randomize_(model, spec, gen)
    model.eval()
    inputs = make_inputs(spec, gen)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eager = model(*inputs)
        # strict=False: a model may return a dict (torchvision's segmentation models do)
        traced = torch.jit.trace(model, inputs, check_trace=False, strict=False)
        expected = traced(*inputs)

    exp_flat, max_abs = check_capture(spec.name, eager, expected, "traced")
    write_case(out_dir, spec, st, traced, inputs, expected, exp_flat, max_abs,
               {"expect_warnings": spec.expect_warnings,
                "num_parameters": sum(p.numel() for p in model.parameters()),
                **(extra_meta or {})})
    return max_abs


def write_case(out_dir, spec, st, archive, inputs, expected, exp_flat, max_abs, extra_meta):
    """Writes NAME.pt (the archive), NAME.inputs.pt, NAME.expected.pt and NAME.json: the inputs,
    outputs and tolerance of spec, with the fields of extra_meta added."""
    meta = {
        "name": spec.name,
        "group": spec.group,
        "generator": st,
        "inputs": [{"shape": list(s), "dtype": d} for s, d, _ in spec.inputs],
        "input_shape_args": [shape_arg(s, d) for s, d, _ in spec.inputs],
        "outputs": [{"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", "")}
                    for t in exp_flat],
        "tolerance": spec.tol,
        "max_abs_output": max_abs,
        **extra_meta,
    }
    save_model_files(os.path.join(out_dir, spec.name), archive, inputs, expected, meta)


# --------------------------------------------------------------------------------------------
# Bad inputs (group "badinput"): files that are not TorchScript models.


def generate_bad_inputs(out_dir, st):
    bad = os.path.join(out_dir, "badinput")
    os.makedirs(bad, exist_ok=True)
    stamp_file = os.path.join(bad, "STAMP")
    try:
        with open(stamp_file) as f:
            if f.read().strip() == st:
                print("badinput: cached")
                return
    except OSError:
        pass
    torch.manual_seed(SEED)
    model = TinyCnn().eval()
    example = (torch.randn(1, 3, 32, 32),)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(model, example, check_trace=False)
    buf = io.BytesIO()
    torch.jit.save(traced, buf)
    archive = buf.getvalue()

    def put(name, data):
        atomic_write(os.path.join(bad, name), lambda p: open(p, "wb").write(data))

    # A valid small model, for the tests whose point is the arguments, not the file.
    put("valid.pt", archive)
    put("empty.pt", b"")
    put("random_bytes.pt", bytes(torch.randint(0, 256, (4096,), generator=torch.Generator()
                                                .manual_seed(SEED), dtype=torch.uint8).tolist()))
    # Cut inside the archive: the zip's central directory (at the end) is gone.
    put("truncated.pt", archive[: len(archive) * 3 // 5])
    zbuf = io.BytesIO()
    with zipfile.ZipFile(zbuf, "w") as z:
        z.writestr("readme.txt", "a zip archive that is not a TorchScript model\n")
        z.writestr("data/values.csv", "1,2,3\n")
    put("not_torchscript.pt", zbuf.getvalue())
    atomic_write(os.path.join(bad, "state_dict.pt"), lambda p: torch.save(model.state_dict(), p))
    # torch.save(model) pickles the nn.Module itself (a reference to its class and its __dict__).
    atomic_write(os.path.join(bad, "pickled_module.pt"), lambda p: torch.save(model, p))
    with open(stamp_file, "w") as f:
        f.write(st + "\n")
    print("badinput: written to", bad)


# --------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="output directory (created if missing)")
    ap.add_argument("--only", help="comma-separated model names and/or groups "
                    "(torchvision, small, example, badinput); default: every model but the "
                    "example, plus badinput")
    ap.add_argument("--list", action="store_true", help="print 'name group' per model and exit")
    ap.add_argument("--force", action="store_true", help="regenerate even when current")
    args = ap.parse_args()

    if args.list:
        for spec in SPECS.values():
            print(spec.name, spec.group)
        return 0
    if not args.out:
        ap.error("--out DIR is required")

    groups = {"torchvision", "small", "example", "badinput"}
    if args.only:
        wanted = [w.strip() for w in args.only.split(",") if w.strip()]
    else:
        wanted = ["torchvision", "small", "badinput"]
    names, bad_inputs = [], False
    for w in wanted:
        if w == "badinput":
            bad_inputs = True
        elif w in groups:
            names += [s.name for s in SPECS.values() if s.group == w]
        elif w in SPECS:
            names.append(w)
        else:
            ap.error(f"unknown model or group '{w}' (see --list)")

    st = stamp()
    failed = run_generation(names, args.out, st, args.force,
                            lambda n: f"max|output| = {generate(SPECS[n], args.out, st):.4g}")
    if bad_inputs:
        generate_bad_inputs(args.out, st)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
