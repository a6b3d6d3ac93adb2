#!/usr/bin/python3
"""Checks what `tinytrace convert` wrote for one model against the original (DESIGN.md §2).

    check_model.py OUT_DIR NAME ORIGINAL.pt [--tol 1e-4] [--state-dict-from ORIGINAL.pt]

Checks, in order, and stops at the first failure with a message saying what is wrong:
  1. OUT_DIR/NAME.py imports (by path) and defines exactly one nn.Module subclass (or one named
     like NAME), whose constructor takes no arguments; it imports nothing outside torch and a few
     standard-library modules;
  2. OUT_DIR/NAME.pth is a dict of tensors (None for a quantized convolution's missing bias) and
     loads into it with strict=True;
  3. its outputs on the saved example inputs (ORIGINAL minus .pt + .inputs.pt) match the saved
     original outputs (.expected.pt), or the original's outputs when no file was saved:
     same structure, shapes and dtypes, and max|Δ| / max|expected| <= tol per output; where the
     original (a TorchScript archive) returns a NamedTuple, NAME.py's result is one of the same
     class name and fields, and it returns none where the original does not (the saved outputs
     hold plain tuples: torch.save cannot pickle TorchScript's NamedTuple classes);
  4. the original TorchScript model's state_dict() also loads with strict=True, holds the same
     values as NAME.pth, and gives the same outputs; the only keys it may lack are the buffers
     "_constants.cN" that hold the model's large tensor constants (not state: the original has
     no such key, and NAME.json has a "tensor-constant" warning naming each), which are taken
     from NAME.pth, as that warning tells users to do (and NAME.py reads each);
  5. `/usr/bin/python3 -m pyflakes NAME.py` prints nothing;
  6. `/usr/bin/python3 NAME.py` exits 0 (run from another directory: it must find NAME.pth
     beside itself; the interpreter is a copy of this one forked right after `import torch`,
     Note [The standalone run's interpreter]);
  7. with --sequence (a model with module state, Note [Module state] in lib/exec/alias.h): a
     fresh instance with NAME.pth, called on each INPUTS in order, gives each EXPECTED (the
     original's outputs when called in the same order); check 4 then uses a fresh instance too;
  8. NAME.json parses, says format "tinytrace-report", validates against
     lib/emitters/report.schema.json when that file exists, and mentions every --expect-warning
     text in a diagnostics/warnings entry.
On success prints one line with the figures and exits 0; on failure prints `FAIL: ...` and exits 1.
"""
import argparse
import os
import sys

if __name__ == "__main__":  # in a fork of a process that imported torch (Note [Torch zygote])
    import torch_zygote
    torch_zygote.delegate(__file__)

import ast
import importlib.util
import inspect
import json
import pickletools
import re
import subprocess
import tempfile
import time
import warnings
import zipfile

import torch

PYTHON = "/usr/bin/python3"
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_SCHEMA = os.path.join(REPO, "lib", "emitters", "report.schema.json")
# What generated code may import: torch and the standard-library bits needed to find NAME.pth.
ALLOWED_IMPORTS = {"torch", "os", "sys", "pathlib", "typing", "math", "cmath", "collections",
                   "operator", "builtins", "__future__", "warnings", "importlib", "enum"}


class CheckFailed(Exception):
    pass


def fail(msg):
    raise CheckFailed(msg)


def flatten(x, path="out"):
    """[(path, tensor-or-scalar)] in order, for nested tuples/lists/dicts."""
    if isinstance(x, torch.Tensor):
        return [(path, x)]
    if isinstance(x, (tuple, list)):
        return [p for i, item in enumerate(x) for p in flatten(item, f"{path}[{i}]")]
    if isinstance(x, dict):
        return [p for k in sorted(x) for p in flatten(x[k], f"{path}[{k!r}]")]
    return [(path, x)]


def compare(got, expected, tol, what):
    """Worst relative error over all outputs; fails on any structural difference."""
    g, e = flatten(got), flatten(expected)
    if len(g) != len(e):
        fail(f"{what}: {len(g)} output tensor(s), expected {len(e)} "
             f"(got {type(got).__name__}, expected {type(expected).__name__})")
    worst = 0.0
    for (path, a), (_, b) in zip(g, e):
        if not isinstance(b, torch.Tensor):
            if a != b:
                fail(f"{what}: {path} is {a!r}, expected {b!r}")
            continue
        if not isinstance(a, torch.Tensor):
            fail(f"{what}: {path} is a {type(a).__name__}, expected a tensor")
        if a.shape != b.shape:
            fail(f"{what}: {path} has shape {list(a.shape)}, expected {list(b.shape)}")
        if a.dtype != b.dtype:
            fail(f"{what}: {path} has dtype {a.dtype}, expected {b.dtype}")
        if b.is_complex():  # compared as (real, imaginary) pairs
            a, b = torch.view_as_real(a.resolve_conj()), torch.view_as_real(b.resolve_conj())
        if not b.is_floating_point():
            if not torch.equal(a, b):
                fail(f"{what}: {path} (integer) differs from the expected values")
            continue
        if not torch.isfinite(a).all():
            fail(f"{what}: {path} has non-finite values")
        scale = float(b.abs().max()) if b.numel() else 0.0
        diff = float((a - b).abs().max()) if b.numel() else 0.0
        rel = diff / scale if scale > 0 else diff
        if rel > tol:
            fail(f"{what}: {path} differs: max|Δ| = {diff:.3e}, max|expected| = {scale:.3e}, "
                 f"relative {rel:.3e} > tolerance {tol:g}")
        worst = max(worst, rel)
    return worst, len(e)


def has_named_tuples(path):
    """Whether a TorchScript archive's code defines a NamedTuple class (a cheap look into the zip,
    so that only such models are loaded for their forward's return type)."""
    try:
        with zipfile.ZipFile(path) as z:
            return any(b"(NamedTuple):" in z.read(i) for i in z.namelist()
                       if "/code/" in i and i.endswith(".py"))
    except (OSError, zipfile.BadZipFile):
        return False


def split_top(text):
    """`a : T, b : Dict[str, Tuple[int, int]]` split at the commas outside brackets."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += c in "([{"
        depth -= c in ")]}"
        if c == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    return parts + [text[start:].strip()] if text.strip() else parts


def named_tuple_fields(t):
    """(class name, field names) of a TorchScript NamedTuple type (its str() is
    `NamedTuple(logits : Tensor, aux : Tensor?)`, its annotation_str the qualified name), None for
    a plain tuple."""
    s = t.str()
    if not s.startswith("NamedTuple("):
        return None
    fields = [p.split(" : ")[0].strip() for p in split_top(s[len("NamedTuple("):-1])]
    if len(fields) != len(t.elements()):
        fail(f"cannot read the fields of the original's NamedTuple type {s}")
    return t.annotation_str.split(".")[-1], fields


def check_named_tuples(got, t, what, path="out"):
    """NAME.py's result `got` against the original's return type `t` (a torch._C type): a NamedTuple
    there is one of the same class name and fields here, a plain tuple there no NamedTuple here."""
    kind = t.kind()
    if kind == "OptionalType":
        if got is not None:
            check_named_tuples(got, t.getElementType(), what, path)
    elif kind == "TupleType" and isinstance(got, tuple):
        named = named_tuple_fields(t)
        has = getattr(type(got), "_fields", None)
        if named and (type(got).__name__, list(has or ())) != (named[0], named[1]):
            desc = f"a {type(got).__name__}{' with fields ' + str(list(has)) if has else ''}"
            fail(f"{what}: {path} is {desc}, expected the NamedTuple {named[0]} with fields "
                 f"{named[1]}")
        if not named and has is not None:
            fail(f"{what}: {path} is the NamedTuple {type(got).__name__}, expected a plain tuple")
        for i, (g, e) in enumerate(zip(got, t.elements())):
            check_named_tuples(g, e, what, f"{path}.{named[1][i]}" if named else f"{path}[{i}]")
    elif kind == "ListType" and isinstance(got, list):
        for i, g in enumerate(got):
            check_named_tuples(g, t.getElementType(), what, f"{path}[{i}]")
    elif kind == "DictType" and isinstance(got, dict):
        for k, g in got.items():
            check_named_tuples(g, t.getValueType(), what, f"{path}[{k!r}]")


def return_type(original):
    """The return type of a TorchScript model's forward (a torch._C type; forward has one)."""
    return original.forward.schema.returns[0].type


def load_generated(py_path, name, allowed=ALLOWED_IMPORTS):
    if not os.path.isfile(py_path):
        fail(f"{py_path} was not written")
    src = open(py_path, encoding="utf-8").read()
    try:
        tree = ast.parse(src, py_path)
    except SyntaxError as e:
        fail(f"{py_path}:{e.lineno}: syntax error: {e.msg}")
    for node in ast.walk(tree):
        mods = []
        if isinstance(node, ast.Import):
            mods = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            mods = [node.module]
        for mod in mods:
            if mod.split(".")[0] not in allowed:
                fail(f"{py_path}:{node.lineno}: imports '{mod}' (generated code may import only "
                     f"torch and {', '.join(sorted(allowed - {'torch'}))})")
    mod_name = f"tt_generated_{name}"
    spec = importlib.util.spec_from_file_location(mod_name, py_path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        fail(f"importing {py_path} raised {type(e).__name__}: {e}")
    classes = [c for _, c in inspect.getmembers(module, inspect.isclass)
               if issubclass(c, torch.nn.Module) and c.__module__ == mod_name]
    if not classes:
        fail(f"{py_path} defines no torch.nn.Module subclass")
    if len(classes) > 1:
        camel = "".join(p[:1].upper() + p[1:] for p in name.split("_"))
        named = [c for c in classes if c.__name__ in (name, camel)]
        if len(named) != 1:
            fail(f"{py_path} defines several nn.Module classes "
                 f"({', '.join(c.__name__ for c in classes)}) and none is named {camel}")
        classes = named
    cls = classes[0]
    try:
        return cls, cls().eval(), src.count("\n")
    except Exception as e:
        fail(f"{cls.__name__}() raised {type(e).__name__}: {e} (the constructor must take no arguments)")


def load_state_dict_file(path):
    if not os.path.isfile(path):
        fail(f"{path} was not written")
    # weights_only=True is torch.load's default since torch 2.6 (and accepted since 1.13): NAME.pth
    # must load under it, so the generated __main__ and users' first line work on every version.
    try:
        sd = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:
        fail(f"torch.load({path}, weights_only=True) raised {type(e).__name__}: {e}")
    pickle_globals = set()
    with zipfile.ZipFile(path) as z:
        # An independent zip reader: every record's CRC-32 is right (tinytrace writes the archive
        # itself, Note [Writing NAME.pth]).
        bad = z.testzip()
        if bad is not None:
            fail(f"{path}: record {bad} has a wrong CRC-32")
        data_pkl = [n for n in z.namelist() if n.endswith("/data.pkl")]
        for op, arg, _ in pickletools.genops(z.read(data_pkl[0])):
            if op.name in ("GLOBAL", "STACK_GLOBAL"):
                pickle_globals.add(arg)
    # Only what torch 1.13's weights_only allow-list also accepts: NAME.pth loads on old torch too.
    # Quantized tensors (int8 models) are rebuilt with their quantization scheme.
    quantized = {"torch._utils _rebuild_qtensor", "torch per_tensor_affine",
                 "torch per_channel_affine", "torch per_channel_affine_float_qparams",
                 "torch per_tensor_symmetric"}
    unexpected = {g for g in pickle_globals
                  if g not in ("collections OrderedDict", "torch._utils _rebuild_tensor_v2")
                  and g not in quantized
                  and not (g.startswith("torch ") and g.endswith("Storage"))}
    if unexpected:
        fail(f"{path} pickles {sorted(unexpected)}: only tensors and dicts may be in NAME.pth")
    # None: a quantized convolution's missing bias, as its state_dict keeps it.
    if not isinstance(sd, dict) or not all(v is None or isinstance(v, torch.Tensor)
                                           for v in sd.values()):
        fail(f"{path} is a {type(sd).__name__}, not a dict of tensors")
    return sd


def tensor_constant_buffers(pth, orig_sd, json_path, py_path):
    """NAME.pth's buffers "_constants.cN" that the original's state_dict lacks: each must be
    named by a "tensor-constant" warning of NAME.json (the lifter's large tensor constants, Note
    [One buffer per constant tensor] in lib/loaders/torchscript/lifter.cpp), each read by
    NAME.py."""
    consts = {k: v for k, v in pth.items() if k.startswith("_constants.") and k not in orig_sd}
    if not consts:
        return {}
    try:
        with open(json_path, encoding="utf-8") as f:
            diags = json.load(f).get("diagnostics", [])
    except (OSError, ValueError) as e:
        fail(f"{json_path}: cannot read the tensor-constant warnings: {e}")
    warned = " ".join(d.get("message", "") for d in diags
                      if isinstance(d, dict) and d.get("code") == "tensor-constant")
    unwarned = [k for k in consts if f"'{k}'" not in warned]
    if unwarned:
        fail(f"NAME.pth holds {unwarned[0]}, which the original's state_dict lacks and no "
             f"tensor-constant warning of {os.path.basename(json_path)} names")
    # One buffer per constant tensor: a second copy of one (read twice) would be a buffer that
    # NAME.py never reads.
    with open(py_path, encoding="utf-8") as f:
        src = f.read()
    unread = [k for k in consts if not re.search(r"\b" + re.escape(k) + r"\b", src)]
    if unread:
        fail(f"NAME.pth holds {len(unread)} tensor constant(s) that {os.path.basename(py_path)} "
             f"never reads, e.g. {unread[0]}")
    return consts


def load_original(path):
    """The original model in eval mode: a TorchScript archive, or a torch.export archive (.pt2) as
    its ExportedProgram.module() (exported in eval mode; it has no eval() of its own)."""
    if path.endswith(".pt2"):
        return torch.export.load(path).module()
    return torch.jit.load(path, map_location="cpu").eval()


def load_strict(model, sd, what):
    try:
        model.load_state_dict(sd, strict=True)
    except Exception as e:
        msg = str(e).strip().replace("\n\t", " ").replace("\n", " ")
        fail(f"load_state_dict({what}, strict=True) failed: {msg[:2000]}")


def run(model, inputs, what):
    try:
        with torch.no_grad():
            return model(*inputs)
    except Exception as e:
        fail(f"forward with {what} raised {type(e).__name__}: {e}")


def find_text(doc, keys, text):
    """Whether `text` occurs in a value under any key in `keys`, anywhere in the JSON doc."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            if k in keys and text in json.dumps(v):
                return True
            if find_text(v, keys, text):
                return True
    elif isinstance(doc, list):
        return any(find_text(v, keys, text) for v in doc)
    return False


def check_report(json_path, schema_path, expect_warnings):
    if not os.path.isfile(json_path):
        fail(f"{json_path} was not written")
    try:
        with open(json_path, encoding="utf-8") as f:
            report = json.load(f)
    except ValueError as e:
        fail(f"{json_path} is not valid JSON: {e}")
    if not isinstance(report, dict) or report.get("format") != "tinytrace-report":
        fail(f"{json_path}: field 'format' is not \"tinytrace-report\"")
    status = "no schema"
    if schema_path and os.path.isfile(schema_path):
        import jsonschema
        with open(schema_path, encoding="utf-8") as f:
            schema = json.load(f)
        try:
            jsonschema.validate(report, schema)
        except jsonschema.ValidationError as e:
            where = "/".join(str(p) for p in e.absolute_path) or "(root)"
            fail(f"{json_path} does not match {os.path.basename(schema_path)} at {where}: "
                 f"{e.message[:500]}")
        status = "schema ok"
    for text in expect_warnings:
        if not find_text(report, {"diagnostics", "warnings"}, text):
            fail(f"{json_path}: no diagnostics/warnings entry mentions '{text}'")
    return status


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("name")
    ap.add_argument("original", help="the TorchScript file that was converted")
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--state-dict-from", default=None,
                    help="TorchScript file whose state_dict() must load strictly "
                    "(default: ORIGINAL; 'none' to skip, e.g. after passes that restructure)")
    ap.add_argument("--inputs", help="torch.save'd input tuple (default: ORIGINAL .inputs.pt)")
    ap.add_argument("--expected", help="torch.save'd outputs (default: ORIGINAL .expected.pt)")
    ap.add_argument("--sequence", nargs=2, action="append", default=[],
                    metavar=("INPUTS", "EXPECTED"),
                    help="call one fresh instance on these input sets in order (module state)")
    ap.add_argument("--schema", default=DEFAULT_SCHEMA)
    ap.add_argument("--expect-warning", action="append", default=[],
                    help="text a diagnostics/warnings entry of NAME.json must contain")
    ap.add_argument("--timeout", type=float, default=600, help="for running NAME.py")
    ap.add_argument("--allow-import", action="append", default=[],
                    help="a package the generated code may import too (torchvision, whose import "
                    "registers its ops); imported here before the original is loaded")
    ap.add_argument("--quantized-engine",
                    help="torch.backends.quantized.engine to run int8 models with (the engine "
                    "tinytrace converted with: outputs are bit-exact only on it)")
    ap.add_argument("--op-library", action="append", default=[],
                    help="a shared library of custom ops to load (torch.ops.load_library) before "
                    "the original is loaded")
    args = ap.parse_args()
    if args.quantized_engine:
        torch.backends.quantized.engine = args.quantized_engine
    for mod in args.allow_import:
        importlib.import_module(mod)
    for lib in args.op_library:
        torch.ops.load_library(lib)

    t0 = time.time()
    torch.manual_seed(0)
    base = (os.path.splitext(args.original)[0] if args.original.endswith((".pt", ".pt2", ".onnx"))
            else args.original)
    py_path = os.path.join(args.out_dir, args.name + ".py")
    pth_path = os.path.join(args.out_dir, args.name + ".pth")
    json_path = os.path.join(args.out_dir, args.name + ".json")

    inputs_path = args.inputs or base + ".inputs.pt"
    if not os.path.isfile(inputs_path):
        fail(f"{inputs_path} not found (run scripts/gen_models.py, or pass --inputs)")
    inputs = torch.load(inputs_path)
    if isinstance(inputs, torch.Tensor):
        inputs = (inputs,)
    inputs = tuple(inputs)
    original = None
    expected_path = args.expected or base + ".expected.pt"
    if os.path.isfile(expected_path):
        expected = torch.load(expected_path)
    else:
        original = load_original(args.original)
        with torch.no_grad():
            expected = original(*inputs)

    def fresh_model():
        return load_generated(py_path, args.name, ALLOWED_IMPORTS | set(args.allow_import))

    _, model, py_lines = fresh_model()
    pth = load_state_dict_file(pth_path)
    load_strict(model, pth, os.path.basename(pth_path))
    got = run(model, inputs, "NAME.pth")
    rel_pth, n_out = compare(got, expected, args.tol, f"{args.name} with {os.path.basename(pth_path)}")
    named_tuples = "none"
    if not args.original.endswith((".pt2", ".onnx")) and has_named_tuples(args.original):
        if original is None:
            original = load_original(args.original)
        check_named_tuples(got, return_type(original), f"{args.name} with "
                           f"{os.path.basename(pth_path)}")
        named_tuples = "same"

    rel_orig = None
    sd_from = args.state_dict_from or args.original
    if sd_from != "none":
        if original is None or sd_from != args.original:
            original = load_original(sd_from)
        orig_sd = dict(original.state_dict())
        if args.sequence:  # the first call changed the state
            model = fresh_model()[1]
        consts = tensor_constant_buffers(pth, orig_sd, json_path, py_path)
        load_strict(model, {**orig_sd, **consts},
                    f"the state_dict() of {os.path.basename(sd_from)}"
                    + (f" and NAME.pth's {len(consts)} tensor constant(s)" if consts else ""))
        differing = [k for k in orig_sd if k in pth and not (
            orig_sd[k].dtype == pth[k].dtype and orig_sd[k].shape == pth[k].shape
            and torch.equal(orig_sd[k], pth[k]))]
        if differing:
            fail(f"{os.path.basename(pth_path)} holds values different from the original's "
                 f"state_dict for {len(differing)} key(s), e.g. '{differing[0]}'")
        rel_orig, _ = compare(run(model, inputs, "the original state_dict"), expected, args.tol,
                              f"{args.name} with the original state_dict")

    if args.sequence:
        seq_model = fresh_model()[1]
        load_strict(seq_model, pth, os.path.basename(pth_path))
        for i, (seq_inputs, seq_expected) in enumerate(args.sequence):
            ins = torch.load(seq_inputs)
            ins = (ins,) if isinstance(ins, torch.Tensor) else tuple(ins)
            compare(run(seq_model, ins, f"NAME.pth, call {i + 1} of the sequence"),
                    torch.load(seq_expected), args.tol,
                    f"{args.name} call {i + 1} of {len(args.sequence)} on one instance")

    flakes = subprocess.run([PYTHON, "-m", "pyflakes", py_path], capture_output=True, text=True)
    if flakes.returncode != 0 or flakes.stdout.strip() or flakes.stderr.strip():
        fail(f"pyflakes reports on {py_path}:\n{(flakes.stdout + flakes.stderr).strip()}")

    t_main = time.time()
    with tempfile.TemporaryDirectory() as elsewhere:
        try:
            main_run = run_standalone(py_path, elsewhere, args.timeout)
        except subprocess.TimeoutExpired:
            fail(f"python3 {py_path} did not finish in {args.timeout:g} s")
    if main_run.returncode != 0:
        tail = "\n".join((main_run.stdout + main_run.stderr).strip().splitlines()[-15:])
        fail(f"python3 {py_path} exited {main_run.returncode}:\n{tail}")
    t_main = time.time() - t_main

    schema_status = check_report(json_path, args.schema, args.expect_warning)

    n_params = sum(v.numel() for v in pth.values())
    orig = "skipped" if rel_orig is None else f"{rel_orig:.2e}"
    print(f"check_model: {args.name} OK: outputs={n_out} rel_err={rel_pth:.2e} "
          f"rel_err_original_sd={orig} tol={args.tol:g} keys={len(pth)} values={n_params} "
          f"named_tuples={named_tuples} py_lines={py_lines} pyflakes=clean main=ok({t_main:.1f}s) report={schema_status} "
          f"time={time.time() - t0:.1f}s")
    return 0


# Note [The standalone run's interpreter]
# Check 6 runs NAME.py as `/usr/bin/python3 NAME.py` would: a fresh interpreter whose first
# import is torch (~2.5 s of CPU in every e2e test). Instead, before main() does anything, this
# process forks an idle copy of itself whose only state is that of a fresh `python3` after
# `import torch`: check_model.py's own imports are all imported by torch's import too (sys.modules
# is the same), nothing has run yet (no --allow-import/--op-library loaded, no quantized engine
# set, no seed drawn, no model loaded), and what main() does later happens in the parent only.
# When check 6 comes, the copy takes NAME.py's path and a working directory through a pipe and
# becomes the script's interpreter: chdir, sys.argv = [NAME.py], sys.path[0] = NAME.py's
# directory (not scripts/), stdout and stderr into files, NAME.py run as __main__ with fresh
# globals (runpy), an exception printed by sys.excepthook as exit 1, SystemExit's code as the
# interpreter maps it, atexit handlers run; the parent waits with the same timeout and reads the
# exit status (a signal as a negative code) and output as subprocess.run gave them.
# TT_CHECK_MODEL_SUBPROCESS=1 runs the real `python3 NAME.py` instead (to compare the two).
class StandaloneInterpreter:
    def __init__(self):
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        read_end, self.request = os.pipe()
        with warnings.catch_warnings():  # "multi-threaded, fork() may deadlock": torch's idle
            warnings.simplefilter("ignore", DeprecationWarning)  # thread, as in DataLoader workers
            self.pid = os.fork()
        if self.pid == 0:  # never returns into the checker's code
            code = 1
            try:
                os.close(self.request)
                code = self._serve(read_end)
            except BaseException:
                import traceback
                traceback.print_exc()
            finally:
                os._exit(code)
        os.close(read_end)

    @staticmethod
    def _serve(read_end):
        with os.fdopen(read_end, "rb") as f:
            request = f.read()
        if not request:  # the checker stopped before check 6
            return 0
        script, cwd, out_path, err_path = json.loads(request)
        for fd, path in ((1, out_path), (2, err_path)):
            target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(target, fd)
            os.close(target)
        os.chdir(cwd)
        sys.argv = [script]
        import torch_zygote
        return torch_zygote.run_script(script)

    def run(self, script, cwd, timeout):
        """subprocess.run([PYTHON, script], cwd=cwd, capture_output=True, text=True, timeout=...)"""
        with tempfile.TemporaryDirectory() as tmp:
            out_path, err_path = os.path.join(tmp, "stdout"), os.path.join(tmp, "stderr")
            with os.fdopen(self.request, "wb") as f:
                f.write(json.dumps([script, cwd, out_path, err_path]).encode())
            self.request = None
            deadline = time.time() + timeout
            while True:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
                if pid:
                    break
                if time.time() > deadline:
                    os.kill(self.pid, 9)
                    os.waitpid(self.pid, 0)
                    raise subprocess.TimeoutExpired([PYTHON, script], timeout)
                time.sleep(0.01)
            outputs = []
            for path in (out_path, err_path):
                with open(path, encoding="utf-8", errors="replace") as f:
                    outputs.append(f.read())
        return subprocess.CompletedProcess([PYTHON, script], os.waitstatus_to_exitcode(status),
                                           outputs[0], outputs[1])


STANDALONE = None


def run_standalone(py_path, cwd, timeout):
    """Check 6: `python3 NAME.py` in cwd (Note [The standalone run's interpreter])."""
    script = os.path.abspath(py_path)
    if STANDALONE is None:
        return subprocess.run([PYTHON, script], cwd=cwd, capture_output=True, text=True,
                              timeout=timeout)
    return STANDALONE.run(script, cwd, timeout)


if __name__ == "__main__":
    if os.environ.get("TT_CHECK_MODEL_SUBPROCESS") != "1":
        STANDALONE = StandaloneInterpreter()
    try:
        sys.exit(main())
    except CheckFailed as e:
        print(f"FAIL: check_model: {e}", file=sys.stderr)
        sys.exit(1)
