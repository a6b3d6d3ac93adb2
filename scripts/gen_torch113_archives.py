#!/usr/bin/python3
"""Writes the torch-1.13-era TorchScript archives committed in testdata/models/torch113/.

Archives saved by torch 1.13 must keep converting after tinytrace moved to LibTorch 2.6, but torch
1.13 is gone from the build system (Debian 13 ships 2.6), so these were generated ONCE with Debian
12's python3-torch 1.13 and committed (small: < 100 KB each). Re-running it needs torch 1.13:

    /usr/bin/python3 scripts/gen_torch113_archives.py --out testdata/models/torch113   # Debian 12

For each model NAME: NAME.pt (traced or scripted), NAME.inputs.pt, NAME.expected.pt (the 1.13
outputs) and NAME.json in the sidecar format of scripts/gen_models.py (group "torch113"), so
tests/e2e/run_convert.py converts them like any generated model. The expected outputs are not
used by the checker (it runs the archive in the torch of the test system); they record what 1.13
computed.
"""
import argparse
import json
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

SEED = 20240601


class ScriptedControlFlow(nn.Module):
    """Scripted: a data-dependent branch, a loop over a ModuleList, a list of results."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.blocks = nn.ModuleList([nn.Conv2d(8, 8, 3, padding=1) for _ in range(2)])
        self.head = nn.Linear(8, 5)

    def forward(self, x):
        y = self.stem(x)
        if bool(y.mean() > 0.0):
            y = y * 2.0
        else:
            y = y - 1.0
        for blk in self.blocks:
            y = F.relu(blk(y)) + y
        outs = []
        for i in range(y.size(1) // 4):
            outs.append(y[:, i * 4:(i + 1) * 4].mean())
        z = torch.flatten(F.adaptive_avg_pool2d(y, 1), 1)
        return self.head(z) + torch.stack(outs).sum()


class TracedTransformer(nn.Module):
    """Traced: a 2-layer TransformerEncoder (batch_first) and a MultiheadAttention, in eval."""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2)
        self.mha = nn.MultiheadAttention(16, 2, batch_first=True)
        self.out = nn.Linear(16, 4)

    def forward(self, x):
        y = self.encoder(x)
        a, _ = self.mha(y, y, y, need_weights=False)
        return self.out(a + y)


class TracedLstm(nn.Module):
    """Traced: a 2-layer LSTM and a GRU."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 12, num_layers=2, batch_first=True)
        self.gru = nn.GRU(12, 6, batch_first=True, bidirectional=True)

    def forward(self, x):
        y, _ = self.lstm(x)
        z, h = self.gru(y)
        return z, h


MODELS = [
    # name, class, input shapes, scripted?
    ("t113_scripted_control_flow", ScriptedControlFlow, [(2, 3, 16, 16)], True),
    ("t113_traced_transformer", TracedTransformer, [(2, 5, 16)], False),
    ("t113_traced_lstm", TracedLstm, [(2, 7, 8)], False),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if not torch.__version__.startswith("1.13"):
        sys.exit(f"error: these archives record what torch 1.13 saves; this is torch {torch.__version__}")
    os.makedirs(args.out, exist_ok=True)
    for name, cls, shapes, scripted in MODELS:
        torch.manual_seed(SEED)
        model = cls().eval()
        with torch.no_grad():
            for p in model.parameters():
                p.add_(torch.randn_like(p) * 0.05)
            for m in model.modules():
                if isinstance(m, nn.BatchNorm2d):
                    m.running_mean.uniform_(-0.5, 0.5)
                    m.running_var.uniform_(0.5, 2.0)
        inputs = tuple(torch.randn(*s) for s in shapes)
        with torch.no_grad():
            ts = torch.jit.script(model) if scripted else torch.jit.trace(model, inputs, check_trace=False)
            expected = ts(*inputs)
        outs = list(expected) if isinstance(expected, tuple) else [expected]
        base = os.path.join(args.out, name)
        ts.save(base + ".pt")
        torch.save(inputs, base + ".inputs.pt")
        torch.save(expected, base + ".expected.pt")
        meta = {
            "name": name,
            "group": "torch113",
            "generator": f"gen_torch113_archives-torch{torch.__version__}",
            "inputs": [{"shape": list(s), "dtype": "float32"} for s in shapes],
            "input_shape_args": [",".join(str(d) for d in s) for s in shapes],
            "outputs": [{"shape": list(t.shape), "dtype": "float32"} for t in outs],
            "tolerance": 1e-4,
            "expect_warnings": [],
            "max_abs_output": max(float(t.abs().max()) for t in outs),
            "num_parameters": sum(p.numel() for p in model.parameters()),
        }
        with open(base + ".json", "w") as f:
            json.dump(meta, f, indent=1)
            f.write("\n")
        print(f"{name}: {os.path.getsize(base + '.pt')} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
