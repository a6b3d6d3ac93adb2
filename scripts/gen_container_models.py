#!/usr/bin/python3
"""Generates the torch.jit.script'ed models of the container-mutation tests (issue 15, item 1).

Scripted models that change lists and dicts in place while other names see them: a list stored
in a tuple, a dict or another list and then appended to, a list passed to a helper method that
appends, a list returned after the change, mutation inside loops and data-dependent branches,
and every list/dict method TorchScript has (append, insert, pop, extend, +=, *=, remove, clear,
reverse, sort, l[i] = v, del l[i], d[k] = v, d.pop, d.setdefault, d.update, del d[k]) and every
dict reader (items, keys, values, get, copy, len, `k in d`); d.popitem() is refused:
TorchScript's removes the first item, Python's the last. Also a real model built on them:
torchaudio's Emformer RNN-T (tiny dims), its predictor state lists fed back into a second call.
Reads before and after a write (len(l) then l.append(x)) check that nothing is reordered. Also
range loops with computed bounds and negative steps (aten::__range_length, __derive_index) and a
0-dim tensor where an int is expected (aten::IntImplicit), written without torch.ops, and
x.to(device[, dtype]) with a run-time device (aten::to.prim_Device, to.device) and torch.unique
(aten::_unique2), and NamedTuples of user code built, passed on, read by field name and returned
(also nested). The
files, input sets and branch coverage are those of scripts/gen_scripted_models.py, whose
generate() this reuses (`--list`, `--out`, `--only`, `--force` alike); tests/containers.cmake
registers one test per model (plain and --fuse, --verify --verify-inputs and the generated
Python).
"""
import os
import sys

from typing import Dict, List, NamedTuple, Optional

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_scripted_models as gsm  # noqa: E402  (register-like SPECS, main)


class TupleThenAppend(nn.Module):
    """A list stored in a tuple and in another list, then appended to: both holders see it."""

    def forward(self, x):
        a: List[torch.Tensor] = [x]
        t = (a, 3)
        outer = [a]
        a.append(x * 2.0)
        t[0].append(x + 1.0)
        n = len(outer[0])
        return torch.cat(outer[0], 0) * float(n), torch.stack(t[0], 0).sum(0)


class Helper(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)

    def forward(self, acc: List[torch.Tensor], x: torch.Tensor) -> torch.Tensor:
        y = self.fc(x)
        acc.append(torch.relu(y))
        return y


class HelperAppends(nn.Module):
    """A list passed to a submodule (inlined) and to a method of the model that append to it in a
    loop; the list is read after every call and returned."""

    def __init__(self):
        super().__init__()
        self.helper = Helper()

    def push(self, acc: List[torch.Tensor], x: torch.Tensor):
        acc.append(x.sum(0, keepdim=True))

    def forward(self, x):
        acc: List[torch.Tensor] = []
        h = x
        for i in range(x.size(0)):
            h = self.helper(acc, h)
            self.push(acc, h)
        return acc, torch.cat(acc, 0).mean(0)


class DictOfLists(nn.Module):
    """A dict of lists: items appended through d[k], d[k] = v replacing a list, the old list kept
    by another name and still changed."""

    def forward(self, x):
        d: Dict[str, List[torch.Tensor]] = {"pos": [], "neg": []}
        for i in range(x.size(0)):
            row = x[i]
            if bool(row.sum() > 0):
                d["pos"].append(row)
            else:
                d["neg"].append(-row)
        old = d["neg"]
        d["neg"] = [x[0] * 0.0]
        old.append(x[-1])
        d["all"] = old + d["pos"]
        return torch.stack(d["all"], 0) * float(len(old)), torch.stack(d["neg"], 0)


class OptionalIsinstance(nn.Module):
    """isinstance(v, T) of an Optional[T] that TorchScript leaves for run time (prim::isinstance):
    `v is not None`, and the value refined to T inside the branch. A tensor, an int and a list."""

    def forward(self, x):
        t: Optional[torch.Tensor] = None
        n: Optional[int] = None
        l: Optional[List[int]] = None
        if bool(x.sum() > 0):
            t = x * 2
            n = x.size(1)
        else:
            l = [1, x.size(0)]
        out = x
        if isinstance(t, torch.Tensor):
            out = out + t
        if isinstance(n, int):
            out = out * n
        if isinstance(l, list):
            out = out - l[1]
        return out, isinstance(t, torch.Tensor), isinstance(l, list)


def optional_branches(m, x):
    return {"sign": {"pos" if float(x.sum()) > 0 else "neg"}}


def dict_of_lists_branches(m, x):
    return {"sign": {"pos" if float(x[i].sum()) > 0 else "neg" for i in range(x.size(0))}}


class ListMethods(nn.Module):
    """Every list method: insert, pop (end and index), extend, +=, remove, clear, reverse,
    l[i] = v, del l[i]; len read before and after the writes."""

    def forward(self, x):
        ts: List[torch.Tensor] = [x, x * 2.0]
        n0 = len(ts)
        ts.insert(1, x + 1.0)
        last = ts.pop()
        ts.extend([last * 3.0, x - 1.0])
        more = [x * 0.5]
        ts += more
        first = ts.pop(0)
        ts[1] = first * 4.0
        del ts[0]
        ts.reverse()
        sizes: List[int] = [3, 1, 2, 1]
        sizes.remove(1)
        sizes[0] = sizes[0] + len(ts)
        cleared = [x]
        cleared.clear()
        n1 = len(ts)
        scale = float(n0 * 10 + n1 + sum(sizes) + len(cleared))
        return torch.stack(ts, 0) * scale, more[0]


class DictMethods(nn.Module):
    """d[k] = v, d.pop(k), d.pop(k, default), d.setdefault, d.update, del d[k], and a dict
    passed to a helper that writes into it."""

    def fill(self, d: Dict[str, torch.Tensor], x: torch.Tensor):
        d["helper"] = x.exp()

    def forward(self, x):
        d: Dict[str, torch.Tensor] = {"a": x}
        d["b"] = x * 2.0
        self.fill(d, x)
        e: Dict[str, torch.Tensor] = {"c": x + 1.0, "a": x - 1.0}
        d.update(e)
        got = d.setdefault("z", x * 3.0)
        same = d.setdefault("a", x)
        b = d.pop("b")
        missing = d.pop("nothing", x * 0.0)
        del d["c"]
        return d["a"], d["helper"], d["z"], b + missing + got + same


class DictBuiltins(nn.Module):
    """Reading dicts: for k, v in d.items(), d.keys(), d.values(), d.get(k[, default]), len(d),
    `k in d`, d.copy() (a new dict holding the same objects) and d.clear(). keys/values/items are
    lists in TorchScript: taken before a write, they do not see it; a value list reached through
    d.values() or d.get() is the dict's own and sees an append."""

    def forward(self, x):
        d: Dict[str, torch.Tensor] = {"a": x, "b": x * 2.0}
        d["c"] = x + 1.0
        ks = list(d.keys())
        acc = torch.zeros_like(x)
        for k, v in d.items():
            if k != "b":
                acc = acc + v
        names: List[str] = []
        for k in d.keys():
            names.append(k)
        total = torch.stack(list(d.values()), 0).sum(0)
        g = d.get("a")
        if g is not None:
            acc = acc + g
        miss = d.get("zz", x * 0.5)
        e = d.copy()
        e["d"] = x * 4.0
        d["late"] = x - 3.0
        n = len(d) * 100 + len(e) * 10 + len(ks)
        has = "c" in d
        hasnot = "d" in d
        ids: Dict[int, List[torch.Tensor]] = {3: [x], 1: []}
        ids[1].append(x * 5.0)
        lists = list(ids.values())
        lists[0].append(x * 7.0)
        got = ids.get(3)
        k3 = 0
        if got is not None:
            k3 = len(got)
        key_sum = 0
        for k, v in ids.items():
            key_sum = key_sum + k * len(v)
        d.clear()
        score = float(n + int(has) * 1000 + int(hasnot) * 2000 + len(names) * 10000 + len(d)
                      + k3 * 100000 + key_sum * 1000000)
        return acc * score, total + miss, e["d"] + e["a"], torch.cat(ids[3], 0)


class BranchAndLoopWrites(nn.Module):
    """Writes inside data-dependent branches and a while loop into a list made outside them, and a
    list returned from a branch that is changed afterwards."""

    def forward(self, x):
        out: List[torch.Tensor] = []
        if bool(x.sum() > 0):
            chosen = out
            out.append(x)
        else:
            chosen = [x * -1.0]
            out.insert(0, x * 2.0)
        chosen.append(x + 5.0)
        i = 0
        while len(out) < 4:
            out.append(out[-1] * 0.5 + float(i))
            i += 1
        return torch.stack(out, 0), torch.stack(chosen, 0)


def branch_branches(m, x):
    return {"sign": {"pos" if float(x.sum()) > 0 else "neg"}}


class ListOfLists(nn.Module):
    """Lists of lists: an inner list reached by index and by its own name, appended to through
    both; the outer list grows in a loop and is returned."""

    def forward(self, x):
        inner: List[torch.Tensor] = []
        outer: List[List[torch.Tensor]] = [inner]
        for i in range(3):
            outer[0].append(x * float(i))
            if i == 1:
                outer.append([x])
        inner.append(x.flip(0))
        outer[-1].append(inner[0] + 1.0)
        return outer


class StoredThenAppended(nn.Module):
    """The model that used to be refused: a list stored in another list, then appended to."""

    def forward(self, x):
        a: List[torch.Tensor] = [x]
        outer = [a]
        a.append(x * 2.0)
        return torch.cat(outer[0], 0)


class SortAndRepeat(nn.Module):
    """l.sort() of ints (also reverse=True) and strings, and l *= n on lists that another name
    (an alias, a tuple) holds: both names see the change."""

    def forward(self, x):
        sizes: List[int] = [int(x.size(1)), 3, int(x.size(0)), 5]
        alias = sizes
        sizes.sort()
        desc = [4, 1, 3]
        desc.sort(reverse=True)
        names = ["b", "a", "c"]
        names.sort()
        ts: List[torch.Tensor] = [x, x * 2.0]
        held = (ts, 1)
        ts *= 2
        k = int(x.size(0))
        sizes *= k
        code = alias[0] * 1000 + alias[-1] * 100 + desc[0] * 10 + len(sizes) + int(names[0] == "a")
        return torch.stack(held[0], 0) * float(code), float(len(ts))


class RangeLoops(nn.Module):
    """`for i in range(lo, hi, step)` with bounds computed at run time, negative steps and an
    empty range (TorchScript's aten::__range_length and aten::__derive_index, written back as
    range loops), and a range zipped with a list (the loop counts min(len(range), len(l)): the two
    builtins are then written as len(range(...)) and lo + k * step)."""

    def forward(self, x):
        n = int(x.size(0))
        rows: List[torch.Tensor] = []
        for i in range(n - 1, -1, -1):
            rows.append(x[i] * float(i))
        for i in range(1, n * 3, 2):
            rows.append(x[i % n] + float(i))
        for i in range(n, 0, -3):
            rows.append(x[i - 1] - float(i))
        for i in range(n, n - 5):
            rows.append(x[0] * 100.0)
        for i in range(n + 2, n, 1):
            rows.append(x[0] * 200.0)
        total = 0
        for i, r in zip(range(n + 3, -n, -5), rows):
            total += i * int(r.size(0))
        return torch.stack(rows), float(total), float(len(rows))


class ImplicitInt(nn.Module):
    """A 0-dim tensor where an int is expected (TorchScript's aten::IntImplicit, written int(t))."""

    def forward(self, x):
        k = torch.argmax(x[0])
        a = max(k, 1)
        return x[:, :a], x.select(1, k) * float(min(k, 2))


class RuntimeDevice(nn.Module):
    """x.to(device[, dtype]) with a device known only at run time (aten::to.prim_Device, to.device,
    written x.to(d, dtype=torch.float64)); the result may be its input (the write through it
    shows in the input); a dtype read from a tensor (c.dtype) is written as such."""

    def forward(self, x):
        d = x.device
        a = x.clone()
        b = a.to(d)
        b.mul_(2.0)
        c = x.to(d, torch.float64) * 0.5
        e = (x * 3.0).to(d, torch.int32, copy=True)
        g = x.to(d, c.dtype, False, True)
        return a, c, e.to(x.dtype), g


class UniqueFlags(nn.Module):
    """torch.unique without dim (aten::_unique2) with its flags True, False (the empty results
    unread) and mixed, written torch.unique(...); _unique2 called directly with a False flag whose
    (empty) result the model reads keeps the ATen call. With dim (aten::unique_dim, three results
    whatever the flags) a tuple unpack of torch.unique(x, dim=0) once took the rows apart."""

    def forward(self, x):
        q = (x * 2.0).round()
        u, inv, cnt = torch.unique(q, return_inverse=True, return_counts=True)
        v = torch.unique(q, sorted=False)
        w, inv2 = torch.unique(q.flip(0), return_inverse=True)
        z = torch._unique2(q, True, False, True)
        return (u, inv.float(), cnt.float(), v.sort()[0], w, inv2.float() + 1.0, z[0],
                z[2].float(), float(z[1].numel()), torch.unique(q, dim=0),
                torch.unique(q, dim=1, return_counts=True)[1].float())


class Scores(NamedTuple):
    logits: torch.Tensor
    aux: Optional[torch.Tensor]
    count: int


class Summary(NamedTuple):
    mean: torch.Tensor
    parts: List[torch.Tensor]


class Result(NamedTuple):
    scores: Scores
    summary: Summary
    total: torch.Tensor


class NamedTuples(nn.Module):
    """NamedTuples of user code (issue 15): built (one with a None field and an int), passed to a
    method, read by field name (prim::TupleIndex), and returned nested in another NamedTuple; the
    generated code must return the same classes with the same fields, not plain tuples."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 4)

    def summarize(self, s: Scores) -> Summary:
        return Summary(s.logits.mean(0), [s.logits, s.logits * 2.0])

    def forward(self, x):
        s = Scores(self.fc(x), None, x.size(0))
        m = self.summarize(s)
        aux = x[:, :4] if s.aux is None else s.aux
        t = Scores(s.logits + m.mean, aux, s.count + 1)
        return Result(t, m, t.logits.sum() + m.parts[1].sum() * float(t.count))


class EmformerRnnt(nn.Module):
    """torchaudio's Emformer RNN-T (tiny dims, issue 15): the Emformer transcriber (`x in l`
    checks, segment loops), the LSTM predictor whose state lists are built, stored and returned,
    and the joiner. A second call continues from the first call's predictor state; the last
    sequence and target are shorter (its masks at work)."""

    def __init__(self):
        super().__init__()
        from torchaudio.models import emformer_rnnt_model
        self.rnnt = emformer_rnnt_model(
            input_dim=8, encoding_dim=16, num_symbols=10, segment_length=4, right_context_length=2,
            time_reduction_input_dim=8, time_reduction_stride=2, transformer_num_heads=2,
            transformer_ffn_dim=16, transformer_num_layers=2, transformer_dropout=0.0,
            transformer_activation="gelu", transformer_left_context_length=4,
            transformer_max_memory_size=0, transformer_weight_init_scale_strategy="depthwise",
            transformer_tanh_on_mem=True, symbol_embedding_dim=16, num_lstm_layers=2,
            lstm_layer_norm=True, lstm_layer_norm_epsilon=1e-5, lstm_dropout=0.0)

    def forward(self, x):
        b, t = x.size(0), x.size(1)
        src_len = torch.full((b,), t, dtype=torch.int32)
        src_len[-1] = t - 3
        targets = (x[:, :5, 0].abs() * 10.0).to(torch.int32) % 10
        tgt_len = torch.full((b,), 5, dtype=torch.int32)
        tgt_len[-1] = 3
        out, out_len, _, state = self.rnnt(x, src_len, targets, tgt_len)
        out2, _, _, state2 = self.rnnt(x, src_len, targets, tgt_len, state)
        return out, out_len.to(out.dtype), out2, state2


SPECS = {}


def register(name, build, shapes, branch_of=None, outcomes=None, tol=1e-4, expect_ops=()):
    SPECS[name] = dict(build=build, shapes=shapes, branch_of=branch_of, outcomes=outcomes or {},
                       tol=tol, expect_ops=list(expect_ops))


register("ct_tuple_then_append", TupleThenAppend, [(2, 6)])
register("ct_helper_appends", HelperAppends, [(3, 6)])
register("ct_dict_of_lists", DictOfLists, [(4, 6)], dict_of_lists_branches,
         {"sign": {"pos", "neg"}})
register("ct_list_methods", ListMethods, [(2, 6)])
register("ct_dict_methods", DictMethods, [(2, 6)])
register("ct_dict_builtins", DictBuiltins, [(2, 6)])
register("ct_branch_loop_writes", BranchAndLoopWrites, [(2, 6)], branch_branches,
         {"sign": {"pos", "neg"}})
register("ct_list_of_lists", ListOfLists, [(2, 6)])
register("ct_stored_then_appended", StoredThenAppended, [(2, 6)])
register("ct_sort_and_repeat", SortAndRepeat, [(2, 6)])
register("ct_range_loops", RangeLoops, [(4, 6)], expect_ops=["range.element"])
register("ct_implicit_int", ImplicitInt, [(3, 6)], expect_ops=["int"])
register("ct_runtime_device", RuntimeDevice, [(2, 6)], expect_ops=["Tensor.to_device"])
register("ct_unique_flags", UniqueFlags, [(3, 5)], expect_ops=["torch.unique.flat"])
register("ct_named_tuples", NamedTuples, [(3, 6)])
register("ct_emformer_rnnt", EmformerRnnt, [(2, 14, 8)])
register("ct_optional_isinstance", OptionalIsinstance, [(2, 6)], optional_branches,
         {"sign": {"pos", "neg"}})


if __name__ == "__main__":
    sys.exit(gsm.main(SPECS, {}, kinds=lambda name: "fuse", doc=__doc__,
                      files=(os.path.abspath(__file__),)))
