#!/usr/bin/python3
"""Generates the torch.jit.script'ed models of the control-flow end-to-end tests (issue 6).

Run with Debian's /usr/bin/python3. Like scripts/gen_models.py (whose randomisation it reuses, so
BatchNorm statistics are realistic and no output vanishes), for each model NAME it writes into --out:

  NAME.pt              torch.jit.script(model).save
  NAME.inputs.K.pt     input set K (K = 0, 1, ...): torch.save of the input tuple
  NAME.expected.K.pt   the scripted model's outputs on input set K
  NAME.inputs.pt / NAME.expected.pt   copies of set 0 (what tests/e2e/run_convert.py and
                       scripts/check_model.py look for by default)
  NAME.json            input shapes, --input-shape arguments, tolerance, the number of input sets
                       and which branches each set takes; written last, with a stamp

The input sets of a model with control flow are chosen so that together they take every branch:
the generator computes each set's branch outcomes from the eager model's layers (branch_of) and
fails when an outcome is never reached, so a test cannot pass by exercising one side only. Models are independent of scripts/gen_models.py's
stamp: editing this file regenerates only these.
"""
import argparse
import hashlib
import io
import json
import os
import sys
import warnings

from typing import List

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_models  # noqa: E402  (randomize_, Spec, shape_arg, atomic_write, flatten)

SEED = 20240611

class Gate(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x
        else:
            return -x


class GateCell(nn.Module):
    """tanh(gate(linear(x)) + h)."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(6, 6)
        self.gate = Gate()

    def forward(self, x, h):
        return torch.tanh(self.gate(self.linear(x)) + h)


class LoopCell(nn.Module):
    """Iterates over the first dimension of xs, calling the gate cell; returns the final state and
    the stacked states (a list built in the loop would need list mutation: states are summed)."""

    def __init__(self):
        super().__init__()
        self.cell = GateCell()

    def forward(self, xs, h):
        acc = torch.zeros_like(h)
        for i in range(xs.size(0)):
            h = self.cell(xs[i], h)
            acc = acc + h
        return h, acc


class WhileLoop(nn.Module):
    """A `while` whose condition depends on the data: doubles through a layer until the norm is
    large (or 12 steps), and returns how many steps it took."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)

    def forward(self, x):
        n = 0
        while bool(x.norm() < 8.0) and n < 12:
            x = torch.relu(self.fc(x)) * 1.5 + x
            n += 1
        return x, n


class EarlyReturn(nn.Module):
    """forward returns from inside an `if`."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)
        self.out = nn.Linear(6, 3)

    def forward(self, x):
        y = self.fc(x)
        if y.mean() > 0:
            return self.out(torch.sigmoid(y))
        z = torch.relu(y) * 2.0
        return self.out(z - 1.0)


class Backbone(nn.Module):
    """Conv+BN+ReLU features: traced (torch.jit.trace) inside the scripted MixedModel."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.pool = nn.AdaptiveAvgPool2d(1)

    def forward(self, x):
        return torch.flatten(self.pool(torch.relu(self.bn(self.conv(x)))), 1)


class MixedModel(nn.Module):
    """torch.jit.script of a module holding a traced submodule, with a data-dependent branch."""

    def __init__(self, backbone):
        super().__init__()
        self.backbone = backbone
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        f = self.backbone(x)
        if f.mean() > 0.5:  # MIXED_THRESHOLD
            return self.head(f)
        return self.head(f * 0.5) - 1.0


MIXED_THRESHOLD = 0.5  # the literal in MixedModel.forward (TorchScript cannot read a global)


def build_mixed():
    """The backbone gets realistic BatchNorm statistics eagerly, then is traced."""
    gen = torch.Generator().manual_seed(SEED + 7)
    bb = Backbone().eval()
    gen_models.randomize_(bb, gen_models.Spec("backbone", "scripted", Backbone,
                                              [((1, 3, 16, 16), "float32", None)]), gen)
    return MixedModel(torch.jit.trace(bb, torch.randn(1, 3, 16, 16, generator=gen)))


class RaiseChecks(nn.Module):
    """The model's own input checks (`raise` in a branch the test inputs never take): the
    generated forward keeps them as `raise` statements."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)

    def forward(self, x):
        if x.dim() != 2:
            raise ValueError("expected a 2-d input")
        y = self.fc(x)
        if bool(torch.isnan(y).any()):
            raise RuntimeError("the layer produced NaN")
        return y


class DictModel(nn.Module):
    """Builds a dict and reads it back (d["key"]): converted like any other value."""

    def forward(self, x):
        d = {"a": x, "b": x * 2.0}
        return d["a"] + d["b"]


class Interpolate(nn.Module):
    """F.interpolate and nn.Upsample in a scripted model: their TorchScript body builds the scale
    list with list.append in a loop over the input's rank; tinytrace lifts the call as one op."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")

    def forward(self, x):
        y = self.conv(x)
        a = F.interpolate(y, scale_factor=2.0, mode="bilinear", align_corners=False)
        return a + self.up(y)


class ListAppend(nn.Module):
    """list.append in a loop and inside both branches of a data-dependent `if`, then torch.stack
    (the list becomes a value carried through the loop and the `if`)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)

    def forward(self, x):
        ys: List[torch.Tensor] = []
        for i in range(x.size(0)):
            y = self.fc(x[i])
            if y.sum() > 0:
                ys.append(torch.relu(y))
            else:
                ys.append(y * 0.5)
        ys.append(self.fc(x.mean(0)))
        return torch.stack(ys, 0)


class PowDtypeCopy(nn.Module):
    """`int ** -0.5` (aten::pow.int_float), list(x.shape) and list.copy (aten::list / aten::copy,
    then an append), x.dtype (prim::dtype)."""

    def forward(self, x):
        c = x.shape[-1]
        scale = (c // 4) ** -0.5
        shape = list(x.shape)
        s2 = shape.copy()
        s2.append(1)
        z = torch.ones(s2, dtype=x.dtype)
        return (x * scale).unsqueeze(-1) + z * float(len(shape))


class FormatValue(nn.Module):
    """An f-string used as a value (as nn.MultiheadAttention keeps why its fast path is not
    taken): aten::format outside an exception message, data-dependent."""

    def forward(self, x):
        why = ""
        if bool(x.sum() < 0):
            why = f"negative sum over {x.dim()} dims"
        if not why:
            return x * 2.0
        return x - 1.0


class ScriptedLSTMHidden(nn.Module):
    """A scripted bidirectional nn.LSTM (seq-first) called with an explicit (h0, c0)."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 12, bidirectional=True)
        self.fc = nn.Linear(24, 4)

    def forward(self, x, h0, c0):
        y, (h, c) = self.lstm(x, (h0, c0))
        return self.fc(y), c


class ScriptedGRU(nn.Module):
    """A scripted nn.GRU (2 layers, batch_first) called with x only; both results used."""

    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(8, 16, num_layers=2, batch_first=True)

    def forward(self, x):
        y, h = self.gru(x)
        return y.mean(1) + h[-1]


class ScriptedMHABlock(nn.Module):
    """A scripted transformer-style block: nn.MultiheadAttention (batch_first,
    need_weights=False) with a residual and a LayerNorm. Inlined, its forward formats strings
    for why the fast path is not taken (aten::str); lifted, it is one nn.MultiheadAttention."""

    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(16, 4, batch_first=True)
        self.norm = nn.LayerNorm(16)

    def forward(self, x):
        a = self.attn(x, x, x, need_weights=False)[0]
        return self.norm(x + a)


# Models whose conversion must fail with exit 4: name -> (build, op named in the error).
# (A list stored in another list and then appended to converts since container mutation is an
# effect: scripts/gen_container_models.py, ct_stored_then_appended.)
# Constructs tinytrace refuses (exit 4 naming the op): none left here. torch.jit.fork / wait, the
# last one, is lifted since 67355b5 (scripts/gen_builtin_models.py's bi_fork_wait tests it).
UNSUPPORTED = {}


def _tv(fn_name):
    def build():
        import torchvision
        return getattr(torchvision.models, fn_name)(weights=None)
    return build


# Branch outcomes of one input set, computed from the eager model's layers: {branch: set}.
def gate_branches(m, x, h):
    return {"gate": {"pos" if float(m.linear(x).sum()) > 0 else "neg"}}



def loop_branches_all(m, xs, h):
    out = set()
    for i in range(xs.size(0)):
        out |= gate_branches(m.cell, xs[i], h)["gate"]
    return {"gate": out}


def while_branches(m, x):
    return {"while_steps": {min(int(m(x)[1]), 2)}}  # no iteration, one, several


def append_branches(m, x):
    return {"append": {"pos" if float(m.fc(x[i]).sum()) > 0 else "neg" for i in range(x.size(0))}}


def format_branches(m, x):
    return {"format": {"neg" if float(x.sum()) < 0 else "pos"}}


def mixed_branches(m, x):
    return {"mixed": {"above" if float(m.backbone(x).mean()) > MIXED_THRESHOLD else "below"}}


def early_branches(m, x):
    return {"early": {"return" if float(m.fc(x).mean()) > 0 else "fallthrough"}}


# name -> build, input shapes, tolerance, branch_of(model, *inputs) and the outcomes to cover
SPECS = {}


def register(name, build, shapes, branch_of=None, outcomes=None, tol=1e-4, expect_ops=()):
    """expect_ops: IR ops the conversion must produce (a module lifted as the module op, not
    inlined), checked in the report by tests/e2e/run_scripted.py."""
    SPECS[name] = dict(build=build, shapes=shapes, branch_of=branch_of, outcomes=outcomes or {}, tol=tol,
                       expect_ops=list(expect_ops))


register("sc_gate_cell", GateCell, [(1, 6), (1, 6)], gate_branches, {"gate": {"pos", "neg"}})
register("sc_loop_cell", LoopCell, [(8, 1, 6), (1, 6)], loop_branches_all, {"gate": {"pos", "neg"}})
register("sc_while", WhileLoop, [(1, 6)], while_branches, {"while_steps": {0, 1, 2}})
register("sc_early_return", EarlyReturn, [(2, 6)], early_branches, {"early": {"return", "fallthrough"}})
register("sc_dict", DictModel, [(2, 6)])
register("sc_raise", RaiseChecks, [(2, 6)])
register("sc_mixed_trace", build_mixed, [(1, 3, 16, 16)], mixed_branches, {"mixed": {"above", "below"}})
register("sc_interpolate", Interpolate, [(1, 3, 8, 8)], expect_ops=["F.interpolate"])
register("sc_list_append", ListAppend, [(4, 6)], append_branches, {"append": {"pos", "neg"}})
register("sc_pow_dtype_copy", PowDtypeCopy, [(2, 8)])
register("sc_format_value", FormatValue, [(2, 3)], format_branches, {"format": {"pos", "neg"}})
# gen_models' two-layer batch_first LSTM, scripted: lifted as the nn.LSTM module op from the
# module's attributes, not as its inlined forward (dim checks, `raise` with formatted messages,
# the Optional hidden state around aten::lstm).
register("sc_lstm", gen_models.Lstm, [(2, 5, 8)], expect_ops=["nn.LSTM"])
register("sc_lstm_hidden", ScriptedLSTMHidden, [(5, 2, 8), (2, 2, 12), (2, 2, 12)], expect_ops=["nn.LSTM"])
register("sc_gru", ScriptedGRU, [(2, 5, 8)], expect_ops=["nn.GRU"])
register("sc_mha", ScriptedMHABlock, [(2, 5, 16)], expect_ops=["nn.MultiheadAttention"])
register("sc_resnet18", _tv("resnet18"), [(1, 3, 64, 64)])
register("sc_mobilenet_v2", _tv("mobilenet_v2"), [(1, 3, 64, 64)])


def flatten(x):
    if isinstance(x, (tuple, list)):
        return [t for item in x for t in flatten(item)]
    return [x]


def candidate_inputs(shapes, gen, k):
    """Input set k: standard normal, scaled and shifted differently per set so that data-dependent
    conditions go both ways (set 0 is plain standard normal, like --verify's inputs)."""
    scale = [1.0, 1.0, 5.0, 2.5, 3.0, 2.0, 4.0, 1.5, 0.3, 6.0, 3.5, 0.05][k % 12]
    out = []
    for i, s in enumerate(shapes):
        t = torch.randn(s, generator=gen) * scale
        if k % 2 == 1 and i == 0:
            t = -t  # flips the sign of the gate/mean conditions of set k-1-like data
        out.append(t)
    return tuple(out)


def stamp(*files):
    """The generator stamp: a digest of this file and `files` (another generator reusing this one's
    generate()), and the torch version."""
    h = hashlib.sha256()
    for path in (os.path.abspath(__file__),) + files:
        with open(path, "rb") as f:
            h.update(f.read())
    return f"{h.hexdigest()[:16]}-torch{torch.__version__}"


def generate(name, spec, out_dir, st):
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED + 1)
    model = spec["build"]().eval()
    gm_spec = gen_models.Spec(name, "scripted", spec["build"],
                              [(s, "float32", None) for s in spec["shapes"]])
    gen_models.randomize_(model, gm_spec, gen)
    model.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scripted = torch.jit.script(model)

    # Pick input sets until every branch outcome was seen (at most 12 candidates), and at least
    # spec["calls"] of them: a model with module state (Note [Module state] in lib/exec/alias.h)
    # is called on the sets in order, on one instance, and each expected output is that call's.
    # (branch_of must then not call the model: that would change its state.)
    want = spec["outcomes"]
    calls = spec.get("calls", 1)
    archive = io.BytesIO()  # the state before the calls below (which change it)
    if calls > 1:
        torch.jit.save(scripted, archive)
    sets, seen = [], {b: set() for b in want}
    call_shapes = spec.get("call_shapes") or []  # the shapes of the first sets, when they differ
    for k in range(12):
        inputs = candidate_inputs(call_shapes[k] if k < len(call_shapes) else spec["shapes"], gen, k)
        with torch.no_grad():
            taken = spec["branch_of"](model, *inputs) if spec["branch_of"] else {}
        new = any(not taken.get(b, set()) <= seen[b] for b in want)
        if k == 0 or new or k < calls:
            sets.append((inputs, {b: sorted(map(str, taken.get(b, set()))) for b in want}))
            for b in want:
                seen[b] |= taken.get(b, set())
        if all(seen[b] >= want[b] for b in want) and len(sets) >= calls:
            break
    for b, outcomes in want.items():
        if not seen[b] >= outcomes:
            raise RuntimeError(f"{name}: input sets cover {sorted(map(str, seen[b]))} of branch "
                               f"'{b}', need {sorted(map(str, outcomes))}")

    base = os.path.join(out_dir, name)
    max_abs = 0.0
    for k, (inputs, _) in enumerate(sets):
        with torch.no_grad():
            eager = model(*inputs)
            expected = scripted(*inputs)
        # A model that uses a builtin whose TorchScript meaning differs from Python's (d.popitem())
        # says so with "eager_differs" (the reason): the scripted model is the reference.
        for e, t in zip(flatten(eager), flatten(expected)):
            if isinstance(t, torch.Tensor) and t.is_floating_point():
                max_abs = max(max_abs, float(t.abs().max()))
            if spec.get("eager_differs"):
                continue
            if isinstance(t, torch.Tensor) and t.is_floating_point():
                rel = float((e - t).abs().max()) / max(float(e.abs().max()), 1e-30)
                assert rel <= 1e-5, f"{name}: scripted and eager outputs differ (rel {rel:.2e})"
            elif isinstance(t, torch.Tensor):  # integer or boolean tensors (lengths, masks)
                assert torch.equal(e, t), f"{name}: scripted and eager outputs differ ({e} vs {t})"
            else:
                assert e == t, f"{name}: scripted and eager outputs differ ({e} vs {t})"
        if spec.get("check"):  # the generator's own condition on the outputs (gen_object_models)
            spec["check"](flatten(expected))
        gen_models.atomic_write(f"{base}.inputs.{k}.pt", lambda p: torch.save(inputs, p))
        # Named tuples as plain ones (torch.save cannot pickle TorchScript's NamedTuple classes);
        # check_model reads their names from the archive's schema.
        expected = gen_models.plain(expected)
        gen_models.atomic_write(f"{base}.expected.{k}.pt", lambda p: torch.save(expected, p))
        if k == 0:
            gen_models.atomic_write(base + ".inputs.pt", lambda p: torch.save(inputs, p))
            gen_models.atomic_write(base + ".expected.pt", lambda p: torch.save(expected, p))
    assert max_abs > 1e-3, f"{name}: max |output| = {max_abs:.3e} is too small"
    if calls > 1:
        def save_archive(p):
            with open(p, "wb") as f:
                f.write(archive.getvalue())
        gen_models.atomic_write(base + ".pt", save_archive)
    else:
        gen_models.atomic_write(base + ".pt", lambda p: scripted.save(p))
    meta = {
        "name": name,
        "group": "scripted",
        "generator": st,
        "inputs": [{"shape": list(s), "dtype": "float32"} for s in spec["shapes"]],
        "input_shape_args": [gen_models.shape_arg(s, "float32") for s in spec["shapes"]],
        "tolerance": spec["tol"],
        "expect_warnings": [],
        "input_sets": len(sets),
        "branches": [b for _, b in sets],
        "max_abs_output": max_abs,
        "expect_ops": spec["expect_ops"],
    }
    if calls > 1:
        meta["sequence"] = True  # tests/e2e/run_scripted.py checks the calls in order
    if call_shapes:  # each set's --input-shape arguments (run_scripted.py)
        meta["set_input_shape_args"] = [
            [gen_models.shape_arg(tuple(t.shape), "float32") for t in inputs] for inputs, _ in sets]

    def write_meta(p):
        with open(p, "w") as f:
            json.dump(meta, f, indent=1)
            f.write("\n")
    gen_models.atomic_write(base + ".json", write_meta)
    return len(sets), max_abs


def kind_of(name):
    """torchvision and bn models also get --fuse / --quant-prep tests (they have BatchNorm)."""
    return ("torchvision" if name in ("sc_resnet18", "sc_mobilenet_v2")
            else "bn" if name == "sc_mixed_trace" else "small")


def main(specs=None, unsupported=None, kinds=kind_of, doc=__doc__, files=()):
    """The command line of this generator and of those reusing it (scripts/gen_builtin_models.py):
    `--list` prints "name kind [op]" per line for the cmake files."""
    SPECS = specs if specs is not None else globals()["SPECS"]
    UNSUPPORTED = unsupported if unsupported is not None else globals()["UNSUPPORTED"]
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--out", help="output directory (created if missing)")
    ap.add_argument("--only", help="comma-separated model names")
    ap.add_argument("--list", action="store_true", help="print the model names and exit")
    ap.add_argument("--force", action="store_true", help="regenerate even when current")
    args = ap.parse_args()
    if args.list:  # "name kind [op]" per line, for tests/control_flow.cmake
        for name, spec in SPECS.items():
            print(name, kinds(name))
        for name, (_, op) in UNSUPPORTED.items():
            print(name, "unsupported", op)
        return 0
    if not args.out:
        ap.error("--out DIR is required")
    names = [n.strip() for n in args.only.split(",")] if args.only else list(SPECS) + list(UNSUPPORTED)
    for n in names:
        if n not in SPECS and n not in UNSUPPORTED:
            ap.error(f"unknown model '{n}' (see --list)")
    os.makedirs(args.out, exist_ok=True)
    st = stamp(*files)
    failed = []
    for name in names:
        if name in UNSUPPORTED:
            gen_models.atomic_write(os.path.join(args.out, name + ".pt"),
                                    lambda p: torch.jit.script(UNSUPPORTED[name][0]().eval()).save(p))
            print(f"{name}: written (expected to be rejected)")
            continue
        meta = os.path.join(args.out, name + ".json")
        if not args.force and os.path.exists(meta):
            with open(meta) as f:
                if json.load(f).get("generator") == st:
                    print(f"{name}: cached")
                    continue
        try:
            n_sets, max_abs = generate(name, SPECS[name], args.out, st)
            print(f"{name}: {n_sets} input set(s), max|output| = {max_abs:.4g}")
        except Exception as e:  # report every model, then fail
            print(f"error: {name}: {type(e).__name__}: {e}", file=sys.stderr)
            failed.append(name)
    if failed:
        print(f"error: generation failed for: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
