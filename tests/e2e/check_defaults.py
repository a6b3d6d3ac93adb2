#!/usr/bin/python3
"""Forward defaults end to end (Note [Forward defaults] in lib/ir/ir.h).

    check_defaults.py TINYTRACE OUT_DIR

Scripts models whose forward declares defaults (None of an Optional tensor and of an Optional
float, int, float written as an int, bool, str, tuples), converts them with every output kind
that carries a signature (python, report, torchscript, tir), and checks:
  1. NAME.py's forward and NAME.pt's forward schema have the original's defaults;
  2. NAME.py and NAME.pt called with arguments left out (and given) compute what the original
     computes called the same way, exactly;
  3. NAME.json and `tinytrace inspect` (text and --json) list the defaults of the graph inputs,
     NAME.tir writes them and parses back to the same text;
  4. --input-shape may leave out inputs with a default: --verify passes their defaults (to the
     original, the interpreter and NAME.pt) and NAME.py's example call leaves them out; a shape
     for an input with a default drops the default with a warning;
  5. a torch.Generator argument defaulting to None: NAME.py and NAME.pt draw what the original
     draws with and without a generator, and --verify passes on a model drawing from the global
     generator (every engine run starts from one seed);
  6. `tinytrace diff` reports a changed default;
  7. an int argument the model uses as a dtype (TorchScript holds `torch.float64` as the int 7)
     gets no default, nor do the arguments before it, with a forward-default warning; the ones
     after it keep theirs.
"""
import zygote
zygote.delegate()  # first, before torch is imported: Note [Torch zygote]
import importlib.util
import inspect
import json
import os
import shutil
import subprocess
import sys
from typing import Optional, Tuple

import torch

from e2e_outputs import passed


def die(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


class Defaults(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)

    def forward(self, x, mask: Optional[torch.Tensor] = None, k: int = 2, s: float = 1,
                flag: bool = True, name: str = "a\"b", t: Tuple[int, int] = (3, 4),
                one: Tuple[float] = (0.5,), scale: Optional[float] = None):
        r = self.lin(x) * k * s + t[0] - t[1] + one[0]
        if mask is not None:
            r = r.masked_fill(mask, 0.0)
        if flag:
            r = r + len(name)
        if scale is not None:
            r = r * scale
        return r


class DtypeArg(torch.nn.Module):
    def forward(self, x, n: int = 1, dtype: torch.dtype = torch.float64, k: int = 3):
        return (x * n).to(dtype) + k


class DtypeArgK4(torch.nn.Module):  # DtypeArg with another default of k
    def forward(self, x, n: int = 1, dtype: torch.dtype = torch.float64, k: int = 4):
        return (x * n).to(dtype) + k


class Noise(torch.nn.Module):  # draws with a generator given or from the global one
    def forward(self, x, g: Optional[torch.Generator] = None, scale: float = 1.0):
        return x * scale + torch.randn(x.shape, generator=g) + torch.nn.functional.dropout(x, 0.5, True)


def load_py(path, cls):
    spec = importlib.util.spec_from_file_location(cls, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    model = getattr(mod, cls)()
    pth = os.path.splitext(path)[0] + ".pth"
    model.load_state_dict(torch.load(pth), strict=True)
    return model.eval()


def convert(tinytrace, model, out, name, emit, extra=()):
    shutil.rmtree(out, ignore_errors=True)
    cmd = [tinytrace, "convert", model, "-o", out, "--name", name, "--emit", emit] + list(extra)
    print("+", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    sys.stdout.write(r.stdout)
    sys.stderr.write(r.stderr)
    if r.returncode != 0:
        die(f"convert {model} exited {r.returncode}")
    return r


def same(a, b, what):
    if not torch.equal(a, b):
        die(f"{what}: max |diff| {(a.double() - b.double()).abs().max().item()}")


def main():
    if len(sys.argv) != 3:
        die(__doc__)
    tinytrace, out_dir = sys.argv[1:3]
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(0)

    # --- every default kept ---
    scripted = torch.jit.script(Defaults().eval())
    src = os.path.join(out_dir, "defaults.pt")
    scripted.save(src)
    out = os.path.join(out_dir, "defaults")
    convert(tinytrace, src, out, "defaults", "python,weights,report,torchscript,tir")
    py = load_py(os.path.join(out, "defaults.py"), "defaults")
    expected = {"mask": None, "k": 2, "s": 1.0, "flag": True, "name": "a\"b", "t": (3, 4),
                "one": (0.5,), "scale": None}
    params = inspect.signature(py.forward).parameters
    got = {n: p.default for n, p in params.items() if p.default is not inspect.Parameter.empty}
    if got != expected or type(got["s"]) is not float:
        die(f"NAME.py forward defaults {got}, expected {expected}")
    if params["x"].default is not inspect.Parameter.empty:
        die("NAME.py: x has a default")
    pt = torch.jit.load(os.path.join(out, "defaults.pt"))
    ts_defaults = {a.name: a.default_value for a in pt.forward.schema.arguments[1:]
                   if a.default_value is not None or a.name in ("mask", "scale")}
    if {k: v for k, v in ts_defaults.items()} != expected:
        die(f"NAME.pt forward defaults {ts_defaults}, expected {expected}")

    x = torch.randn(2, 3)
    mask = torch.tensor([[True, False, True], [False, False, True]])
    calls = [{}, {"mask": mask}, {"k": 5, "flag": False}, {"scale": 0.25, "t": (1, 1)},
             {"name": "xyz", "one": (2.0,), "s": 3.0}]
    with torch.no_grad():
        for kw in calls:
            want = scripted(x, **kw)
            same(py(x, **kw), want, f"NAME.py called with {kw}")
            same(pt(x, **kw), want, f"NAME.pt called with {kw}")
        # positionally as well: the order of the parameters is the original's
        same(py(x, mask, 4), scripted(x, mask, 4), "NAME.py called positionally")

    report = json.load(open(os.path.join(out, "defaults.json")))
    rep = {i["name"]: i["default"] for i in report["graph"]["inputs"] if "default" in i}
    want_rep = dict(expected, t=[3, 4], one=[0.5])
    if rep != want_rep:
        die(f"NAME.json graph input defaults {rep}, expected {want_rep}")
    tir = open(os.path.join(out, "defaults.tir")).read()
    header = tir.splitlines()[0]
    for piece in ["%mask : Optional[Tensor] = none", "%k : int = 2", "%s : float = 1.0",
                  "%flag : bool = true", '%name : str = "a\\"b"', "%t : Tuple[int, int] = [3,4]"]:
        if piece not in header:
            die(f"NAME.tir's graph line lacks {piece!r}: {header}")
    # The .tir parses back to the same text (its defaults included).
    r = subprocess.run([tinytrace, "opt", os.path.join(out, "defaults.tir")],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        die(f"tinytrace opt of NAME.tir exited {r.returncode}: {r.stderr}")
    if r.stdout.splitlines()[0] != header:
        die("NAME.tir's graph line changed when parsed and printed again")

    # tinytrace inspect lists them with the inputs, in text and JSON.
    r = subprocess.run([tinytrace, "inspect", src], capture_output=True, text=True, timeout=300)
    for piece in ["input       mask : Optional[Tensor] = none\n", "input       k : int = 2\n",
                  "input       x : Tensor\n"]:
        if piece not in r.stdout:
            die(f"inspect's text lacks {piece!r}:\n{r.stdout}")
    r = subprocess.run([tinytrace, "inspect", src, "--json"], capture_output=True, text=True,
                       timeout=300)
    doc = json.loads(r.stdout)
    got = {i["name"]: i["default"] for i in doc["inputs"] if "default" in i}
    if got != want_rep:
        die(f"inspect --json input defaults {got}, expected {want_rep}")

    # --input-shape for the inputs without a default only: --verify passes the defaults, to
    # the original and to NAME.pt, and NAME.py's example call leaves them out.
    r = convert(tinytrace, src, out, "defaults", "python,weights,report,torchscript",
                ["--input-shape", "2,3", "--verify"])
    for engine in ("interpreter", "torchscript"):
        if f"verify ({engine}): OK" not in r.stdout:
            die(f"no 'verify ({engine}): OK' verdict with the defaults passed")
    main = subprocess.run([sys.executable, os.path.join(out, "defaults.py")], capture_output=True,
                          text=True, timeout=300)
    if main.returncode != 0 or "output: (2, 3)" not in main.stdout:
        die(f"NAME.py's example call failed: {main.stdout}{main.stderr}")
    # A shape for an input with a default makes it a tensor: the default goes, with a warning.
    r = convert(tinytrace, src, out, "defaults", "python,weights",
                ["--input-shape", "2,3", "--input-shape", "2,3:bool", "--verify"])
    if "input 'mask' loses its default none" not in r.stderr:
        die("no warning that --input-shape drops mask's default")
    py = load_py(os.path.join(out, "defaults.py"), "defaults")
    got = [n for n, p in inspect.signature(py.forward).parameters.items()
           if p.default is not inspect.Parameter.empty]
    if got[:1] != ["k"] or "mask" in got:
        die(f"with a shape for mask, NAME.py's defaults are {got}")
    # No shape for an input without a default: one usage error line.
    shutil.rmtree(out, ignore_errors=True)
    r = subprocess.run([tinytrace, "convert", src, "-o", out, "--input-shape", "2,3",
                        "--input-shape", "2,3:bool", "--input-shape", "1", "--input-shape", "1",
                        "--input-shape", "1", "--input-shape", "1", "--input-shape", "1",
                        "--input-shape", "1", "--input-shape", "1", "--input-shape", "1"],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 2 or "the model has 9 input(s) but 10 --input-shape" not in r.stderr:
        die(f"too many --input-shape: exit {r.returncode}, {r.stderr}")

    # --- a dtype argument: no default for it and the arguments before it ---
    scripted = torch.jit.script(DtypeArg())
    src = os.path.join(out_dir, "dtype_arg.pt")
    scripted.save(src)
    out = os.path.join(out_dir, "dtype_arg")
    r = convert(tinytrace, src, out, "dtype_arg", "python,weights,report,torchscript")
    if "forward argument 'dtype'" not in r.stderr or "dtype, layout or memory format" not in r.stderr:
        die("no forward-default warning for the dtype argument")
    py = load_py(os.path.join(out, "dtype_arg.py"), "dtype_arg")
    got = {n: p.default for n, p in inspect.signature(py.forward).parameters.items()
           if p.default is not inspect.Parameter.empty}
    if got != {"k": 3}:
        die(f"dtype_arg NAME.py defaults {got}, expected only k=3")
    with torch.no_grad():
        x = torch.randn(4)
        same(py(x, 2, torch.float64), scripted(x, 2, torch.float64), "dtype_arg NAME.py")
        same(py(x, 2, torch.float16, k=1), scripted(x, 2, torch.float16, k=1), "dtype_arg k=1")
        pt = torch.jit.load(os.path.join(out, "dtype_arg.pt"))
        same(pt(x, 2, torch.float64), scripted(x, 2, torch.float64), "dtype_arg NAME.pt")
    # --- a torch.Generator argument that defaults to None, and random draws under --verify ---
    # Every engine --verify runs starts from one seed (Note [Random draws under --verify]), so
    # draws from the global generator compare equal; a Generator input is typed as one in NAME.pt.
    scripted = torch.jit.script(Noise())
    noise_src = os.path.join(out_dir, "noise.pt")
    scripted.save(noise_src)
    out = os.path.join(out_dir, "noise")
    r = convert(tinytrace, noise_src, out, "noise", "python,weights,report,torchscript",
                ["--input-shape", "4,5", "--verify"])
    for engine in ("interpreter", "torchscript"):
        if f"verify ({engine}): OK" not in r.stdout:
            die(f"no 'verify ({engine}): OK' verdict for a model drawing random numbers")
    py = load_py(os.path.join(out, "noise.py"), "noise")
    pt = torch.jit.load(os.path.join(out, "noise.pt"))
    x = torch.randn(4, 5)
    with torch.no_grad():
        for args in [(), (7,), (7, 0.25)]:  # 7: a generator seeded with 7
            def call(model):
                torch.manual_seed(1)
                extra = (torch.Generator().manual_seed(args[0]),) + args[1:] if args else ()
                return model(x, *extra)
            want = call(scripted)
            same(call(py), want, f"noise NAME.py with {args}")
            same(call(pt), want, f"noise NAME.pt with {args}")

    # tinytrace diff counts a changed default as a signature change.
    src4 = os.path.join(out_dir, "dtype_arg_k4.pt")
    torch.jit.script(DtypeArgK4()).save(src4)
    r = subprocess.run([tinytrace, "diff", src, src4], capture_output=True, text=True, timeout=300)
    if r.returncode != 1 or "(k): default 3 vs 4" not in r.stdout:
        die(f"diff of two defaults of k: exit {r.returncode}\n{r.stdout}{r.stderr}")
    passed(out_dir)


if __name__ == "__main__":
    main()
