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


@register("ops_spectrogram", [f32(2, 400)], needs=["aten::stft", "aten::fft_rfft"])
class Spectrogram(nn.Module):
    """An audio front end: complex values (stft, rfft) between real ones, then a small CNN; also
    converted with --quant-prep, where the complex values (the arithmetic on them and the complex
    output too) must stay outside the quantized regions (Note [Complex values] in
    lib/ir/dtype_analysis.h)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4, 3)
        self.register_buffer("window", torch.hann_window(64))

    def forward(self, wave):
        spec = torch.stft(wave, 64, hop_length=16, window=self.window, return_complex=True)
        power = spec.abs().pow(2) + torch.fft.rfft(wave[:, :64]).abs().unsqueeze(2)
        x = self.conv((power + 1e-6).log().unsqueeze(1))
        x = F.relu(self.bn(x))
        # complex arithmetic and a complex output: no FloatFunctional, QuantStub or DeQuantStub
        return self.fc(x.mean((2, 3))), spec.angle().mean(), spec * 0.5 + spec


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
          needs=["aten::_upsample_nearest_exact2d", "aten::im2col", "aten::col2im",
                 "aten::_upsample_bilinear2d_aa", "aten::_upsample_bicubic2d_aa"])
class Resample(nn.Module):
    def forward(self, x, s, v):
        return (F.interpolate(x, scale_factor=2, mode="bilinear", antialias=True),
                F.interpolate(x, size=(5, 7), mode="bicubic", antialias=True, align_corners=True),
                F.interpolate(x, scale_factor=2.5, mode="nearest-exact", recompute_scale_factor=True),
                nn.functional.upsample_bilinear(x, scale_factor=2),
                F.interpolate(x, scale_factor=2, mode="nearest-exact"),
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
          needs=["aten::rnn_tanh", "aten::lstm", "aten::gru", "aten::unsafe_chunk"])
class RnnUnbatched(nn.Module):
    """Unbatched inputs: the traced forward unsqueezes around the ATen call, so the modules are
    inlined and the calls are torch.rnn_tanh / torch.lstm / torch.gru. Traced cells record their
    kernel's pieces (linear, unsafe_chunk, ...); scripted, torch.lstm_cell & co (ops_cells)."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(4, 3)
        self.lstm = nn.LSTM(4, 3)
        self.gru = nn.GRU(4, 3)
        self.lstm_cell = nn.LSTMCell(4, 3)
        self.gru_cell = nn.GRUCell(4, 3)
        self.tanh_cell = nn.RNNCell(4, 3)
        self.relu_cell = nn.RNNCell(4, 3, nonlinearity="relu", bias=False)

    def forward(self, x, y):
        a, ha = self.rnn(x)
        b, (hb, cb) = self.lstm(y)
        c, hc = self.gru(x)
        h1, c1 = self.lstm_cell(x)
        h2 = self.gru_cell(y, h1)
        return (a, ha, b, hb, cb, c, hc, h1, c1, h2, self.tanh_cell(x, h2),
                self.relu_cell(y))


@register("ops_cells", [f32(6, 4), f32(6, 4)], mode="script",
          needs=["aten::lstm_cell", "aten::gru_cell", "aten::rnn_tanh_cell", "aten::rnn_relu_cell"])
def cells_scripted():
    return RnnUnbatched()


@register("ops_queries", [f32(3, 4)], mode="script",
          needs=["aten::is_floating_point", "aten::is_complex", "aten::is_contiguous",
                 "aten::is_same_size", "aten::is_nonzero", "aten::item"])
class Queries(nn.Module):
    """Tensor queries a scripted model branches on (a trace records their values instead)."""

    def forward(self, x):
        y = x
        if x.is_floating_point() and not torch.is_complex(x) and x.is_contiguous():
            y = x * 2
        if torch.is_same_size(x, y) and torch.is_nonzero(x[0, 0] * 0 + 1):
            y = y + x[0, 1].item()
        return y


# --------------------------------------------------------------------------------------------
# The torch / Tensor / torch.special bindings of lib/ir/op_table_aten.cpp, by family. Inputs with a
# restricted domain are made inside the model: u = x.tanh() * 0.9 in (-1, 1), p = x.abs() + 0.5.


@register("ops_unary", [f32(3, 5)], torchscript=True,
          needs=["aten::acos", "aten::erfinv", "aten::lgamma", "aten::special_erfcx",
                 "aten::frexp", "aten::round.decimals"])
class Unary(nn.Module):
    def forward(self, x):
        u, p = x.tanh() * 0.9, x.abs() + 0.5
        out = [
            torch.absolute(x), torch.acos(u), torch.arccos(u), torch.acosh(p + 1),
            torch.arccosh(p + 1), torch.asin(u), torch.arcsin(u), torch.asinh(x), torch.arcsinh(x),
            torch.atan(x), torch.arctan(x), torch.atanh(u), torch.arctanh(u), torch.cosh(u),
            torch.sinh(u), torch.tan(u), torch.deg2rad(x), torch.rad2deg(x), torch.digamma(p),
            torch.erfc(x), torch.erfinv(u), torch.exp2(u), torch.expm1(u), torch.fix(x * 3),
            torch.frac(x * 3), torch.i0(u), torch.lgamma(p), torch.log10(p), torch.log1p(p),
            torch.log2(p), torch.logit(u.sigmoid()), torch.logit(u.sigmoid(), eps=0.1),
            torch.nan_to_num(x.log()), torch.nan_to_num(x.log(), nan=0.5, posinf=1.0),
            torch.negative(x), torch.positive(x), torch.sinc(x), torch.trunc(x * 3),
            torch.signbit(x), torch.sgn(x), torch.isnan(x.log()), torch.isinf(x / 0.0),
            torch.isfinite(x.log()), torch.isposinf(x / 0.0), torch.isneginf(x / 0.0),
            torch.isreal(x), torch.polygamma(1, p), torch.mvlgamma(p + 2, 2), x.round(decimals=2),
            torch.frexp(x)[0], torch.frexp(x)[1], torch.special.erfcx(x), torch.special.entr(p),
            torch.special.ndtr(x), torch.special.ndtri(u.sigmoid()), torch.special.log_ndtr(x),
            torch.special.i0e(u), torch.special.i1(u), torch.special.i1e(u),
            torch.special.bessel_j0(x), torch.special.bessel_j1(x), torch.special.bessel_y0(p),
            torch.special.bessel_y1(p), torch.special.modified_bessel_i0(u),
            torch.special.modified_bessel_i1(u), torch.special.modified_bessel_k0(p),
            torch.special.modified_bessel_k1(p), torch.special.scaled_modified_bessel_k0(p),
            torch.special.scaled_modified_bessel_k1(p), torch.special.spherical_bessel_j0(x),
            torch.special.airy_ai(u), torch.special.multigammaln(p + 2, 2),
            torch.special.log_softmax(x, 1), torch.special.softmax(x, 0),
            torch.special.logsumexp(x, [1]), torch.special.gammaln(p),
            torch.special.polygamma(2, p), torch.special.chebyshev_polynomial_t(u, 3),
            torch.special.chebyshev_polynomial_u(u, 2), torch.special.chebyshev_polynomial_v(u, 2),
            torch.special.chebyshev_polynomial_w(u, 2), torch.special.hermite_polynomial_h(u, 3),
            torch.special.hermite_polynomial_he(u, 3), torch.special.laguerre_polynomial_l(u, 2),
            torch.special.legendre_polynomial_p(u, 3),
            torch.special.shifted_chebyshev_polynomial_t(u.sigmoid(), 2),
            torch.special.shifted_chebyshev_polynomial_u(u.sigmoid(), 2),
            torch.special.shifted_chebyshev_polynomial_v(u.sigmoid(), 2),
            torch.special.shifted_chebyshev_polynomial_w(u.sigmoid(), 2),
            torch.special.xlog1py(p, x.abs()), torch.special.zeta(p + 1, p),
            torch.special.gammainc(p, p), torch.special.gammaincc(p, p),
        ]
        return tuple(out)


@register("ops_binary", [f32(3, 5), f32(3, 5), i64(3, 5, high=16)], torchscript=True,
          needs=["aten::atan2", "aten::copysign", "aten::float_power", "aten::heaviside",
                 "aten::bitwise_and", "aten::gcd", "aten::addcdiv", "aten::isin"])
class Binary(nn.Module):
    def forward(self, x, y, k):
        p, q = x.abs() + 0.5, y.abs() + 0.5
        k1 = k + 1
        out = [
            torch.atan2(x, y), torch.arctan2(x, y), torch.copysign(x, y), torch.copysign(x, -1.0),
            torch.float_power(p, y), torch.float_power(p, 2), torch.fmax(x, y), torch.fmin(x, y),
            torch.heaviside(x, y), torch.hypot(x, y), torch.igamma(p, q), torch.igammac(p, q),
            torch.ldexp(x, k), torch.lerp(x, y, 0.3), torch.lerp(x, y, q.sigmoid()),
            torch.logaddexp(x, y), torch.logaddexp2(x, y), torch.logical_and(x > 0, y > 0),
            torch.logical_or(x > 0, y > 0), torch.logical_xor(x > 0, y > 0),
            torch.nextafter(x, y), torch.xlogy(p, q), torch.xlogy(p, 2.0),
            torch.true_divide(x, q), torch.divide(x, q), torch.divide(x, q, rounding_mode="floor"),
            torch.multiply(x, y), torch.subtract(x, y, alpha=2), torch.greater(x, y),
            torch.greater_equal(x, 0.1), torch.less(x, y), torch.less_equal(x, y),
            torch.not_equal(x, y), torch.bitwise_and(k, 5), torch.bitwise_or(k, k1),
            torch.bitwise_xor(k, 3), torch.bitwise_not(k), torch.bitwise_left_shift(k, 1),
            torch.bitwise_right_shift(k, 2), torch.gcd(k, k1), torch.lcm(k, k1),
            torch.addcdiv(x, y, q, value=0.5), torch.addcmul(x, y, x, value=2),
            torch.clip(x, -0.5, 0.5), torch.clip(x, y.min(), y.max()),
            torch.isclose(x, x + 1e-9), torch.isin(k, k1), torch.special.xlogy(p, q),
            torch.special.xlog1py(p, 1.5), torch.special.zeta(2.5, q),
        ]
        return tuple(out)


@register("ops_reduce", [f32(4, 6), i64(10, high=5)], torchscript=True,
          needs=["aten::aminmax", "aten::cummax", "aten::logcumsumexp", "aten::median",
                 "aten::quantile", "aten::std", "aten::var_mean"])
class Reduce(nn.Module):
    def forward(self, x, k):
        k = k % 5
        b = x > 0
        mn, mx = torch.aminmax(x, dim=1)
        out = [
            torch.all(b), torch.all(b, 1), torch.all(b, (0, 1)), torch.any(b), torch.any(b, 0),
            mn, mx, torch.aminmax(x)[0], torch.argsort(x, 1), x.argsort(dim=0, stable=True),
            torch.count_nonzero(b), torch.count_nonzero(x, 1), torch.cummax(x, 1)[0],
            torch.cummax(x, 0)[1], torch.cummin(x, 1)[0], torch.cumprod(x, 1),
            torch.logcumsumexp(x, 0), torch.logsumexp(x, 1), torch.logsumexp(x, (0, 1), True),
            torch.median(x), torch.median(x, 1)[0], torch.median(x, 0)[1], torch.nanmedian(x),
            torch.nanmedian(x, 1)[0], torch.mode(x, 1)[0], torch.kthvalue(x, 2, 1)[0],
            torch.msort(x), torch.nanmean(x), torch.nanmean(x, 1), torch.nansum(x, 0),
            torch.quantile(x, 0.3), torch.quantile(x, torch.tensor([0.2, 0.7]), 1, True),
            torch.nanquantile(x, 0.5, dim=0, interpolation="nearest"), x.prod(),
            x.sort(stable=True, dim=1)[0], torch.dist(x, x.flip(0)), torch.renorm(x, 2, 0, 1.0),
            torch.histc(x, 5), torch.bincount(k), torch.bincount(k, minlength=7), torch.trace(x),
            torch.diff(x), torch.diff(x, 2, 0), torch.cov(x), torch.corrcoef(x),
            torch.std(x), torch.std(x, 1), torch.std(x, 1, unbiased=False, keepdim=True),
            torch.std(x, 0, correction=2), x.std(), torch.var(x, (0, 1)), x.var(False),
            torch.std_mean(x, 1)[0], torch.std_mean(x)[1], torch.var_mean(x, 0, unbiased=False)[0],
            torch.var_mean(x, 1, correction=0)[1], torch.nuclear_norm(x), torch.nuclear_norm(x, [0, 1]),
            torch.frobenius_norm(x, [1]), torch.norm_except_dim(x, 2, 0),
            torch.histogram(x, torch.tensor([-2.0, 0.0, 2.0]))[0], x.histogram(3)[0],
        ]
        return tuple(out)


@register("ops_shape", [f32(2, 3, 4), f32(3, 4)], torchscript=True,
          needs=["aten::broadcast_to", "aten::dstack", "aten::diag_embed", "aten::movedim",
                 "aten::tensor_split", "aten::unfold", "aten::block_diag", "aten::meshgrid"])
class Shape(nn.Module):
    def forward(self, x, m):
        a, b = torch.broadcast_tensors(m, x)
        g1, g2 = torch.meshgrid(m[0], m[1], indexing="ij")
        h1, h2 = torch.meshgrid([m[0], m[1]], indexing="xy")
        out = [
            torch.broadcast_to(m, (2, 3, 4)), torch.column_stack([m, m]), torch.concat([m, m], 1),
            torch.concatenate([m, m]), torch.dstack([m, m]), torch.hstack([m, m]),
            torch.vstack([m, m]), torch.diag(m), torch.diag(m[0], 1), torch.diag_embed(m),
            torch.diagflat(m[0]), torch.diagonal(x, 0, 1, 2), torch.diagonal_scatter(m, m[0, :3]),
            torch.select_scatter(m, m[0] * 2, 0, 1), torch.slice_scatter(m, m[:, :2] * 2, 1, 0, 2),
            torch.as_strided(m, (2, 2), (1, 2)), torch.as_strided_scatter(m, m[0, :4].view(2, 2), (2, 2), (1, 2)),
            torch.dsplit(x, 2)[1], x.dsplit([1, 3])[1], torch.hsplit(m, 2)[0], m.hsplit([1])[1],
            torch.vsplit(m, 3)[2], m.vsplit([1, 2])[0], torch.tensor_split(x, 3, 2)[1],
            x.tensor_split([1, 3], 2)[1], torch.fliplr(m), torch.flipud(m), torch.rot90(x, 1, [1, 2]),
            torch.movedim(x, 0, 2), torch.movedim(x, (0, 1), (2, 0)), torch.moveaxis(x, 1, 0),
            torch.swapaxes(x, 0, 2), torch.swapdims(x, 1, 2), torch.narrow(x, 2, 1, 2),
            torch.ravel(x), torch.tile(m, (2, 1)), torch.kron(m, m[:2, :2]), x.unfold(2, 2, 1),
            m.reshape_as(m.t()), torch.squeeze(x.unsqueeze(0).unsqueeze(2), (0, 2)), m.T, x.mT,
            m.H, x.mH, x.adjoint(), torch.atleast_1d(m[0, 0]), torch.atleast_2d(m[0]),
            torch.atleast_3d(m), torch.atleast_2d([m[0], m[1]])[1], torch.block_diag(m, m[:2]),
            torch.cartesian_prod(m[0], m[1, :2]), torch.combinations(m[0], 2), a, b, g1, g2, h1, h2,
            torch.tensordot(x, m, dims=([1, 2], [0, 1])), torch.tensordot(m, m.T, 1),
            x.tensor_split(torch.tensor([1, 2]), 2)[0],
            torch.repeat_interleave(torch.tensor([1, 2, 0, 1])) + m[0, 0],
            m + torch.tril_indices(3, 4)[0, :4], m + torch.triu_indices(3, 4, 1)[1, :4],
            torch.vander(m[0], 3), torch.eye(3) + m[:, :3], torch.eye(3, 4) * m,
            torch.range(0, 3) + m, torch.range(1, 2, 0.25)[:4] * m,
            torch.linspace(0, 1, 4) * m, torch.logspace(0, 1, 4, base=2.0) * m,
            torch.scalar_tensor(2.5) * m, m.sum_to_size(1, 4), torch.empty(3, 4).shape[1] * m,
            torch.empty_like(m).size(0) * m, m.new_empty((2, 2)).size(1) * m,
        ]
        return tuple(out)


@register("ops_scatter", [f32(3, 5), i64(3, 5, high=3), f32(6)], torchscript=True,
          needs=["aten::take", "aten::take_along_dim", "aten::put", "aten::index_add",
                 "aten::index_fill", "aten::index_reduce", "aten::scatter_reduce",
                 "aten::masked_scatter", "aten::argwhere"])
class Scatter(nn.Module):
    def forward(self, x, k, v):
        k = k % 3  # any int input indexes (tinytrace --verify draws them from [0, 10))
        i = torch.tensor([0, 2])
        mask = x > 0
        out = [
            torch.take(x, k), torch.take_along_dim(x, k, 0), torch.take_along_dim(x, k[:1], 0),
            torch.put(x, i, v[:2]), torch.put(x, i, v[:2], accumulate=True),
            torch.index_add(x, 0, i, x[:2]), torch.index_add(x, 1, i, x[:, :2], alpha=2),
            torch.index_fill(x, 1, i, -1.0), torch.index_fill(x, 0, i, v[0]),
            torch.index_put(x, [i], x[:2] * 2), torch.index_put(x, (i, i), v[:2], True),
            torch.index_reduce(x, 0, i, x[:2], "prod"),
            torch.index_reduce(x, 1, i, x[:, :2], "amax", include_self=False),
            torch.scatter(x, 0, k, 0.5), torch.scatter(x, 0, k, 2.0, reduce="multiply"),
            x.scatter(0, k, x * 2), x.scatter(1, k, x, reduce="add"),
            torch.scatter_add(x, 0, k, x), torch.scatter_reduce(x, 0, k, x, "amax"),
            torch.scatter_reduce(x, 1, k, x, "mean", include_self=False),
            torch.masked_scatter(x, mask, v.repeat(3)), torch.masked_select(x, mask),
            torch.nonzero(mask), torch.argwhere(mask), torch.where(mask)[1],
        ]
        return tuple(out)


@register("ops_linalg", [f32(3, 3), f32(3, 3), f32(2, 3, 4), f32(3)], torchscript=True,
          needs=["aten::linalg_inv", "aten::linalg_solve", "aten::linalg_svd", "aten::linalg_eigh",
                 "aten::cholesky_solve", "aten::addbmm", "aten::linalg_vector_norm"])
class Linalg(nn.Module):
    def forward(self, a, b, t, v):
        spd = a @ a.mT + 3 * torch.eye(3)
        L = torch.linalg.cholesky(spd)
        lu, piv = torch.linalg.lu_factor(spd)
        q, r = torch.linalg.qr(a)
        tau = torch.geqrf(a)[1]
        out = [
            torch.addbmm(a, t, t.mT), torch.addmv(v, a, v), torch.addr(a, v, v, alpha=0.5),
            torch.dot(v, v), torch.vdot(v, v), torch.inner(a, b), torch.outer(v, v), torch.ger(v, v),
            torch.mv(a, v), L, torch.linalg.cholesky_ex(spd)[0], torch.cholesky(spd),
            torch.cholesky_inverse(L), torch.cholesky_solve(b, L), torch.det(spd), torch.logdet(spd),
            torch.inverse(spd), torch.pinverse(a), torch.qr(a)[1], torch.svd(spd)[1],
            torch.slogdet(spd)[1], torch.triangular_solve(b, L, upper=False)[0], torch.geqrf(a)[0],
            torch.orgqr(torch.geqrf(a)[0], tau), torch.ormqr(torch.geqrf(a)[0], tau, b),
            torch.lu_solve(b, lu, piv), torch.lu_unpack(lu, piv)[1], torch.matrix_exp(a * 0.1),
            torch.matrix_power(a, 3), torch.linalg.cond(spd), torch.linalg.cond(spd, "fro"),
            torch.linalg.cross(b, a), torch.cross(b, a, dim=1), torch.linalg.det(spd),
            torch.linalg.diagonal(t), torch.linalg.eigh(spd)[0], torch.linalg.eigvalsh(spd),
            torch.linalg.eigvals(spd).real.sort()[0], torch.linalg.householder_product(q, tau),
            torch.linalg.inv(spd), torch.linalg.inv_ex(spd)[0], torch.linalg.ldl_factor(spd)[0],
            torch.linalg.ldl_solve(*torch.linalg.ldl_factor(spd), b),
            torch.linalg.ldl_factor_ex(spd)[0], torch.linalg.lstsq(spd, b)[0],
            torch.linalg.lu(spd)[2], lu, torch.linalg.lu_factor_ex(spd)[0],
            torch.linalg.lu_solve(lu, piv, b), torch.linalg.matmul(a, b),
            torch.linalg.matrix_exp(a * 0.1), torch.linalg.matrix_norm(a),
            torch.linalg.matrix_norm(a, "nuc"), torch.linalg.matrix_power(a, 2),
            torch.linalg.matrix_rank(spd), torch.linalg.matrix_rank(spd, atol=0.1, hermitian=True),
            torch.linalg.multi_dot([a, b, a]), torch.linalg.norm(a), torch.linalg.norm(a, "fro"),
            torch.linalg.norm(v, 3), r, torch.linalg.pinv(spd), torch.linalg.pinv(spd, hermitian=True),
            torch.linalg.slogdet(spd)[1], torch.linalg.solve(spd, b), torch.linalg.solve_ex(spd, b)[0],
            torch.linalg.solve_triangular(L, b, upper=False), torch.linalg.svd(spd)[1],
            torch.linalg.svdvals(a), torch.linalg.tensorinv(spd.reshape(3, 3), ind=1),
            torch.linalg.tensorsolve(spd, v), torch.linalg.vander(v, N=3),
            torch.linalg.vecdot(a, b), torch.linalg.vector_norm(t, 1, (1, 2)),
            torch.linalg.eig(spd)[0].abs().sort()[0],
        ]
        return tuple(out)


@register("ops_nn", [f32(4, 5), f32(4, 5), i64(4, high=5), f32(2, 3, 6, 6)], torchscript=True,
          needs=["aten::grid_sampler", "aten::cross_entropy_loss", "aten::nll_loss_nd",
                 "aten::mse_loss", "aten::kl_div", "aten::cdist", "aten::one_hot"])
class NnFunctional(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(3, 5, 5))
        self.tbc = nn.Parameter(torch.randn(3, 5, 4))

    def forward(self, x, y, t, img):
        t = t % 5  # class indices whatever --verify draws
        p = x.sigmoid() * 0.9 + 0.05
        sign = torch.where(y > 0, 1.0, -1.0)
        theta = torch.cat([torch.eye(2).expand(2, 2, 2), x[:2, :2].unsqueeze(2) * 0.1], 2)
        grid = F.affine_grid(theta, [2, 3, 4, 4], align_corners=False)
        out = [
            F.cosine_similarity(x, y), F.cosine_similarity(x, y, dim=0, eps=1e-6),
            F.pairwise_distance(x, y), F.pairwise_distance(x, y, p=1.0, keepdim=True), F.pdist(x),
            F.bilinear(x, y, self.w), F.channel_shuffle(img, 3), F.one_hot(t, 6),
            F.conv_tbc(x.unsqueeze(1), self.tbc, torch.zeros(4), 1), grid,
            F.grid_sample(img, grid, align_corners=False),
            F.grid_sample(img, grid, mode="nearest", padding_mode="border", align_corners=True),
            F.grid_sample(img, grid, mode="bicubic", padding_mode="reflection", align_corners=False),
            torch.cdist(x, y), torch.cdist(x, y, p=1.0),
            torch.cdist(x, y, compute_mode="donot_use_mm_for_euclid_dist"),
            F.binary_cross_entropy(p, y.sigmoid()), F.binary_cross_entropy(p, y.sigmoid(), reduction="sum"),
            F.binary_cross_entropy_with_logits(x, y.sigmoid(), pos_weight=torch.ones(5) * 2),
            F.cross_entropy(x, t), F.cross_entropy(x, t, reduction="none", label_smoothing=0.1),
            F.nll_loss(x.log_softmax(1), t), F.nll_loss(x.log_softmax(1), t, ignore_index=2),
            F.huber_loss(x, y), F.huber_loss(x, y, delta=0.5, reduction="sum"), F.l1_loss(x, y),
            F.mse_loss(x, y, reduction="none"), F.smooth_l1_loss(x, y, beta=0.5),
            F.soft_margin_loss(x, sign), F.multi_margin_loss(x, t), F.multi_margin_loss(x, t, p=2, margin=0.5),
            F.multilabel_margin_loss(x, torch.tensor([3, 0, -1, 1, 2]).expand(4, 5)),
            F.kl_div(x.log_softmax(1), y.softmax(1), reduction="batchmean"),
            F.kl_div(x, y, reduction="none", log_target=True), F.poisson_nll_loss(x, y.abs()),
            F.poisson_nll_loss(x.exp(), y.abs(), log_input=False, full=True),
            F.hinge_embedding_loss(x, sign), F.margin_ranking_loss(x[:, 0], y[:, 0], sign[:, 0]),
            F.cosine_embedding_loss(x, y, sign[:, 0], margin=0.2),
            F.triplet_margin_loss(x, y, x.flip(0)), F.triplet_margin_loss(x, y, y.flip(0), swap=True, p=1),
            torch.embedding_bag(y, t, torch.tensor([0, 2]), False, 1, False, None, False)[0],
            torch.convolution(img, self.w[:, :3, :3].unsqueeze(1).expand(3, 1, 3, 3).contiguous(),
                              None, [1, 1], [1, 1], [1, 1], False, [0, 0], 3),
            torch.norm_except_dim(self.w, 2, 1), torch._weight_norm(self.w, self.w[:, :1, :1], 0),
        ]
        return tuple(out)


@register("ops_random", [f32(4, 6)], needs=["aten::bernoulli", "aten::normal", "aten::poisson",
                                             "aten::multinomial", "aten::rand_like"])
class Random(nn.Module):
    """Sampling ops: their values are random, so only facts that hold for every draw are
    returned (range, shape, count)."""

    def forward(self, x):
        p = x.sigmoid()
        out = [
            (torch.bernoulli(p) <= 1).float() + p, (p.bernoulli(0.3) >= 0).float() * x,
            torch.normal(x, 0.5).size(1) * x,
            torch.normal(x, p).shape[0] * x, torch.poisson(p).ge(0).float() + x,
            torch.binomial(p * 4, p).ge(0).float() * x, torch.multinomial(p, 3).lt(6).float().sum() * x,
            torch.rand_like(x).lt(1).float() * x, torch.randn_like(x).size(0) * x,
            torch.randint_like(x, 3).lt(3).float() * x, torch.randint_like(x, 2, 5).ge(2).float() * x,
        ]
        return tuple(out)


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
