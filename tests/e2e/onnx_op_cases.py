"""Small ONNX models, one or more per op type, for the op-coverage test (onnx_op_coverage.py).

Each case is one node (or a few, where the op needs a context: a sequence to read, a branch, the
exporter's wrapper nodes around an RNN) built with onnx.helper, with inputs drawn from a seeded
generator. Inputs that reach an op's thresholds (0 for Relu, the clip bounds, +-lambd for Shrink,
+-3 for HardSwish, ...) are written into the first elements of the random ones (`special`), so a
mapping that treats the boundary differently fails. Expected outputs come from ONNX's own
reference implementation (onnx.reference.ReferenceEvaluator), not from PyTorch: the cases check
tinytrace against ONNX's semantics.

cases() -> {op_type: [Case, ...]}; the test builds each case's model with Case.model().
"""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

SEED = 2024_0521


class Const:
    """An input given as an initializer (a constant), not as a graph input."""

    def __init__(self, value):
        self.value = np.asarray(value)


def _np_type(a):
    return helper.np_dtype_to_tensor_dtype(a.dtype)


class Case:
    """One model: `op` applied to `ins` (arrays: graph inputs; Const: initializers; None: an
    omitted optional input) with `attrs`, at `opset`; or, with `graph`, a function returning
    (nodes, outputs) over input names "in0", "in1", ... that builds a several-node graph.
    `ref`: where onnx.reference departs from the ONNX spec (see Note [Where onnx.reference is
    wrong] below), a function of the inputs (in order) giving the expected outputs."""

    def __init__(self, op, ins, attrs=None, opset=13, outs=1, graph=None, tol=1e-4, tag="",
                 ref=None):
        self.op, self.ins, self.attrs, self.opset = op, ins, attrs or {}, opset
        self.outs, self.graph, self.tol, self.tag, self.ref = outs, graph, tol, tag, ref

    @property
    def name(self):
        return f"{self.op}{'_' + self.tag if self.tag else ''}_op{self.opset}"

    def feeds(self):
        return {f"in{i}": a for i, a in enumerate(self.ins)
                if a is not None and not isinstance(a, Const)}

    def model(self, out_types=None):
        """The ModelProto; out_types: [(elem_type, shape)] per output (None: left undefined,
        for a first run of the reference evaluator that finds them)."""
        names = ["" if a is None else f"in{i}" for i, a in enumerate(self.ins)]
        if self.graph:
            nodes, outs = self.graph(names)
        else:
            outs = [f"out{k}" for k in range(self.outs)]
            nodes = [helper.make_node(self.op, names, outs, **self.attrs)]
        inputs = [helper.make_tensor_value_info(n, _np_type(a), a.shape)
                  for n, a in zip(names, self.ins) if a is not None and not isinstance(a, Const)]
        inits = [numpy_helper.from_array(a.value, n)
                 for n, a in zip(names, self.ins) if isinstance(a, Const)]
        if out_types:
            outputs = [helper.make_tensor_value_info(o, t, s) for o, (t, s) in zip(outs, out_types)]
        else:
            outputs = [helper.make_empty_tensor_value_info(o) for o in outs]
        g = helper.make_graph(nodes, self.name, inputs, outputs, inits)
        return helper.make_model(g, opset_imports=[helper.make_opsetid("", self.opset)],
                                 ir_version=8)


# Note [Where onnx.reference is wrong]
# onnx 1.17's reference implementation departs from the spec in a few places these cases meet;
# there the expected outputs come from `ref` instead: a twin model the reference gets right
# (explicit pads for Conv's auto_pad SAME, whose reference reads the batch/channel dims; a Pad
# before MaxPool, whose reference reads 2-d pads as top, bottom, left, right; ScatterElements for
# opset 9's Scatter, Resize-11 for Resize-10, which it lacks) or a direct numpy computation
# (Softmax before opset 13, which it computes over one axis instead of the flattened trailing
# dims; MaxPool's indices with pads; Scan in reverse; RNN, whose reference mixes up the batch
# dim and knows no Relu; Optional of a tensor; LRN, whose reference sums over the channel windows
# of the first N channels only, counting channels up to the batch size, and takes 4-d inputs
# only). Its other gaps (bidirectional LSTM/GRU/RNN,
# ConcatFromSequence's axis with new_axis, OneHot's out-of-range indices, which it wraps,
# BatchNormalization-9 run in training mode, DequantizeLinear before opset 19) are avoided by
# the choice of cases; the exported models (scripts/gen_onnx_op_models.py) cover them against
# PyTorch.


def twin(model_case):
    """The reference outputs of another, equivalent case built on the same input arrays."""
    def run(*_):
        from onnx.reference import ReferenceEvaluator
        return ReferenceEvaluator(model_case.model()).run(None, model_case.feeds())
    return run


def _softmax_flat(axis, log=False):
    def run(x):
        flat = x.reshape(int(np.prod(x.shape[:axis])), -1).astype(np.float64)
        e = np.exp(flat - flat.max(axis=1, keepdims=True))
        y = e / e.sum(axis=1, keepdims=True)
        return [(np.log(y) if log else y).reshape(x.shape).astype(x.dtype)]
    return run


def _maxpool2d_indices(kernel, pads, strides=(1, 1)):
    """MaxPool's values and indices (into the unpadded input, counted over N, C, H, W)."""
    def run(x):
        n, c, h, w = x.shape
        oh = (h + pads[0] + pads[2] - kernel[0]) // strides[0] + 1
        ow = (w + pads[1] + pads[3] - kernel[1]) // strides[1] + 1
        y = np.zeros((n, c, oh, ow), x.dtype)
        idx = np.zeros((n, c, oh, ow), np.int64)
        for a in range(n):
            for b in range(c):
                for i in range(oh):
                    for j in range(ow):
                        best, at = -np.inf, -1
                        for di in range(kernel[0]):
                            for dj in range(kernel[1]):
                                r, q = i * strides[0] - pads[0] + di, j * strides[1] - pads[1] + dj
                                if 0 <= r < h and 0 <= q < w and x[a, b, r, q] > best:
                                    best, at = x[a, b, r, q], ((a * c + b) * h + r) * w + q
                        y[a, b, i, j], idx[a, b, i, j] = best, at
        return [y, idx]
    return run


def _lrn(size, alpha=1e-4, beta=0.75, bias=1.0):
    """LRN as the spec defines it: each channel divided by (bias + alpha / size * the sum of the
    squares over channels c - floor((size - 1) / 2) ... c + ceil((size - 1) / 2)) ** beta."""
    def run(x):
        c, lo = x.shape[1], (size - 1) // 2
        sq = x.astype(np.float64) ** 2
        s = np.stack([sq[:, max(0, k - lo):min(c, k - lo + size)].sum(axis=1) for k in range(c)],
                     axis=1)
        return [(x / (bias + alpha / size * s) ** beta).astype(x.dtype)]
    return run


def _avgpool2d_exclude(kernel, pads):
    """AveragePool with count_include_pad=0: each window's mean over the input's elements only."""
    def run(x):
        n, c, h, w = x.shape
        oh = h + pads[0] + pads[2] - kernel[0] + 1
        ow = w + pads[1] + pads[3] - kernel[1] + 1
        y = np.zeros((n, c, oh, ow), np.float64)
        for i in range(oh):
            for j in range(ow):
                r0, q0 = max(i - pads[0], 0), max(j - pads[1], 0)
                r1, q1 = min(i - pads[0] + kernel[0], h), min(j - pads[1] + kernel[1], w)
                y[:, :, i, j] = x[:, :, r0:r1, q0:q1].astype(np.float64).mean(axis=(2, 3))
        return [y.astype(x.dtype)]
    return run


def _rnn(act, *weights):
    """ONNX RNN (one direction, no initial state): Y squeezed to [seq, batch, hidden], Y_h."""
    def run(x):
        w, r, bias = weights
        hidden = r.shape[-1]
        h = np.zeros((x.shape[1], hidden), np.float64)
        ys = []
        for t in range(x.shape[0]):
            z = x[t] @ w[0].T + h @ r[0].T + bias[0, :hidden] + bias[0, hidden:]
            h = np.tanh(z) if act == "Tanh" else np.maximum(z, 0)
            ys.append(h)
        return [np.stack(ys).astype(np.float32), h[None].astype(np.float32)]
    return run


def _scan_reverse(s, xs):
    """The reverse Scan case: s += x_t, y_t = s * x_t over xs[:, t] from the last t; ys reversed
    back (scan_output_directions=1) and stacked along dim 0."""
    s = s.astype(np.float64)
    ys = []
    for t in reversed(range(xs.shape[1])):
        s = s + xs[:, t]
        ys.append(s * xs[:, t])
    return [s.astype(np.float32), np.stack(ys[::-1]).astype(np.float32)]


def cases():
    rng = np.random.default_rng(SEED)

    def f(*shape, lo=-2.0, hi=2.0, special=()):
        a = rng.uniform(lo, hi, size=shape).astype(np.float32)
        flat = a.reshape(-1)
        flat[:len(special)] = special
        return a

    def i64(*shape, lo=0, hi=5):
        return rng.integers(lo, hi, size=shape).astype(np.int64)

    def b(*shape):
        return rng.integers(0, 2, size=shape).astype(np.bool_)

    def c(v, dtype=None):
        return Const(np.array(v, dtype=dtype))

    I64, F32 = np.int64, np.float32
    C = {}

    def add(*cs):
        for case in cs:
            C.setdefault(case.op, []).append(case)

    # ---- elementwise math ----
    for op, lo, hi in [("Abs", -2, 2), ("Neg", -2, 2), ("Exp", -2, 2), ("Log", 0.1, 3),
                       ("Sqrt", 0, 3), ("Reciprocal", 0.5, 2), ("Floor", -3, 3), ("Ceil", -3, 3),
                       ("Sin", -3, 3), ("Cos", -3, 3), ("Tan", -1, 1), ("Asin", -0.99, 0.99),
                       ("Acos", -0.99, 0.99), ("Atan", -3, 3), ("Sinh", -2, 2), ("Cosh", -2, 2),
                       ("Asinh", -2, 2), ("Acosh", 1.01, 3), ("Atanh", -0.9, 0.9), ("Erf", -2, 2),
                       ("Sign", -2, 2), ("Tanh", -3, 3), ("Sigmoid", -4, 4), ("Softsign", -3, 3)]:
        add(Case(op, [f(2, 3, 4, lo=lo, hi=hi,
                        special=[0.0] if op in ("Sign", "Abs", "Floor", "Ceil") else [])]))
    add(Case("Round", [f(2, 6, lo=-3, hi=3, special=[0.5, 1.5, 2.5, -0.5, -1.5, -2.5])]))
    add(Case("IsNaN", [f(2, 4, special=[np.nan, np.inf, -np.inf])], opset=13))
    for dn, dp, tag in [(1, 1, ""), (0, 1, "pos"), (1, 0, "neg"), (0, 0, "none")]:
        add(Case("IsInf", [f(2, 4, special=[np.nan, np.inf, -np.inf])],
                 {"detect_negative": dn, "detect_positive": dp}, opset=10, tag=tag))
    for op in ["Add", "Sub", "Mul", "Div"]:
        add(Case(op, [f(2, 3, 4), f(3, 4, lo=0.5, hi=2)]),
            Case(op, [f(2, 3), c(np.float32(0.7))], tag="scalar"),
            Case(op, [c(np.float32(1.5)), f(2, 3, lo=0.5, hi=2)], tag="scalar_first"))
    add(Case("Div", [i64(2, 5, lo=-9, hi=9), c(np.array([2, -3, 4, 5, -7], I64))], tag="int"))
    add(Case("Pow", [f(2, 3, lo=0.5, hi=2), f(2, 3)]),
        Case("Pow", [f(2, 3, lo=0.5, hi=2), c(np.float32(2.0))], tag="square"),
        Case("Pow", [i64(2, 3, lo=1, hi=6), c(np.array([0.5, 1.5, 2.0], F32))], opset=15,
             tag="int_base"),
        Case("Pow", [i64(2, 3, lo=-4, hi=6).astype(np.int32), i64(2, 3, lo=0, hi=4)], opset=15,
             tag="int32_base"))
    for fmod in (0, 1):
        add(Case("Mod", [f(2, 6, lo=-5, hi=5), c(np.array([0.7, -0.7, 1.3, -1.3, 2.0, -2.0], F32))],
                 {"fmod": 1}, tag="float"),
            Case("Mod", [i64(2, 6, lo=-9, hi=9), c(np.array([4, -4, 3, -3, 5, -5], I64))],
                 {"fmod": fmod}, tag=f"int_fmod{fmod}"))
    for op in ["Max", "Min", "Sum", "Mean"]:
        add(Case(op, [f(2, 3), f(3), f(1, 3)]), Case(op, [f(2, 3)], tag="one"))
    for op in ["Greater", "Less", "Equal", "GreaterOrEqual", "LessOrEqual"]:
        x = f(3, 4)
        y = x.copy()
        y[0] += 0.5
        add(Case(op, [x, y], opset=12))
    for op in ["And", "Or", "Xor"]:
        add(Case(op, [b(2, 3, 4), b(3, 4)]))
    add(Case("Not", [b(3, 4)]))
    for op in ["BitwiseAnd", "BitwiseOr", "BitwiseXor"]:
        add(Case(op, [i64(3, 4, lo=-50, hi=50), i64(4, lo=-50, hi=50)], opset=18))
    add(Case("BitwiseNot", [i64(3, 4, lo=-50, hi=50)], opset=18))
    add(Case("BitShift", [rng.integers(0, 255, size=(3, 4)).astype(np.uint8),
                          c(np.array([0, 1, 2, 3], np.uint8))], {"direction": "LEFT"}, opset=11),
        Case("BitShift", [rng.integers(0, 255, size=(3, 4)).astype(np.uint8),
                          c(np.array([0, 1, 2, 7], np.uint8))], {"direction": "RIGHT"}, opset=11,
             tag="right"))
    x = f(3, 4)
    add(Case("Where", [b(3, 4), x, f(4)]),
        Case("Where", [b(3, 4), c(np.float32(-1.0)), x], tag="masked_fill"))
    add(Case("Cast", [f(2, 5, lo=-3, hi=3, special=[-2.7, 2.7, -0.5])], {"to": TensorProto.INT64}),
        Case("Cast", [i64(2, 5)], {"to": TensorProto.FLOAT}, tag="to_float"),
        Case("Cast", [f(2, 5, special=[0.0])], {"to": TensorProto.BOOL}, tag="to_bool"))

    # ---- activations (inputs at their thresholds) ----
    act = [-6.0, -3.0, -1.0, 0.0, 1.0, 3.0, 6.0, 0.5, -0.5]
    add(Case("Relu", [f(2, 3, 4, lo=-4, hi=4, special=act)]),
        Case("LeakyRelu", [f(2, 12, lo=-4, hi=4, special=act)], {"alpha": 0.1}),
        Case("Elu", [f(2, 12, lo=-4, hi=4, special=act)], {"alpha": 0.7}),
        Case("Celu", [f(2, 12, lo=-4, hi=4, special=act)], {"alpha": 1.5}, opset=12),
        Case("Selu", [f(2, 12, lo=-4, hi=4, special=act)]),
        Case("Selu", [f(2, 12, lo=-4, hi=4, special=act)], {"alpha": 1.5, "gamma": 1.1}, tag="custom"),
        Case("ThresholdedRelu", [f(2, 12, lo=-4, hi=4, special=act)], {"alpha": 1.0}, opset=10),
        Case("HardSigmoid", [f(2, 12, lo=-4, hi=4, special=act)], {"alpha": 1 / 6, "beta": 0.5}),
        Case("HardSigmoid", [f(2, 12, lo=-4, hi=4, special=act)], tag="default"),
        Case("HardSwish", [f(2, 12, lo=-4, hi=4, special=act)], opset=14),
        Case("Softplus", [f(2, 12, lo=-4, hi=4, special=act)]),
        Case("Gelu", [f(2, 12, lo=-4, hi=4, special=act)], opset=20),
        Case("Gelu", [f(2, 12, lo=-4, hi=4, special=act)], {"approximate": "tanh"}, opset=20, tag="tanh"),
        Case("Shrink", [f(2, 12, lo=-4, hi=4, special=act)], {"lambd": 1.0}, opset=9),
        Case("Shrink", [f(2, 12, lo=-4, hi=4, special=act)], {"lambd": 0.5, "bias": 0.5}, tag="soft"),
        Case("Shrink", [f(2, 12, lo=-4, hi=4, special=act)], {"lambd": 1.0, "bias": 0.3}, tag="bias"),
        Case("Clip", [f(2, 12, lo=-8, hi=8, special=act)], {"min": 0.0, "max": 6.0}, opset=9),
        Case("Clip", [f(2, 12, lo=-8, hi=8, special=act), c(np.float32(-1)), c(np.float32(3))],
             tag="consts"),
        Case("Clip", [f(2, 12, lo=-8, hi=8, special=act), None, c(np.float32(3))], tag="max_only"),
        Case("Clip", [f(2, 12, lo=-8, hi=8, special=act), np.array(-1.0, F32), np.array(0.5, F32)],
             tag="tensors"))
    add(Case("PRelu", [f(2, 3, 4, 4, special=act), c(f(3, 1, 1, lo=0.05, hi=0.5))]),
        Case("PRelu", [f(2, 3, 5, special=act), c(f(3, 1, lo=0.05, hi=0.5))], tag="rank2"),
        Case("PRelu", [f(2, 3, 5, special=act), c(f(5, lo=0.05, hi=0.5))], tag="last_dim"),
        Case("PRelu", [f(2, 3, 4, 5, special=act), c(f(4, 1, lo=0.05, hi=0.5))], tag="dim2"),
        Case("PRelu", [f(2, 3, 4, special=act), c(np.array([0.25], F32))], tag="single"),
        Case("PRelu", [f(2, 3, 4, special=act), f(3, 1, lo=0.05, hi=0.5)], tag="input"))
    add(Case("Softmax", [f(2, 3, 4)], {"axis": 1}),
        Case("Softmax", [f(2, 3, 4)], {"axis": 1}, opset=11, tag="flatten", ref=_softmax_flat(1)),
        Case("Softmax", [f(2, 3, 4)], {"axis": -1}, opset=11, tag="last"),
        Case("LogSoftmax", [f(2, 3, 4)], {"axis": 2}),
        Case("LogSoftmax", [f(2, 3, 4)], {"axis": 0}, opset=9, tag="flatten",
             ref=_softmax_flat(0, log=True)))

    # ---- reductions ----
    for op in ["ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
               "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"]:
        x = f(2, 3, 4, lo=0.2, hi=1.5)
        if op == "ReduceSum":
            add(Case(op, [x, c(np.array([1, 2], I64))], {"keepdims": 0}),
                Case(op, [x], tag="all"))
        else:
            add(Case(op, [x], {"axes": [1, 2], "keepdims": 0}),
                Case(op, [x], {"axes": [-1]}, tag="keep"),
                Case(op, [x], tag="all"),
                Case(op, [x, c(np.array([0, 2], I64))], {"keepdims": 0}, opset=18, tag="input"))
    for op in ["ArgMax", "ArgMin"]:
        x = np.repeat(f(2, 3, 2), 2, axis=2)  # ties: first vs last index
        add(Case(op, [x], {"axis": 2, "keepdims": 0}),
            Case(op, [x], {"axis": -1, "select_last_index": 1}, opset=12, tag="last"))
    add(Case("CumSum", [f(2, 5), c(np.array(1, I64))]),
        Case("CumSum", [f(2, 5), c(np.array(1, I64))], {"reverse": 1, "exclusive": 1}, tag="rev"))
    add(Case("TopK", [f(2, 6), c(np.array([3], I64))], {"axis": -1}, outs=2),
        Case("TopK", [f(2, 6)], {"axis": 1, "k": 2}, opset=9, outs=2, tag="attr"),
        Case("TopK", [f(2, 6), c(np.array([2], I64))], {"axis": 1, "largest": 0}, opset=11, outs=2,
             tag="smallest"))

    # ---- matrix products ----
    add(Case("MatMul", [f(2, 3, 4), f(4, 5)]),
        Case("MatMul", [f(2, 3, 4), c(f(4, 5))], tag="weight"),
        Case("MatMul", [f(2, 3, 4), f(2, 4, 2)], tag="batched"))
    add(Case("Gemm", [f(3, 4), c(f(5, 4)), c(f(5))], {"transB": 1}),
        Case("Gemm", [f(4, 3), f(4, 5), f(3, 5)], {"transA": 1, "alpha": 0.5, "beta": 2.0},
             tag="general"))
    add(Case("Einsum", [f(2, 3, 4), f(2, 5, 4)], {"equation": "bij,bkj->bik"}, opset=12))
    add(Case("Det", [f(2, 3, 3)], opset=11))

    # ---- convolution and pooling ----
    add(Case("Conv", [f(1, 2, 6, 6), c(f(4, 2, 3, 3)), c(f(4))], {"pads": [1, 1, 1, 1]}),
        Case("Conv", [f(1, 2, 6, 6), f(4, 2, 3, 3), f(4)], {"strides": [2, 2]}, tag="functional"),
        Case("Conv", [f(1, 4, 7), f(4, 2, 3)], {"group": 2, "pads": [2, 1]}, tag="functional_asym"),
        Case("Conv", [x := f(1, 2, 7, 7), w := c(f(3, 2, 3, 3))],
             {"auto_pad": "SAME_UPPER", "strides": [2, 2]}, tag="same",
             ref=twin(Case("Conv", [x, w], {"pads": [1, 1, 1, 1], "strides": [2, 2]}))),
        Case("Conv", [x := f(1, 2, 6, 6), w := c(f(3, 2, 2, 2))],
             {"auto_pad": "SAME_LOWER"}, tag="same_lower",
             ref=twin(Case("Conv", [x, w], {"pads": [1, 1, 0, 0]}))))
    add(Case("ConvTranspose", [f(1, 2, 4, 4), c(f(2, 3, 3, 3)), c(f(3))],
             {"strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 1]}),
        Case("ConvTranspose", [f(1, 2, 4, 4), f(2, 3, 3, 3)], {"strides": [2, 2]}, tag="functional"),
        Case("ConvTranspose", [f(1, 2, 4, 4), c(f(2, 3, 3, 3))], {"strides": [2, 2], "pads": [0, 1, 1, 2]},
             tag="asym"),
        Case("ConvTranspose", [f(1, 2, 4, 4), c(f(2, 3, 3, 3))],
             {"strides": [2, 2], "auto_pad": "SAME_UPPER"}, tag="same"),
        Case("ConvTranspose", [x := f(1, 2, 4, 4), w := c(f(2, 3, 3, 3))],
             {"strides": [2, 2], "output_shape": [8, 9]}, tag="output_shape",
             ref=twin(Case("ConvTranspose", [x, w],
                           {"strides": [2, 2], "pads": [1, 0, 0, 0]}))))
    add(Case("MaxPool", [f(1, 2, 6, 6)], {"kernel_shape": [2, 2], "strides": [2, 2]}),
        Case("MaxPool", [f(2, 3, 5, 5)], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}, outs=2,
             tag="indices", ref=_maxpool2d_indices((3, 3), (1, 1, 1, 1))),
        Case("MaxPool", [f(2, 3, 6, 6)], {"kernel_shape": [2, 2], "strides": [2, 2]}, outs=2,
             tag="indices_stride", ref=_maxpool2d_indices((2, 2), (0, 0, 0, 0), (2, 2))),
        Case("MaxPool", [f(1, 2, 7)], {"kernel_shape": [3], "strides": [2], "ceil_mode": 1}, opset=10,
             outs=2, tag="indices1d"),
        Case("MaxPool", [x := f(1, 2, 6, 6)], {"kernel_shape": [2, 2], "pads": [0, 0, 1, 1]},
             tag="asym", ref=lambda x: twin(Case("MaxPool", [x], graph=lambda ins: ([
                 helper.make_node("Constant", [], ["p"], value=numpy_helper.from_array(
                     np.array([0, 0, 0, 0, 0, 0, 1, 1], I64))),
                 helper.make_node("Constant", [], ["v"], value=numpy_helper.from_array(
                     np.array(-np.inf, F32))),
                 helper.make_node("Pad", [ins[0], "p", "v"], ["xp"]),
                 helper.make_node("MaxPool", ["xp"], ["out0"], kernel_shape=[2, 2])], ["out0"])))(x)))
    add(Case("AveragePool", [f(1, 2, 6, 6)], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}),
        Case("AveragePool", [f(1, 2, 6, 6)],
             {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1}, tag="include"),
        Case("AveragePool", [f(1, 2, 6, 6)], {"kernel_shape": [3, 3], "pads": [0, 1, 2, 0]},
             tag="asym_exclude", ref=_avgpool2d_exclude((3, 3), (0, 1, 2, 0))))
    add(Case("GlobalAveragePool", [f(2, 3, 4, 5)]), Case("GlobalMaxPool", [f(2, 3, 4, 5)]))

    # ---- normalization (BatchNormalization from opset 15: onnx.reference runs opset 9's in
    # training mode whenever momentum is set, which its default always is) ----
    add(Case("BatchNormalization", [f(2, 3, 4, 4), c(f(3)), c(f(3)), c(f(3)), c(f(3, lo=0.5, hi=2))],
             {"epsilon": 1e-3}, opset=15),
        Case("BatchNormalization", [f(2, 3, 4), f(3), f(3), f(3), f(3, lo=0.5, hi=2)], opset=15,
             tag="functional"),
        Case("BatchNormalization", [f(4, 3, 5), c(f(3)), c(f(3)), c(f(3)), c(f(3, lo=0.5, hi=2))],
             {"training_mode": 1}, opset=14, tag="training"))
    add(Case("LRN", [f(2, 5, 3, 3)], {"size": 3, "alpha": 0.01, "beta": 0.75, "bias": 1.5},
             ref=_lrn(3, 0.01, 0.75, 1.5)),
        Case("LRN", [f(2, 6, 4)], {"size": 4, "alpha": 0.02}, tag="even", ref=_lrn(4, 0.02)))
    add(Case("InstanceNormalization", [f(2, 3, 4, 4), c(f(3)), c(f(3))]),
        Case("InstanceNormalization", [f(2, 3, 5), f(3), f(3)], tag="inputs"))
    add(Case("LayerNormalization", [f(2, 3, 4), c(f(4)), c(f(4))], opset=17),
        Case("LayerNormalization", [f(2, 3, 4), f(3, 4), f(3, 4)], {"axis": 1}, opset=17,
             tag="functional"))

    # ---- data movement ----
    add(Case("Reshape", [f(2, 3, 4), c(np.array([0, -1], I64))]),
        Case("Flatten", [f(2, 3, 4)], {"axis": 2}),
        Case("Transpose", [f(2, 3, 4)], {"perm": [2, 0, 1]}),
        Case("Transpose", [f(2, 3, 4)], tag="reverse"),
        Case("Squeeze", [f(2, 1, 4, 1), c(np.array([1, -1], I64))]),
        Case("Squeeze", [f(2, 1, 4, 1)], {"axes": [3]}, opset=11, tag="attr"),
        Case("Unsqueeze", [f(2, 4), c(np.array([0, -1], I64))]),
        Case("Unsqueeze", [f(2, 4)], {"axes": [1]}, opset=11, tag="attr"),
        Case("Concat", [f(2, 3), f(2, 2)], {"axis": 1}),
        Case("Split", [f(2, 6)], {"axis": 1}, outs=3),
        Case("Split", [f(2, 6), c(np.array([1, 5], I64))], {"axis": 1}, outs=2, tag="sizes"),
        Case("Split", [f(2, 7)], {"axis": 1, "num_outputs": 3}, opset=18, outs=3, tag="num_outputs"),
        Case("Tile", [f(2, 3), c(np.array([2, 1], I64))]),
        Case("Expand", [f(3, 1), c(np.array([2, 3, 4], I64))]),
        Case("Expand", [f(2, 3, 4), c(np.array([3, 1], I64))], tag="fewer_dims"),
        Case("DepthToSpace", [f(1, 8, 2, 3)], {"blocksize": 2, "mode": "CRD"}),
        Case("SpaceToDepth", [f(1, 2, 4, 6)], {"blocksize": 2}),
        Case("Identity", [f(2, 3)]),
        Case("Dropout", [f(2, 3)], opset=11),
        Case("Dropout", [f(2, 3), c(np.float32(0.5)), c(np.array(False))], opset=13, tag="inference"),
        Case("Trilu", [f(4, 5), c(np.array(1, I64))], opset=14),
        Case("Trilu", [f(2, 4, 5)], {"upper": 0}, opset=14, tag="lower"),
        Case("EyeLike", [f(3, 4)], {"k": 1}, opset=9))
    add(Case("Slice", [f(4, 6), c(np.array([1, -1], I64)), c(np.array([3, -5], I64)),
                       c(np.array([0, 1], I64)), c(np.array([1, -2], I64))]),
        Case("Slice", [f(4, 6), c(np.array([-1], I64)), c(np.array([-(2 ** 63) + 1], I64)),
                       c(np.array([1], I64)), c(np.array([-1], I64))], tag="flip"),
        Case("Slice", [f(4, 6)], {"starts": [1], "ends": [100], "axes": [1]}, opset=9, tag="attr"))
    add(Case("Gather", [f(5, 3), c(np.array([[0, 4], [-1, 2]], I64))], {"axis": 0}),
        Case("Gather", [f(5, 3), i64(4, lo=0, hi=3)], {"axis": 1}, tag="runtime"),
        Case("GatherElements", [f(3, 4), c(np.array([[0, 1], [2, 3], [-1, 0]], I64))], {"axis": 1}),
        Case("GatherND", [f(3, 4, 2), c(np.array([[0, 1], [2, -1]], I64))]),
        Case("ScatterElements", [f(3, 4), c(np.array([[0, 1], [2, 3]], I64)), f(2, 2)],
             {"axis": 1}),
        Case("ScatterElements", [f(3, 4), c(np.array([[0, 1], [2, 1]], I64)), f(2, 2)],
             {"axis": 0, "reduction": "add"}, opset=16, tag="add"),
        Case("ScatterElements", [f(3, 4), c(np.array([[0, 1], [2, 0]], I64)), f(2, 2)],
             {"axis": 1, "reduction": "max"}, opset=18, tag="max"),
        Case("Scatter", [x := f(3, 4), i := c(np.array([[0, 1], [2, 3]], I64)), u := f(2, 2)],
             {"axis": 1}, opset=9,
             ref=twin(Case("ScatterElements", [x, i, u], {"axis": 1}, opset=11))),
        Case("ScatterND", [f(4, 3), c(np.array([[1], [3]], I64)), f(2, 3)]),
        Case("ScatterND", [f(4, 3), c(np.array([[1, 0], [3, 2]], I64)), f(2)],
             {"reduction": "add"}, opset=16, tag="add"),
        Case("OneHot", [c(np.array([[0, 2], [-1, -4]], I64)), c(np.array(4, I64)),
                        c(np.array([0.5, 2.0], F32))], {"axis": 1}, opset=11),
        Case("OneHot", [i64(3, 2, lo=0, hi=4), c(np.array([4], I64)), c(np.array([0, 1], I64))],
             opset=11, tag="runtime"),
        Case("NonZero", [f(3, 4, special=[0.0, 0.0, 1.0, 0.0]) * (rng.uniform(size=(3, 4)) > 0.5)]),
        Case("Unique", [np.array([2.0, 1.0, 2.0, 3.0, 1.0, 1.0], F32)], opset=11, outs=4,
             graph=lambda ins: ([helper.make_node("Unique", [ins[0]], ["y", "", "inv", "cnt"])],
                                ["y", "inv", "cnt"])),
        Case("Unique", [np.array([[2.0, 1.0], [3.0, 1.0], [2.0, 1.0]], F32)], {"axis": 0}, opset=11,
             tag="axis",
             graph=lambda ins: ([helper.make_node("Unique", [ins[0]], ["y", "", "inv", "cnt"],
                                                  axis=0)], ["y", "inv", "cnt"])))

    # ---- shapes and constants (folded, or sizes) ----
    shape_graph = lambda ins: ([  # noqa: E731
        helper.make_node("Shape", [ins[0]], ["s"]),
        helper.make_node("Size", [ins[0]], ["n"]),
        helper.make_node("ConstantOfShape", ["s"], ["z"],
                         value=numpy_helper.from_array(np.array([1.5], F32))),
        helper.make_node("Constant", [], ["k"], value=numpy_helper.from_array(np.array(2, I64))),
        helper.make_node("Range", ["k", "n", "k"], ["r"]),
        helper.make_node("Add", ["z", ins[0]], ["out0"]),
    ], ["out0", "s", "r"])
    for op in ["Shape", "Size", "ConstantOfShape", "Constant", "Range"]:
        add(Case(op, [f(2, 3, 2)], graph=shape_graph))

    # ---- padding and resampling ----
    add(Case("Pad", [f(1, 2, 3, 4), c(np.array([0, 0, 1, 2, 0, 0, 2, 1], I64)), c(np.float32(0.5))],
             opset=11),
        Case("Pad", [f(1, 2, 3, 4)], {"pads": [0, 0, 1, 0, 0, 0, 1, 2], "mode": "reflect"}, opset=9,
             tag="reflect"),
        Case("Pad", [f(1, 2, 3, 4), c(np.array([1, 2, 1, 1], I64)), None, c(np.array([2, 3], I64))],
             {"mode": "edge"}, opset=18, tag="axes"),
        Case("Pad", [f(1, 2, 3, 4), c(np.array([0, 0, 1, 2, 0, 0, 2, 1], I64))], {"mode": "wrap"},
             opset=19, tag="wrap"))
    add(Case("Resize", [f(1, 2, 3, 4), None, c(np.array([1, 1, 2, 2], F32))], {"mode": "nearest",
             "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"}),
        Case("Resize", [f(1, 2, 3, 4), None, c(np.array([1, 1, 2, 1.5], F32))], {"mode": "linear"},
             tag="linear"),
        Case("Resize", [f(1, 2, 3, 4), None, None, c(np.array([1, 2, 5, 7], I64))],
             {"mode": "linear", "coordinate_transformation_mode": "align_corners"}, tag="corners"),
        Case("Resize", [f(1, 2, 3, 4), None, None, c(np.array([1, 2, 7, 5], I64))],
             {"mode": "nearest", "coordinate_transformation_mode": "half_pixel",
              "nearest_mode": "round_prefer_ceil"}, tag="nearest_exact"),
        Case("Resize", [f(1, 2, 4, 4), None, c(np.array([1, 1, 2, 2], F32))],
             {"mode": "cubic", "cubic_coeff_a": -0.75}, tag="cubic"),
        Case("Resize", [x := f(1, 2, 3, 4), sc := c(np.array([1, 1, 2, 2], F32))],
             {"mode": "nearest"}, opset=10, tag="op10",
             ref=twin(Case("Resize", [x, None, sc], {"mode": "nearest", "nearest_mode": "floor",
                                                   "coordinate_transformation_mode": "asymmetric"},
                           opset=11))),
        Case("Upsample", [f(1, 2, 3, 4), c(np.array([1, 1, 2, 3], F32))], {"mode": "nearest"},
             opset=9))
    add(Case("GridSample", [f(1, 2, 4, 5), f(1, 3, 3, 2, lo=-1.1, hi=1.1)],
             {"align_corners": 0}, opset=16),
        Case("GridSample", [f(1, 2, 4, 5), f(1, 3, 3, 2, lo=-1.1, hi=1.1)],
             {"mode": "nearest", "padding_mode": "border", "align_corners": 1}, opset=16,
             tag="nearest"),
        Case("GridSample", [f(1, 2, 4, 5), f(1, 3, 3, 2, lo=-1.1, hi=1.1)],
             {"mode": "cubic", "padding_mode": "reflection"}, opset=20, tag="cubic"))
    add(Case("AffineGrid", [f(2, 2, 3), c(np.array([2, 3, 4, 5], I64))], {"align_corners": 0},
             opset=20))
    add(Case("Col2Im", [f(1, 8, 6), c(np.array([3, 4], I64)), c(np.array([2, 2], I64))], opset=18))

    # ---- quantization ----
    add(Case("QuantizeLinear", [f(2, 6, lo=-3, hi=3, special=[0.05, 0.15, -0.05]),
                                c(np.float32(0.1)), c(np.uint8(128))], opset=13),
        Case("QuantizeLinear", [f(2, 3, 4, lo=-3, hi=3), c(np.array([0.1, 0.05, 0.2], F32)),
                                c(np.array([0, 3, -4], np.int8))], {"axis": 1}, opset=13,
             tag="axis"),
        Case("DequantizeLinear", [rng.integers(0, 255, size=(2, 6)).astype(np.uint8),
                                  c(np.float32(0.1)), c(np.uint8(128))], opset=19),
        Case("DequantizeLinear", [rng.integers(-100, 100, size=(2, 3)).astype(np.int32),
                                  c(np.float32(0.02))], opset=19, tag="int32"),
        Case("DequantizeLinear", [rng.integers(-100, 100, size=(2, 3, 2)).astype(np.int8),
                                  c(np.array([0.1, 0.05, 0.2], F32)), c(np.array([1, -2, 0], np.int8))],
             {"axis": 1}, opset=19, tag="axis"))

    # ---- losses, signal ----
    add(Case("NegativeLogLikelihoodLoss", [f(3, 4), c(np.array([0, 3, 1], I64))],
             {"reduction": "mean"}, opset=13),
        Case("NegativeLogLikelihoodLoss", [f(3, 4, 2), c(np.array([[0, 3], [1, 1], [2, 0]], I64)),
                                           c(f(4, lo=0.5, hi=1.5))],
             {"reduction": "sum", "ignore_index": 1}, opset=13, tag="weighted"),
        Case("SoftmaxCrossEntropyLoss", [f(3, 4), c(np.array([0, 3, 1], I64))], outs=2, opset=13))
    add(Case("STFT", [f(2, 16, 1), c(np.array(4, I64)), c(np.hanning(8).astype(F32)),
                      c(np.array(8, I64))], opset=17, tol=1e-3))

    # ---- recurrent layers, in the exporter's form (Y squeezed / transposed+reshaped) ----
    def rnn_graph(op, hidden, bidir=False, acts=None):
        def g(ins):
            attrs = {"hidden_size": hidden}
            if bidir:
                attrs["direction"] = "bidirectional"
            if acts:
                attrs["activations"] = acts
            if op == "GRU":
                attrs["linear_before_reset"] = 1
            nodes = [helper.make_node(op, ins[:4], ["y", "y_h"], **attrs)]
            if bidir:
                nodes += [helper.make_node("Transpose", ["y"], ["yt"], perm=[0, 2, 1, 3]),
                          helper.make_node("Constant", [], ["shape"],
                                           value=numpy_helper.from_array(np.array([0, 0, -1], I64))),
                          helper.make_node("Reshape", ["yt", "shape"], ["out0"])]
            else:
                nodes += [helper.make_node("Constant", [], ["axes"],
                                           value=numpy_helper.from_array(np.array([1], I64))),
                          helper.make_node("Squeeze", ["y", "axes"], ["out0"])]
            return nodes, ["out0", "y_h"]
        return g

    for op, gates in [("LSTM", 4), ("GRU", 3)]:
        hid, inp = 5, 4
        add(Case(op, [f(3, 2, inp), c(f(1, gates * hid, inp)), c(f(1, gates * hid, hid)),
                      c(f(1, 2 * gates * hid))], graph=rnn_graph(op, hid)))
    for act in ["Tanh", "Relu"]:
        ws = [f(1, 5, 4), f(1, 5, 5), f(1, 10)]
        add(Case("RNN", [f(3, 2, 4)] + [c(w) for w in ws],
                 graph=rnn_graph("RNN", 5, acts=[act]), tag=act.lower(), ref=_rnn(act, *ws)))

    # ---- control flow ----
    def if_graph(ins):
        then_g = helper.make_graph(
            [helper.make_node("Mul", [ins[0], ins[1]], ["t"])], "then", [],
            [helper.make_tensor_value_info("t", TensorProto.FLOAT, [2, 3])])
        else_g = helper.make_graph(
            [helper.make_node("Sub", [ins[0], ins[1]], ["e"])], "else", [],
            [helper.make_tensor_value_info("e", TensorProto.FLOAT, [2, 3])])
        return ([helper.make_node("ReduceSum", [ins[0]], ["s"], keepdims=0),
                 helper.make_node("Constant", [], ["zero"],
                                  value=numpy_helper.from_array(np.array(0.0, F32))),
                 helper.make_node("Greater", ["s", "zero"], ["cond"]),
                 helper.make_node("If", ["cond"], ["out0"], then_branch=then_g, else_branch=else_g)],
                ["out0"])
    x = f(2, 3)
    add(Case("If", [np.abs(x), f(2, 3)], graph=if_graph, tag="then"),
        Case("If", [-np.abs(x), f(2, 3)], graph=if_graph, tag="else"))

    def loop_graph(ins):
        # for i in range(M): h = tanh(xs[i] + h); acc += h; ys.append(h * i)
        body = helper.make_graph(
            [helper.make_node("Gather", [ins[0], "i"], ["xi"], axis=0),
             helper.make_node("Add", ["xi", "h_in"], ["a"]),
             helper.make_node("Tanh", ["a"], ["h_out"]),
             helper.make_node("Add", ["acc_in", "h_out"], ["acc_out"]),
             helper.make_node("Cast", ["i"], ["fi"], to=TensorProto.FLOAT),
             helper.make_node("Mul", ["h_out", "fi"], ["y"]),
             helper.make_node("Identity", ["cond_in"], ["cond_out"])],
            "body",
            [helper.make_tensor_value_info("i", TensorProto.INT64, []),
             helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
             helper.make_tensor_value_info("h_in", TensorProto.FLOAT, [3]),
             helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, [3])],
            [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
             helper.make_tensor_value_info("h_out", TensorProto.FLOAT, [3]),
             helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [3]),
             helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
        return ([helper.make_node("Shape", [ins[0]], ["shape"]),
                 helper.make_node("Gather", ["shape", "zero"], ["m"], axis=0),
                 helper.make_node("Constant", [], ["true"],
                                  value=numpy_helper.from_array(np.array(True))),
                 helper.make_node("Loop", ["m", "true", ins[1], ins[2]], ["h", "acc", "ys"],
                                  body=body)],
                ["h", "acc", "ys"])

    def while_graph(ins):
        # while |x|.sum() < 20 (at most 10 times): x = x * 1.5; n = n + 1
        body = helper.make_graph(
            [helper.make_node("Mul", ["x_in", "k"], ["x_out"]),
             helper.make_node("Add", ["n_in", "one"], ["n_out"]),
             helper.make_node("ReduceL1", ["x_out"], ["norm"], keepdims=0),
             helper.make_node("Less", ["norm", "limit"], ["cond_out"])],
            "body",
            [helper.make_tensor_value_info("i", TensorProto.INT64, []),
             helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
             helper.make_tensor_value_info("x_in", TensorProto.FLOAT, [2, 3]),
             helper.make_tensor_value_info("n_in", TensorProto.INT64, [])],
            [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
             helper.make_tensor_value_info("x_out", TensorProto.FLOAT, [2, 3]),
             helper.make_tensor_value_info("n_out", TensorProto.INT64, [])])
        return ([helper.make_node("Constant", [], ["k"],
                                  value=numpy_helper.from_array(np.array(1.5, F32))),
                 helper.make_node("Constant", [], ["one"],
                                  value=numpy_helper.from_array(np.array(1, I64))),
                 helper.make_node("Constant", [], ["limit"],
                                  value=numpy_helper.from_array(np.array(20.0, F32))),
                 helper.make_node("Constant", [], ["n0"],
                                  value=numpy_helper.from_array(np.array(0, I64))),
                 helper.make_node("Constant", [], ["cond0"],
                                  value=numpy_helper.from_array(np.array(True))),
                 helper.make_node("Loop", [ins[1], "cond0", ins[0], "n0"], ["xo", "n"], body=body)],
                ["xo", "n"])
    add(Case("Loop", [f(4, 3), f(3), f(3)], graph=lambda ins: _with_zero(loop_graph, ins)),
        Case("Loop", [f(2, 3), c(np.array(10, I64))], graph=while_graph, tag="while"))

    def scan_graph(reverse):
        def g(ins):
            body = helper.make_graph(
                [helper.make_node("Add", ["s_in", "x_t"], ["s_out"]),
                 helper.make_node("Mul", ["s_out", "x_t"], ["y_t"])],
                "body",
                [helper.make_tensor_value_info("s_in", TensorProto.FLOAT, [3]),
                 helper.make_tensor_value_info("x_t", TensorProto.FLOAT, [3])],
                [helper.make_tensor_value_info("s_out", TensorProto.FLOAT, [3]),
                 helper.make_tensor_value_info("y_t", TensorProto.FLOAT, [3])])
            attrs = {"num_scan_inputs": 1}
            if reverse:
                attrs.update(scan_input_axes=[1], scan_input_directions=[1],
                             scan_output_directions=[1])
            return [helper.make_node("Scan", [ins[0], ins[1]], ["s", "ys"], body=body, **attrs)], \
                ["s", "ys"]
        return g
    add(Case("Scan", [f(3), f(4, 3)], graph=scan_graph(False), opset=11),
        Case("Scan", [f(3), f(3, 4)], graph=scan_graph(True), opset=11, tag="reverse",
             ref=_scan_reverse))

    # ---- sequences ----
    def seq_graph(ins):
        return ([helper.make_node("SequenceConstruct", [ins[0], ins[1]], ["s0"]),
                 helper.make_node("SequenceInsert", ["s0", ins[2], "pos1"], ["s1"]),
                 helper.make_node("SequenceInsert", ["s1", ins[0]], ["s2"]),
                 helper.make_node("SequenceErase", ["s2", "neg2"], ["s3"]),
                 helper.make_node("SequenceErase", ["s3"], ["s4"]),
                 helper.make_node("SequenceAt", ["s4", "neg2"], ["at"]),
                 helper.make_node("SequenceLength", ["s4"], ["len"]),
                 helper.make_node("ConcatFromSequence", ["s4"], ["cat"], axis=1),
                 helper.make_node("SequenceEmpty", [], ["e"], dtype=TensorProto.FLOAT),
                 helper.make_node("SequenceInsert", ["e", "at"], ["e1"]),
                 helper.make_node("SequenceInsert", ["e1", ins[1], "zero"], ["e2"]),
                 helper.make_node("ConcatFromSequence", ["e2"], ["stacked"], axis=-1, new_axis=1),
                 helper.make_node("SplitToSequence", [ins[0]], ["sp"], axis=1, keepdims=0),
                 helper.make_node("SequenceAt", ["sp", "one"], ["col1"]),
                 helper.make_node("SplitToSequence", [ins[2], "two"], ["sp2"], axis=1),
                 helper.make_node("ConcatFromSequence", ["sp2"], ["cat2"], axis=1),
                 helper.make_node("SplitToSequence", [ins[2], "sizes"], ["sp3"], axis=1),
                 helper.make_node("SequenceAt", ["sp3", "one"], ["part"])],
                ["cat", "at", "len", "stacked", "col1", "cat2", "part"])

    def seq_consts(ins):
        consts = {"pos1": np.array(1, I64), "neg2": np.array(-2, I64), "zero": np.array(0, I64),
                  "one": np.array(1, I64), "two": np.array(2, I64), "sizes": np.array([1, 4], I64)}
        nodes, outs = seq_graph(ins)
        return ([helper.make_node("Constant", [], [k], value=numpy_helper.from_array(v))
                 for k, v in consts.items()] + nodes, outs)
    for op in ["SequenceConstruct", "SequenceInsert", "SequenceErase", "SequenceAt",
               "SequenceLength", "ConcatFromSequence", "SequenceEmpty", "SplitToSequence"]:
        add(Case(op, [f(2, 3), f(2, 3), f(2, 5)], graph=seq_consts, opset=11))

    # ---- optional values ----
    def optional_graph(ins):
        return ([helper.make_node("Optional", [ins[0]], ["o"]),
                 helper.make_node("OptionalHasElement", ["o"], ["has"]),
                 helper.make_node("OptionalGetElement", ["o"], ["x"]),
                 helper.make_node("Cast", ["has"], ["hf"], to=TensorProto.FLOAT),
                 helper.make_node("Mul", ["x", "hf"], ["out0"])], ["out0"])
    for op in ["Optional", "OptionalHasElement", "OptionalGetElement"]:
        add(Case(op, [f(2, 3)], graph=optional_graph, opset=15, ref=lambda x: [x]))

    # ---- random (refused) ----
    add(Case("RandomNormal", [], {"shape": [2, 3]}),
        Case("RandomUniform", [], {"shape": [2, 3]}),
        Case("RandomNormalLike", [f(2, 3)]),
        Case("RandomUniformLike", [f(2, 3)]),
        Case("Bernoulli", [f(2, 3, lo=0, hi=1)], opset=15),
        Case("Multinomial", [f(2, 3, lo=-1, hi=0)], {"sample_size": 2}))
    return C


def _with_zero(build, ins):
    """A Loop graph whose builder reads a constant 0 named "zero" (the Gather index of M)."""
    nodes, outs = build(ins)
    zero = helper.make_node("Constant", [], ["zero"],
                            value=numpy_helper.from_array(np.array(0, np.int64)))
    return [zero] + nodes, outs
