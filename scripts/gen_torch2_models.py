#!/usr/bin/python3
"""Generates the models of the "torch2" end-to-end tests: what torch 2.x traces and scripts into
TorchScript that torch 1.13 did not.

Run with Debian 13's /usr/bin/python3 (torch 2.6, torchvision 0.21). Nothing is downloaded: every
model is randomly initialised with a fixed seed, then re-randomised like scripts/gen_models.py does
(its randomize_ is reused: no all-zero tensor, BatchNorm with realistic statistics), and every
norm weight that is still all ones gets perturbed so a dropped weight shows. For each model NAME it
writes, in --out, the sidecars of scripts/gen_models.py:

  NAME.pt           torch.jit.trace(...) or torch.jit.script(...), saved
  NAME.inputs.pt    torch.save of the example input tuple
  NAME.expected.pt  torch.save of the archive's outputs on those inputs
  NAME.json         input shapes/dtypes, --input-shape arguments, tolerance, expected warnings,
                    the ATen ops of the archive's inlined graph and the generator stamp
                    (written last; a re-run skips models whose stamp is current)

How the model is captured matters as much as the model here (torch 2.x picks a different kernel
path depending on it), so each spec says one of:
  trace        eval, traced under torch.no_grad(): nn.TransformerEncoderLayer and
               nn.MultiheadAttention take their fast paths (aten::_transformer_encoder_layer_fwd,
               aten::_native_multi_head_attention)
  trace_grad   eval, traced with grad enabled: the slow paths (F.multi_head_attention_forward,
               which in 2.x ends in aten::scaled_dot_product_attention and aten::unflatten)
  trace_train  train mode (dropout=0.0, so still deterministic), traced under torch.no_grad()
  script       torch.jit.script, eval
Each spec also names the ATen ops its archive must contain ("needs"): generation fails when torch
stopped producing them, so a test cannot silently stop covering what it is named after.

Bool inputs (attention masks) are combined inside the models with a constant pattern that keeps at
least one key per query, so the seeded random inputs of `tinytrace convert --verify` never mask a
whole row (which would give NaN).
"""
import json
import os
import sys
import warnings

from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_models  # noqa: E402  (randomize_, Spec, shape_arg, atomic_write, flatten)

SEED = 20250301
GROUP = "torch2"

# --------------------------------------------------------------------------------------------
# Registry


class Spec:
    def __init__(self, name, build, inputs, mode="trace", needs=(), tol=1e-4, expect_warnings=(),
                 kind="small", expect_ops=()):
        self.name = name
        self.build = build            # () -> nn.Module (called after torch.manual_seed)
        self.inputs = inputs          # [(shape, dtype[, high])]: float32 | bool | int64 in [0, high)
        self.mode = mode              # trace | trace_grad | trace_train | script
        self.needs = list(needs)      # ATen node kinds the archive's inlined graph must contain
        self.tol = tol
        self.expect_warnings = list(expect_warnings)
        self.kind = kind              # small | conv | transformer | torchvision (in NAME.json)
        self.expect_ops = list(expect_ops)  # IR ops the conversion must produce (run_convert.py)


SPECS = {}


def register(name, build, inputs, **kw):
    SPECS[name] = Spec(name, build, inputs, **kw)


def f32(*shape):
    return (tuple(shape), "float32")


def boolean(*shape):
    return (tuple(shape), "bool")


def i64(*shape, high):
    return (tuple(shape), "int64", high)


# --------------------------------------------------------------------------------------------
# torchvision's Swin and ViT classes. The code paths are those of swin_t and vit_b_16 (the traced
# vit_b_16 itself is in scripts/gen_models.py), at widths and depths that keep the archives at
# a few MB and the suite fast: swin_t is 114 MB, a scripted vit_b_16 346 MB.


def _swin():
    from torchvision.models.swin_transformer import SwinTransformer
    return SwinTransformer(patch_size=[4, 4], embed_dim=24, depths=[2, 2], num_heads=[2, 4],
                           window_size=[4, 4], stochastic_depth_prob=0.2, num_classes=10)


def _vit():
    from torchvision.models.vision_transformer import VisionTransformer
    return VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32,
                             mlp_dim=64, num_classes=10)


# Swin: shifted windows (roll, slice-assigned mask, relative position bias gathered with
# aten::index). Scripted, it also assigns list items (shift_size[0] = 0), slices the shape
# (H, W, _ = x.shape[-3:]) and writes numbers into mask slices (attn_mask[h0:h1, w0:w1] = count:
# a copy_ of torch.tensor(count, dtype=, device=)); 40x24 pads to whole windows.
register("t2_swin", _swin, [f32(1, 3, 32, 32)], needs=["aten::roll"], kind="torchvision")
register("t2_swin_scripted", _swin, [f32(1, 3, 40, 24)], mode="script",
         needs=["aten::roll", "aten::_set_item", "aten::tensor", "aten::slice"], kind="torchvision",
         expect_ops=["torch.tensor", "list.slice", "nn.Conv2d"])
# Scripted ViT: nn.MultiheadAttention's forward is lifted as the module (2.x adds is_causal to
# its signature); traced, its attention is aten::_native_multi_head_attention (no_grad) or
# F.scaled_dot_product_attention.
register("t2_vit_scripted", _vit, [f32(2, 3, 32, 32)], mode="script",
         needs=["aten::_native_multi_head_attention", "aten::scaled_dot_product_attention"],
         kind="torchvision", expect_ops=["nn.MultiheadAttention"])
# Traced under no_grad as scripts/gen_models.py traces vit_b_16 (its attention one
# aten::_native_multi_head_attention): the int-shapes test's ViT (tests/torch2.cmake).
register("t2_vit_traced", _vit, [f32(2, 3, 32, 32)], needs=["aten::_native_multi_head_attention"],
         kind="torchvision")
register("t2_vit_traced_grad", _vit, [f32(2, 3, 32, 32)], mode="trace_grad",
         needs=["aten::scaled_dot_product_attention"], kind="torchvision",
         expect_ops=["F.scaled_dot_product_attention"])


# --------------------------------------------------------------------------------------------
# F.scaled_dot_product_attention, each traced and scripted


class SdpaBlock(nn.Module):
    """Projections, heads split with Tensor.unflatten, F.scaled_dot_product_attention (the
    subclass's attend), heads merged, output projection and a residual."""

    HEADS, KV_HEADS, HEAD_DIM = 2, 2, 8

    def __init__(self):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = self.HEADS, self.KV_HEADS, self.HEAD_DIM
        self.q = nn.Linear(16, self.heads * self.head_dim)
        self.k = nn.Linear(16, self.kv_heads * self.head_dim)
        self.v = nn.Linear(16, self.kv_heads * self.head_dim)
        self.proj = nn.Linear(self.heads * self.head_dim, 16)

    def split(self, t, heads: int):
        return t.unflatten(-1, [heads, self.head_dim]).transpose(1, 2)

    def attend(self, q, k, v, mask: Optional[torch.Tensor]):
        raise NotImplementedError

    def forward(self, x, mask: Optional[torch.Tensor] = None):
        q = self.split(self.q(x), self.heads)
        k = self.split(self.k(x), self.kv_heads)
        v = self.split(self.v(x), self.kv_heads)
        y = self.attend(q, k, v, mask)
        return self.proj(y.transpose(1, 2).flatten(2)) + x


class SdpaPlain(SdpaBlock):
    def attend(self, q, k, v, mask: Optional[torch.Tensor]):
        return F.scaled_dot_product_attention(q, k, v, dropout_p=0.0)


class SdpaCausal(SdpaBlock):
    def attend(self, q, k, v, mask: Optional[torch.Tensor]):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


class SdpaFloatMask(SdpaBlock):
    """An additive float mask: the model's second input, broadcast over batch and heads."""

    def attend(self, q, k, v, mask: Optional[torch.Tensor]):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


class SdpaBoolMask(SdpaBlock):
    """A bool mask (True = attend): the second input OR the diagonal, so no row is all False."""

    def __init__(self):
        super().__init__()
        self.register_buffer("diag", torch.eye(5, dtype=torch.bool))

    def attend(self, q, k, v, mask: Optional[torch.Tensor]):
        assert mask is not None
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask | self.diag)


class SdpaScale(SdpaBlock):
    def attend(self, q, k, v, mask: Optional[torch.Tensor]):
        return F.scaled_dot_product_attention(q, k, v, scale=0.3)


class SdpaGqa(SdpaBlock):
    """Grouped-query attention: 4 query heads over 2 key/value heads."""

    HEADS, KV_HEADS, HEAD_DIM = 4, 2, 4

    def attend(self, q, k, v, mask: Optional[torch.Tensor]):
        return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)


class SdpaNoMask(nn.Module):
    """One input (torch.jit.script needs the signature the test passes)."""

    def __init__(self, block):
        super().__init__()
        self.block = block()

    def forward(self, x):
        return self.block(x)


class SdpaMask(nn.Module):
    def __init__(self, block):
        super().__init__()
        self.block = block()

    def forward(self, x, mask):
        return self.block(x, mask)


for _variant, _block, _inputs in [
        ("plain", SdpaPlain, [f32(2, 5, 16)]), ("causal", SdpaCausal, [f32(2, 5, 16)]),
        ("float_mask", SdpaFloatMask, [f32(2, 5, 16), f32(5, 5)]),
        ("bool_mask", SdpaBoolMask, [f32(2, 5, 16), boolean(5, 5)]),
        ("scale", SdpaScale, [f32(2, 5, 16)]), ("gqa", SdpaGqa, [f32(2, 5, 16)])]:
    _cls = SdpaMask if len(_inputs) == 2 else SdpaNoMask
    for _mode, _suffix in [("trace", ""), ("script", "_scripted")]:
        register(f"t2_sdpa_{_variant}{_suffix}", (lambda c=_cls, b=_block: c(b)), _inputs,
                 mode=_mode, needs=["aten::scaled_dot_product_attention", "aten::unflatten"],
                 expect_ops=["F.scaled_dot_product_attention"])


# --------------------------------------------------------------------------------------------
# nn.Transformer* and nn.MultiheadAttention: fast and slow paths


def _enc_layer(**kw):
    args = dict(d_model=16, nhead=2, dim_feedforward=32, dropout=0.0, batch_first=True)
    args.update(kw)
    return nn.TransformerEncoderLayer(**args)


class Encoder(nn.Module):
    """A 2-layer nn.TransformerEncoder (batch_first, final LayerNorm) and a linear head."""

    def __init__(self, **kw):
        super().__init__()
        self.encoder = nn.TransformerEncoder(_enc_layer(**kw), 2, norm=nn.LayerNorm(16))
        self.head = nn.Linear(16, 4)

    def forward(self, x):
        return self.head(self.encoder(x))


class EncoderSeqFirst(nn.Module):
    """Sequence-first (batch_first=False): a 2-layer nn.TransformerEncoder (gelu, norm_first,
    dropout 0.1 unused in eval, final LayerNorm), a lone nn.TransformerEncoderLayer and a head."""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(16, 2, 32, activation="gelu", norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(16), enable_nested_tensor=False)
        self.layer = nn.TransformerEncoderLayer(16, 4, 24)
        self.head = nn.Linear(16, 4)

    def forward(self, x):
        return self.head(self.layer(self.encoder(x)))


class EncoderPadding(nn.Module):
    """src_key_padding_mask made from sequence lengths (int64 input, clamped to >= 1), under
    no_grad: the encoder runs on a nested tensor (aten::_nested_tensor_from_mask ...
    aten::to_padded_tensor); padded positions come out 0. Torch takes that path only for
    right-padded masks, which lengths always give (the choice is made once, at trace time)."""

    def __init__(self):
        super().__init__()
        self.encoder = nn.TransformerEncoder(_enc_layer(), 2)
        self.head = nn.Linear(16, 4)
        self.register_buffer("pos", torch.arange(5))

    def forward(self, x, lengths):
        pad = self.pos.unsqueeze(0) >= lengths.clamp(min=1).unsqueeze(1)
        return self.head(self.encoder(x, src_key_padding_mask=pad))


class EncoderCausal(nn.Module):
    """A causal float mask made in forward (aten::triu of aten::full) plus is_causal=True."""

    def __init__(self):
        super().__init__()
        self.encoder = nn.TransformerEncoder(_enc_layer(), 2)

    def forward(self, x):
        mask = nn.Transformer.generate_square_subsequent_mask(x.size(1))
        return self.encoder(x, mask=mask, is_causal=True)


class MhaSelf(nn.Module):
    """Self-attention, need_weights=False: the fast path in eval under no_grad."""

    def __init__(self):
        super().__init__()
        self.mha = nn.MultiheadAttention(16, 2, batch_first=True)
        self.out = nn.Linear(16, 4)

    def forward(self, x):
        a, _ = self.mha(x, x, x, need_weights=False)
        return self.out(a + x)


class MhaPadding(nn.Module):
    """Fast path with a bool key_padding_mask (2.x turns it into a float mask first:
    aten::zeros_like + aten::masked_fill_). The first key is never padded."""

    def __init__(self):
        super().__init__()
        self.mha = nn.MultiheadAttention(16, 2, batch_first=True)
        self.register_buffer("keep", torch.tensor([[False, True, True, True, True]]))

    def forward(self, x, pad):
        a, _ = self.mha(x, x, x, key_padding_mask=pad & self.keep, need_weights=False)
        return a


class MhaMaskWeights(nn.Module):
    """A constant bool attn_mask and need_weights=True: output and head-averaged weights."""

    def __init__(self):
        super().__init__()
        self.mha = nn.MultiheadAttention(16, 2, batch_first=True)
        g = torch.Generator().manual_seed(7)
        self.register_buffer("mask", (torch.rand(5, 5, generator=g) > 0.6) & ~torch.eye(5, dtype=torch.bool))

    def forward(self, x):
        return self.mha(x, x, x, attn_mask=self.mask)


class MhaCross(nn.Module):
    """Cross-attention (query is not key): the slow path, aten::scaled_dot_product_attention."""

    def __init__(self):
        super().__init__()
        self.mha = nn.MultiheadAttention(16, 2, batch_first=True, kdim=8, vdim=8)

    def forward(self, x, mem):
        a, _ = self.mha(x, mem, mem, need_weights=False)
        return a


class DecoderLayer(nn.Module):
    """nn.TransformerDecoderLayer with a causal tgt_mask (no fast path exists for it)."""

    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerDecoderLayer(16, 2, 32, dropout=0.0, batch_first=True)

    def forward(self, tgt, memory):
        mask = nn.Transformer.generate_square_subsequent_mask(tgt.size(1))
        return self.layer(tgt, memory, tgt_mask=mask)


class FullTransformer(nn.Module):
    """nn.Transformer (1 encoder + 1 decoder layer): encoder fast path, decoder slow path."""

    def __init__(self):
        super().__init__()
        self.t = nn.Transformer(16, 2, 1, 1, 32, dropout=0.0, batch_first=True)

    def forward(self, src, tgt):
        return self.t(src, tgt)


_ENC = ["aten::_transformer_encoder_layer_fwd"]
_SLOW = ["aten::scaled_dot_product_attention", "aten::unflatten"]
_T = dict(kind="transformer")
register("t2_encoder_fast", Encoder, [f32(2, 5, 16)], needs=_ENC,
         expect_ops=["nn.TransformerEncoderLayer"], **_T)
register("t2_encoder_slow", Encoder, [f32(2, 5, 16)], mode="trace_grad", needs=_SLOW, **_T)
register("t2_encoder_norm_first_gelu", lambda: Encoder(norm_first=True, activation="gelu"),
         [f32(2, 5, 16)], needs=_ENC, expect_ops=["nn.TransformerEncoderLayer"], **_T)
register("t2_encoder_norm_first_gelu_slow", lambda: Encoder(norm_first=True, activation="gelu"),
         [f32(2, 5, 16)], mode="trace_grad", needs=_SLOW + ["aten::gelu"], **_T)
register("t2_encoder_train", Encoder, [f32(2, 5, 16)], mode="trace_train",
         needs=_SLOW + ["aten::dropout"], **_T)
# Scripted, nn.TransformerEncoder and nn.TransformerEncoderLayer are read from their attributes
# (their forwards' fast-path checks build messages from strings): the layers, then the norm.
register("t2_encoder_scripted", Encoder, [f32(2, 5, 16)], mode="script", needs=_ENC,
         expect_ops=["nn.TransformerEncoderLayer", "nn.LayerNorm"], **_T)
register("t2_encoder_seq_first_scripted", EncoderSeqFirst, [f32(5, 2, 16)], mode="script", needs=_ENC,
         expect_ops=["nn.TransformerEncoderLayer", "nn.LayerNorm"], **_T)
register("t2_encoder_padding", EncoderPadding, [f32(3, 5, 16), i64(3, high=6)],
         needs=_ENC + ["aten::_nested_tensor_from_mask", "aten::to_padded_tensor"], **_T)
register("t2_encoder_causal", EncoderCausal, [f32(2, 5, 16)], needs=_ENC + ["aten::triu"], **_T)
register("t2_mha_fast", MhaSelf, [f32(2, 5, 16)], needs=["aten::_native_multi_head_attention"], **_T)
register("t2_mha_fast_padding", MhaPadding, [f32(2, 5, 16), boolean(2, 5)],
         needs=["aten::_native_multi_head_attention", "aten::masked_fill_"], **_T)
register("t2_mha_mask_weights", MhaMaskWeights, [f32(2, 5, 16)],
         needs=["aten::_native_multi_head_attention"], **_T)
register("t2_mha_cross", MhaCross, [f32(2, 5, 16), f32(2, 7, 8)],
         needs=["aten::scaled_dot_product_attention"], **_T)
register("t2_decoder_layer", DecoderLayer, [f32(2, 5, 16), f32(2, 7, 16)], needs=_SLOW, **_T)
register("t2_transformer", FullTransformer, [f32(2, 7, 16), f32(2, 5, 16)],
         needs=_ENC + ["aten::_native_multi_head_attention", "aten::scaled_dot_product_attention"], **_T)


# --------------------------------------------------------------------------------------------
# New functional ops and new-style module wrappers


class RmsNorm(nn.Module):
    """nn.RMSNorm with and without a weight, F.rms_norm over the last two dims, eps=None."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)
        self.norm = nn.RMSNorm(16, eps=1e-5)
        self.plain = nn.RMSNorm([16], elementwise_affine=False)
        self.w2 = nn.Parameter(torch.ones(4, 16))

    def forward(self, x):
        y = self.norm(self.fc(x))
        z = self.plain(x * 3.0)
        w = F.rms_norm(x, [4, 16], self.w2)
        return y + z * 0.5 + w


class Unflatten(nn.Module):
    """Tensor.unflatten with a -1 size, nn.Unflatten, unflatten of dim 0."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 24)
        self.unflat = nn.Unflatten(1, (2, 3))

    def forward(self, x):
        y = self.fc(x)                              # (6, 24)
        a = y.unflatten(-1, (4, -1)).sum(-1)        # (6, 4)
        b = self.unflat(y.unflatten(1, (6, 4))[:, :, 0]).mean(-1)  # (6, 2)
        c = y.unflatten(0, (2, 3)).amax(0)          # (3, 24)
        return a, b, c


class SafeSoftmax(nn.Module):
    """torch._safe_softmax (private; 2.5+): softmax that gives 0, not NaN, on all -inf rows.
    SDPA's math kernel calls it internally; a trace only records it when called directly."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.register_buffer("mask", torch.tensor([[0.0] * 8, [float("-inf")] * 8]))

    def forward(self, x):
        return torch._safe_softmax(self.fc(x) + self.mask, -1)


class WeightNormParam(nn.Module):
    """torch.nn.utils.parametrizations.weight_norm / spectral_norm (the parametrize-based ones):
    state_dict keys like conv.parametrizations.weight.original0, aten::_weight_norm, and
    spectral norm's aten::mv / aten::vdot in eval."""

    def __init__(self):
        super().__init__()
        P = nn.utils.parametrizations
        self.conv = P.weight_norm(nn.Conv2d(3, 8, 3, padding=1))
        self.fc = P.spectral_norm(nn.Linear(8, 6))

    def forward(self, x):
        y = F.relu(self.conv(x))
        return self.fc(y.mean((2, 3)))


class Normalize(nn.Module):
    """F.normalize, Tensor.norm and torch.linalg.vector_norm: all aten::linalg_vector_norm in 2.x
    (1.13 traced aten::norm / aten::frobenius_norm)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        y = self.fc(x)
        return (F.normalize(y, dim=-1) + y.norm(dim=-1, keepdim=True)
                + torch.linalg.vector_norm(y, 3.0, -1, True) + y.norm(p=1) * 0.1)


class ConvAttention(nn.Module):
    """Conv/BN/ReLU stem, SDPA over the spatial tokens, nn.RMSNorm, head: BatchNorm to fold for
    --fuse, convs to fuse for --quant-prep, and 2.x ops the quantizer must leave in float."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1, bias=False),
                                  nn.BatchNorm2d(16), nn.ReLU(),
                                  nn.Conv2d(16, 16, 3, stride=2, padding=1, bias=False),
                                  nn.BatchNorm2d(16), nn.ReLU())
        self.qkv = nn.Linear(16, 48)
        self.norm = nn.RMSNorm(16)
        self.head = nn.Linear(16, 10)

    def forward(self, x):
        y = self.stem(x)                             # (B, 16, 8, 8)
        t = y.flatten(2).transpose(1, 2)             # (B, 64, 16)
        q, k, v = self.qkv(t).unflatten(-1, (3, 2, 8)).permute(2, 0, 3, 1, 4).unbind(0)
        a = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).flatten(2)
        t = self.norm(t + a)
        return self.head(t.mean(1))


register("t2_rms_norm", RmsNorm, [f32(2, 4, 16)], needs=["aten::rms_norm"], expect_ops=["nn.RMSNorm"])
register("t2_rms_norm_scripted", RmsNorm, [f32(2, 4, 16)], mode="script", needs=["aten::rms_norm"],
         expect_ops=["nn.RMSNorm"])


class ScriptedChecks(nn.Module):
    """Scripted: the tensor/device queries torch 2.x's own modules make in their fast-path checks
    (x.device.type in [...], torch.is_grad_enabled(), x.requires_grad, any/all over a list), and
    list item assignment with sum() as in torchvision's Swin."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.shift = [3, 2]

    def forward(self, x):
        y = self.fc(x)
        # Swin's shifted_window_attention: items of a copied list assigned under shape conditions.
        shift = self.shift.copy()
        if x.size(0) >= 3:
            shift[0] = 0
        if x.size(1) >= 100:
            shift[-1] = 1
        if sum(shift) > 0:
            y = torch.roll(y, shifts=(-shift[0], -shift[1]), dims=(0, 1))
        args = [x, self.fc.weight]
        if x.device.type in ["cpu", "cuda"] and not any([t.requires_grad for t in [x]]):
            y = y * 2.0
        if torch.is_grad_enabled() and all([t.requires_grad for t in args]):
            y = y + 1.0
        return y - float(len(x.device.type))


register("t2_scripted_checks", ScriptedChecks, [f32(3, 8)], mode="script")


class ScriptedSlices(nn.Module):
    """Scripted: list slices (x.shape[-2:], reversed, bounds past the end) and Python numbers
    written into tensor slices (float, int and bool tensors, as in Swin's attention mask), masks,
    index tensors made with torch.tensor([...]) and single items."""

    def forward(self, x):
        h, w = x.shape[-2:]
        dims = x.shape[::-1]
        mid = list(x.shape)[1:100]
        y = x.clone()
        y[:, 0:2] = 0.5
        m = torch.zeros(h, w, dtype=torch.int64)
        m[1:, :2] = 3
        b = torch.zeros(h, w, dtype=torch.bool)
        b[:1] = True
        y[x > 0.5] = 0.0                 # index_put_ of a number
        y[:, torch.tensor([0, 2])] = 7   # torch.tensor of a list
        y[1, 1] = -1
        return y * float(dims[0] + mid[-1] + len(dims[-2:-10:-1])) + m.float() - b.float()


register("t2_scripted_slices", ScriptedSlices, [f32(3, 8, 5)], mode="script",
         needs=["aten::tensor", "aten::slice"], expect_ops=["torch.tensor", "list.slice"])
register("t2_unflatten", Unflatten, [f32(6, 16)], needs=["aten::unflatten"])
register("t2_safe_softmax", SafeSoftmax, [f32(2, 8)], needs=["aten::_safe_softmax"])
register("t2_weight_norm_param", WeightNormParam, [f32(1, 3, 16, 16)],
         needs=["aten::_weight_norm", "aten::vdot"], kind="conv")
register("t2_normalize", Normalize, [f32(3, 8)], needs=["aten::linalg_vector_norm"])
register("t2_conv_attention", ConvAttention, [f32(1, 3, 32, 32)],
         needs=["aten::scaled_dot_product_attention", "aten::rms_norm", "aten::unflatten"], kind="conv")


# --------------------------------------------------------------------------------------------
# Generation


def randomize_(model, spec, gen):
    """gen_models.randomize_ (all-zero tensors, BatchNorm statistics), then norm weights that are
    still all ones get 1 + 0.1 * N(0, 1)."""
    float_inputs = [(i[0], "float32", None) for i in spec.inputs]
    gen_models.randomize_(model, gen_models.Spec(spec.name, GROUP, spec.build, float_inputs), gen)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.is_floating_point() and p.numel() > 0 and bool((p == 1).all()):
                p.add_(0.1 * torch.randn(p.shape, generator=gen))


def make_inputs(spec, gen):
    out = []
    for shape, dtype, *high in spec.inputs:
        if dtype == "bool":
            out.append(torch.rand(shape, generator=gen) > 0.5)
        elif dtype == "int64":
            out.append(torch.randint(0, high[0], shape, generator=gen, dtype=torch.int64))
        else:
            out.append(torch.randn(shape, generator=gen))
    return tuple(out)


def node_kinds(graph):
    kinds = set()

    def walk(block):
        for n in block.nodes():
            kinds.add(n.kind())
            for b in n.blocks():
                walk(b)
    walk(graph)
    return kinds


def capture(spec, model, inputs):
    if spec.mode == "script":
        return torch.jit.script(model)
    if spec.mode == "trace_grad":
        assert torch.is_grad_enabled()
        return torch.jit.trace(model, inputs, check_trace=False, strict=False)
    with torch.no_grad():
        return torch.jit.trace(model, inputs, check_trace=False, strict=False)


def generate(spec, out_dir, st):
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED + 1)
    model = spec.build()
    model.eval()
    randomize_(model, spec, gen)
    model.train(spec.mode == "trace_train")
    inputs = make_inputs(spec, gen)
    with torch.no_grad():
        eager = model(*inputs)
    archive = capture(spec, model, inputs)
    with torch.no_grad():
        expected = archive(*inputs)

    kinds = node_kinds(archive.inlined_graph)
    missing = [k for k in spec.needs if k not in kinds]
    assert not missing, f"{spec.name}: the {spec.mode} graph has no {', '.join(missing)}"

    exp_flat, max_abs = gen_models.check_capture(spec.name, eager, expected, spec.mode)

    base = os.path.join(out_dir, spec.name)
    gen_models.atomic_write(base + ".pt", lambda p: archive.save(p))
    gen_models.atomic_write(base + ".inputs.pt", lambda p: torch.save(inputs, p))
    gen_models.atomic_write(base + ".expected.pt", lambda p: torch.save(expected, p))
    meta = {
        "name": spec.name,
        "group": GROUP,
        "generator": st,
        "capture": spec.mode,
        "kind": spec.kind,
        "inputs": [{"shape": list(i[0]), "dtype": i[1]} for i in spec.inputs],
        "input_shape_args": [gen_models.shape_arg(i[0], i[1]) for i in spec.inputs],
        "outputs": [{"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", "")}
                    for t in exp_flat],
        "tolerance": spec.tol,
        "expect_warnings": spec.expect_warnings,
        "max_abs_output": max_abs,
        "num_parameters": sum(p.numel() for p in model.parameters()),
        "torch_ops": sorted(k for k in kinds if k.startswith("aten::")),
        "expect_ops": spec.expect_ops,
    }

    def write_meta(p):
        with open(p, "w") as f:
            json.dump(meta, f, indent=1)
            f.write("\n")
    gen_models.atomic_write(base + ".json", write_meta)
    return max_abs, os.path.getsize(base + ".pt")


def main():
    ap = gen_models.one_group_parser(__doc__, GROUP, "print 'name group' per model and exit")
    args = ap.parse_args()

    if args.list:
        for spec in SPECS.values():
            print(spec.name, GROUP)
        return 0
    if not args.out:
        ap.error("--out DIR is required")
    names = gen_models.select_names(ap, args.only, GROUP, SPECS)
    st = gen_models.stamp(__file__)

    def generate_one(name):
        spec = SPECS[name]
        with warnings.catch_warnings():  # nested-tensor / norm_first notices from torch
            warnings.simplefilter("ignore")
            max_abs, size = generate(spec, args.out, st)
        return f"{spec.mode}, max|output| = {max_abs:.4g}, {size} bytes"
    return 1 if gen_models.run_generation(names, args.out, st, args.force, generate_one) else 0


if __name__ == "__main__":
    sys.exit(main())
