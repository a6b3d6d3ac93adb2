#!/usr/bin/python3
"""Exports the ONNX models the ONNX end-to-end tests convert (issue 7).

Run with Debian's /usr/bin/python3. The models are built and randomised exactly as
scripts/gen_models.py does (its registry and randomize_ are imported, not copied), then exported
with torch.onnx.export. For each NAME it writes, in --out:

  NAME.onnx         the exported model
  NAME.inputs.pt    torch.save of the example input tuple
  NAME.expected.pt  torch.save of the eager model's outputs on those inputs
  NAME.json         the same sidecar gen_models.py writes, plus "skip_state_dict": the converted
                    model's state_dict keys are the ONNX initializer names, so the check that the
                    original state_dict loads strictly does not apply

and into --out/badinput/ the malformed ONNX files (text, truncated, wrong protobuf message).
--list prints "name kind" per case: kind "e2e" (convert + check), "dynamic" (exported with a
dynamic batch: also NAME.inputs_b.pt/NAME.expected_b.pt at another batch size), "unsupported" (must
exit 4 naming the op; the line goes on with the op type and the node name), "badinput", or "parity" (an e2e case that also has NAME.ts.pt, the
TorchScript trace of the same model, for the --fuse structure comparison). external_data_op13
keeps its weights in external_data_op13.data (written by move_to_external_data).
"""
import argparse
import hashlib
import json
import os
import sys
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_models as gm  # noqa: E402

EVAL = torch.onnx.TrainingMode.EVAL
# PRESERVE on an eval() model keeps BatchNormalization nodes (EVAL folds them into the convs), so
# both forms are covered.
PRESERVE = torch.onnx.TrainingMode.PRESERVE

# name -> (gen_models spec, opset, training mode, kind)
CASES = {
    "resnet18_op13": ("resnet18", 13, PRESERVE, "e2e"),
    "resnet18_op11": ("resnet18", 11, EVAL, "e2e"),
    "mobilenet_v2_op13": ("mobilenet_v2", 13, EVAL, "e2e"),
    "mobilenet_v3_large_op13": ("mobilenet_v3_large", 13, PRESERVE, "e2e"),
    "mobilenet_v3_large_op17": ("mobilenet_v3_large", 17, EVAL, "e2e"),
    "efficientnet_b0_op13": ("efficientnet_b0", 13, EVAL, "e2e"),
    "squeezenet1_1_op13": ("squeezenet1_1", 13, EVAL, "e2e"),
    "shufflenet_v2_x1_0_op13": ("shufflenet_v2_x1_0", 13, PRESERVE, "e2e"),
    "functional_acts_op13": ("functional_acts", 13, EVAL, "e2e"),
    "functional_acts_op17": ("functional_acts", 17, EVAL, "e2e"),
    "two_inputs_add_op13": ("two_inputs_add", 13, EVAL, "e2e"),
    "nested_seq_bn_op13": ("nested_seq_bn", 13, PRESERVE, "e2e"),
    "tuple_out_op13": ("tuple_out", 13, EVAL, "e2e"),
    "upsample_shuffle_pad_op11": ("upsample_shuffle_pad", 11, EVAL, "e2e"),
    "conv_groups_op9": ("conv_groups", 9, EVAL, "e2e"),
    "leaf_modules_op13": ("leaf_modules", 13, PRESERVE, "e2e"),
    "norms_op17": ("norms", 17, EVAL, "e2e"),
    # nn.LSTM / nn.GRU: one ONNX node per layer and direction, wrapped in Transpose/Squeeze/Reshape.
    "lstm_op11": ("lstm", 11, EVAL, "e2e"),
    "lstm_op13": ("lstm", 13, EVAL, "e2e"),
    "lstm_op17": ("lstm", 17, EVAL, "e2e"),
    "gru_op11": ("gru", 11, EVAL, "e2e"),
    "gru_op13": ("gru", 13, EVAL, "e2e"),
    "gru_op17": ("gru", 17, EVAL, "e2e"),
    "lstm_state_op13": ("onnx_lstm_state", 13, EVAL, "e2e"),
    "gru_state_op13": ("onnx_gru_state", 13, EVAL, "e2e"),
    "rnn_op13": ("onnx_rnn", 13, EVAL, "e2e"),
    # Dynamic batch (dynamic_axes): checked at the export's batch size and at another one.
    "dyn_view_op13": ("onnx_dyn_view", 13, EVAL, "dynamic"),
    "dyn_view_op11": ("onnx_dyn_view", 11, EVAL, "dynamic"),
    # nn.LSTM with a dynamic batch: the exporter's zero initial state is built from the run-time
    # batch size (ConstantOfShape) and must come back as "no state given".
    "lstm_dyn_op13": ("lstm", 13, EVAL, "dynamic"),
    # Weights in an external data file next to the model (what onnx.save_model(...,
    # save_as_external_data=True, all_tensors_to_one_file=True, size_threshold=0) writes).
    "external_data_op13": ("nested_seq_bn", 13, PRESERVE, "e2e"),
    # Ops torch.onnx.export writes for elementwise/comparison and indexing/reduction code.
    "ops_math_op11": ("onnx_ops_math", 11, EVAL, "e2e"),
    "ops_math_op13": ("onnx_ops_math", 13, EVAL, "e2e"),
    "ops_math_op17": ("onnx_ops_math", 17, EVAL, "e2e"),
    "ops_index_op13": ("onnx_ops_index", 13, EVAL, "e2e"),
    "ops_index_op17": ("onnx_ops_index", 17, EVAL, "e2e"),
    # nn.Embedding: Gather(weight initializer, run-time ids) -> nn.Embedding.
    "embedding_op11": ("embedding", 11, EVAL, "e2e"),
    "embedding_op13": ("embedding", 13, EVAL, "e2e"),
    # nn.Linear on a 3-d input: MatMul + Add -> nn.Linear.
    "linear3d_op13": ("onnx_linear3d", 13, EVAL, "e2e"),
    # Initializers also listed as graph inputs (keep_initializers_as_inputs=True).
    "tiny_cnn_init_inputs_op11": ("tiny_cnn", 11, PRESERVE, "e2e"),
    "tiny_cnn_init_inputs_op13": ("tiny_cnn", 13, EVAL, "e2e"),
    # Conv/pool with auto_pad SAME_UPPER/SAME_LOWER and explicit asymmetric pads (what other
    # converters write): the exported F.pad nodes are folded into the next op's attributes.
    "pads_op13": ("onnx_pads", 13, EVAL, "e2e"),
    # Shapes ONNX shape inference leaves open (the Reshape back to Shape(x) after GroupNorm's
    # InstanceNormalization, a Resize to computed sizes) read by later Shape nodes: static inputs
    # fold them, a dynamic batch keeps them as x.size(k).
    "norm_flatten_op13": ("onnx_norm_flatten", 13, EVAL, "e2e"),
    "norm_flatten_dyn_op13": ("onnx_norm_flatten", 13, EVAL, "dynamic"),
    "seg_head_op13": ("onnx_seg_head", 13, EVAL, "e2e"),
    "seg_head_dyn_op13": ("onnx_seg_head", 13, EVAL, "dynamic"),
    "lraspp_mobilenet_v3_large_op13": ("onnx_lraspp_mobilenet_v3_large", 13, EVAL, "e2e"),
    # torch.arange(x.size(0)) with a dynamic batch: Range with a run-time bound.
    "dyn_range_op13": ("onnx_dyn_range", 13, EVAL, "dynamic"),
}
# Cases exported with a dynamic batch dimension (dim 0 of every input), and the second batch size
# their generated code is checked at (NAME.inputs_b.pt / NAME.expected_b.pt).
DYNAMIC_BATCH_B = 3
EXTERNAL = {"external_data_op13"}
KEEP_INITIALIZERS_AS_INPUTS = {"tiny_cnn_init_inputs_op11", "tiny_cnn_init_inputs_op13"}
# Per case, the attributes given, in order, to the op after each exported Pad node when the Pad
# is folded into it (fold_pads).
FOLD_PADS = {"pads_op13": [{"auto_pad": "SAME_UPPER"},
                           {"pads": [0, 1, 1, 2]},
                           {"auto_pad": "SAME_LOWER"},
                           {"pads": [1, 0, 0, 2], "count_include_pad": 1}]}
# "unsupported" cases: the op type and node the one-line error must name (listed by --list).
UNSUPPORTED = {}
BAD_MISSING_EXTERNAL = "missing_external_data"


# Models only the ONNX tests use, registered in gen_models' registry so that export() builds and
# randomises them the same way.
@gm.register("onnx_lstm_state", "small", [gm.f32(2, 5, 8), gm.f32(4, 2, 16), gm.f32(4, 2, 16)])
class LstmState(torch.nn.Module):
    """Two-layer bidirectional batch_first LSTM with the initial state passed in."""

    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(8, 16, num_layers=2, batch_first=True, bidirectional=True)

    def forward(self, x, h0, c0):
        out, (h, c) = self.lstm(x, (h0, c0))
        return out, h, c


@gm.register("onnx_gru_state", "small", [gm.f32(6, 3, 8), gm.f32(3, 3, 10)])
class GruState(torch.nn.Module):
    """Three-layer GRU with the initial state passed in and a head on the last step."""

    def __init__(self):
        super().__init__()
        self.gru = torch.nn.GRU(8, 10, num_layers=3)
        self.fc = torch.nn.Linear(10, 4)

    def forward(self, x, h0):
        out, h = self.gru(x, h0)
        return self.fc(out[-1]), h


@gm.register("onnx_rnn", "small", [gm.f32(5, 2, 8)])
class PlainRnn(torch.nn.Module):
    """nn.RNN exports as the ONNX RNN op (one per layer), lifted as nn.RNN."""

    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.RNN(8, 16)

    def forward(self, x):
        return self.rnn(x)[0]


@gm.register("onnx_dyn_view", "small", [gm.f32(2, 3, 6, 6)])
class DynView(torch.nn.Module):
    """Batch-size-dependent shape code: view(x.size(0), -1), flatten, expand, reshape(x.shape[0], -1)."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.fc = torch.nn.Linear(4 * 3 * 3, 5)
        self.fc2 = torch.nn.Linear(5 * 4, 3)

    def forward(self, x):
        y = torch.nn.functional.max_pool2d(torch.relu(self.conv(x)), 2)
        z = self.fc(y.view(y.size(0), -1))
        w = torch.flatten(y, 1).sum(1)
        z2 = z.unsqueeze(1).expand(-1, 4, -1).reshape(x.shape[0], -1)
        return z, w, self.fc2(z2)
@gm.register("onnx_ops_math", "small", [gm.f32(2, 6, 8), gm.f32(2, 6, 8)])
class OpsMath(nn.Module):
    """Max/Min, Softplus, Selu, Sign, Round, Mod, comparisons with Where/Not, masked_fill, CumSum."""

    def forward(self, x, y):
        a = torch.maximum(x, y) - torch.minimum(x, 0.5 * y)
        b = F.softplus(x) + F.selu(y) + torch.sign(x) * torch.round(y * 3)
        c = torch.fmod(x, 0.7) + torch.remainder(y, 0.6)
        m = x > 0.5
        d = x.masked_fill(m, -1.0) + torch.where(x < y, x, y) + (x == y.round()).float() + (~m).float()
        e = torch.where(0.25 <= y, torch.cumsum(x, dim=1), y) + (x <= y).float()
        return a, b, c, d, e


@gm.register("onnx_ops_index", "small", [gm.f32(2, 6, 8), gm.f32(2, 6, 8)])
class OpsIndex(nn.Module):
    """ArgMax, GatherElements, TopK, ReduceMin/Max/Sum/L2, Tile, Einsum, Expand and Gather on
    run-time values."""

    def forward(self, x, y):
        i = torch.argmax(x, dim=-1, keepdim=True)
        g = torch.gather(y, 2, i) + torch.argmin(y, dim=1, keepdim=True).float()
        v, idx = torch.topk(x, 3, dim=-1)
        r = x.amin(dim=2) + x.amax(dim=(1, 2)).reshape(2, 1) + y.sum(dim=2) + torch.norm(x, p=2, dim=2)
        t = x.repeat(1, 2, 1)
        es = torch.einsum("bij,bkj->bik", x, y)
        ex = i.expand(-1, -1, 5).float() * y[:, :, :5]
        sel = torch.index_select(y, 1, torch.argmax(x[0, :, 0]).reshape(1))
        rows = x.flatten(0, 1)[torch.argmax(y, dim=-1)]
        return g, v, idx, r, t, es, ex, sel, rows


@gm.register("onnx_linear3d", "small", [gm.f32(2, 5, 8)])
class Linear3d(nn.Module):
    """nn.Linear on a 3-d input (MatMul + Add), with and without bias."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 6)
        self.fc2 = nn.Linear(6, 4, bias=False)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


@gm.register("onnx_pads", "small", [gm.f32(1, 3, 8, 8)])
class Pads(nn.Module):
    """Explicit F.pad before conv/pool; FOLD_PADS turns each into the op's auto_pad/pads."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 3, stride=2)
        self.conv2 = nn.Conv2d(4, 4, 3)

    def forward(self, x):
        y = self.conv1(F.pad(x, (0, 1, 0, 1)))                    # SAME_UPPER, 8 -> 4
        y = self.conv2(F.pad(y, (1, 2, 0, 1)))                    # pads [0, 1, 1, 2]
        z = F.max_pool2d(F.pad(y, (1, 0, 1, 0), value=float("-inf")), 2, 1)  # SAME_LOWER
        return F.avg_pool2d(F.pad(z, (0, 2, 1, 0)), 3, 1)          # pads [1, 0, 0, 2]


@gm.register("onnx_norm_flatten", "small", [gm.f32(2, 3, 8, 8)])
class NormFlatten(nn.Module):
    """GroupNorm, PReLU, ConvTranspose2d, InstanceNorm2d and nearest upsampling, each read by a
    torch.flatten(x, 2) (Shape/Slice/Concat/Reshape in the export) of a value whose shape ONNX
    shape inference does not know."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, padding=1, bias=False)
        self.gn = nn.GroupNorm(4, 16)
        self.prelu = nn.PReLU(16)
        self.up = nn.ConvTranspose2d(16, 8, 2, stride=2)
        self.inorm = nn.InstanceNorm2d(8, affine=True)
        with torch.no_grad():  # not the identity affine of a fresh norm layer
            for m in (self.gn, self.inorm):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)
            self.prelu.weight.uniform_(0.05, 0.5)

    def forward(self, x):
        y = self.prelu(self.gn(self.conv(x)))
        a = y.flatten(2).mean(-1)
        z = self.inorm(self.up(y))
        b = z.flatten(2).amax(-1)
        c = F.interpolate(z, scale_factor=2, mode="nearest").flatten(2).sum(-1)
        return a, b, c


@gm.register("onnx_seg_head", "small", [gm.f32(2, 3, 16, 16)])
class SegHead(nn.Module):
    """A segmentation head like torchvision's LRASPP: GroupNorm features at 1/2 and 1/4, a
    classifier upsampled to the 1/2 features' size and added to theirs, then
    F.interpolate(size=x.shape[-2:], mode="bilinear") back to the input's size (Resize whose
    sizes are Shape/Slice/Concat of a value ONNX has no shape for)."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.gn = nn.GroupNorm(4, 16)
        self.conv2 = nn.Conv2d(16, 16, 3, stride=2, padding=1)
        self.high = nn.Conv2d(16, 5, 1)
        self.low = nn.Conv2d(16, 5, 1)
        with torch.no_grad():
            self.gn.weight.uniform_(0.5, 1.5)
            self.gn.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        f1 = torch.relu(self.gn(self.conv1(x)))
        f2 = torch.relu(self.conv2(f1))
        out = F.interpolate(self.high(f2), size=f1.shape[-2:], mode="bilinear", align_corners=False)
        out = out + self.low(f1)
        return F.interpolate(out, size=x.shape[-2:], mode="bilinear", align_corners=False)


@gm.register("onnx_lraspp_mobilenet_v3_large", "torchvision", [gm.f32(1, 3, 64, 64)])
class Lraspp(nn.Module):
    """torchvision's lraspp_mobilenet_v3_large, returning out["out"] (its two Resize nodes take
    sizes computed from Shape nodes)."""

    def __init__(self):
        super().__init__()
        import torchvision
        self.m = torchvision.models.segmentation.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None)

    def forward(self, x):
        return self.m(x)["out"]


@gm.register("onnx_dyn_range", "small", [gm.f32(2, 5)])
class DynRange(nn.Module):
    """torch.arange over a dynamic size (Range with a run-time bound) and over a static one."""

    def forward(self, x):
        return x * torch.arange(x.size(0)).view(-1, 1).float() + torch.arange(1, x.size(1) * 2, 2)


BAD = ["text", "truncated", "wrong_message", "missing_external_data"]
# Cases whose `--fuse` and `--quant-prep` structures are compared with the TorchScript trace of
# the same model (tests/e2e/onnx_fuse_parity.py): they also get NAME.ts.pt.
PARITY = ["resnet18_op13", "mobilenet_v2_op13", "mobilenet_v3_large_op13", "nested_seq_bn_op13",
          "lstm_op13", "gru_op13", "efficientnet_b0_op13", "squeezenet1_1_op13"]
# Not shufflenet_v2_x1_0: its traced channel shuffle keeps x.size()//g, view, transpose and chunk,
# which the ONNX export folds into static reshape/permute/slice, so the histograms differ in shape
# ops only.


def stamp():
    h = hashlib.sha256()
    for f in (__file__, gm.__file__):
        with open(os.path.abspath(f), "rb") as fh:
            h.update(fh.read())
    return f"{h.hexdigest()[:16]}-torch{torch.__version__}"


def is_current(out_dir, name, st):
    exts = [".onnx", ".inputs.pt", ".expected.pt"] + ([".ts.pt"] if name in PARITY else [])
    exts += [".inputs_b.pt", ".expected_b.pt"] if CASES[name][3] == "dynamic" else []
    exts += [".data"] if name in EXTERNAL else []
    return gm.is_current(out_dir, name, st, exts)


def export(name, out_dir, st):
    spec_name, opset, training, kind = CASES[name]
    spec = gm.SPECS[spec_name]
    torch.manual_seed(gm.SEED)
    gen = torch.Generator().manual_seed(gm.SEED + 1)
    model = spec.build()
    model.eval()
    gm.randomize_(model, spec, gen)
    model.eval()
    inputs = gm.make_inputs(spec, gen)
    base = os.path.join(out_dir, name)
    input_names = [f"x{i}" if len(inputs) > 1 else "x" for i in range(len(inputs))]
    dynamic = kind == "dynamic"
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = model(*inputs)
        gm.atomic_write(base + ".onnx", lambda p: torch.onnx.export(
            model, inputs, p, opset_version=opset, training=training, input_names=input_names,
            dynamic_axes={n: {0: "batch"} for n in input_names} if dynamic else None,
            keep_initializers_as_inputs=name in KEEP_INITIALIZERS_AS_INPUTS))
        if dynamic:
            inputs_b = gm.make_inputs(spec, gen, batch=DYNAMIC_BATCH_B)
            expected_b = model(*inputs_b)
            gm.atomic_write(base + ".inputs_b.pt", lambda p: torch.save(inputs_b, p))
            gm.atomic_write(base + ".expected_b.pt", lambda p: torch.save(expected_b, p))
        if name in FOLD_PADS:
            fold_pads(base + ".onnx", FOLD_PADS[name])
        if name in EXTERNAL:
            move_to_external_data(base + ".onnx", name + ".data")
        if name in PARITY:
            traced = torch.jit.trace(model, inputs, check_trace=False)
            gm.atomic_write(base + ".ts.pt", lambda p: traced.save(p))
    exp_flat = gm.flatten(expected)
    gm.atomic_write(base + ".inputs.pt", lambda p: torch.save(inputs, p))
    gm.atomic_write(base + ".expected.pt", lambda p: torch.save(expected, p))
    meta = {
        "name": name,
        "group": "onnx",
        "kind": kind,
        "source_model": spec_name,
        "opset": opset,
        "generator": st,
        "inputs": [{"shape": list(s), "dtype": d} for s, d, _ in spec.inputs],
        "input_shape_args": [gm.shape_arg(s, d) for s, d, _ in spec.inputs],
        "outputs": [{"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", "")}
                    for t in exp_flat],
        "tolerance": spec.tol,
        "expect_warnings": [],
        "skip_state_dict": True,
    }

    def write_meta(p):
        with open(p, "w") as f:
            json.dump(meta, f, indent=1)
            f.write("\n")
    gm.atomic_write(base + ".json", write_meta)


# ---- external data ----
# /usr/bin/python3 has neither the onnx nor the protobuf Python package, and torch.onnx.export only
# writes external data for models over 2 GB, so the few protobuf fields involved are rewritten by
# hand (wire format): ModelProto.graph = 7, GraphProto.initializer = 5, TensorProto.raw_data = 9,
# .external_data = 13 (StringStringEntryProto key = 1, value = 2), .data_location = 14 (1 =
# EXTERNAL).


def _varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _read_varint(b, i):
    n = shift = 0
    while True:
        c = b[i]
        i += 1
        n |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return n, i


def _fields(b):
    """[(field number, wire type, payload, whole field bytes)] of one message."""
    i, out = 0, []
    while i < len(b):
        start = i
        key, i = _read_varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            _, i = _read_varint(b, i)
            payload = None
        elif wt == 1:
            i += 8
            payload = None
        elif wt == 5:
            i += 4
            payload = None
        elif wt == 2:
            n, i = _read_varint(b, i)
            payload = b[i:i + n]
            i += n
        else:
            raise ValueError(f"unexpected protobuf wire type {wt}")
        out.append((num, wt, payload, b[start:i]))
    return out


def _len_field(num, payload):
    return _varint(num << 3 | 2) + _varint(len(payload)) + payload


def move_to_external_data(onnx_path, location):
    """Moves every initializer's raw_data into one file `location` beside onnx_path."""
    data_path = os.path.join(os.path.dirname(onnx_path), location)
    blob = bytearray()

    def tensor(t):
        out, raw = bytearray(), None
        for num, _, payload, whole in _fields(t):
            if num == 9:
                raw = payload
            else:
                out += whole
        if raw is None:
            return bytes(t)
        offset = len(blob)
        blob.extend(raw)
        for k, v in (("location", location), ("offset", str(offset)), ("length", str(len(raw)))):
            out += _len_field(13, _len_field(1, k.encode()) + _len_field(2, v.encode()))
        out += _varint(14 << 3 | 0) + _varint(1)
        return bytes(out)

    def graph(g):
        return b"".join(_len_field(5, tensor(p)) if num == 5 else whole
                        for num, _, p, whole in _fields(g))

    with open(onnx_path, "rb") as f:
        model = f.read()
    new = b"".join(_len_field(7, graph(p)) if num == 7 else whole for num, _, p, whole in _fields(model))
    if not blob:
        raise RuntimeError(f"{onnx_path}: no initializer with raw_data to move")
    gm.atomic_write(data_path, lambda p: open(p, "wb").write(bytes(blob)))
    gm.atomic_write(onnx_path, lambda p: open(p, "wb").write(new))


def _attr(name, value):
    """AttributeProto (name = 1, i = 3, s = 4, ints = 8, type = 20: INT 2, STRING 3, INTS 7)."""
    out = _len_field(1, name.encode())
    if isinstance(value, str):
        return out + _len_field(4, value.encode()) + _varint(20 << 3) + _varint(3)
    if isinstance(value, int):
        return out + _varint(3 << 3) + _varint(value) + _varint(20 << 3) + _varint(2)
    return out + b"".join(_varint(8 << 3) + _varint(v) for v in value) + _varint(20 << 3) + _varint(7)


def fold_pads(onnx_path, attrs):
    """Removes each Pad node and gives its consumer (conv/pool, whose input 0 it is) the input
    of the Pad and the attributes attrs[k] in place of its pads/auto_pad/count_include_pad
    (NodeProto: input = 1, op_type = 4, attribute = 5; GraphProto.node = 1)."""
    replaced = {"pads", "auto_pad"} | {k for a in attrs for k in a}

    def graph(g):
        nodes = [(num, whole, payload) for num, _, payload, whole in _fields(g)]
        pads = {}  # Pad output -> Pad input
        for num, _, p in nodes:
            if num == 1:
                f = _fields(p)
                if any(n == 4 and q == b"Pad" for n, _, q, _ in f):
                    ins = [q for n, _, q, _ in f if n == 1]
                    outs = [q for n, _, q, _ in f if n == 2]
                    pads[outs[0]] = ins[0]

        def source(v):  # through chains of Pads (avg_pool2d exports one of its own)
            while v in pads:
                v = pads[v]
            return v
        out, k = bytearray(), 0
        for num, whole, p in nodes:
            if num != 1:
                out += whole
                continue
            f = _fields(p)
            if any(n == 4 and q == b"Pad" for n, _, q, _ in f):
                continue
            ins = [q for n, _, q, _ in f if n == 1]
            if not ins or ins[0] not in pads:
                out += whole
                continue
            if k == len(attrs):
                raise RuntimeError(f"{onnx_path}: more ops after a Pad than the {len(attrs)} expected")
            node, first = bytearray(), True
            for n, _, q, w in f:
                if n == 1 and first:
                    node += _len_field(1, source(q))
                    first = False
                elif n == 5 and _fields(q)[0][2].decode() in replaced:
                    continue
                else:
                    node += w
            for key, value in attrs[k].items():
                node += _len_field(5, _attr(key, value))
            k += 1
            out += _len_field(1, bytes(node))
        if k != len(attrs):
            raise RuntimeError(f"{onnx_path}: {k} ops after a Pad, expected {len(attrs)}")
        return bytes(out)

    with open(onnx_path, "rb") as f:
        model = f.read()
    new = b"".join(_len_field(7, graph(p)) if num == 7 else whole for num, _, p, whole in _fields(model))
    gm.atomic_write(onnx_path, lambda p: open(p, "wb").write(new))


def write_bad(out_dir, st):
    bad = os.path.join(out_dir, "badinput")
    os.makedirs(bad, exist_ok=True)
    # A valid export to cut short.
    src = os.path.join(out_dir, "two_inputs_add_op13.onnx")
    if not os.path.exists(src):
        export("two_inputs_add_op13", out_dir, st)
    data = open(src, "rb").read()

    def put(name, b):
        gm.atomic_write(os.path.join(bad, name), lambda p: open(p, "wb").write(b))
    put("text.onnx", b'ir_version: 7\nproducer_name: "pytorch"\ngraph {\n  name: "g"\n}\n')
    put("truncated.onnx", data[: len(data) * 3 // 5])
    # A serialized onnx.TensorProto (dims=[3], data_type=FLOAT, raw_data), not a ModelProto: it
    # starts with the same varint tag as a model.
    raw = torch.tensor([1.0, 2.0, 3.0]).numpy().tobytes()
    put("wrong_message.onnx", b"\x08\x03\x10\x01\x4a" + bytes([len(raw)]) + raw)
    # A model whose external data file is missing.
    ext = os.path.join(out_dir, "external_data_op13.onnx")
    if not is_current(out_dir, "external_data_op13", st):
        export("external_data_op13", out_dir, st)
    put(BAD_MISSING_EXTERNAL + ".onnx", open(ext, "rb").read())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out")
    ap.add_argument("--only", help="comma-separated case names")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--force", action="store_true")
    args = ap.parse_args()
    if args.list:
        for name, (_, _, _, kind) in CASES.items():
            print(name, kind, *UNSUPPORTED.get(name, ()))
        for name in PARITY:
            print(name, "parity")
        for name in BAD:
            print(name, "badinput")
        return 0
    if not args.out:
        ap.error("--out DIR is required")
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(max(1, int(os.environ.get("TT_GEN_THREADS", torch.get_num_threads()))))
    st = stamp()
    names = [n.strip() for n in args.only.split(",")] if args.only else list(CASES)
    failed = []
    for name in names:
        if name not in CASES:
            ap.error(f"unknown case '{name}' (see --list)")
        if not args.force and is_current(args.out, name, st):
            print(f"{name}: cached")
            continue
        try:
            export(name, args.out, st)
            print(f"{name}: exported")
        except Exception as e:
            print(f"error: {name}: {type(e).__name__}: {e}", file=sys.stderr)
            failed.append(name)
    write_bad(args.out, st)
    if failed:
        print(f"error: export failed for: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
