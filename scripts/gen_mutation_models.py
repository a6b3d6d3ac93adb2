#!/usr/bin/python3
"""Generates the in-place-on-view models of the mutation end-to-end tests ("Exit 0 means correct").

Run with Debian's /usr/bin/python3. Every model is Python source text (kept, so a failure can show
it and so torch.jit.script can compile it): fixed, named regression cases (in-place ops through
slices, select, narrow, transpose, view, chunk, diagonal, masked_fill_, inplace activation modules,
two aliases of one tensor, `out=`, setitem, the YOLOv5 Detect head, ...) plus --count seeded random
models: a chain of 2-6 steps of view ops and in-place ops on the views or on their base, with
outputs that mix the base, views and intermediate results. Each model is built twice:

  NAME_t.pt / NAME_s.pt   torch.jit.trace(model, example, check_trace=False) / torch.jit.script
                          (scripting is skipped where the source does not compile: trace only)

and for each archive A (A = NAME_t or NAME_s) in --out:

  A.inputs.pt     torch.save of the input tuple (uniform in [-1, 1])
  A.expected.pt   the saved archive's outputs (torch.jit.load, on a clone of the inputs)
  A.json          input shapes, --input-shape arguments, the model source, whether it mutates
                  its input, whether the test also runs --quant-prep on it
  src/NAME.py     the model source (what torch.jit.script compiled)
  manifest.json   every archive in order; written last with a stamp (hash of this file, the
                  arguments and the torch version): a re-run with the same stamp does nothing

A random model is kept only when the eager model, its trace (on an input other than the tracing
example) and its script agree exactly and every output is finite. tests/e2e/check_mutation.py
converts the archives and compares with PyTorch.

    gen_mutation_models.py --out DIR [--seed S] [--count N] [--force]
    gen_mutation_models.py --list [--seed S] [--count N]   # "NAME kind" per line
"""
import argparse
import hashlib
import importlib.util
import json
import os
import random
import shutil
import sys
import textwrap
import warnings

import torch

DEFAULT_SEED = 20240717
DEFAULT_COUNT = 150
SHAPE = (2, 4, 6, 8)
HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"

# --------------------------------------------------------------------------------------------
# Named regression cases: (name, input shapes, class source). The class is always `Model`.

NAMED = []


def named(name, shapes, src):
    NAMED.append((name, [tuple(s) for s in shapes], textwrap.dedent(src).strip() + "\n"))


named("clamp_slice_clone", [SHAPE], """
class Model(nn.Module):
    def forward(self, x):
        x = x.clone()
        x[:, :2].clamp_(0, 0.5)
        return x
""")
named("mul_slice_return_base", [SHAPE], """
class Model(nn.Module):
    def forward(self, x):
        x = x.clone()
        v = x[:, 1:3]
        v.mul_(2)
        return x
""")
named("exp_slice_return_both", [SHAPE], """
class Model(nn.Module):
    def forward(self, x):
        x = x.clone()
        y = x[:, :2].exp_()
        return x, y
""")
named("select_add", [SHAPE], """
class Model(nn.Module):
    def forward(self, x):
        b = x.clone()
        b.select(1, 2).add_(1.0)
        b[:, 0].add_(b[:, 3])
        return b
""")
named("narrow_mul", [SHAPE], """
class Model(nn.Module):
    def forward(self, x):
        b = x + 0
        b.narrow(2, 1, 3).mul_(3.0)
        return b
""")
named("transpose_sub", [SHAPE], """
class Model(nn.Module):
    def forward(self, x):
        b = x.clone()
        t = b.transpose(2, 3)
        t[..., 1].sub_(1.0)
        return b, t
""")
named("view_div", [SHAPE], """
class Model(nn.Module):
    def forward(self, x):
        b = x.clone()
        b.view(8, 48)[1:3].div_(4.0)
        v = b.view(2, -1)
        v.div_(2.0)
        return b
""")
named("chunk_sigmoid", [SHAPE], """
class Model(nn.Module):
    def forward(self, x):
        b = x.clone()
        c = b.chunk(2, 1)[1]
        c.sigmoid_()
        return b
""")
named("diagonal_fill", [SHAPE], """
class Model(nn.Module):
    def forward(self, x):
        b = x.clone()
        torch.diagonal(b, dim1=-2, dim2=-1).fill_(1)
        return b
""")
named("masked_fill_slice", [SHAPE], """
class Model(nn.Module):
    def forward(self, x):
        b = x.clone()
        v = b[:, 1:3]
        v.masked_fill_(v > 0.2, 0.0)
        return b
""")
named("relu_module_slice", [SHAPE], """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        b = x.clone()
        self.act(b[:, :2])
        return b
""")
named("relu_module_slice_result", [SHAPE], """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU(inplace=True)
        self.conv = nn.Conv2d(4, 4, 1)

    def forward(self, x):
        b = self.conv(x)
        y = self.act(b[:, 1:3])
        return b, y
""")
named("two_aliases", [SHAPE], """
class Model(nn.Module):
    def forward(self, x):
        b = x.clone()
        a = b[:, :2]
        c = b[:, 1:3]
        a.mul_(2)
        c.add_(1)
        return b, a, c
""")
named("unsqueeze_inplace", [SHAPE], """
class Model(nn.Module):
    def forward(self, x):
        b = x.clone()
        u = b.unsqueeze(1)
        u[:, :, 1:3].mul_(2.0)
        return b, u
""")
named("squeeze_inplace", [SHAPE], """
class Model(nn.Module):
    def forward(self, x):
        b = x.clone()
        s = b[:, 1:2].squeeze(1)
        s.add_(1.0)
        return b
""")
named("reshape_view_compatible", [SHAPE], """
class Model(nn.Module):
    def forward(self, x):
        b = x.clone()
        r = b.reshape(2, 4, 48)
        r[:, :, :5].neg_()
        return b
""")
named("permute_inplace", [SHAPE], """
class Model(nn.Module):
    def forward(self, x):
        b = x.clone()
        p = b.permute(0, 2, 3, 1)
        p[..., 0].zero_()
        return b, p
""")
named("ellipsis_slice", [SHAPE], """
class Model(nn.Module):
    def forward(self, x):
        b = x.clone()
        b[..., 0:2].mul_(10.0)
        b[..., 1, :].tanh_()
        return b
""")
named("whole_clone", [SHAPE], """
class Model(nn.Module):
    def forward(self, x):
        b = x.clone()
        b.mul_(2.0)
        b.add_(1.0)
        b.relu_()
        return b
""")
named("whole_op_result", [SHAPE], """
class Model(nn.Module):
    def forward(self, x):
        b = x * 1
        b.sigmoid_()
        c = x + 0
        c.abs_()
        return b, c
""")
named("out_add_slice", [SHAPE], """
class Model(nn.Module):
    def forward(self, x):
        b = x.clone()
        torch.add(x[:, :1], 1.0, out=b[:, 2:3])
        torch.mul(x[:, 1:2], x[:, 3:4], out=b[:, 0:1])
        return b
""")
named("copy_slice", [SHAPE], """
class Model(nn.Module):
    def forward(self, x):
        b = x.clone()
        b[:, :2].copy_(b[:, 2:] * 0.5)
        return b
""")
named("fill_slice", [SHAPE], """
class Model(nn.Module):
    def forward(self, x):
        b = x.clone()
        b[:, 1].fill_(0.25)
        b[:, :, 2:4].zero_()
        return b
""")
named("index_put_slice", [SHAPE], """
class Model(nn.Module):
    def forward(self, x):
        b = x.clone()
        v = b[:, 1:3]
        v.index_put_([torch.tensor([0, 1])], torch.tensor(0.5))
        v[v < 0] = 0.0
        return b
""")
named("setitem_slice", [SHAPE], """
class Model(nn.Module):
    def forward(self, x):
        b = x.clone()
        b[:, 0:2] = 0.5
        b[:, 3] = b[:, 2] * 2.0
        return b
""")
named("chain_slice_of_view", [SHAPE], """
class Model(nn.Module):
    def forward(self, x):
        b = x.clone()
        v = b.view(2, 4, 48)[:, 1:3][..., 5:20]
        v.mul_(2.0)
        return b
""")
named("yolo_head", [SHAPE], """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.na = 3
        self.no = 6
        self.m = nn.Conv2d(4, 18, 1)

    def forward(self, x):
        x = self.m(x)
        bs, _, ny, nx = x.shape
        x = x.view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
        y = x.sigmoid()
        return y.view(bs, -1, self.no), x
""")
named("yolo_head_inplace", [SHAPE], """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.na = 3
        self.no = 6
        self.m = nn.Conv2d(4, 18, 1)

    def forward(self, x):
        x = self.m(x)
        bs, _, ny, nx = x.shape
        x = x.view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
        y = x.sigmoid()
        y[..., 0:2] = y[..., 0:2] * 2.0 - 0.5
        y[..., 2:4] = (y[..., 2:4] * 2) ** 2 * 4.0
        return y.view(bs, -1, self.no)
""")
named("contiguous_layout_agnostic", [SHAPE], """
class Model(nn.Module):
    def forward(self, x):
        y = x.permute(0, 2, 3, 1).contiguous()
        return torch.relu(y) * 2.0 + 1.0
""")
named("contiguous_copy_semantics", [SHAPE], """
class Model(nn.Module):
    def forward(self, x):
        b = x.clone()
        p = b.transpose(1, 2).contiguous()
        p.add_(1.0)
        q = b.contiguous()
        q.mul_(2.0)
        return b, p
""")
named("reshape_copy_semantics", [SHAPE], """
class Model(nn.Module):
    def forward(self, x):
        b = x.clone()
        r = b.transpose(1, 2).reshape(2, 6, -1)
        r.mul_(0.0)
        return b, r
""")
named("input_slice_mul", [SHAPE], """
class Model(nn.Module):
    def forward(self, x):
        x[:, :1].mul_(2)
        return x * 1
""")
named("input_relu_slice", [SHAPE], """
class Model(nn.Module):
    def forward(self, x):
        F.relu(x[:, 2:], inplace=True)
        return x.sum(1)
""")
named("input_whole_add", [SHAPE], """
class Model(nn.Module):
    def forward(self, x):
        x.add_(1.0)
        return x + 0
""")
named("f_relu_inplace_slice", [SHAPE], """
class Model(nn.Module):
    def forward(self, x):
        b = x.clone()
        F.relu(b[:, 1:3], inplace=True)
        return b
""")
named("hardtanh_leaky_modules", [SHAPE], """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.ht = nn.Hardtanh(-0.3, 0.3, inplace=True)
        self.lr = nn.LeakyReLU(0.1, inplace=True)

    def forward(self, x):
        b = x.clone()
        self.ht(b[:, 0])
        self.lr(b.transpose(1, 3)[:, 2:5])
        return b
""")
named("unbind_split", [SHAPE], """
class Model(nn.Module):
    def forward(self, x):
        b = x.clone()
        b.unbind(1)[2].tanh_()
        b.split(3, 2)[1].abs_()
        return b
""")
named("t_inplace", [(6, 8)], """
class Model(nn.Module):
    def forward(self, x):
        b = x.clone()
        b.t()[1:3].fill_(0.0)
        return b
""")
named("expand_sees_update", [SHAPE], """
class Model(nn.Module):
    def forward(self, x):
        b = x.clone()
        e = b[:, :1].expand(2, 4, 6, 8)
        b[:, :1].mul_(2.0)
        return e + 0, b
""")
named("read_before_mutation", [SHAPE], """
class Model(nn.Module):
    def forward(self, x):
        b = x.clone()
        v = b[:, :2]
        w = v * 1
        v.add_(1.0)
        return w, v
""")
named("view_sees_later_base_update", [SHAPE], """
class Model(nn.Module):
    def forward(self, x):
        b = x.clone()
        y = b[:, 0]
        b.mul_(2.0)
        return y
""")
named("scalar_element_fill", [SHAPE], """
class Model(nn.Module):
    def forward(self, x):
        b = x.clone()
        b[1, 2, 3, 4].fill_(7.0)
        b[0, 0, 0].zero_()
        return b
""")
named("inplace_two_inputs", [SHAPE, SHAPE], """
class Model(nn.Module):
    def forward(self, x, y):
        b = x.clone()
        b[:, 1:3].add_(y[:, :2])
        b[:, 3:].mul_(y[:, 3:])
        return b
""")
# x[:] is x itself for the lifter: a write through it must still reach b (found by a sweep).
named("full_slice_inplace", [SHAPE], """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        b = torch.tanh(x)
        b[:].relu_()
        c = b * 1
        self.act(c[:])
        return b, c
""")
# A submodule returning its argument (torchvision's StochasticDepth in eval): r is y.
named("identity_submodule_iadd", [SHAPE], """
class Id(nn.Module):
    def __init__(self):
        super().__init__()
        self.p = 0.2

    def forward(self, x):
        if not self.training or self.p == 0.0:
            return x
        return x * 2


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.id = Id()

    def forward(self, x):
        y = x.clone()
        r = self.id(y)
        r += 1
        return y + r
""")
# Quantized clamp needs both bounds: clamp(x, max=m) stays float under --quant-prep.
named("clamp_one_sided", [SHAPE], """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(4, 4, 1)

    def forward(self, x):
        return torch.clamp(self.c(x), max=0.3) + torch.clamp_min(x, -0.2)
""")
QUANT_CASES = {"clamp_one_sided"}  # --quant-prep whatever their index


# --------------------------------------------------------------------------------------------
# Random models


ACT_MODULES = [
    "nn.ReLU(inplace=True)", "nn.Hardtanh(-0.5, 0.5, inplace=True)",
    "nn.LeakyReLU(0.1, inplace=True)", "nn.ReLU6(inplace=True)", "nn.ELU(inplace=True)",
    "nn.Hardsigmoid(inplace=True)", "nn.Hardswish(inplace=True)", "nn.SiLU(inplace=True)",
]
SCALARS = ["2.0", "-1.5", "0.5", "3.0", "0.25", "-0.75"]


class Reject(Exception):
    pass


class RandomModel:
    """Builds one random model line by line, executing each line eagerly on a sample input to
    know the shapes and to reject lines that PyTorch refuses (in-place on an expanded view...)."""

    def __init__(self, rng, shape):
        self.rng = rng
        self.shape = shape
        self.init = []      # "self.actK = ..." lines
        self.modules = {}   # attr -> module instance (for the eager check)
        self.lines = []
        self.vars = []      # [(name, readonly)]
        self.counter = 0
        self.n_inplace = 0
        gen = torch.Generator().manual_seed(rng.randrange(1 << 30))
        self.x = torch.rand(shape, generator=gen) * 2 - 1
        self.reset_env()

    def reset_env(self):
        self.env = {"torch": torch, "nn": torch.nn, "F": torch.nn.functional,
                    "self": self, "x": self.x.clone()}
        for line in self.lines:
            exec(line, self.env)

    def __getattr__(self, attr):  # self.actK in the executed lines
        mods = self.__dict__.get("modules", {})
        if attr in mods:
            return mods[attr]
        raise AttributeError(attr)

    def fresh(self, prefix="v"):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def try_line(self, line, new=None, readonly=False):
        """Executes line; keeps it when it runs and (for a new variable) gives a non-empty
        tensor. Returns True when kept."""
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                exec(line, self.env)
            if new is not None:
                t = self.env[new]
                if not isinstance(t, torch.Tensor) or t.numel() == 0:
                    raise Reject(line)
        except Exception:
            self.reset_env()
            return False
        self.lines.append(line)
        if new is not None:
            self.vars.append((new, readonly))
        return True

    def shape_of(self, name):
        return tuple(self.env[name].shape)

    # -- view ops ---------------------------------------------------------------------------
    def slice_expr(self, t, s):
        r = self.rng
        n = len(s)
        d = r.randrange(n)
        size = s[d]
        start = r.randrange(size)
        stop = r.randint(start + 1, size)
        step = r.choice([1, 1, 1, 2, 3])
        a = "" if start == 0 and r.random() < 0.5 else (
            str(start - size) if r.random() < 0.2 else str(start))
        b = "" if stop == size and r.random() < 0.5 else str(stop)
        sl = f"{a}:{b}" + (f":{step}" if step != 1 else "")
        if d == n - 1 and n > 1 and r.random() < 0.5:
            return f"{t}[..., {sl}]"
        return f"{t}[{':, ' * d}{sl}]"

    def view_expr(self, t, s):
        """(expression, readonly) of a random view op on t with shape s, or None."""
        r = self.rng
        n = len(s)
        choices = ["slice", "slice", "slice", "select", "narrow", "unsqueeze", "chunk", "split",
                   "unbind", "view", "reshape", "flatten", "contiguous"]
        if n >= 2:
            choices += ["transpose", "permute", "diagonal", "select"]
        if n <= 2:
            choices.append("t")
        if 1 in s:
            choices += ["squeeze", "expand"]
        if n < 5:
            choices.append("expand")
        op = r.choice(choices)
        if n == 0:
            op = r.choice(["unsqueeze", "view"])
        if op == "slice":
            return self.slice_expr(t, s), False
        d = r.randrange(n) if n else 0
        if op == "select":
            if n < 2:
                return None
            i = r.randrange(s[d])
            if r.random() < 0.5:
                return f"{t}.select({d}, {i - s[d] if r.random() < 0.3 else i})", False
            if d == n - 1 and r.random() < 0.5:
                return f"{t}[..., {i}]", False
            return f"{t}[{':, ' * d}{i}]", False
        if op == "narrow":
            start = r.randrange(s[d])
            length = r.randint(1, s[d] - start)
            return f"{t}.narrow({d}, {start}, {length})", False
        if op == "unsqueeze":
            return f"{t}.unsqueeze({r.randint(-n - 1, n)})", False
        if op == "squeeze":
            ones = [i for i, k in enumerate(s) if k == 1]
            if r.random() < 0.3:
                return f"{t}.squeeze()", False
            return f"{t}.squeeze({r.choice(ones)})", False
        if op == "chunk":
            k = r.randint(2, 3)
            m = (s[d] + (s[d] + k - 1) // k - 1) // ((s[d] + k - 1) // k)  # number of chunks
            return (f"{t}.chunk({k}, {d})[{r.randrange(m)}]" if r.random() < 0.5 else
                    f"torch.chunk({t}, {k}, {d})[{r.randrange(m)}]"), False
        if op == "split":
            sz = r.randint(1, max(1, s[d] - 1))
            m = (s[d] + sz - 1) // sz
            return f"{t}.split({sz}, {d})[{r.randrange(m)}]", False
        if op == "unbind":
            if n < 2:
                return None
            return f"{t}.unbind({d})[{r.randrange(s[d])}]", False
        if op in ("view", "reshape"):
            new = self.new_shape(s)
            return f"{t}.{op}({', '.join(map(str, new))})", False
        if op == "flatten":
            if n < 2:
                return f"{t}.flatten()", False
            a = r.randrange(n - 1)
            return f"{t}.flatten({a}, {r.randint(a + 1, n - 1)})", False
        if op == "contiguous":
            return f"{t}.contiguous()", False
        if op == "transpose":
            a, b = r.sample(range(n), 2)
            if r.random() < 0.3:
                b = b - n
            return f"{t}.transpose({a}, {b})", False
        if op == "permute":
            p = list(range(n))
            while p == list(range(n)):
                r.shuffle(p)
            return f"{t}.permute({', '.join(map(str, p))})", False
        if op == "diagonal":
            a, b = r.sample(range(n), 2)
            off = r.choice([0, 0, 1, -1])
            if r.random() < 0.5:
                return f"torch.diagonal({t}, {off}, {a}, {b})", False
            return f"{t}.diagonal({off}, {a}, {b})", False
        if op == "t":
            return f"{t}.t()", False
        if op == "expand":
            new = [3 if k == 1 else k for k in s]
            if 1 not in s or r.random() < 0.3:
                new = [2] + list(s)
            return f"{t}.expand({', '.join(map(str, new))})", True
        return None

    def new_shape(self, s):
        r = self.rng
        n = len(s)
        numel = 1
        for k in s:
            numel *= k
        opts = [[-1]]
        if n >= 2:
            i = r.randrange(n - 1)
            merged = list(s[:i]) + [s[i] * s[i + 1]] + list(s[i + 2:])
            opts.append(merged)
            opts.append([s[0], -1])
        even = [i for i, k in enumerate(s) if k % 2 == 0 and k > 2]
        if even:
            i = r.choice(even)
            opts.append(list(s[:i]) + [2, s[i] // 2] + list(s[i + 1:]))
        new = r.choice(opts)
        if len(new) > 1 and -1 not in new and r.random() < 0.3:
            new[r.randrange(len(new))] = -1
        return new

    # -- in-place ops -----------------------------------------------------------------------
    def same_shape_var(self, t):
        s = self.shape_of(t)
        cands = [v for v, _ in self.vars if v != t and self.shape_of(v) == s]
        return self.rng.choice(cands) if cands else None

    def inplace_stmt(self, t):
        """(line, bindable) for an in-place op on t; bindable: the line is an expression whose
        value is t (may be assigned to a new name)."""
        r = self.rng
        s = self.shape_of(t)
        c = r.choice(SCALARS)
        kind = r.choice(["clamp", "clamp", "mul", "mul", "add", "sub", "div", "exp", "sigmoid",
                         "relu", "tanh", "abs", "neg", "fill", "zero", "masked_fill",
                         "masked_fill", "copy", "copy", "module", "module", "module", "F",
                         "setitem", "setitem", "bool_index", "index_put", "tensor_op", "out"])
        if kind == "clamp":
            lo, hi = r.choice(["-0.5", "0", "-0.25"]), r.choice(["0.5", "0.3", "0.75"])
            form = r.randrange(3)
            return (f"{t}.clamp_({lo}, {hi})" if form == 0 else f"{t}.clamp_(min={lo})"
                    if form == 1 else f"{t}.clamp_(max={hi})"), True
        if kind in ("mul", "add", "sub", "div"):
            return f"{t}.{kind}_({c})", True
        if kind in ("exp", "sigmoid", "relu", "tanh", "abs", "neg", "zero"):
            return f"{t}.{kind}_()", True
        if kind == "fill":
            return f"{t}.fill_({c})", True
        if kind == "masked_fill":
            u = self.same_shape_var(t) if r.random() < 0.4 else None
            mask = f"{u or t} {r.choice(['>', '<'])} {r.choice(['0.0', '0.2', '-0.3'])}"
            return f"{t}.masked_fill_({mask}, {c})", True
        if kind == "copy":
            u = self.same_shape_var(t)
            src = (f"{u} * {c}" if u and r.random() < 0.6 else
                   f"torch.sigmoid({t})" if r.random() < 0.5 else f"{t} * {c} + 0.1")
            return f"{t}.copy_({src})", True
        if kind == "module":
            attr = f"act{len(self.init)}"
            ctor = r.choice(ACT_MODULES)
            self.init.append(f"self.{attr} = {ctor}")
            self.modules[attr] = eval(ctor, {"nn": torch.nn})
            return f"self.{attr}({t})", True
        if kind == "F":
            return r.choice([f"F.relu({t}, inplace=True)", f"F.leaky_relu({t}, 0.2, inplace=True)",
                             f"F.hardtanh({t}, -0.3, 0.3, inplace=True)",
                             f"torch.relu_({t})"]), True
        if kind == "setitem":
            if not s:
                return f"{t}.fill_({c})", True
            idx = self.slice_expr(t, s)[len(t):]
            rhs = c if r.random() < 0.5 else f"{t}{idx} * {c}"
            return f"{t}{idx} = {rhs}", False
        if kind == "bool_index":
            return f"{t}[{t} {r.choice(['>', '<'])} {r.choice(['0.0', '0.4'])}] = {c}", False
        if kind == "index_put":
            if not s:
                return f"{t}.zero_()", True
            ids = sorted(r.sample(range(s[0]), min(s[0], r.randint(1, 2))))
            return f"{t}.index_put_([torch.tensor({ids})], torch.tensor({c}))", True
        if kind == "tensor_op":
            others = [v for v, _ in self.vars if v != t]
            u = r.choice(others) if others else t
            return f"{t}.{r.choice(['add_', 'mul_', 'sub_'])}({u})", True
        # out=
        u = self.same_shape_var(t)
        src = u if u else f"{t} * 1.0"
        return (r.choice([f"torch.add({src}, {c}, out={t})", f"torch.mul({src}, {c}, out={t})",
                          f"torch.sigmoid({src}, out={t})"]), False)

    def add_inplace(self, t):
        for _ in range(8):
            line, bindable = self.inplace_stmt(t)
            n_init = len(self.init)
            if bindable and self.rng.random() < 0.35:
                y = self.fresh("y")
                if self.try_line(f"{y} = {line}", new=y):
                    self.n_inplace += 1
                    return True
            elif self.try_line(line):
                self.n_inplace += 1
                return True
            if len(self.init) > n_init:  # the module was not used
                attr = self.init.pop().split(" = ")[0][len("self."):]
                del self.modules[attr]
        return False

    def add_view(self, t, readonly):
        for _ in range(10):
            got = self.view_expr(t, self.shape_of(t))
            if got is None:
                continue
            expr, ro = got
            v = self.fresh()
            if self.try_line(f"{v} = {expr}", new=v, readonly=readonly or ro):
                return v
        return None

    def build(self):
        r = self.rng
        mutate_input = r.random() < 0.08
        if mutate_input:
            base = "x"
            self.vars.append(("x", False))
        else:
            base = "b"
            first = r.choice(["x.clone()", "x.clone()", "x.clone()", "x * 1", "x + 0",
                              "torch.tanh(x)"])
            self.try_line(f"b = {first}", new="b")
        cur, cur_ro = base, False
        for _ in range(r.randint(2, 6)):
            if r.random() < 0.85:
                src, src_ro = (cur, cur_ro) if r.random() < 0.65 else r.choice(self.vars)
                v = self.add_view(src, src_ro)
                if v is not None:
                    cur, cur_ro = v, dict(self.vars)[v]
            if r.random() < 0.75:
                writable = [v for v, ro in self.vars if not ro]
                target = cur if (not cur_ro and r.random() < 0.6) else r.choice(writable)
                self.add_inplace(target)
            if r.random() < 0.15:
                src = r.choice(self.vars)[0]
                w = self.fresh("w")
                s = self.shape_of(src)
                tail = r.choice([".view(-1)", f".view({', '.join(map(str, self.new_shape(s)))})",
                                 ".flatten()", "", " * 2.0"])
                if self.try_line(f"{w} = {src}.contiguous(){tail}", new=w):
                    cur, cur_ro = w, False
            if r.random() < 0.15:
                src = r.choice(self.vars)[0]
                w = self.fresh("w")
                expr = r.choice([f"{src} * 2.0", f"torch.sigmoid({src})",
                                 f"{src} + {r.choice(self.vars)[0]}", f"{src}.sum(0, keepdim=True)"])
                self.try_line(f"{w} = {expr}", new=w)
        if self.n_inplace == 0:
            writable = [v for v, ro in self.vars if not ro]
            if not self.add_inplace(r.choice(writable)):
                raise Reject("no in-place op")
        names = [v for v, _ in self.vars]
        outs = []
        if base != "x" and r.random() < 0.7:
            outs.append(base)
        others = [v for v in names if v not in outs and v != "x"]
        r.shuffle(others)
        outs += others[:r.randint(0 if outs else 1, 2)]
        if base == "x":
            outs.append("x * 1" if r.random() < 0.7 else "x")
        if not outs:
            outs = [base]
        ret = outs[0] if len(outs) == 1 else ", ".join(outs)
        body = "\n".join("        " + line for line in self.lines + [f"return {ret}"])
        init = ""
        if self.init:
            init = ("    def __init__(self):\n        super().__init__()\n" +
                    "".join(f"        {line}\n" for line in self.init) + "\n")
        return f"class Model(nn.Module):\n{init}    def forward(self, x):\n{body}\n"


def random_case(seed, i):
    """(name, shapes, source) of random model i; deterministic for (seed, i)."""
    rng = random.Random(f"{seed}:{i}")
    shape = rng.choice([SHAPE, SHAPE, SHAPE, SHAPE, (3, 5, 6), (6, 8), (2, 3, 4, 5, 2)])
    for _ in range(50):
        try:
            src = RandomModel(rng, shape).build()
        except Reject:
            continue
        return f"r{i:04d}", [shape], src, rng.randrange(1 << 30)
    raise RuntimeError(f"random model {i}: no valid model in 50 attempts")


# --------------------------------------------------------------------------------------------
# Building, checking and saving


def flatten(x):
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (tuple, list)):
        return [t for item in x for t in flatten(item)]
    raise TypeError(f"unexpected output type {type(x).__name__}")


def clone_all(inputs):
    return tuple(t.clone() for t in inputs)


def run(model, inputs):
    """(outputs, inputs after the call) on clones of inputs."""
    ins = clone_all(inputs)
    with torch.no_grad():
        out = model(*ins)
    return [t.clone() for t in flatten(out)], ins


def same(a, b):
    return len(a) == len(b) and all(
        x.shape == y.shape and x.dtype == y.dtype and torch.equal(x, y) for x, y in zip(a, b))


def load_source(path, mod_name):
    spec = importlib.util.spec_from_file_location(mod_name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = mod
    spec.loader.exec_module(mod)
    return mod


def atomic_write(path, write):
    tmp = path + ".tmp"
    write(tmp)
    os.replace(tmp, path)


def inputs_for(shapes, seed):
    gen = torch.Generator().manual_seed(seed)
    return tuple(torch.rand(s, generator=gen) * 2 - 1 for s in shapes)


def build_case(case, shapes, src, seed, out_dir, random_model):
    """Writes the archives of one case; returns their names (trace first). Raises Reject when a
    random model's trace/script disagrees with eager or an output is not finite."""
    src_dir = os.path.join(out_dir, "src")
    path = os.path.join(src_dir, f"{case}.py")
    with open(path, "w") as f:
        f.write(HEADER + src)
    torch.manual_seed(seed)
    mod = load_source(path, f"tt_mutation_src_{case}")
    model = mod.Model().eval()
    for p in model.parameters():  # conv weights: keep outputs in a sane range
        p.data = torch.rand(p.shape, generator=torch.Generator().manual_seed(seed)) * 0.4 - 0.2
    example = inputs_for(shapes, seed + 1)
    inputs = inputs_for(shapes, seed + 2)
    eager_out, eager_after = run(model, inputs)
    if not all(torch.isfinite(t).all() for t in eager_out):
        raise Reject(f"{case}: non-finite eager output")
    mutates_input = not same(list(eager_after), list(inputs))
    archives = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        archives["t"] = torch.jit.trace(model, clone_all(example), check_trace=False)
        try:
            archives["s"] = torch.jit.script(model)
        except Exception as e:
            print(f"{case}: not scriptable ({type(e).__name__}: {str(e).splitlines()[0]}); "
                  "trace only")
    written = []
    for kind, archive in archives.items():
        name = f"mut_{case}_{kind}"
        base = os.path.join(out_dir, name)
        archive.save(base + ".pt")
        loaded = torch.jit.load(base + ".pt").eval()
        got, after = run(loaded, inputs)
        if not (same(got, eager_out) and same(list(after), list(eager_after))):
            msg = f"{case}: the {'trace' if kind == 't' else 'script'} differs from eager"
            if random_model:
                raise Reject(msg)
            print(f"warning: {msg}; the archive is the reference", file=sys.stderr)
        atomic_write(base + ".inputs.pt", lambda p: torch.save(inputs, p))
        atomic_write(base + ".expected.pt", lambda p: torch.save(got, p))
        meta = {
            "name": name, "case": case, "kind": "trace" if kind == "t" else "script",
            "random": random_model,
            "inputs": [{"shape": list(s), "dtype": "float32"} for s in shapes],
            "input_shape_args": [",".join(map(str, s)) for s in shapes],
            "mutates_input": mutates_input,
            "source": src,
            "source_file": os.path.relpath(path, out_dir),
        }
        with open(base + ".json", "w") as f:
            json.dump(meta, f, indent=1)
            f.write("\n")
        written.append(name)
    return written


def cases(seed, count):
    for name, shapes, src in NAMED:
        yield name, shapes, src, int(hashlib.sha256(name.encode()).hexdigest()[:7], 16), False
    for i in range(count):
        name, shapes, src, s = random_case(seed, i)
        yield name, shapes, src, s, True


def stamp(seed, count):
    with open(os.path.abspath(__file__), "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:16]
    return f"{digest}-seed{seed}-count{count}-torch{torch.__version__}"


def current(out_dir, st):
    try:
        with open(os.path.join(out_dir, "manifest.json")) as f:
            man = json.load(f)
    except (OSError, ValueError):
        return False
    return man.get("stamp") == st and all(
        os.path.exists(os.path.join(out_dir, m["name"] + ext))
        for m in man["models"] for ext in (".pt", ".json", ".inputs.pt", ".expected.pt"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="output directory (created if missing)")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--count", type=int, default=DEFAULT_COUNT, help="random models")
    ap.add_argument("--list", action="store_true", help="print 'CASE named|random' and exit")
    ap.add_argument("--force", action="store_true", help="regenerate even when current")
    args = ap.parse_args()
    if args.list:
        for name, _, _ in NAMED:
            print(name, "named")
        for i in range(args.count):
            print(f"r{i:04d}", "random")
        return 0
    if not args.out:
        ap.error("--out DIR is required")
    torch.set_num_threads(1)
    st = stamp(args.seed, args.count)
    if not args.force and current(args.out, st):
        print(f"{args.out}: current ({st}), nothing to do")
        return 0
    if os.path.isdir(args.out):
        shutil.rmtree(args.out)
    os.makedirs(os.path.join(args.out, "src"))
    models = []
    n_cases = 0
    for case, shapes, src, seed, is_random in cases(args.seed, args.count):
        for attempt in range(20):
            try:
                names = build_case(case, shapes, src, seed, args.out, is_random)
                break
            except Reject as e:
                if not is_random:
                    raise
                print(f"{case}: rejected ({e}), next attempt")
                # Deterministic replacement: the same index, another sub-seed.
                _, shapes, src, seed = random_case(f"{args.seed}/{attempt}", int(case[1:]))
        else:
            raise RuntimeError(f"{case}: no valid model")
        n_cases += 1
        for name in names:
            models.append({"name": name, "case": case, "kind": name[-1]})
    # --quant-prep on every third case (both of its archives).
    case_index = {}
    for m in models:
        case_index.setdefault(m["case"], len(case_index))
        m["quant"] = case_index[m["case"]] % 3 == 0 or m["case"] in QUANT_CASES
    man = {"stamp": st, "seed": args.seed, "count": args.count, "models": models}
    atomic_write(os.path.join(args.out, "manifest.json"),
                 lambda p: open(p, "w").write(json.dumps(man, indent=1) + "\n"))
    n_script = sum(m["kind"] == "s" for m in models)
    print(f"{args.out}: {n_cases} cases, {len(models)} archives ({n_script} scripted)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
