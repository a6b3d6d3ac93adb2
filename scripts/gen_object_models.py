#!/usr/bin/python3
"""Generates the torch.jit.script'ed models of the object tests (issue 15: objects in scripted
models, Note [Objects while lifting] and Note [Module attributes written in forward]).

A TorchScript class made in forward (torchvision's ImageList: prim::CreateObject, its __init__
writing the fields, a method reading them), its fields rewritten in straight-line code and the
object passed through a submodule's result tuple; an object kept as a module attribute (like
torchvision's BoxCoder) whose fields and methods are read; module attributes written in forward (a
warn-once flag like the detectors' `_has_warned`, and an attribute written before every read);
x.tolist() and dict(...). Also a real model built on them: torchvision's scripted
ssdlite320_mobilenet_v3_large (random weights, BatchNorm statistics measured on random images) on
two images of different sizes, plain and with --fuse, and so are scripted retinanet_resnet50_fpn
and fcos_resnet50_fpn (their transforms sized to the images), and
fasterrcnn_mobilenet_v3_large_320_fpn (MultiScaleRoIAlign's cached LevelMapper), and
maskrcnn_resnet50_fpn and keypointrcnn_resnet50_fpn (their heads on the kept boxes; in float64,
Note [Float64 R-CNN heads]), each asserted to detect something in both images. Module state kept
between calls (a counter, an Optional[Tensor] cache, AnchorGenerator's list of cell anchors, a
float and a buffer written inside a data-dependent `if`), each called on its input sets in order on
one instance. A TorchScript object kept as module state (Note [Objects as module state]): replaced
on every call, and an Optional one cached on the first call from the input's size as
MultiScaleRoIAlign does, the later calls' inputs being of other sizes. Refused (exit 4): a field
written inside a data-dependent `if`, an object stored in a list, a field write to an object kept
as state. The files, input sets and branch coverage are those of scripts/gen_scripted_models.py,
whose generate() this reuses (`--list`, `--out`, `--only`, `--force` alike); tests/objects.cmake
registers one test per model (two for FUSE).
"""
import json
import os
import sys
import warnings

from typing import Dict, List, Optional, Tuple

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_scripted_models as gsm  # noqa: E402  (register-like SPECS, main)


@torch.jit.script
class Boxes:
    def __init__(self, data: torch.Tensor, sizes: List[Tuple[int, int]]):
        self.data = data
        self.sizes = sizes
        self.scale = 1.0

    def area(self) -> torch.Tensor:
        return (self.data[:, 2] - self.data[:, 0]) * (self.data[:, 3] - self.data[:, 1]) * self.scale


class MakesBoxes(nn.Module):
    """Returns the object in a tuple, as GeneralizedRCNNTransform returns (ImageList, targets)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> Tuple[Boxes, int]:
        b = Boxes(self.fc(x), [(int(x.size(0)), 4)])
        return b, int(x.size(1))


class ObjectFields(nn.Module):
    """An object made in a submodule, its fields read, rewritten (the new value flows to later
    reads, also inside the method) and read again inside a data-dependent branch."""

    def __init__(self):
        super().__init__()
        self.make = MakesBoxes()

    def forward(self, x):
        b, n = self.make(x)
        a0 = b.area()
        b.scale = 2.0
        b.data = b.data + 1.0
        a1 = b.area()
        h, w = b.sizes[0]
        if bool(x.sum() > 0):
            y = b.data * float(h)
        else:
            y = b.data - float(w + n)
        return a0, a1, y


def fields_branches(m, x):
    return {"sign": {"pos" if float(x.sum()) > 0 else "neg"}}


@torch.jit.script
class Coder:
    def __init__(self, weights: Tuple[float, float], clip: float):
        self.weights = weights
        self.clip = clip

    def decode(self, rel: torch.Tensor) -> torch.Tensor:
        wx, wy = self.weights
        return torch.clamp(rel[:, 0:1] / wx + rel[:, 1:2] / wy, max=self.clip)


class StoredObject(nn.Module):
    """An object kept as a module attribute (torchvision's BoxCoder): fields and a method."""

    def __init__(self):
        super().__init__()
        self.coder = Coder((10.0, 5.0), 0.3)
        self.fc = nn.Linear(6, 2)

    def forward(self, x):
        return self.coder.decode(self.fc(x)) * self.coder.clip


class AttrWrites(nn.Module):
    """Module attributes written in forward: a warn-once flag (the detectors' _has_warned) and an
    attribute written before every read, read again after the write by a submodule's method."""

    def __init__(self):
        super().__init__()
        self._has_warned = False
        self.last_rows = 0
        self.fc = nn.Linear(6, 6)

    def rows_scale(self) -> float:
        return float(self.last_rows) * 0.5

    def forward(self, x):
        if not self._has_warned:
            warnings.warn("AttrWrites warns once")
            self._has_warned = True
        self.last_rows = int(x.size(0)) + 1
        y = self.fc(x) * self.rows_scale()
        return y + float(self.last_rows)


class ToListDict(nn.Module):
    """x.tolist() (ints, floats, 2-d) and dict(): from (key, value) pairs, a copy, empty."""

    def forward(self, x):
        idx: List[int] = torch.argmax(x, 1).tolist()
        sums: List[float] = x.sum(1).tolist()
        grid: List[List[float]] = x[:2, :3].tolist()
        pairs: List[Tuple[str, torch.Tensor]] = []
        for i, v in enumerate(x.unbind(0)):
            pairs.append((str(i), v))
        d = dict(pairs)
        e = dict(d)
        e["extra"] = x.mean(0)
        empty: Dict[str, torch.Tensor] = dict()
        empty["k"] = x[0]
        total = float(idx[0] + idx[-1]) + sums[0] + grid[1][2]
        return d["0"] * total, float(len(d) * 10 + len(e)), empty["k"]


def measure_batchnorm_stats(m, run):
    """Sets the statistics of m's BatchNorms to those `run(generator)` meets (a cumulative
    average over its batches of random images, Note [Spread scores for --fuse]); m ends in eval
    mode with its BatchNorms' momentum as it was."""
    bns = [b for b in m.modules() if isinstance(b, nn.BatchNorm2d)]
    momenta = [b.momentum for b in bns]
    with torch.no_grad():
        for b in bns:
            b.reset_running_stats()
            b.momentum = None
            b.train()
        run(torch.Generator().manual_seed(7))
        for b, mom in zip(bns, momenta):
            b.momentum = mom
        m.eval()


def script_quietly(m):
    """torch.jit.script(m) without the detectors' warnings ("RCNN always returns a (Losses,
    Detections) tuple in scripting")."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.jit.script(m)


def detections(dets: List[Dict[str, torch.Tensor]]) -> List[torch.Tensor]:
    """The boxes, scores and labels (as float) of each image's detections, in one list."""
    out: List[torch.Tensor] = []
    for d in dets:
        out.append(d["boxes"])
        out.append(d["scores"])
        out.append(d["labels"].to(torch.float32))
    return out


class FasterRcnn(nn.Module):
    """torchvision's fasterrcnn_mobilenet_v3_large_320_fpn (random weights, 5 classes, small
    images), scripted, on two images of different sizes: besides what ob_ssdlite has, the RPN and
    MultiScaleRoIAlign, whose scales and Optional[LevelMapper] are module state (Note [Objects as
    module state]) set on the first call."""

    def __init__(self):
        super().__init__()
        import torchvision
        m = torchvision.models.detection.fasterrcnn_mobilenet_v3_large_320_fpn(
            weights=None, weights_backbone=None, num_classes=5, min_size=160, max_size=224,
            box_detections_per_img=10, rpn_pre_nms_top_n_test=60, rpn_post_nms_top_n_test=30,
            rpn_score_thresh=0.0, box_score_thresh=0.001).eval()
        measure_batchnorm_stats(
            m, lambda gen: m.backbone(torch.randn(4, 3, 320, 320, generator=gen)))
        self.det = script_quietly(m)

    def forward(self, a, b):
        losses, dets = self.det([a.sigmoid(), b.sigmoid()])
        return detections(dets)


def rcnn_heads(dets: List[Dict[str, torch.Tensor]], keys: List[str]) -> List[torch.Tensor]:
    """detections(dets), then each image's outputs of the R-CNN heads named by keys (masks;
    keypoints and keypoints_scores)."""
    out = detections(dets)
    for d in dets:
        for k in keys:
            out.append(d[k])
    return out


def some_detections(out, images=2):
    """The generator's check on a detector's outputs (detections() first): every image has a
    detection, so that the heads run on them (Mask and Keypoint R-CNN's heads run only on the
    kept boxes)."""
    for i in range(images):
        assert out[3 * i].size(0) > 0, f"image {i} has no detection"


def rcnn_resnet50(ctor, **kw):
    """torchvision's Mask or Keypoint R-CNN `ctor` with random weights in float64 (Note [Float64
    R-CNN heads]), on two images of 128x160 and 144x128 kept at their size, 30 proposals, its
    BatchNorm statistics measured on random images (Note [Spread scores for --fuse]), scripted."""
    import torchvision
    m = getattr(torchvision.models.detection, ctor)(
        weights=None, weights_backbone=None, min_size=128, max_size=192,
        rpn_pre_nms_top_n_test=60, rpn_post_nms_top_n_test=30, rpn_score_thresh=0.0,
        box_score_thresh=0.001, **kw).double().eval()
    measure_batchnorm_stats(m, lambda gen: m.backbone(
        torch.randn(2, 3, 128, 160, generator=gen, dtype=torch.float64)))
    return script_quietly(m)


# Note [Float64 R-CNN heads]: Mask and Keypoint R-CNN's outputs are discontinuous in the boxes
# (paste_masks_in_image truncates the expanded boxes to ints, heatmaps_to_keypoints takes an argmax
# over heatmaps resized to ceil(box size)), and the boxes of a ResNet-50 FPN with random weights
# move some 70 times more than the change of its BatchNorms' outputs: in float32, scaling each
# BatchNorm's running_var by 1 + 1e-6 * randn moved the masks by 2e-2 and a keypoint by 40 px,
# torch.nn.utils.fusion's own BatchNorm folding moved the masks by 7e-3, and --fuse moved a
# keypoint by 5.7 px (all at 160x200 and 180x160, measured 2026-11-28). In float32 a --fuse
# test within 1e-3 would pass or fail by the draw of the seed, so these two run in float64 (the inputs stay float32 and are cast
# in forward): folding's rounding, 1e-16, stays far below every gap the argmaxes and truncations
# meet. The scripted code paths are the same as in float32.
class MaskRcnn(nn.Module):
    """torchvision's maskrcnn_resnet50_fpn (5 classes), scripted, on two images of different
    sizes: besides what ob_fasterrcnn has, the mask head on the kept boxes (MultiScaleRoIAlign
    at 14x14) and paste_masks_in_image, a loop pasting each mask into the image."""

    def __init__(self):
        super().__init__()
        self.det = rcnn_resnet50("maskrcnn_resnet50_fpn", num_classes=5, box_detections_per_img=3)

    def forward(self, a, b):
        losses, dets = self.det([a.double().sigmoid(), b.double().sigmoid()])
        return rcnn_heads(dets, ["masks"])


class KeypointRcnn(nn.Module):
    """torchvision's keypointrcnn_resnet50_fpn (2 classes, 17 keypoints), scripted, on two images
    of different sizes: the keypoint head on the kept boxes and heatmaps_to_keypoints. Two boxes
    per image: the head's eight 512-channel convolutions cost 3.7 G multiply-adds a box."""

    def __init__(self):
        super().__init__()
        self.det = rcnn_resnet50("keypointrcnn_resnet50_fpn", num_classes=2,
                                 box_detections_per_img=2)

    def forward(self, a, b):
        losses, dets = self.det([a.double().sigmoid(), b.double().sigmoid()])
        return rcnn_heads(dets, ["keypoints", "keypoints_scores"])


class SsdLite(nn.Module):
    """torchvision's ssdlite320_mobilenet_v3_large (random weights, 5 classes), scripted, on two
    images of different sizes: ImageList, BoxCoder, the _has_warned flag, prim::tolist, dict() and
    torchvision::nms. The detector is scripted before wrapping: scripted, it returns (losses,
    detections) in both modes."""

    def __init__(self):
        super().__init__()
        import torchvision
        m = torchvision.models.detection.ssdlite320_mobilenet_v3_large(
            weights=None, weights_backbone=None, num_classes=5, detections_per_img=10,
            topk_candidates=30).eval()
        # Note [Spread scores for --fuse]: with torchvision's init (BatchNorm statistics 0 and
        # 1) the features barely depend on the image and every class score is about 0.2:
        # thousands of anchors lie within 1e-6 of each other (both images got the same scores),
        # and BatchNorm folding's rounding changed which ones top-k keeps. With BatchNorm
        # statistics measured on random images (gen_models.randomize_ cannot reach into the
        # scripted detector) the scores depend on the image and the kept ones lie 2e-4 or more
        # apart (0.33 to 0.37), far beyond folding's rounding.
        measure_batchnorm_stats(m, lambda gen: m.head(list(m.backbone(
            torch.randn(4, 3, 320, 320, generator=gen)).values())))
        self.ssd = script_quietly(m)

    def forward(self, a, b):
        losses, dets = self.ssd([a.sigmoid(), b.sigmoid()])
        return detections(dets)


def one_stage_detector(ctor, **kw):
    """torchvision's one-stage detector `ctor` (retinanet_resnet50_fpn, fcos_resnet50_fpn) with
    random weights and 5 classes, its transform sized so the test's images (3x160x200, 3x180x160)
    are not upscaled to 800, its BatchNorm statistics measured on random images (Note [Spread
    scores for --fuse]), scripted."""
    import torchvision
    m = getattr(torchvision.models.detection, ctor)(
        weights=None, weights_backbone=None, num_classes=5, min_size=160, max_size=200,
        detections_per_img=10, **kw).eval()
    measure_batchnorm_stats(m, lambda gen: m.backbone(torch.randn(2, 3, 160, 192, generator=gen)))
    return script_quietly(m)


class OneStage(nn.Module):
    """A scripted one-stage detector on two images of different sizes (as SsdLite)."""

    def __init__(self, ctor, **kw):
        super().__init__()
        self.det = one_stage_detector(ctor, **kw)

    def forward(self, a, b):
        losses, dets = self.det([a.sigmoid(), b.sigmoid()])
        return detections(dets)


# score_thresh=0.001: with random weights the class scores stay near the heads' prior (0.01),
# so the default 0.05 would keep few detections or none; the ten kept ones of each image lie
# 4e-5 or more apart, far beyond --fuse's rounding (rel 1e-5).
class RetinaNet(OneStage):
    """torchvision's retinanet_resnet50_fpn: AnchorGenerator's cell anchors (9x4 per level)."""

    def __init__(self):
        super().__init__("retinanet_resnet50_fpn", topk_candidates=30, score_thresh=0.001)


class Fcos(OneStage):
    """torchvision's fcos_resnet50_fpn (GroupNorm heads, centerness)."""

    def __init__(self):
        super().__init__("fcos_resnet50_fpn", topk_candidates=30, score_thresh=0.001)


class BranchFieldWrite(nn.Module):
    def forward(self, x):
        b = Boxes(x, [(1, 1)])
        if bool(x.sum() > 0):
            b.scale = 3.0
        return b.area()


class ObjectInList(nn.Module):
    def forward(self, x):
        b = Boxes(x, [(1, 1)])
        held = [b]
        return held[0].area()


class Counter(nn.Module):
    """A counter kept between calls (read before forward writes it): call k scales by k."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls = self.calls + 1
        return x * float(self.calls)


class Cache(nn.Module):
    """An Optional[Tensor] cache filled by the first call (from that call's input) and used by
    every later one."""

    cache: Optional[torch.Tensor]

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 5)
        self.cache = None

    def forward(self, x):
        if self.cache is None:
            self.cache = self.fc(x).mean(0)
        c = self.cache
        assert c is not None
        return self.fc(x) + c


class CellAnchors(nn.Module):
    """torchvision's AnchorGenerator.set_cell_anchors: a list of tensors rewritten with .to() in
    a method forward calls, here also moved by each call's input so that the kept list shows.
    (Small tensors, inline constants; ob_retinanet's anchors of 9x4 become buffers
    "_constants.cN": Note [One buffer per constant tensor] in lib/loaders/torchscript/.)"""

    def __init__(self):
        super().__init__()
        self.cell_anchors = [torch.arange(12.0).reshape(3, 4) / 7.0,
                             torch.arange(16.0).reshape(4, 4) / 9.0]

    def set_cell_anchors(self, dtype: torch.dtype, shift: float):
        self.cell_anchors = [a.to(dtype=dtype) + shift for a in self.cell_anchors]

    def forward(self, x):
        self.set_cell_anchors(x.dtype, float(x.mean()))
        return x @ torch.cat(self.cell_anchors).t()


def state_branches(m, x):  # (does not call the model: Note in gen_scripted_models.generate)
    return {"sign": {"pos" if float(x.sum()) > 0 else "neg"}}


class BranchState(nn.Module):
    """State written inside a data-dependent branch: a float and a buffer."""

    def __init__(self):
        super().__init__()
        self.scale = 1.0
        self.register_buffer("acc", torch.zeros(6))

    def forward(self, x):
        if bool(x.sum() > 0):
            self.scale = self.scale * 2.0 + 0.5
            self.acc = self.acc + x.sum(0)
        return x * self.scale + self.acc


@torch.jit.script
class Window:
    def __init__(self, data: torch.Tensor, scale: float, count: int):
        self.data = data
        self.scale = scale
        self.count = count

    def value(self) -> torch.Tensor:
        return self.data * self.scale + float(self.count)


class ObjectState(nn.Module):
    """A TorchScript object kept as module state (Note [Objects as module state]): read, replaced
    by a new object made from its fields and the input, read again; every call sees the last."""

    def __init__(self):
        super().__init__()
        self.win = Window(torch.ones(2, 4), 0.5, 0)

    def forward(self, x):
        w = self.win
        self.win = Window(w.data + x, w.scale * 1.5, w.count + 1)
        return self.win.value() - w.value()


@torch.jit.script
class Mapper:
    """torchvision's LevelMapper in small: fields set once, read by __call__."""

    def __init__(self, k_min: int, k_max: int, s0: int, eps: float = 1e-6):
        self.k_min = k_min
        self.k_max = k_max
        self.s0 = s0
        self.eps = eps

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        lv = torch.floor(torch.log2(x.abs() * float(self.s0) + 1.0) + self.eps)
        return torch.clamp(lv, min=self.k_min, max=self.k_max) - self.k_min


def _setup_mapper(x: torch.Tensor) -> Tuple[List[float], Mapper]:
    h, w = int(x.size(0)), int(x.size(1))
    return [float(h) / 4.0, float(w) / 8.0], Mapper(h // 2, w // 2 + 1, h * w)


class LevelCache(nn.Module):
    """MultiScaleRoIAlign's cache: `scales` and an Optional[Mapper] set on the first call from
    the input's size (`if self.scales is None or self.mapper is None`), the mapper called on
    every call. The calls' inputs differ in size: later calls must use the first call's."""

    scales: Optional[List[float]]
    mapper: Optional[Mapper]

    def __init__(self):
        super().__init__()
        self.scales = None
        self.mapper = None

    def forward(self, x):
        if self.scales is None or self.mapper is None:
            self.scales, self.mapper = _setup_mapper(x)
        m = self.mapper
        assert m is not None
        s = self.scales
        assert s is not None
        return m(x) * s[0] + s[1]


class ObjectStateFieldWrite(nn.Module):
    """A field of an object read from module state is written: Python would change the state
    too (refused)."""

    def __init__(self):
        super().__init__()
        self.win = Window(torch.ones(2, 4), 0.5, 0)

    def forward(self, x):
        w = self.win
        self.win = Window(w.data + x, 1.0, 1)
        w.scale = float(x.sum())
        return w.value()


SPECS = {}


def register(name, build, shapes, branch_of=None, outcomes=None, tol=1e-4, calls=1,
             call_shapes=None, check=None):
    SPECS[name] = dict(build=build, shapes=shapes, branch_of=branch_of, outcomes=outcomes or {},
                       tol=tol, expect_ops=[], calls=calls, call_shapes=call_shapes, check=check)


register("ob_object_fields", ObjectFields, [(3, 4)], fields_branches, {"sign": {"pos", "neg"}})
register("ob_stored_object", StoredObject, [(3, 6)])
register("ob_attr_writes", AttrWrites, [(3, 6)])
register("ob_tolist_dict", ToListDict, [(4, 5)])
register("ob_ssdlite", SsdLite, [(3, 160, 200), (3, 180, 160)])
register("ob_fasterrcnn", FasterRcnn, [(3, 160, 200), (3, 180, 160)])
register("ob_retinanet", RetinaNet, [(3, 160, 200), (3, 180, 160)])
register("ob_fcos", Fcos, [(3, 160, 200), (3, 180, 160)])
register("ob_maskrcnn", MaskRcnn, [(3, 128, 160), (3, 144, 128)], check=some_detections)
register("ob_keypointrcnn", KeypointRcnn, [(3, 128, 160), (3, 144, 128)], check=some_detections)
# Module state (Note [Module state] in lib/exec/alias.h): called in sequence on one instance.
register("ob_state_counter", Counter, [(3, 6)], calls=3)
register("ob_state_cache", Cache, [(4, 5)], calls=3)
register("ob_state_anchors", CellAnchors, [(2, 4)], calls=3)
register("ob_state_branch", BranchState, [(3, 6)], state_branches, {"sign": {"pos", "neg"}},
         calls=4)
register("ob_state_object", ObjectState, [(2, 4)], calls=3)
register("ob_state_levels", LevelCache, [(4, 6)], calls=3, call_shapes=[[(4, 6)], [(6, 10)], [(5, 8)]])

UNSUPPORTED = {
    "ob_bad_branch_field": (BranchFieldWrite, "prim::SetAttr"),
    "ob_bad_object_in_list": (ObjectInList, "prim::ListConstruct"),
    "ob_bad_object_state": (ObjectStateFieldWrite, "prim::SetAttr"),
}

# What the generated code of a model may import besides torch (tests/e2e/run_scripted.py reads
# "allow_imports" from MODEL.json): torchvision, whose import registers torchvision::nms.
ALLOW_IMPORTS = {"ob_ssdlite": ["torchvision"], "ob_fasterrcnn": ["torchvision"],
                 "ob_retinanet": ["torchvision"], "ob_fcos": ["torchvision"],
                 "ob_maskrcnn": ["torchvision"], "ob_keypointrcnn": ["torchvision"]}

# Models also tested with --fuse (tests/control_flow.cmake's "fuse" kind): the detectors'
# BatchNorms fold, and their kept detections are the same (Note [Spread scores for --fuse]).
FUSE = {"ob_ssdlite", "ob_fasterrcnn", "ob_retinanet", "ob_fcos", "ob_maskrcnn",
        "ob_keypointrcnn"}


def main():
    rc = gsm.main(SPECS, UNSUPPORTED, kinds=lambda name: "fuse" if name in FUSE else "small",
                  doc=__doc__, files=(os.path.abspath(__file__),))
    out = sys.argv[sys.argv.index("--out") + 1] if "--out" in sys.argv else None
    for name, mods in ALLOW_IMPORTS.items():
        path = os.path.join(out, name + ".json") if out else ""
        if rc == 0 and os.path.exists(path):
            with open(path) as f:
                meta = json.load(f)
            if meta.get("allow_imports") != mods:
                meta["allow_imports"] = mods
                def write(p):
                    with open(p, "w") as f:
                        json.dump(meta, f, indent=1)
                        f.write("\n")
                gsm.gen_models.atomic_write(path, write)
    return rc


if __name__ == "__main__":
    sys.exit(main())
