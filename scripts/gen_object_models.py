#!/usr/bin/python3
"""Generates the torch.jit.script'ed models of the object tests (issue 15: objects in scripted
models, Note [Objects while lifting] and Note [Module attributes written in forward]).

A TorchScript class made in forward (torchvision's ImageList: prim::CreateObject, its __init__
writing the fields, a method reading them), its fields rewritten in straight-line code and the
object passed through a submodule's result tuple; an object kept as a module attribute (like
torchvision's BoxCoder) whose fields and methods are read; module attributes written in forward
(a warn-once flag like the detectors' `_has_warned`, and an attribute written before every read);
x.tolist() and dict(...). Also a real model built on them: torchvision's scripted
ssdlite320_mobilenet_v3_large (random weights, BatchNorm statistics measured on random images) on
two images of different sizes, plain and with --fuse. Refused (exit 4):
a field written inside a data-dependent `if`, an object stored in a list, a module attribute read
before forward writes it (a counter kept between calls). The files, input sets and branch coverage
are those of scripts/gen_scripted_models.py, whose generate() this reuses (`--list`, `--out`,
`--only`, `--force` alike); tests/objects.cmake registers one test per model (two for FUSE).
"""
import json
import os
import sys
import warnings

from typing import Dict, List, Tuple

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
        bns = [b for b in m.modules() if isinstance(b, nn.BatchNorm2d)]
        gen = torch.Generator().manual_seed(7)
        with torch.no_grad():
            for b in bns:
                b.reset_running_stats()
                b.momentum = None
                b.train()
            feats = list(m.backbone(torch.randn(4, 3, 320, 320, generator=gen)).values())
            m.head(feats)
            for b in bns:
                b.momentum = 0.03
            m.eval()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.ssd = torch.jit.script(m)

    def forward(self, a, b):
        losses, dets = self.ssd([a.sigmoid(), b.sigmoid()])
        out: List[torch.Tensor] = []
        for d in dets:
            out.append(d["boxes"])
            out.append(d["scores"])
            out.append(d["labels"].to(torch.float32))
        return out


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
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls = self.calls + 1
        return x * float(self.calls)


SPECS = {}


def register(name, build, shapes, branch_of=None, outcomes=None, tol=1e-4):
    SPECS[name] = dict(build=build, shapes=shapes, branch_of=branch_of, outcomes=outcomes or {},
                       tol=tol, expect_ops=[])


register("ob_object_fields", ObjectFields, [(3, 4)], fields_branches, {"sign": {"pos", "neg"}})
register("ob_stored_object", StoredObject, [(3, 6)])
register("ob_attr_writes", AttrWrites, [(3, 6)])
register("ob_tolist_dict", ToListDict, [(4, 5)])
register("ob_ssdlite", SsdLite, [(3, 160, 200), (3, 180, 160)])

UNSUPPORTED = {
    "ob_bad_branch_field": (BranchFieldWrite, "prim::SetAttr"),
    "ob_bad_object_in_list": (ObjectInList, "prim::ListConstruct"),
    "ob_bad_counter": (Counter, "prim::SetAttr"),
}

# What the generated code of a model may import besides torch (tests/e2e/run_scripted.py reads
# "allow_imports" from MODEL.json): torchvision, whose import registers torchvision::nms.
ALLOW_IMPORTS = {"ob_ssdlite": ["torchvision"]}

# Models also tested with --fuse (tests/control_flow.cmake's "fuse" kind): ob_ssdlite's
# BatchNorms fold, and its kept detections are the same (Note [Spread scores for --fuse]).
FUSE = {"ob_ssdlite"}


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
