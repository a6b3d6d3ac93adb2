#!/usr/bin/python3
"""Generates the models of the op-spelling tests (group "ops"): small traced models, one per op
family, each calling the ops of its family in the argument forms models use.

Run with Debian 13's /usr/bin/python3 (torch 2.6). Nothing is downloaded; weights are random with
a fixed seed. For each model NAME it writes, in --out, the sidecars of scripts/gen_models.py
(NAME.pt, NAME.inputs.pt, NAME.expected.pt, NAME.json; a re-run skips current models). NAME.json
also lists the ATen overloads the archive holds ("torch_ops"), and "no_fallback": true, which
makes tests/e2e/run_convert.py require NAME.py without `torch.ops.aten` and NAME.json without an
aten-fallback warning.

Each spec names the ATen ops its archive must contain ("needs"): generation fails when torch
stopped recording them, so a test cannot silently stop covering what it is named after. Inputs
are float32 (randn), int64 in [0, high), or complex64/complex128 (randn of that dtype); ops with
a restricted domain get it inside the model (x.tanh() * 0.9 for acos, x.abs() + 0.5 for log), so
every output is finite and O(1).
"""
import os
import sys
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_models  # noqa: E402  (stamp, atomic_write, run_generation, shape_arg, flatten)

SEED = 20250415
GROUP = "ops"

# --------------------------------------------------------------------------------------------
# Registry


class Spec:
    def __init__(self, name, build, inputs, needs=(), tol=1e-4, torchscript=False, mode="trace"):
        self.name = name
        self.mode = mode              # trace | script
        self.build = build            # () -> nn.Module (called after torch.manual_seed)
        self.inputs = inputs          # [(shape, dtype[, high])]
        self.needs = list(needs)      # ATen ops ("aten::stft") the traced graph must contain
        self.tol = tol
        self.torchscript = torchscript  # also checked through --emit torchscript (tests/ops.cmake)


SPECS = {}


def register(name, inputs, **kw):
    def deco(build):
        SPECS[name] = Spec(name, build, inputs, **kw)
        return build
    return deco


f32, i64 = gen_models.f32, gen_models.i64  # (shape, dtype, high)


def c64(*shape):
    return (tuple(shape), "complex64", None)


# --------------------------------------------------------------------------------------------
# Activations and dropout (the F.* wrappers of single ATen ops)


@register("ops_activations", [f32(2, 6, 5)], torchscript=True,
          needs=["aten::celu", "aten::hardshrink", "aten::softshrink", "aten::threshold",
                 "aten::log_sigmoid", "aten::rrelu", "aten::selu"])
class Activations(nn.Module):
    def forward(self, x):
        return (F.celu(x), F.celu(x, 0.5), F.hardshrink(x), F.hardshrink(x, 0.3),
                F.softshrink(x), F.softshrink(x, 0.2), F.threshold(x, 0.1, 2.0),
                F.logsigmoid(x), F.rrelu(x), F.rrelu(x, 0.1, 0.3), F.selu(x),
                torch.celu(x, 2.0), torch.rrelu(x, 0.2, 0.4, False))


@register("ops_dropout", [f32(2, 4, 3, 3)], torchscript=True,
          needs=["aten::feature_dropout", "aten::alpha_dropout", "aten::feature_alpha_dropout"])
class Dropouts(nn.Module):
    """Dropout in eval: the ops are recorded with train=False and return their input."""

    def forward(self, x):
        return (F.dropout2d(x, 0.5, training=False) + 1, F.dropout1d(x[0], 0.2, False) * 2,
                F.dropout3d(x, 0.3, False) - 1, F.alpha_dropout(x, 0.5, False) * 3,
                F.feature_alpha_dropout(x, 0.5, False) + 2)


# --------------------------------------------------------------------------------------------
# Windows, STFT / ISTFT, FFT and complex tensors


@register("ops_windows", [f32(16)], torchscript=True,
          needs=["aten::hann_window", "aten::hamming_window", "aten::blackman_window",
                 "aten::bartlett_window", "aten::kaiser_window"])
class Windows(nn.Module):
    def forward(self, x):
        return (x * torch.hann_window(16), x * torch.hann_window(16, periodic=False),
                x * torch.hamming_window(16), x * torch.hamming_window(16, False),
                x * torch.hamming_window(16, True, 0.5), x * torch.hamming_window(16, True, 0.5, 0.4),
                x * torch.blackman_window(16), x * torch.blackman_window(16, False),
                x * torch.bartlett_window(16), x * torch.bartlett_window(16, periodic=False),
                x * torch.kaiser_window(16), x * torch.kaiser_window(16, False),
                x * torch.kaiser_window(16, True, 8.0),
                torch.hann_window(16, dtype=torch.float64), torch.kaiser_window(7, dtype=torch.float64))


@register("ops_stft", [f32(2, 200), f32(150)],
          needs=["aten::stft", "aten::istft", "aten::hann_window"])
class Stft(nn.Module):
    """torch.stft as models write it (center padding, windows, onesided, real and complex
    results) and torch.istft back."""

    def forward(self, x, y):
        a = torch.stft(x, n_fft=32, window=torch.hann_window(24), win_length=24, center=True,
                       normalized=True, return_complex=True)
        b = torch.stft(x, n_fft=16, center=False, onesided=True, return_complex=True)
        c = torch.stft(y, n_fft=32, window=torch.hamming_window(32), hop_length=8, center=True,
                       pad_mode="constant", onesided=True, return_complex=True)
        d = torch.stft(y, n_fft=16, center=True, onesided=False, return_complex=True)
        e = torch.stft(x, 16, hop_length=4, window=torch.hann_window(16), return_complex=False)
        w = torch.hann_window(32)
        spec = torch.stft(x, 32, hop_length=8, window=w, return_complex=True)
        back = torch.istft(spec, 32, hop_length=8, window=w, length=200)
        back2 = torch.istft(torch.stft(y, 16, window=torch.hann_window(16), return_complex=True),
                            16, window=torch.hann_window(16), center=True, normalized=False)
        return (torch.view_as_real(a), b.abs(), c.real, d.imag, e, back, back2)


@register("ops_fft", [f32(3, 8, 10)], torchscript=True,
          needs=["aten::fft_fft", "aten::fft_rfft", "aten::fft_irfft", "aten::fft_fftn",
                 "aten::fft_fftshift", "aten::fft_fftfreq"])
class Fft(nn.Module):
    def forward(self, x):
        c = torch.fft.fft(x)
        out = [
            c, torch.fft.fft(x, n=12, dim=1, norm="ortho"), torch.fft.ifft(c, norm="forward"),
            torch.fft.rfft(x), torch.fft.rfft(x, 6, 0), torch.fft.irfft(torch.fft.rfft(x), n=10),
            torch.fft.hfft(c[..., :6], n=10), torch.fft.ihfft(x),
            torch.fft.fft2(x), torch.fft.ifft2(c, s=(4, 6)), torch.fft.rfft2(x, norm="ortho"),
            torch.fft.irfft2(torch.fft.rfft2(x)), torch.fft.fftn(x, dim=(0, 2)),
            torch.fft.ifftn(c), torch.fft.rfftn(x, s=(8, 8)), torch.fft.irfftn(torch.fft.rfftn(x)),
            torch.fft.hfft2(c[..., :6]), torch.fft.ihfft2(x), torch.fft.hfftn(c[..., :6], dim=(1, 2)),
            torch.fft.ihfftn(x, dim=(1, 2)),
            torch.fft.fftshift(x), torch.fft.fftshift(x, dim=(1, 2)), torch.fft.ifftshift(x, 1),
            x[0, 0] * torch.fft.fftfreq(10), x[0, 0, :6] * torch.fft.rfftfreq(10, d=0.5),
        ]
        return tuple(out)


@register("ops_complex", [f32(2, 6), f32(2, 6), c64(3, 5)], torchscript=True,
          needs=["aten::complex", "aten::real", "aten::imag", "aten::view_as_real",
                 "aten::view_as_complex", "aten::angle", "aten::polar"])
class ComplexOps(nn.Module):
    """Complex tensors made from real ones and a complex model input (--input-shape
    3,5:complex64)."""

    def forward(self, a, b, z):
        c = torch.complex(a, b)
        p = torch.polar(a.abs(), b)
        r = torch.view_as_real(c)
        back = torch.view_as_complex(r * 2)
        w = z * z.conj() + z
        return (c, p.real, p.imag, torch.angle(c), c.abs(), r, back, w, torch.view_as_real(z),
                z.angle(), torch.real(z) + torch.imag(z), z.conj_physical(), z.sgn(), c.exp(),
                torch.fft.fft(z) * 0.5)


# --------------------------------------------------------------------------------------------
# Resampling: nearest-exact interpolation, F.unfold / F.fold


@register("ops_resample", [f32(1, 2, 6, 6), f32(1, 3, 5), f32(1, 2, 3, 4, 4)], torchscript=True,
          needs=["aten::_upsample_nearest_exact2d", "aten::im2col", "aten::col2im"])
class Resample(nn.Module):
    def forward(self, x, s, v):
        return (F.interpolate(x, scale_factor=2, mode="nearest-exact"),
                F.interpolate(x, size=(9, 4), mode="nearest-exact"),
                F.interpolate(s, scale_factor=1.5, mode="nearest-exact"),
                F.interpolate(s, size=7, mode="nearest-exact"),
                F.interpolate(v, scale_factor=(2, 1, 2), mode="nearest-exact"),
                F.unfold(x, 3), F.unfold(x, (2, 3), dilation=1, padding=1, stride=2),
                F.unfold(x, 2, dilation=2),
                F.fold(F.unfold(x, 2, stride=2), (6, 6), 2, stride=2),
                F.fold(F.unfold(x, 3, padding=1), output_size=6, kernel_size=3, padding=1))


# --------------------------------------------------------------------------------------------
# Indexing: x[idx] in its forms, in-place fills with a tensor value


@register("ops_index", [f32(4, 5, 6), i64(3, high=4), i64(3, high=5), f32(3, 4)],
          torchscript=True, needs=["aten::index", "aten::fill_", "aten::index_put_"])
class Index(nn.Module):
    def forward(self, x, i, j, m):
        i, j = i % 4, j % 5  # any int input indexes (tinytrace --verify draws them from [0, 10))
        y = x.clone()
        y[1].fill_(x.mean())
        z = m.clone()
        z[m > 0] = 0.5
        w = m.clone()
        w[:, i[:2]] = m[0, 0]
        return (x[[2, 0]], x[[1, 0], [0, 3]], x[..., [4, 1]], x[x > 0], x[:, j], x[i, :, j[:1]],
                x[i, j], x[None, i], x[1, j], x[:, j, 1:3], x[[True, False, True, True]],
                m[m.sum(1) > 0], y, z, w, torch.zeros(3).fill_(m.sum()))


# --------------------------------------------------------------------------------------------
# nn.RNN (tanh and relu, layers, bidirectional, batch_first, with and without h0), traced and
# scripted; unbatched inputs (traced: the module is inlined around torch.rnn_tanh)


class Rnns(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(4, 6)
        self.deep = nn.RNN(4, 5, num_layers=2, nonlinearity="relu", bidirectional=True,
                           batch_first=True)
        self.plain = nn.RNN(4, 3, bias=False, nonlinearity="relu")

    def forward(self, x, xb, h0):
        y, h = self.rnn(x)
        yb, hb = self.deep(xb, h0)
        yp, _ = self.plain(x)
        return y, h, yb, hb, yp


@register("ops_rnn", [f32(7, 2, 4), f32(2, 7, 4), f32(4, 2, 5)], torchscript=True,
          needs=["aten::rnn_tanh", "aten::rnn_relu"])
def rnn_traced():
    return Rnns()


@register("ops_rnn_scripted", [f32(7, 2, 4), f32(2, 7, 4), f32(4, 2, 5)], mode="script",
          torchscript=True)
def rnn_scripted():
    return Rnns()


@register("ops_rnn_unbatched", [f32(6, 4), f32(6, 4)],
          needs=["aten::rnn_tanh", "aten::lstm", "aten::gru"])
class RnnUnbatched(nn.Module):
    """Unbatched inputs: the traced forward unsqueezes around the ATen call, so the modules are
    inlined and the calls are torch.rnn_tanh / torch.lstm / torch.gru."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(4, 3)
        self.lstm = nn.LSTM(4, 3)
        self.gru = nn.GRU(4, 3)

    def forward(self, x, y):
        a, ha = self.rnn(x)
        b, (hb, cb) = self.lstm(y)
        c, hc = self.gru(x)
        return a, ha, b, hb, cb, c, hc


# --------------------------------------------------------------------------------------------
# Generation


def make_inputs(spec, gen):
    return tuple(gen_models.random_tensor(i[0], i[1], gen, *i[2:]) for i in spec.inputs)


def overloads(graph):
    """The qualified ATen overloads of a graph's nodes ("aten::stft.center"), nested blocks too."""
    found = set()
    for n in gen_models.graph_nodes(graph):
        if n.kind().startswith("aten::"):
            s = n.schema()
            found.add(s.split("(")[0] if s != "(no schema)" else n.kind())
    return found


def clone_tree(x):
    if isinstance(x, torch.Tensor):
        return x.clone()
    if isinstance(x, (tuple, list)):
        return type(x)(clone_tree(v) for v in x)
    return x


def as_real(t):
    return torch.view_as_real(t.resolve_conj()) if t.is_complex() else t


def check_outputs(name, eager, traced):
    """The archive's outputs against eager ones: same structure, finite, equal within 1e-5, and
    not all vanishing."""
    e_flat, t_flat = gen_models.flatten(eager), gen_models.flatten(traced)
    assert len(e_flat) == len(t_flat), f"{name}: the traced archive changed the output structure"
    max_abs = 0.0
    for i, (e, t) in enumerate(zip(e_flat, t_flat)):
        e, t = as_real(e), as_real(t)
        if not t.is_floating_point():
            assert torch.equal(e, t), f"{name}: output {i} (integer) differs after tracing"
            continue
        assert torch.isfinite(t).all(), f"{name}: output {i} is not finite"
        scale = max(float(e.abs().max()), 1e-30) if e.numel() else 1.0
        rel = float((e - t).abs().max()) / scale if e.numel() else 0.0
        assert rel <= 1e-5, f"{name}: output {i}: traced and eager differ (rel {rel:.2e})"
        if t.numel():
            max_abs = max(max_abs, float(t.abs().max()))
    assert max_abs > 1e-3, f"{name}: max |output| = {max_abs:.3e} is too small"
    return t_flat, max_abs


def generate(spec, out_dir, st):
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED + 1)
    model = spec.build().eval()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.5)
    inputs = make_inputs(spec, gen)
    with torch.no_grad():
        eager = model(*inputs)
        traced = (torch.jit.script(model) if spec.mode == "script"
                  else torch.jit.trace(model, inputs, check_trace=False))
        expected = clone_tree(traced(*inputs))  # views of one storage as two dtypes: saved apart
    found = overloads(traced.inlined_graph)
    bases = {o.split(".")[0] for o in found}
    missing = [k for k in spec.needs if k not in found and k not in bases]
    assert not missing, f"{spec.name}: the traced graph has no {', '.join(missing)}"
    flat, max_abs = check_outputs(spec.name, eager, expected)

    meta = {
        "name": spec.name,
        "group": GROUP,
        "generator": st,
        "capture": spec.mode,
        "inputs": [{"shape": list(i[0]), "dtype": i[1]} for i in spec.inputs],
        "input_shape_args": [gen_models.shape_arg(i[0], i[1]) for i in spec.inputs],
        "outputs": [{"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", "")}
                    for t in flat],
        "tolerance": spec.tol,
        "expect_warnings": [],
        "no_fallback": True,
        "max_abs_output": max_abs,
        "num_parameters": sum(p.numel() for p in model.parameters()),
        "torch_ops": sorted(found),
    }
    gen_models.save_model_files(os.path.join(out_dir, spec.name), traced, inputs, expected, meta)
    return max_abs, len(found)


def main():
    ap = gen_models.one_group_parser(__doc__, GROUP,
                                     "print 'name torchscript|plain' per model and exit")
    args = ap.parse_args()
    if args.list:
        for spec in SPECS.values():
            print(spec.name, "torchscript" if spec.torchscript else "plain")
        return 0
    if not args.out:
        ap.error("--out DIR is required")
    names = gen_models.select_names(ap, args.only, GROUP, SPECS)
    st = gen_models.stamp(__file__)

    def generate_one(name):
        with warnings.catch_warnings():  # dropout2d's rank notice, stft's return_complex one
            warnings.simplefilter("ignore")
            max_abs, n_ops = generate(SPECS[name], args.out, st)
        return f"max|output| = {max_abs:.4g}, {n_ops} ATen overloads"
    return 1 if gen_models.run_generation(names, args.out, st, args.force, generate_one) else 0


if __name__ == "__main__":
    sys.exit(main())
