#!/usr/bin/python3
"""Writes the small TorchScript models (and bad inputs) that tests/unit/test_torchscript_loader.cpp
reads from $TT_TESTMODELS_DIR.

usage: /usr/bin/python3 scripts/make_loader_testmodels.py --out OUTDIR [--torchvision]

Every file is named ldr_* so the directory can be shared with scripts/gen_models.py.
--torchvision also traces torchvision classification models (random weights, eval, no_grad) into
OUTDIR/ldr_tv_<name>.pt for manual dumps; they are large and slow, so the unit tests do not need them.
"""
import argparse
import os

import torch
import torch.nn as nn
import torch.nn.functional as F


def trace(model, *example):
    model.eval()
    with torch.no_grad():
        return torch.jit.trace(model, example, check_trace=False)


def save_keys(model, path):
    with open(path, "w") as f:
        for k in model.state_dict().keys():
            f.write(k + "\n")


class BasicBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + x)


class ResBlockNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = nn.Sequential(BasicBlock(8), BasicBlock(8))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer1(x)
        x = torch.flatten(self.avgpool(x), 1)
        return self.fc(x)


class UnknownOp(nn.Module):
    """A private ATen op called directly (torch._log_softmax): no public spelling, so it stays a
    torch.ops.aten call."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return torch._log_softmax(self.lin(x), 1, False)


class Leaves(nn.Module):
    """One instance of (nearly) every leaf module the loader recognises."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv1d(4, 6, 3, stride=2, padding=1, groups=2)
        self.c2 = nn.Conv2d(4, 6, 3, padding=1, padding_mode="reflect")
        self.c2s = nn.Conv2d(4, 4, 3, padding="same", bias=False)
        self.c3 = nn.Conv3d(4, 2, 3, padding=1)
        self.ct1 = nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2)
        self.ct2 = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2)
        self.ct3 = nn.ConvTranspose3d(4, 2, 2, stride=2, bias=False)
        self.bn1 = nn.BatchNorm1d(6)
        self.bn2 = nn.BatchNorm2d(6, affine=False, eps=1e-3, momentum=0.2)
        self.bn3 = nn.BatchNorm3d(2)
        self.ln = nn.LayerNorm([8], eps=1e-6)
        self.gn = nn.GroupNorm(2, 6)
        self.in1 = nn.InstanceNorm1d(6, affine=True)
        self.in2 = nn.InstanceNorm2d(6, track_running_stats=True)
        self.in3 = nn.InstanceNorm3d(2)  # no affine, no stats: num_features unknown -> inlined
        self.emb = nn.Embedding(10, 8, padding_idx=0)
        self.relu = nn.ReLU()
        self.relu6 = nn.ReLU6(inplace=True)
        self.hardtanh = nn.Hardtanh(-2.0, 2.0)
        self.lrelu = nn.LeakyReLU(0.2)
        self.prelu = nn.PReLU(6)
        self.elu = nn.ELU(0.5)
        self.gelu = nn.GELU(approximate="tanh")
        self.silu = nn.SiLU()
        self.hswish = nn.Hardswish()
        self.hsig = nn.Hardsigmoid()
        self.sig = nn.Sigmoid()
        self.tanh = nn.Tanh()
        self.softmax = nn.Softmax(dim=1)
        self.logsoftmax = nn.LogSoftmax(dim=-1)
        self.mp1 = nn.MaxPool1d(2)
        self.mp2 = nn.MaxPool2d(3, 2, 1, ceil_mode=True)
        self.mp3 = nn.MaxPool3d(2)
        self.ap1 = nn.AvgPool1d(3, 2, 1)
        self.ap2 = nn.AvgPool2d(3, 2, 1, count_include_pad=False)
        self.ap3 = nn.AvgPool3d(2)
        self.aap1 = nn.AdaptiveAvgPool1d(2)
        self.aap2 = nn.AdaptiveAvgPool2d((1, 1))
        self.aap3 = nn.AdaptiveAvgPool3d(1)
        self.amp2 = nn.AdaptiveMaxPool2d(2)
        self.flatten = nn.Flatten(1)
        self.drop = nn.Dropout(0.3)
        self.ident = nn.Identity()
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.upb = nn.Upsample(size=(7, 9), mode="bilinear", align_corners=True)
        self.ps = nn.PixelShuffle(2)
        self.zp = nn.ZeroPad2d((1, 2, 3, 4))
        self.cp = nn.ConstantPad2d(1, 0.5)
        self.fc = nn.Linear(8, 3, bias=False)
        self.rms = nn.RMSNorm(8)
        self.rms2 = nn.RMSNorm([8], eps=1e-3, elementwise_affine=False)
        self.lstm = nn.LSTM(8, 4, num_layers=2, batch_first=True, bidirectional=True)
        self.gru = nn.GRU(8, 5)
        self.lstmp = nn.LSTM(8, 6, proj_size=3)

    def forward(self, x1, x2, x3, idx):
        a = self.in1(self.ct1(x1)) + self.bn1(self.c1(x1)).sum()
        a = self.mp1(a) + self.ap1(a).sum() + self.aap1(a).mean()
        b = self.bn2(self.c2(x2)) + self.ct2(x2)[:, :, :8, :8] + self.c2s(x2).mean()
        b = self.gn(b) + self.in2(b)
        for m in [self.relu, self.relu6, self.hardtanh, self.lrelu, self.prelu, self.elu,
                  self.gelu, self.silu, self.hswish, self.hsig, self.sig, self.tanh,
                  self.softmax, self.drop, self.ident]:
            b = m(b)
        b = self.mp2(b).sum() + self.ap2(b).sum() + self.aap2(b).sum() + self.amp2(b).sum()
        c = self.bn3(self.c3(x3)) + self.ct3(x3)[:, :, :4, :4, :4]
        c = self.in3(c)
        c = self.mp3(c).sum() + self.ap3(c).sum() + self.aap3(c).sum()
        d = self.up(x2).sum() + self.upb(x2).sum() + self.ps(x2).sum() + self.zp(x2).sum() + self.cp(x2).sum()
        e = self.rms2(self.rms(self.ln(self.emb(idx))))
        e = self.logsoftmax(self.fc(e)) + self.flatten(x2).sum()
        out, (h, cc) = self.lstm(self.emb(idx))
        g, hg = self.gru(self.emb(idx))
        p, _ = self.lstmp(self.emb(idx))
        return a, b, c, d, e, out, h, cc, g, hg, p


# self.ident is left out: a traced nn.Identity call returns its input, which the tracer does not
# record as a call at all.
LEAVES = {
    "c1": "nn.Conv1d", "c2": "nn.Conv2d", "c2s": "nn.Conv2d", "c3": "nn.Conv3d",
    "ct1": "nn.ConvTranspose1d", "ct2": "nn.ConvTranspose2d", "ct3": "nn.ConvTranspose3d",
    "bn1": "nn.BatchNorm1d", "bn2": "nn.BatchNorm2d", "bn3": "nn.BatchNorm3d",
    "ln": "nn.LayerNorm", "gn": "nn.GroupNorm", "in1": "nn.InstanceNorm1d",
    "in2": "nn.InstanceNorm2d", "emb": "nn.Embedding", "relu": "nn.ReLU", "relu6": "nn.ReLU6",
    "hardtanh": "nn.Hardtanh", "lrelu": "nn.LeakyReLU", "prelu": "nn.PReLU", "elu": "nn.ELU",
    "gelu": "nn.GELU", "silu": "nn.SiLU", "hswish": "nn.Hardswish", "hsig": "nn.Hardsigmoid",
    "sig": "nn.Sigmoid", "tanh": "nn.Tanh", "softmax": "nn.Softmax", "logsoftmax": "nn.LogSoftmax",
    "mp1": "nn.MaxPool1d", "mp2": "nn.MaxPool2d", "mp3": "nn.MaxPool3d", "ap1": "nn.AvgPool1d",
    "ap2": "nn.AvgPool2d", "ap3": "nn.AvgPool3d", "aap1": "nn.AdaptiveAvgPool1d",
    "aap2": "nn.AdaptiveAvgPool2d", "aap3": "nn.AdaptiveAvgPool3d", "amp2": "nn.AdaptiveMaxPool2d",
    "flatten": "nn.Flatten", "drop": "nn.Dropout", "up": "nn.Upsample",
    "upb": "nn.Upsample", "ps": "nn.PixelShuffle", "zp": "nn.ZeroPad2d", "cp": "nn.ConstantPad2d",
    "fc": "nn.Linear", "rms": "nn.RMSNorm", "rms2": "nn.RMSNorm", "lstm": "nn.LSTM", "gru": "nn.GRU", "lstmp": "nn.LSTM",
}


class NotAConv(nn.Conv2d):
    """A Conv2d subclass with its own forward: must be inlined, not lifted as nn.Conv2d."""

    def forward(self, x):
        return super().forward(x) * 2.0


class SubclassNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = NotAConv(3, 4, 3)
        self.plain = nn.Conv2d(4, 4, 1)

    def forward(self, x):
        return self.plain(self.conv(x))


class ScriptedIf(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x * 2
        return x - 1


class SharedBlock(nn.Module):
    # Config attributes that a scripted forward branches on and computes with: preparing its
    # graph folds them (Note [Sharing prepared graphs]), so instances share the prepared graph
    # only when their values agree.
    def __init__(self, use_res, scale):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.use_res = use_res
        self.scale = scale

    def forward(self, x):
        y = torch.relu(self.lin(x)) * self.scale
        if self.use_res:
            return y + x
        return y


class BigConst(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(100, 100)
        self.table = torch.linspace(0, 1, 100)  # a plain attribute: traced as a constant

    def forward(self, x):
        return self.lin(x) + self.table + torch.tensor([1.0, 2.0]).sum()


class Functional(nn.Module):
    """Functional calls and tracer noise: sizes, views, slices, interpolate, to(), arange..."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 3, 3, 3))

    def forward(self, x):
        n = x.size(0)
        y = F.conv2d(x, self.w, None, 1, 1)
        y = F.relu(y) + F.interpolate(y, scale_factor=2.0, mode="bilinear", align_corners=False)[:, :, ::2, ::2]
        y = y.view(n, 4, -1).permute(0, 2, 1).contiguous()
        y = y.reshape(n, -1)[:, 1:10]
        z = torch.arange(y.shape[1]).to(torch.float32) + y.to("cpu")
        a, b = torch.chunk(z, 2, dim=1)
        return torch.cat([a, b.flip(1)], 1).softmax(-1), F.pad(x, (1, 1), value=0.5), x.mean()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="output directory (created if missing)")
    ap.add_argument("--torchvision", action="store_true", help="also trace torchvision models")
    args = ap.parse_args()
    out = args.out
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)

    m = ResBlockNet()
    trace(m, torch.randn(1, 3, 32, 32)).save(os.path.join(out, "ldr_resblock.pt"))
    save_keys(m, os.path.join(out, "ldr_resblock.keys"))
    torch.save(m.state_dict(), os.path.join(out, "ldr_state_dict.pth"))
    torch.save(m, os.path.join(out, "ldr_pickled_module.pth"))
    with open(os.path.join(out, "ldr_resblock.pt"), "rb") as f:
        data = f.read()
    with open(os.path.join(out, "ldr_truncated.pt"), "wb") as f:
        f.write(data[: len(data) // 2])

    trace(UnknownOp(), torch.randn(2, 4)).save(os.path.join(out, "ldr_unknown_op.pt"))

    m = Leaves()
    trace(m, torch.randn(2, 4, 16), torch.randn(2, 4, 8, 8), torch.randn(1, 4, 4, 4, 4),
          torch.tensor([[1, 2, 0]])).save(os.path.join(out, "ldr_leaves.pt"))
    save_keys(m, os.path.join(out, "ldr_leaves.keys"))
    with open(os.path.join(out, "ldr_leaves.txt"), "w") as f:
        for path, op in LEAVES.items():
            f.write(f"{path} {op}\n")

    trace(SubclassNet(), torch.randn(1, 3, 8, 8)).save(os.path.join(out, "ldr_subclass.pt"))
    torch.jit.script(ScriptedIf()).save(os.path.join(out, "ldr_scripted_if.pt"))
    # 12 instances of one scripted type in 3 variants: use_res True/False, one scale 3.0.
    torch.manual_seed(0)
    blocks = [SharedBlock(i % 3 != 0, 3.0 if i == 7 else 2.0) for i in range(12)]
    torch.jit.script(nn.Sequential(*blocks).eval()).save(os.path.join(out, "ldr_scripted_shared.pt"))
    trace(BigConst(), torch.randn(2, 100)).save(os.path.join(out, "ldr_bigconst.pt"))
    trace(Functional(), torch.randn(2, 3, 8, 8)).save(os.path.join(out, "ldr_functional.pt"))

    torch.save({"a": torch.arange(6.0).reshape(2, 3), "b": torch.tensor([1, 2], dtype=torch.int64)},
               os.path.join(out, "ldr_tensors.pth"))

    if args.torchvision:
        import torchvision.models as tvm
        names = ["resnet18", "mobilenet_v2", "mobilenet_v3_large", "efficientnet_b0", "squeezenet1_1",
                 "shufflenet_v2_x1_0", "densenet121", "googlenet", "vit_b_16"]
        for name in names:
            kwargs = {"aux_logits": False, "init_weights": False} if name == "googlenet" else {}
            model = getattr(tvm, name)(weights=None, **kwargs)
            trace(model, torch.randn(1, 3, 224, 224)).save(os.path.join(out, f"ldr_tv_{name}.pt"))
            save_keys(model, os.path.join(out, f"ldr_tv_{name}.keys"))
            print("wrote", name)


if __name__ == "__main__":
    main()
