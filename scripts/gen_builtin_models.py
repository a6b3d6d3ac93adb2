#!/usr/bin/python3
"""Generates the torch.jit.script'ed models of the TorchScript-builtin tests (issue 15).

Models whose scripted code uses TorchScript's builtins of strings, lists, numbers and Optionals
(str, "a" + b, [0] * n, max/min, divmod, round, x.cpu(), d.popitem(), print, sorted(l), l.copy(),
dicts keyed by ints, bools, tensors and complex numbers, `with torch.no_grad()`, complex
scalars and cmath, ...), scripted PyTorch modules
that are inlined (nn.MultiheadAttention and nn.TransformerEncoder called with masks) and scripted
torchaudio transforms. The files, input sets and branch coverage are those of
scripts/gen_scripted_models.py, whose generate() this reuses (`--list`, `--out`, `--only`,
`--force` alike); tests/builtins.cmake registers one test per model.
"""
import cmath
import math
import os
import sys
from typing import Dict, List

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_scripted_models as gsm  # noqa: E402  (generate, main)


class Strings(nn.Module):
    """str of ints, + / == / len on strings, [1] * n, max/min of ints, x.cpu(), a list slice:
    the text decides a branch, so it must be TorchScript's text exactly."""

    def forward(self, x):
        n = x.size(0)
        tag = "rows" + str(n)
        pad = [1] * (x.dim() * 2)
        k = max(n, 2) - min(x.size(1), 3)
        if tag == "rows" + str(x.size(0)) and len(tag) > 4:
            y = F.pad(x, pad[:2]) * float(k)
        else:
            y = x
        mode = "pos" if bool(x.sum() > 0) else "neg"
        if mode == "pos":
            return y.cpu() + 1.0
        return y - float(len(mode))


def strings_branches(m, x):
    return {"mode": {"pos" if float(x.sum()) > 0 else "neg"}}


class Numbers(nn.Module):
    """Number builtins without an op table row, written through torch.ops (divmod, round,
    math.log, max of floats, whose TorchScript result differs from Python's on nan)."""

    def forward(self, x):
        q, r = divmod(x.size(1), 4)
        s = float(x.abs().max())
        t = max(s, 0.5)
        u = round(s * 10.0) / 10.0
        v = math.log(t + 1.0)
        if s > 1.0:
            return x * float(q) + float(r) + u
        return x * v


def numbers_branches(m, x):
    return {"big": {float(x.abs().max()) > 1.0}}


class MHAMasked(nn.Module):
    """nn.MultiheadAttention with a causal mask: inlined with its argument checks, which build
    strings (why the fast path is not taken) and compare shapes as lists."""

    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(16, 4, batch_first=True)

    def forward(self, x):
        n = x.size(1)
        mask = torch.triu(torch.ones(n, n, dtype=torch.bool), 1)
        return self.attn(x, x, x, attn_mask=mask, need_weights=False)[0]


class EncoderMasked(nn.Module):
    """A two-layer nn.TransformerEncoder called with a causal float mask: inlined (its fast-path
    checks: strings, `in` on lists of strings, devices, dtypes)."""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(16, 2, 32, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)

    def forward(self, x):
        n = x.size(1)
        mask = torch.triu(torch.full((n, n), float("-inf")), 1)
        return self.encoder(x, mask=mask)


class FloatText(nn.Module):
    """The text of a float decides a branch: TorchScript writes str(0.1) as
    "0.10000000000000001", Python as "0.1", so the CLI must exit 4 naming aten::str."""

    def forward(self, x):
        s = str(float(x.sum()))
        if len(s) > 6:
            return x * 2.0
        return x


class ConformerLengths(nn.Module):
    """torchaudio's Conformer (2 small layers), its lengths made from the input inside the model:
    every sequence full, then the last one shorter (its key padding mask at work)."""

    def __init__(self):
        super().__init__()
        import torchaudio
        self.conformer = torchaudio.models.Conformer(input_dim=16, num_heads=2, ffn_dim=32, num_layers=2,
                                                     depthwise_conv_kernel_size=3)

    def forward(self, x):
        n = x.size(1)
        lengths = torch.full((x.size(0),), n, dtype=torch.long)
        lengths[-1] = n - 2
        y, out_lengths = self.conformer(x, lengths)
        return y + 0.01 * out_lengths.to(y.dtype).view(-1, 1, 1)


class Wav2Vec2Lengths(nn.Module):
    """torchaudio's wav2vec2 (group-norm feature extractor, 2 small encoder layers, a CTC head),
    its lengths made from the input inside the model: the last waveform shorter, so the feature
    extractor's length arithmetic and the encoder's padding mask are at work."""

    def __init__(self):
        super().__init__()
        import torchaudio
        self.model = torchaudio.models.wav2vec2_model(
            extractor_mode="group_norm", extractor_conv_layer_config=[(8, 10, 5), (8, 3, 2)],
            extractor_conv_bias=False, encoder_embed_dim=16, encoder_projection_dropout=0.0,
            encoder_pos_conv_kernel=8, encoder_pos_conv_groups=4, encoder_num_layers=2,
            encoder_num_heads=2, encoder_attention_dropout=0.0, encoder_ff_interm_features=32,
            encoder_ff_interm_dropout=0.0, encoder_dropout=0.0, encoder_layer_norm_first=False,
            encoder_layer_drop=0.0, aux_num_out=5)

    def forward(self, x):
        n = x.size(1)
        lengths = torch.full((x.size(0),), n, dtype=torch.long)
        lengths[-1] = n - 97
        y, out_lengths = self.model(x, lengths)
        assert out_lengths is not None
        return y, out_lengths


class DictPopPrint(nn.Module):
    """d.popitem() removes the dict's first item in TorchScript and its last in Python, so it is
    written as a pop of the first key; which key is first depends on the branch that filled the
    dict, and the popped key's length scales the result. print(...) is kept in program order."""

    def forward(self, x):
        d: Dict[str, torch.Tensor] = {}
        if bool(x.sum() > 0):
            d["pos"] = x.relu()
            d["negative"] = -x
        else:
            d["negative"] = -x
            d["pos"] = x.relu()
        k, v = d.popitem()
        print("popped", k, "of", len(d) + 1, "rows", x.size(0))
        rest = list(d.values())[0]
        return v * float(len(k)) + rest, k


def dict_pop_branches(m, x):
    return {"sign": {"pos" if float(x.sum()) > 0 else "neg"}}


class KeyedDicts(nn.Module):
    """Dicts keyed by ints, bools and tensors (d[k], k in d), l.copy(), sorted() of ints, bools
    and strings, s[i] of a str and aten::select.t (TorchScript's other name of l[i]): a copy that
    is appended to must leave the original alone, and the sorted order picks a branch."""

    def forward(self, x):
        n = x.size(0)
        by_int: Dict[int, torch.Tensor] = {n: x, n + 1: x * 2.0}
        by_bool: Dict[bool, int] = {bool(x.sum() > 0): 3}
        by_tensor = torch.jit.annotate(Dict[torch.Tensor, int], {})
        by_tensor[x] = 5
        sizes = [x.size(1), n, 1]
        kept = sizes.copy()
        kept.append(7)
        order = sorted(sizes)
        names = sorted(["rows", "cols", str(n)])
        flags = sorted([n > 5, n > 1])
        k = by_tensor[x] if x in by_tensor else 0
        second = sizes[1]
        if torch.jit.is_scripting():  # eager torch.ops cannot type a list for select.t
            second = torch.ops.aten.select(sizes, 1)
        y = by_int[n + 1] * float(order[0] + len(kept) * 10 + len(sizes) + k + second)
        if True in by_bool and names[0][0] == str(n) and flags[1]:
            return y + float(by_bool[True])
        return y - float(order[-1])


def keyed_dicts_branches(m, x):
    return {"sign": {"pos" if float(x.sum()) > 0 else "neg"}}


class ComplexScalars(nn.Module):
    """Complex scalars (Note [Complex scalars] in lib/ir/ir.h): complex(a, b) of floats, ints, a
    bool and tensors, arithmetic, comparisons, abs, cmath, sum, cmath.rect (aten::polar), complex
    tensors made from them, and a dict keyed by complex numbers (0j and -0j are one key). Each
    'same' feature is 1 only with TorchScript's rounding (cmath.sqrt(1j), a complex division) and
    the two phases are -pi only with TorchScript's mixed float/complex arithmetic (a -0.0
    imaginary part kept): Python's cmath and operators give 0 and +pi there. Python raises on a
    complex division by zero, TorchScript does not (eager substitutes a value). Features are
    scaled so that one wrong bit shows above the --fuse tolerance."""

    def forward(self, x):
        a = float(x[0, 0])
        b = float(x[0, 1])
        n = x.size(0)
        one = 1.0 + 0.0 * a
        nz = -(0.0 * one)  # -0.0 (TorchScript pools a constant -0.0 with 0.0, and saves a
        # complex constant's -0.0 part as +0.0)
        z = complex(a, b)
        w = complex(n, x.size(1))
        t = complex(a > 0.0, b)
        u = -(z * w + z - w)
        q = z / w
        p = z ** 0.5
        r = cmath.sqrt(complex(nz, one))
        if torch.jit.is_scripting():
            inf_q = z / complex(0.0, 0.0 * a)
        else:
            inf_q = complex(math.inf, math.inf)
        qc = complex(-2.137532799248337 * one, -2.2513617155449217) / complex(4.2485313680489085,
                                                                             0.9294673705862655)
        zs: List[complex] = [u, q, p, sum([z, w, t]), complex(x[0, 0], x[0, 1]),
                             cmath.rect(2.0 * one, 0.5), cmath.rect(n, 1), cmath.log10(z),
                             cmath.atanh(q), 3 - z, z * 2.0]
        parts: List[torch.Tensor] = []
        for c in zs:
            parts.append(torch.tensor(c))
        parts.append(torch.as_tensor(w))
        feats: List[float] = [abs(z), cmath.phase(z)]
        feats.append(1e4 * float(r == complex(0.7071067811865476, 0.7071067811865476)))
        feats.append(1e4 * float(qc == complex(-0.5907785087447903, -0.4006684242053195)))
        feats.append(1e3 * cmath.phase(complex(-1.0, nz) + 0.0 * one))
        feats.append(1e3 * cmath.phase(0.0 * one - complex(1.0, 0.0)))
        feats.append(1e3 * (float(cmath.isinf(inf_q)) + 2.0 * float(cmath.isnan(inf_q)) +
                            4.0 * float(cmath.isfinite(z))))
        feats.append(1e3 * (float(z == complex(a, b)) + 2.0 * float(z != w) +
                            4.0 * float(t == 1.0) + 8.0 * float(2.0 != z)))
        d: Dict[complex, float] = {z: 1.0, w: 2.0}
        d[t] = 3.0
        d[complex(0.0, nz)] = 4.0
        k = 0.0
        if complex(0.0, 0.0 * one) in d:
            k += d[complex(0.0, 0.0)]
        if z in d:
            k += 10.0 * d.get(z, 0.5)
        k += 100.0 * d.get(complex(7.0, 7.0), 0.5)
        e = d.copy()
        e.pop(w)
        k += 1000.0 * len(e) + e.pop(complex(9.0, 9.0), 0.25) + e.setdefault(z, 5.0)
        del e[z]
        g: Dict[complex, float] = {}
        g.update(e)
        for kk, vv in g.items():
            k += abs(kk) * vv
        for vv in g.values():
            k += vv
        k += float(len(list(g.keys())))
        g.clear()
        feats.append(k + float(len(g)))
        y = x * abs(u) if abs(z) > 1.0 else x - cmath.phase(u)
        return y, torch.tensor(feats, dtype=torch.float64), torch.view_as_real(torch.stack(parts))


def complex_branches(m, x):
    return {"big": {abs(complex(float(x[0, 0]), float(x[0, 1]))) > 1.0}}


class GradModes(nn.Module):
    """`with torch.no_grad():` (prim::Enter/prim::Exit calling the no_grad object's __enter__ and
    __exit__) and torch.set_grad_enabled: each torch.is_grad_enabled() read scales a term, so a
    mode not set, not restored on leaving the block, or a read moved or merged across a write shows
    in the result; the last read is the caller's mode, restored by the model."""

    def forward(self, x):
        prev = torch.is_grad_enabled()
        torch.set_grad_enabled(True)
        a = torch.is_grad_enabled()
        with torch.no_grad():
            b = torch.is_grad_enabled()
            y = x * 2.0
        c = torch.is_grad_enabled()
        torch.set_grad_enabled(prev)
        d = torch.is_grad_enabled()
        return y * (1.0 + float(a)) + 10.0 * float(b) + 100.0 * float(c) + 1000.0 * float(d)


def _conv_tasnet():
    """torchaudio's ConvTasNet, small: 203 samples are not a whole number of encoder strides, so
    the input is padded and the output trimmed (its shape arithmetic in the scripted graph)."""
    import torchaudio
    return torchaudio.models.ConvTasNet(num_sources=2, enc_kernel_size=8, enc_num_feats=16,
                                        msk_kernel_size=3, msk_num_feats=8, msk_num_hidden_feats=16,
                                        msk_num_layers=2, msk_num_stacks=1)


def _audio(cls, **kw):
    def build():
        import torchaudio
        return getattr(torchaudio.transforms, cls)(**kw)
    build.__name__ = cls
    return build


SPECS = {}


def register(name, build, shapes, branch_of=None, outcomes=None, tol=1e-4, expect_ops=(),
             eager_differs=None):
    SPECS[name] = dict(build=build, shapes=shapes, branch_of=branch_of, outcomes=outcomes or {}, tol=tol,
                       expect_ops=list(expect_ops), eager_differs=eager_differs)


register("bi_strings", Strings, [(2, 6)], strings_branches, {"mode": {"pos", "neg"}})
register("bi_numbers", Numbers, [(2, 6)], numbers_branches, {"big": {True, False}})
register("bi_mha_masked", MHAMasked, [(2, 5, 16)])
register("bi_encoder_masked", EncoderMasked, [(2, 5, 16)])
register("bi_spectrogram", _audio("Spectrogram", n_fft=32, hop_length=8), [(1, 256)])
register("bi_melspectrogram", _audio("MelSpectrogram", sample_rate=8000, n_fft=64, n_mels=8), [(1, 256)])
register("bi_conformer", ConformerLengths, [(2, 7, 16)])
register("bi_mfcc", _audio("MFCC", sample_rate=8000, n_mfcc=6, melkwargs={"n_fft": 64, "n_mels": 12}),
         [(1, 256)], tol=1e-3)
register("bi_wav2vec2", Wav2Vec2Lengths, [(2, 400)])
register("bi_conv_tasnet", _conv_tasnet, [(1, 1, 203)])
register("bi_dict_pop_print", DictPopPrint, [(2, 6)], dict_pop_branches, {"sign": {"pos", "neg"}},
         eager_differs="eager d.popitem() removes the last item, TorchScript's the first")
register("bi_keyed_dicts", KeyedDicts, [(2, 6)], keyed_dicts_branches, {"sign": {"pos", "neg"}},
         expect_ops=["sorted", "operator.contains", "list"])
register("bi_complex_scalars", ComplexScalars, [(2, 6)], complex_branches, {"big": {True, False}},
         expect_ops=["complex", "cmath.phase", "cmath.isinf", "operator.contains", "dict.get"],
         eager_differs="Python's cmath, complex division and mixed float/complex arithmetic round "
                       "otherwise than TorchScript's, and raise on a division by zero")
register("bi_grad_modes", GradModes, [(2, 6)], expect_ops=["torch.set_grad_enabled"])

UNSUPPORTED = {"bi_bad_float_text": (FloatText, "aten::str")}


if __name__ == "__main__":
    sys.exit(gsm.main(SPECS, UNSUPPORTED, kinds=lambda name: "fuse", doc=__doc__,
                      files=(os.path.abspath(__file__),)))
