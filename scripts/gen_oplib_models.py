#!/usr/bin/python3
"""Generates the models of the custom-op-library tests (Note [Op libraries] in lib/ir/model.h).

Run with Debian's /usr/bin/python3. Models calling ops that a shared library registers with
LibTorch: torchvision's (torchvision::nms, roi_align, roi_pool, ps_roi_align, ps_roi_pool,
deform_conv2d; tinytrace finds python3-torchvision's library by itself) and the test library
tests/ops/tt_test_ops.cpp (tt_test::scaled_add, tt_test::max_normalize; given to tinytrace with
--load-library). For each model NAME it writes into --out, like scripts/gen_models.py:

  NAME.pt, NAME.inputs.pt, NAME.expected.pt, NAME.json

NAME.json also says what the e2e driver (tests/e2e/run_convert.py) must pass to `convert`
(`convert_args`: --load-library for tt_test), what scripts/check_model.py must load before it
reads the original (`op_libraries`) and which packages the generated code may import
(`allow_imports`). Models are reused while this file, gen_models.py and the library are
unchanged.
"""
import os
import sys

import torch
import torch.nn as nn
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_models  # noqa: E402  (Spec, randomize_, make_inputs, shape_arg, atomic_write, ...)

SPECS = {}
# The test library (--op-library); its ops are registered in this process when a model needs them.
OP_LIBRARY = None


def register(name, inputs, uses_test_library=False, **kw):
    def deco(build):
        spec = gen_models.Spec(name, "oplib", build, inputs, **kw)
        spec.uses_test_library = uses_test_library
        SPECS[name] = spec
        return build
    return deco


f32 = gen_models.f32


def valid_boxes(b):
    """(x1, y1, x2, y2) boxes from any 4 numbers per row: corners and non-negative sizes."""
    xy = b[:, :2] * 8
    return torch.cat([xy, xy + b[:, 2:].abs() * 4 + 0.5], dim=1)


@register("tv_nms", [f32(16, 4), f32(16)])
class TvNms(nn.Module):
    """torchvision.ops.nms: the kept boxes and their scores."""

    def forward(self, boxes, scores):
        boxes = valid_boxes(boxes)
        keep = torchvision.ops.nms(boxes, scores, 0.3)
        return keep, boxes[keep] * scores[keep].unsqueeze(1)


@register("tv_roi_align", [f32(2, 3, 16, 16)])
class TvRoiAlign(nn.Module):
    """roi_align over a conv's features, with fixed regions of both images."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.register_buffer("rois", torch.tensor([[0, 1.0, 1.0, 9.0, 7.5], [1, 0.0, 2.5, 15.0, 15.0],
                                                   [0, 4.0, 4.0, 6.0, 12.0]]))

    def forward(self, x):
        f = self.conv(x)
        a = torchvision.ops.roi_align(f, self.rois, (3, 2), spatial_scale=0.5, sampling_ratio=2,
                             aligned=True)
        b = torchvision.ops.roi_align(f, self.rois, 4)
        return a, b.flatten(1)


@register("tv_roi_pool", [f32(1, 8, 12, 12)])
class TvRoiPool(nn.Module):
    """The ops whose library form returns a second tensor that the Python functions drop
    (roi_pool's argmax, ps_roi_align's and ps_roi_pool's channel mapping)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("rois", torch.tensor([[0, 0.0, 0.0, 11.0, 11.0],
                                                   [0, 2.0, 3.0, 7.0, 9.0]]))

    def forward(self, x):
        a = torchvision.ops.roi_pool(x, self.rois, (2, 2), 1.0)
        b = torchvision.ops.ps_roi_align(x, self.rois, 2, 1.0, 2)
        c = torchvision.ops.ps_roi_pool(x, self.rois, 2, 1.0)
        return a, b + c


@register("tv_deform_conv", [f32(1, 4, 10, 10)])
class TvDeformConv(nn.Module):
    """torchvision.ops.DeformConv2d with offsets and a mask predicted by convolutions."""

    def __init__(self):
        super().__init__()
        self.offset = nn.Conv2d(4, 2 * 3 * 3, 3, padding=1)
        self.mask = nn.Conv2d(4, 3 * 3, 3, padding=1)
        self.deform = torchvision.ops.DeformConv2d(4, 6, 3, padding=1)

    def forward(self, x):
        return self.deform(x, self.offset(x), torch.sigmoid(self.mask(x)))


@register("custom_ops", [f32(2, 6), f32(2, 6)], uses_test_library=True)
class CustomOps(nn.Module):
    """A project's own op library (tests/ops/tt_test_ops.cpp), one op with two results."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(6, 6)

    def forward(self, x, y):
        s = torch.ops.tt_test.scaled_add(self.linear(x), y, 0.5)
        m, n = torch.ops.tt_test.max_normalize(s)
        return n, m.squeeze(1)


def generate(spec, out_dir, st):
    lib = [OP_LIBRARY] if spec.uses_test_library else []
    return gen_models.generate(spec, out_dir, st, extra_meta={
        "convert_args": [a for p in lib for a in ("--load-library", p)],
        "op_libraries": lib,
        "allow_imports": [] if lib else ["torchvision"],
    })


def main():
    global OP_LIBRARY
    ap = gen_models.one_group_parser(__doc__, "oplib", "print 'name' per model and exit")
    ap.add_argument("--op-library", help="the test op library (libtt_test_ops.so)")
    args = ap.parse_args()
    if args.list:
        for name in SPECS:
            print(name)
        return 0
    if not args.out or not args.op_library:
        ap.error("--out DIR and --op-library PATH are required")
    OP_LIBRARY = os.path.abspath(args.op_library)
    torch.ops.load_library(OP_LIBRARY)
    names = gen_models.select_names(ap, args.only, "oplib", SPECS)
    st = gen_models.stamp(__file__, OP_LIBRARY)
    failed = gen_models.run_generation(
        names, args.out, st, args.force,
        lambda n: f"max|output| = {generate(SPECS[n], args.out, st):.4g}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
