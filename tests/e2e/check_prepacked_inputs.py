#!/usr/bin/python3
"""--optimize-for-inference's prepacked convs accept, compute and refuse what the original does.

    check_prepacked_inputs.py TINYTRACE WORK_DIR

A small scripted fully-convolutional model (three convs, one grouped) is converted with --emit
torchscript --optimize-for-inference --input-shape 1,3,16,16. Its NAME.pt must run its convs
prepacked (Note [Prepacked convolutions in NAME.pt]: three calls of the method that runs
mkldnn_prepacked::conv2d_run), and on inputs the original sees differently from the packing
size (unbatched C×H×W, another batch and spatial size, channels-last, a non-contiguous view,
autograd) give the original's outputs (relative difference <= 1e-4), memory format and input
gradient, and refuse what the original refuses (float64 and float16 inputs against float32
weights, a wrong channel count). Exit 0 and one OK line on success; `FAIL: ...` and exit 1
otherwise.
"""
import zygote
zygote.delegate()  # first, before torch is imported: Note [Torch zygote]
import json
import os
import shutil
import subprocess
import sys

import torch
import torch.nn.functional as F


def fail(msg):
    print(f"FAIL: {msg}", flush=True)
    sys.exit(1)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.c2 = torch.nn.Conv2d(8, 8, 3, padding=1, groups=4)
        self.c3 = torch.nn.Conv2d(8, 5, 1)

    def forward(self, x):
        a = torch.relu(self.c1(x))
        b = F.relu(self.c2(a), inplace=True)
        c = self.c3(b)
        return torch.relu(c) + c


def main():
    if len(sys.argv) != 3:
        fail(__doc__)
    tinytrace, work = sys.argv[1:3]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    # A frozen graph's second call compiles its fusion groups with LLVM when LibTorch's
    # TensorExpr fuser is on; that takes long here (scripts/bench_fuse.sh).
    torch._C._jit_set_texpr_fuser_enabled(False)
    torch.manual_seed(0)
    original = torch.jit.script(Net().eval())
    path = os.path.join(work, "net.pt")
    original.save(path)
    out = os.path.join(work, "out")
    cmd = [tinytrace, "convert", path, "-o", out, "--emit", "torchscript,report", "-q",
           "--optimize-for-inference", "--input-shape", "1,3,16,16", "--verify"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"{' '.join(cmd)} exited {r.returncode}: {r.stderr.strip()}")
    with open(os.path.join(out, "net.json")) as f:
        opt = json.load(f)["inference_optimization"]
    ours = torch.jit.load(os.path.join(out, "net.pt")).eval()
    if torch.backends.mkldnn.is_available():
        calls = str(ours.graph).count('prim::CallMethod[name="_conv2d_prepacked"]')
        after = opt["aten_ops_after"]
        if "prepack-convolutions" not in opt["passes"] or calls != 3 or \
                after.get("mkldnn_prepacked::conv2d_run") != 3 or "aten::conv2d" in after:
            fail(f"expected 3 prepacked convs: {calls} calls in NAME.pt's forward, report {opt}")

    def run(f, x):
        x = x.detach().clone().requires_grad_(x.requires_grad)
        try:
            y = f(x)
        except Exception as e:  # noqa: BLE001 -- both must refuse alike
            return f"refused ({str(e).strip().splitlines()[-1][:120]})"
        grad = None
        if x.requires_grad:
            y.sum().backward()
            grad = x.grad
        return y.detach(), grad, y.is_contiguous(memory_format=torch.channels_last)

    def rel(a, b):
        return (a.double() - b.double()).abs().max().item() / max(b.abs().max().item(), 1e-30)

    cases = {
        "packing size": torch.randn(1, 3, 16, 16),
        "unbatched 3x16x16": torch.randn(3, 16, 16),
        "batch 3, 20x12": torch.randn(3, 3, 20, 12),
        "channels-last": torch.randn(2, 3, 16, 16).to(memory_format=torch.channels_last),
        "non-contiguous": torch.randn(1, 3, 32, 16)[:, :, ::2],
        "float64": torch.randn(1, 3, 16, 16, dtype=torch.float64),
        "float16": torch.randn(1, 3, 16, 16, dtype=torch.float16),
        "4 channels": torch.randn(1, 4, 16, 16),
        "2-d": torch.randn(3, 16),
    }
    refused = []
    for grad_mode in (False, True):
        for label, x in (cases.items() if not grad_mode else
                         [("autograd", torch.randn(2, 3, 16, 16, requires_grad=True))]):
            with torch.set_grad_enabled(grad_mode):
                want, got = run(original, x), run(ours, x)
            if isinstance(want, str) or isinstance(got, str):
                if not (isinstance(want, str) and isinstance(got, str)):
                    fail(f"{label} input {list(x.shape)} {x.dtype}: original "
                         f"{want if isinstance(want, str) else 'ran'}, NAME.pt "
                         f"{got if isinstance(got, str) else 'ran'}")
                refused.append(label)
                continue
            (a, ga, cla), (b, gb, clb) = got, want
            if a.shape != b.shape or a.dtype != b.dtype or not rel(a, b) <= 1e-4 or cla != clb:
                fail(f"{label}: output {list(a.shape)} {a.dtype} channels-last {cla}, original "
                     f"{list(b.shape)} {b.dtype} channels-last {clb}, relative difference "
                     f"{rel(a, b) if a.shape == b.shape else 'n/a'}")
            if (ga is None) != (gb is None) or (ga is not None and not rel(ga, gb) <= 1e-4):
                fail(f"{label}: input gradient differs from the original's")
    if sorted(refused) != sorted(["float64", "float16", "4 channels", "2-d"]):
        fail(f"refused by both: {refused}")
    print(f"OK: NAME.pt's prepacked convs: {len(cases) + 1 - len(refused)} input variations "
          f"equal the original, {len(refused)} refused by both")


if __name__ == "__main__":
    main()
