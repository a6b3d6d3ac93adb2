#!/usr/bin/python3
"""The figures of issue #14 (generated code that reads like the model's source), so they cannot
regress: converts torchvision models with `tinytrace convert` (default layout) and checks NAME.py.

    check_readable.py TINYTRACE MODELS_DIR OUT_DIR

For every torchvision model the tests generate (scripts/gen_models.py, group torchvision): no
`getattr(`/`setattr(` and no `nn.Module()` placeholder. Line limits (non-blank, non-comment
lines): resnet18 <= 100 with a `BasicBlock` class, resnet50 <= 120, mobilenet_v3_large <= 150,
vit_b_16 <= 150 without `torch.tensor(<size>)` / `int(<tensor>)` round trips, swin_t <= 250.
Each model's numbers are checked by its e2e test (scripts/check_model.py); `--flat` is checked
here: one class, and it still reproduces the model (scripts/check_model.py). Prints one line per
model; exits 1 on the first failure, with what is wrong.
"""
import os
import re
import subprocess
import sys

from e2e_outputs import passed

PYTHON = "/usr/bin/python3"
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

TORCHVISION = ["resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_large", "efficientnet_b0",
               "squeezenet1_1", "shufflenet_v2_x1_0", "densenet121", "googlenet", "vit_b_16",
               "swin_t"]
LIMITS = {"resnet18": 100, "resnet50": 120, "mobilenet_v3_large": 150, "vit_b_16": 150,
          "swin_t": 250}
CLASSES = {"resnet18": ["BasicBlock"], "resnet50": ["Bottleneck"],
           "mobilenet_v3_large": ["InvertedResidual"], "vit_b_16": ["EncoderBlock"],
           "swin_t": ["SwinTransformerBlock"]}
NO_ROUND_TRIPS = {"vit_b_16", "shufflenet_v2_x1_0"}


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def code_lines(text):
    return [ln for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")]


def convert(tinytrace, model, out, *extra):
    r = subprocess.run([tinytrace, "convert", model, "-o", out, "-q", *extra],
                       capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"tinytrace convert {model} {' '.join(extra)} exited {r.returncode}: {r.stderr.strip()}")


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    tinytrace, models, out = sys.argv[1:]
    for name in TORCHVISION:
        model = os.path.join(models, name + ".pt")
        if not os.path.exists(model):
            fail(f"{model} is missing (generate it with scripts/gen_models.py --only torchvision)")
        d = os.path.join(out, name)
        convert(tinytrace, model, d, "--emit", "python")  # only NAME.py is read here
        with open(os.path.join(d, name + ".py"), encoding="utf-8") as f:
            text = f.read()
        lines = code_lines(text)
        classes = re.findall(r"^class (\w+)\(", text, re.M)
        bad = [ln.strip() for ln in lines if re.search(r"\b(getattr|setattr)\(|nn\.Module\(\)", ln)]
        if bad:
            fail(f"{name}: {len(bad)} getattr/setattr/nn.Module() line(s), e.g. {bad[0]!r}")
        limit = LIMITS.get(name)
        if limit is not None and len(lines) > limit:
            fail(f"{name}: {len(lines)} lines of code, more than {limit}")
        for c in CLASSES.get(name, []):
            if c not in classes:
                fail(f"{name}: no class {c} (classes: {', '.join(classes)})")
        if name in NO_ROUND_TRIPS:
            trips = [ln.strip() for ln in lines
                     if re.search(r"torch\.tensor\(|\bint\(", ln)]
            if trips:
                fail(f"{name}: shape arithmetic through tensors: {trips[0]!r}")
        print(f"{name}: {len(lines)} lines, {len(classes)} classes"
              + (f" (limit {limit})" if limit else ""))
    # --flat keeps the single-class layout, and it still reproduces the model.
    d = os.path.join(out, "resnet18_flat")
    model = os.path.join(models, "resnet18.pt")
    convert(tinytrace, model, d, "--flat")
    with open(os.path.join(d, "resnet18.py"), encoding="utf-8") as f:
        text = f.read()
    classes = re.findall(r"^class (\w+)\(", text, re.M)
    if classes != ["Resnet18"]:
        fail(f"--flat: classes {classes}, expected only Resnet18")
    if "self.layer1(" in text or "getattr(self.layer1, \"0\").conv1(" not in text:
        fail("--flat: forward does not call every module directly")
    r = subprocess.run([PYTHON, os.path.join(REPO, "scripts", "check_model.py"), d, "resnet18",
                        model], capture_output=True, text=True)
    if r.returncode != 0:
        fail("--flat resnet18: " + (r.stdout + r.stderr).strip().splitlines()[-1])
    print("resnet18 --flat: one class, reproduces the model")
    print("check_readable: OK")
    return passed(out)


if __name__ == "__main__":
    sys.exit(main())
