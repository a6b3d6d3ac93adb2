#!/usr/bin/python3
"""Generates the torch.jit.script'ed models of the TorchScript-builtin tests (issue 15).

Models whose scripted code uses TorchScript's builtins of strings, lists, numbers and Optionals
(str, "a" + b, [0] * n, max/min, divmod, round, x.cpu(), d.popitem(), print, sorted(l), l.copy(),
dicts keyed by ints, bools, tensors and complex numbers, `with torch.no_grad()`, complex
scalars and cmath, Enum members, l + m and sorted() of tuples, hash(n), x.copy_(3),
torch.manual_seed, torch.jit.fork/wait, l.sort() of floats and tensors,
torch.einsum(a, [0, 1], ...), "%d" % n, id(a) == id(b), torch.dequantize of a tuple,
torch.Generator objects, ...),
scripted PyTorch modules
that are inlined (nn.MultiheadAttention and nn.TransformerEncoder called with masks) and scripted
torchaudio transforms. The files, input sets and branch coverage are those of
scripts/gen_scripted_models.py, whose generate() this reuses (`--list`, `--out`, `--only`,
`--force` alike); tests/builtins.cmake registers one test per model.
"""
import cmath
import math
import os
import sys
from enum import Enum
from typing import Any, Dict, List, Optional, Tuple

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
        # torch.tensor(z, dtype=...) of a complex: aten::tensor.complex's dtype is keyword-only
        # (Note [Keyword arguments of torch.ops calls])
        return (y, torch.tensor(feats, dtype=torch.float64), torch.view_as_real(torch.stack(parts)),
                torch.view_as_real(torch.tensor(qc, dtype=torch.complex128)))


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


class Mode(Enum):
    SCALE = 1
    SHIFT = 2
    CLAMP = 3


class Act(Enum):
    RELU = "relu"
    TANH = "tanh"


class Gain(Enum):
    LOW = 0.25
    HIGH = 1.5


class Level(Enum):
    ONE = 1
    TWO = 2


class Enums(nn.Module):
    """Enum members (int, str and float values) as module attributes, constants and the result of a
    branch: ==/!= of members (also of two classes with equal values: never equal), m.name and
    m.value pick branches and scale terms, so a member mistaken for another, a name or value
    read wrong, or a cross-class comparison taken as equal changes the result."""

    def __init__(self):
        super().__init__()
        self.mode = Mode.SHIFT
        self.act = Act.TANH
        self.gain = Gain.HIGH

    def pick(self, positive: bool) -> Mode:
        if positive:
            return Mode.SCALE
        return Mode.SHIFT

    def level(self, positive: bool) -> Level:
        if positive:
            return Level.ONE
        return Level.TWO

    def forward(self, x):
        m = self.pick(bool(x.sum() > 0))
        y = x * float(m.value) + self.gain.value
        if m == self.level(bool(x.sum() > 0)):  # Mode.SCALE and Level.ONE: equal values only
            y = y * 0.0
        if m == self.mode:
            y = y - float(len(m.name))
        if m != Mode.CLAMP and self.act == Act.TANH:
            y = torch.tanh(y) * 10.0
        if self.act.value == "relu" or m.name == "CLAMP":
            y = torch.relu(y)
        same_value = Mode.SCALE.value == 1 and Mode.SCALE != Act.RELU
        return y + float(same_value) * 100.0 + float(Gain.LOW == Gain.LOW)


def enums_branches(m, x):
    return {"sign": {"pos" if float(x.sum()) > 0 else "neg"}}


class ListsHashCopies(nn.Module):
    """l + m of lists of tuples (aten::add.t), sorted() and l.sort(reverse=True) of them (the .any
    overloads: Python orders tuples of ints as TorchScript does), hash(n) of an int (n itself in
    TorchScript, while Python's hash(-1) is -2: n - 3 is -1 for 2 rows),
    torch.overrides.has_torch_function (always False in TorchScript) and TorchScript's own copy_
    overloads (x.copy_(3), x.copy_(2.5), x.copy_(other=y), _index_put_impl_.hacked_twin): on a
    result nothing else reads, on a clone that is read after, and on views (rows) of it.
    torch._C._get_cpu_capability() and torch.get_autocast_dtype("cpu") are read where they run
    (w through bfloat16 rounds: another dtype shows)."""

    def forward(self, x):
        n = x.size(0)
        pairs: List[Tuple[int, int]] = [(x.size(1), 1), (n, -1)]
        more: List[Tuple[int, int]] = [(n, 2)]
        both = pairs + more
        order = sorted(both)
        both.sort(reverse=True)
        h = hash(n - 3)
        z = (x * 2.0).copy_(3)
        w = x.clone()
        w.copy_(2.5)
        if torch.jit.is_scripting():  # copy_(other=) picks aten::copy_.Tensor; eager has src=
            w[0].copy_(other=x[1])
        else:
            w[0].copy_(x[1])
        w[1].copy_(-4)
        # scripted: aten::_index_put_impl_.hacked_twin (the indices a List[Tensor])
        torch.ops.aten._index_put_impl_(w, [torch.tensor([1])], torch.tensor(0.3), False, False)
        k = float(order[0][1] * 100 + order[1][1] * 10 + both[0][1] + h * 1000)
        cap = torch._C._get_cpu_capability()
        low = torch.get_autocast_dtype("cpu")  # bfloat16 unless the process changed it
        y = z + w.to(low).float() * k + float(len(cap) > 0)
        if torch.overrides.has_torch_function((x,)):
            return y * 0.0
        if bool(x.sum() > 0):
            return y + float(len(both))
        return y - 1.0


def lists_hash_copies_branches(m, x):
    return {"sign": {"pos" if float(x.sum()) > 0 else "neg"}}


class Seeds(nn.Module):
    """torch.manual_seed in the forward (an effect on the global generator): each random draw
    weighs differently, so draws merged (a and b), moved across a seed (c before the second) or
    a seed dropped change the result; c repeats a."""

    def forward(self, x):
        torch.manual_seed(7)
        a = torch.rand(x.shape)
        b = torch.rand(x.shape)
        torch.manual_seed(7)
        c = torch.rand(x.shape)
        return x + a + 10.0 * b + 100.0 * c


class GeneratorDraws(nn.Module):
    """torch.Generator() in the forward (a Generator constant: TorchScript runs it while
    compiling), seeded, drawing randn/rand/randint/normal/bernoulli/uniform_ with generator=g, and
    a second manual_seed in the middle whose result (g itself) is drawn from. Each draw weighs
    differently, so draws merged, dropped or moved across a seed change the result; c repeats a
    after the second seed. (A draw whose result is unused is dropped by torch.jit.script itself.)"""

    def forward(self, x):
        g = torch.Generator()
        g.manual_seed(7)
        a = torch.randn(x.shape, generator=g)
        b = torch.rand(x.shape, generator=g)
        k = torch.randint(0, 10, x.shape, generator=g)
        g2 = g.manual_seed(7)
        c = torch.randn(x.shape, generator=g2)
        d = torch.normal(x, 0.5, generator=g)
        e = torch.bernoulli(torch.sigmoid(x), generator=g)
        u = torch.empty(x.shape).uniform_(-1.0, 1.0, generator=g)
        return x + a + 10.0 * b + 100.0 * k + 1000.0 * c + 3.0 * d + 7.0 * e + 0.25 * u


class GeneratorBranch(nn.Module):
    """torch.Generator(device=x.device) (an aten::Generator node, run per call) seeded from the
    input's size; the draws depend on a branch (one draw on one side, two on the other), a draw
    after the branch shows how far the generator moved, and initial_seed() is an output."""

    def forward(self, x):
        g = torch.Generator(device=x.device)
        g.manual_seed(x.size(0) + 40)
        if bool(x.sum() > 0):
            y = torch.randn(x.shape, generator=g)
        else:
            y = torch.rand(x.shape, generator=g) + torch.rand(x.shape, generator=g)
        z = torch.rand(x.shape, generator=g)
        return x + y + 10.0 * z, g.initial_seed()


def generator_branch_branches(m, x):
    return {"sign": {"pos" if float(x.sum()) > 0 else "neg"}}


class GeneratorReseed(nn.Module):
    """g.seed() draws a seed nobody can predict; initial_seed() after it reads that seed (True
    only in that order: the default seed otherwise), and the draws after g.manual_seed(5) are
    deterministic again (a seed dropped or moved after them shows)."""

    def forward(self, x):
        g = torch.Generator(device=x.device)
        s = g.seed()
        t = g.initial_seed()
        g.manual_seed(5)
        return x + torch.rand(x.shape, generator=g), s == t


class GeneratorUnseeded(nn.Module):
    """A Generator constant drawn from before it is seeded: TorchScript keeps the one generator
    from call to call (the second call continues the first one's numbers)."""

    def forward(self, x):
        g = torch.Generator()
        return x + torch.rand(x.shape, generator=g)


class GeneratorTwo(nn.Module):
    """Two generators made alike: TorchScript's executor merges them into one object (h draws
    on after g's draw, not from the default seed as in eager PyTorch)."""

    def forward(self, x):
        g = torch.Generator(device=x.device)
        g.manual_seed(3)
        a = torch.rand(x.shape, generator=g)
        h = torch.Generator(device=x.device)
        return x + a + torch.rand(x.shape, generator=h)


class GeneratorInitialSeedTwice(nn.Module):
    """The second initial_seed() is answered with the first one's number by TorchScript's
    executor, although manual_seed changed it."""

    def forward(self, x):
        g = torch.Generator(device=x.device)
        g.manual_seed(3)
        a = g.initial_seed()
        g.manual_seed(4)
        return x + float(a + g.initial_seed())


class SortFloatsTensors(nn.Module):
    """l.sort() of floats with a NaN, -0.0 and 0.0 in it, and of 0-dim tensors: written through
    TorchScript's own sorted (Python's list.sort puts the NaN elsewhere). Each position weighs
    differently, the NaN's position and the sign of each zero included, so another order shows."""

    def forward(self, x):
        m = float(x.max())
        z = float(x.sum()) * 0.0  # 0.0 or -0.0 by the sign of the sum (a -0.0 constant folds to 0.0)
        vals: List[float] = [m, float("nan"), -m, z, -z, 0.5, float(x.min())]
        vals.sort()
        k = 0.0
        for i in range(len(vals)):
            v = vals[i]
            if math.isnan(v):
                k += 1000.0 * float(i + 1)
            elif v == 0.0:
                k += math.copysign(10.0, v) * float(i + 1)
            else:
                k += v * float(i + 1)
        ts = [x[0].sum(), x[1].sum(), x.mean()]
        ts.sort()
        y = x * k + ts[0] + 10.0 * ts[1] + 100.0 * ts[2]
        if bool(ts[0] > 0):
            return y + 1.0
        return y


def sort_floats_tensors_branches(m, x):
    return {"sign": {"pos" if float(min(x[0].sum(), x[1].sum(), x.mean())) > 0 else "neg"}}


class EinsumSublists(nn.Module):
    """torch.einsum in its sublist form (aten::einsum.sublist, a vararg): with an output list, and
    without one, where the output's order is that of the letters TorchScript picks (27 is 'b',
    0 is 'A': 'A' comes first, so the result is x transposed)."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(6, 4))

    def forward(self, x):
        y = torch.einsum(x, [0, 1], self.w, [1, 2], [0, 2])
        t = torch.einsum(x, [27, 0])
        return y.sum(1, keepdim=True) * t.sum(0, keepdim=True).t() + t.sum()


class PercentFormat(nn.Module):
    """"..." % args (aten::percentFormat) of ints and strings with %d, %i, %s and %%: the text
    decides a branch, so it must be TorchScript's text exactly."""

    def forward(self, x):
        sign = "pos" if bool(x.sum() > 0) else "neg"
        tag = "%d rows %s, %s of %i %%" % (x.size(0), sign, "cols", x.size(1))
        one = "%s" % x.size(0)
        if tag == "2 rows pos, cols of 6 %" and one == "2":
            return x * float(len(tag))
        return x - float(len(tag) + len(one))


def percent_format_branches(m, x):
    return {"sign": {"pos" if float(x.sum()) > 0 else "neg"}}


class PercentFloat(nn.Module):
    """"%f" % x: TorchScript formats the float as a C++ float (std::fixed of a 32-bit value), Python
    as a double: the CLI must exit 4 naming aten::percentFormat."""

    def forward(self, x):
        if "%f" % float(x.sum()) == "0.100000":
            return x * 2.0
        return x


@torch.jit.script
class _Box:
    def __init__(self, v: float):
        self.v = v


class _Half(nn.Module):
    def forward(self, x):
        return x * 0.5


class ObjectIds(nn.Module):
    """id(a) == id(b) and id(a) != id(b) (prim::id) of TorchScript objects, modules and None: two
    names for one object (q = p), two objects of equal fields (r), one submodule reached by two
    attributes (self.c is self.a in eager, a copy once scripted), two submodules of one class (self.b), None. Each comparison
    weighs differently, so one wrong answer shows; both answers of == and != occur."""

    def __init__(self):
        super().__init__()
        self.a = _Half()
        self.b = _Half()
        self.c = self.a

    def forward(self, x):
        p = _Box(1.0)
        q = p
        r = _Box(1.0)
        o: Optional[_Box] = None
        k = 0.0
        if id(p) == id(q):
            k += 1.0
        if id(p) == id(r):
            k += 10.0
        if id(p) != id(r):
            k += 100.0
        if id(self.a) == id(self.c):
            k += 1000.0
        if id(self.a) != id(self.b):
            k += 10000.0
        if id(o) == id(p):  # scripted: id(None) is the constant 0
            k += 100000.0
        if id(o) != id(r):
            k += 1000000.0
        y = self.a(x) + self.b(x) * k + p.v + r.v
        if bool(x.sum() > 0):
            return y + 1.0
        return y


def sum_sign_branches(m, x):
    return {"sign": {"pos" if float(x.sum()) > 0 else "neg"}}


class DequantizeTuple(nn.Module):
    """torch.dequantize of a tuple (aten::dequantize.any, an Any that isinstance refines): a
    quantized tensor is dequantized (its rounding to steps of 0.1 shows), an int32 tensor becomes
    float32 (the branch on its dtype), a float tensor stays the same tensor (an in-place write to
    the result shows in c), an int and a list are kept as they are (the list is the same list:
    an append to the result's list shows in l's length)."""

    def forward(self, x):
        c = x.clone()
        l = [x[0]]
        q = torch.quantize_per_tensor(x, 0.1, 10, torch.quint8)
        t = (c, x.size(0), l, (x * 10.0).to(torch.int32), q)
        if torch.jit.is_scripting():
            y = torch.dequantize(t)
            assert isinstance(y, Tuple[torch.Tensor, int, List[torch.Tensor], torch.Tensor, torch.Tensor])
            a, n, m, i, d = y
        else:  # eager torch.dequantize takes no tuple: TorchScript's kernel written out
            a, n, m, i, d = tuple(torch.dequantize(e) if isinstance(e, torch.Tensor) else e for e in t)
        a.mul_(2.0)
        m.append(x[1])
        k = float(n) + 10.0 * float(len(l))
        if i.is_floating_point():
            k += 100.0
        z = c + i * 0.01 + d * k
        if bool(x.sum() > 0):
            return z + 1.0
        return z


class IdValue(nn.Module):
    """id(p) as a number (TorchScript's is an address, Python's another number): the CLI must
    exit 4 naming prim::id."""

    def forward(self, x):
        p = _Box(1.0)
        return x * float(id(p) % 7)


class DequantizeAny(nn.Module):
    """torch.dequantize of a value typed Any (an item of a List[Any]: what it holds, so what
    TorchScript does, is known only at run time): the CLI must exit 4 naming aten::dequantize.
    (A List[Tensor] passed to a parameter typed Any is no such case: once the call is inlined,
    TorchScript itself runs aten::dequantize.tensors on it.)"""

    def forward(self, x):
        items: List[Any] = [(x, 1)]
        y = torch.dequantize(items[0])
        if isinstance(y, Tuple[torch.Tensor, int]):
            return y[0]
        return x


def _scaled(x: torch.Tensor, k: float) -> torch.Tensor:
    return x * k + 1.0


class ForkWait(nn.Module):
    """torch.jit.fork/wait of a function and of a submodule, torch.jit._awaitable_nowait and
    _awaitable_wait: the forked calls are inlined where they are forked (Note [torch.jit.fork
    while lifting]); each result weighs differently, so a future bound to the wrong value shows."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 6)

    def forward(self, x):
        fut = torch.jit.fork(_scaled, x, 2.0)
        fut2 = torch.jit.fork(self.lin, x)
        a = torch.jit._awaitable_nowait(x - 1.0)
        return torch.jit.wait(fut) + 10.0 * torch.jit.wait(fut2) + 100.0 * torch.jit._awaitable_wait(a)


class SortFloatsReversed(nn.Module):
    """l.sort(reverse=True) of floats: TorchScript's comparison is `!(a < b)`, NaN both ways, which
    Python cannot write: the CLI must exit 4 naming aten::sort."""

    def forward(self, x):
        vals: List[float] = [float(x.max()), float("nan"), float(x.min())]
        vals.sort(reverse=True)
        return x * vals[0]


class HashText(nn.Module):
    """hash() of a str is C++'s std::hash in TorchScript (Python's is salted per process): the
    CLI must exit 4 naming aten::hash."""

    def forward(self, x):
        return x * float(hash(str(x.size(0))) % 7)


class FloatSums(nn.Module):
    """sum() of a list of floats: TorchScript adds left to right, Python 3.12's sum() compensates,
    so for 2 rows [1e16, 1.0, -1e16] sums to 0.0 in TorchScript and to 1.0 in Python."""

    def forward(self, x):
        big = float(x.size(0)) * 5e15
        s = sum([big, 1.0, -big])
        return x * (s + 1.0) + sum([x.size(0), x.size(1)])


class SelfCompares(nn.Module):
    """A float compared with itself: TorchScript's executor folds v == v to True and v != v to False
    for one SSA value (PeepholeOptimizeNonTensor), also when v is NaN, where Python computes
    nan != nan as True (Note [Comparing a value with itself]). v is NaN for a positive sum and finite
    otherwise; it is compared directly, after arithmetic, as a list element, as a list, inside a
    branch, and with < and <= (computed, not folded); `v is v` compares by value in TorchScript (a
    NaN is not itself: Note [`is` on numbers]), also of two Optional[float]. Each comparison weighs
    differently."""

    def forward(self, x):
        v = float(x.sum())
        if v > 0.0:
            v = v * float("nan")
        k = 0.0
        if v != v:
            k += 1.0
        if v == v:
            k += 2.0
        w = v * 2.0 + 1.0
        if w != w:
            k += 4.0
        vals: List[float] = [w, v]
        a = vals[1]
        if a == a:
            k += 8.0
        if vals != vals:
            k += 16.0
        if bool(x.mean() > -100.0):
            u = v - 1.0
            if u != u:
                k += 32.0
            if u == u:
                k += 64.0
        if v < v:
            k += 128.0
        if v <= v:
            k += 256.0
        if v is v:
            k += 512.0
        if w is not w:
            k += 1024.0
        # Optional floats: `p is q` compares by value in TorchScript (two equal floats made apart
        # are one), by object in Python (Note [`is` on numbers]); None in the NaN set
        p: Optional[float] = None
        q: Optional[float] = None
        if bool(x.sum() <= 0.0):
            p = v + 0.5
            q = v + 0.5
        if p is q:
            k += 2048.0
        if p is not None and q is not p:
            k += 4096.0
        return x * k


def self_compares_branches(m, x):
    return {"nan": {float(x.sum()) > 0.0}}


class SelfComparesMerged(nn.Module):
    """Two values that TorchScript's CSE makes one (v * 2.0 twice) and then folds a != b to False
    on a NaN: the lifter cannot tell that from values the passes keep apart, so the CLI must exit 4
    naming aten::ne."""

    def forward(self, x):
        v = float(x.sum()) * float("nan")
        a = v * 2.0
        b = v * 2.0
        if a != b:
            return x * 2.0
        return x


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
register("bi_float_sums", FloatSums, [(2, 6)],
         eager_differs="eager sum() of floats compensates rounding (Python 3.12), TorchScript's does not")
register("bi_enums", Enums, [(2, 6)], enums_branches, {"sign": {"pos", "neg"}},
         expect_ops=["Enum.name", "Enum.value", "operator.eq", "operator.ne"])
register("bi_lists_hash_copies", ListsHashCopies, [(2, 6)], lists_hash_copies_branches,
         {"sign": {"pos", "neg"}}, expect_ops=["sorted", "list.sort", "operator.add"],
         eager_differs="eager hash(-1) is -2, TorchScript's -1")
register("bi_seeds", Seeds, [(2, 3)], expect_ops=["torch.manual_seed"])
register("bi_generator_draws", GeneratorDraws, [(2, 3)],
         expect_ops=["torch.Generator", "Generator.manual_seed"])
register("bi_generator_branch", GeneratorBranch, [(2, 3)], generator_branch_branches,
         {"sign": {"pos", "neg"}},
         expect_ops=["torch.Generator", "Generator.manual_seed", "Generator.initial_seed"])
register("bi_generator_reseed", GeneratorReseed, [(2, 3)],
         expect_ops=["torch.Generator", "Generator.manual_seed", "Generator.seed", "Generator.initial_seed"])
register("bi_fork_wait", ForkWait, [(2, 6)], expect_ops=["nn.Linear"])
register("bi_einsum_sublists", EinsumSublists, [(2, 6)], expect_ops=["torch.einsum"])
register("bi_percent_format", PercentFormat, [(2, 6)], percent_format_branches, {"sign": {"pos", "neg"}},
         expect_ops=["operator.mod"])
register("bi_sort_floats_tensors", SortFloatsTensors, [(2, 6)], sort_floats_tensors_branches,
         {"sign": {"pos", "neg"}}, expect_ops=["aten::sorted.float", "aten::sorted.Tensor", "list.extend"],
         eager_differs="eager list.sort() puts the NaN elsewhere")
register("bi_object_ids", ObjectIds, [(2, 6)], sum_sign_branches, {"sign": {"pos", "neg"}},
         eager_differs="scripting copies a submodule two attributes share: id(self.a) != id(self.c)")
register("bi_dequantize_tuple", DequantizeTuple, [(2, 6)], sum_sign_branches,
         {"sign": {"pos", "neg"}}, expect_ops=["aten::dequantize.self"])
register("bi_self_compares", SelfCompares, [(2, 6)], self_compares_branches, {"nan": {True, False}},
         eager_differs="eager nan != nan is True, TorchScript folds v != v to False; v is v")

UNSUPPORTED = {"bi_bad_float_text": (FloatText, "aten::str"), "bi_bad_hash_text": (HashText, "aten::hash"),
               "bi_bad_sort_reversed": (SortFloatsReversed, "aten::sort"),
               "bi_bad_percent_float": (PercentFloat, "aten::percentFormat"),
               "bi_bad_id_value": (IdValue, "prim::id"),
               "bi_bad_dequantize_any": (DequantizeAny, "aten::dequantize"),
               "bi_bad_self_compare": (SelfComparesMerged, "aten::ne"),
               "bi_bad_generator_unseeded": (GeneratorUnseeded, "torch.Generator constant"),
               "bi_bad_generator_two": (GeneratorTwo, "a second torch.Generator"),
               "bi_bad_generator_initial_seed_twice": (GeneratorInitialSeedTwice, "a second g.initial_seed()")}


if __name__ == "__main__":
    sys.exit(gsm.main(SPECS, UNSUPPORTED, kinds=lambda name: "fuse", doc=__doc__,
                      files=(os.path.abspath(__file__),)))
