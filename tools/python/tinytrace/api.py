"""convert, prepare_for_quantization, inspect, diff, profile: the tinytrace CLI on live modules.

Everything here stages the model as a file, runs the ``tinytrace`` binary (``_cli``) and reads
back what it wrote; no conversion logic lives in Python.
"""
import contextlib
import importlib.abc
import importlib.util
import itertools
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

import torch

from . import _cli, _model
from .errors import VerifyMismatchError

# What each output file is, by extension (README "Outputs").
KINDS = {".py": "python", ".pth": "weights", ".json": "report", ".pt": "torchscript",
         ".tir": "tir", ".dot": "dot", ".svg": "svg"}
ALWAYS_EMITTED = ["python", "weights", "report"]  # what the result object is built from

_module_numbers = itertools.count(1)


class ConversionResult:
    """What :func:`convert` returns.

    - ``module``: an instance of the generated class with ``NAME.pth`` loaded (``strict=True``),
      in the train/eval mode the input model was in;
    - ``module_class``, ``class_name``: the generated class and its name; ``name``: the base
      name of the files;
    - ``out_dir`` and ``paths`` (``{"python": Path, "weights": ..., "report": ...,
      "torchscript": ..., ...}``, what was written), ``python_path``, ``weights_path``,
      ``report_path``;
    - ``report``: ``NAME.json`` parsed (a dict); ``stdout``/``stderr``: what the CLI printed.

    Without ``out_dir`` the files are in a temporary directory that lives as long as this object;
    :meth:`save` copies them elsewhere. The generated class keeps its source in memory, so
    ``inspect.getsource`` and ``torch.jit.script`` work on it after the directory is gone.

    >>> import torch, tinytrace
    >>> r = tinytrace.convert(torch.nn.Sequential(torch.nn.Linear(4, 2)), torch.rand(3, 4))
    >>> r.class_name, sorted(r.paths), r.report["format"]
    ('Sequential', ['python', 'report', 'weights'], 'tinytrace-report')
    """

    def __init__(self, *, module, module_class, name, out_dir, paths, report, stdout, stderr,
                 keep=None):
        self.module = module
        self.module_class = module_class
        self.class_name = module_class.__name__
        self.name = name
        self.out_dir = out_dir
        self.paths = paths
        self.report = report
        self.stdout = stdout
        self.stderr = stderr
        self._keep = keep  # the TemporaryDirectory holding the files, when there is one

    @property
    def python_path(self):
        return self.paths.get("python")

    @property
    def weights_path(self):
        return self.paths.get("weights")

    @property
    def report_path(self):
        return self.paths.get("report")

    def save(self, directory):
        """Copies every output file into ``directory`` (created if missing); returns their new
        paths by kind, like ``paths``.

        >>> import os, tempfile, torch, tinytrace
        >>> r = tinytrace.convert(torch.nn.Sequential(torch.nn.Linear(4, 2)), torch.rand(3, 4))
        >>> d = tempfile.mkdtemp()
        >>> sorted(os.path.basename(p) for p in r.save(d).values())
        ['sequential.json', 'sequential.pth', 'sequential.py']
        """
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        saved = {}
        for kind, path in self.paths.items():
            saved[kind] = directory / path.name
            if not (saved[kind].exists() and saved[kind].samefile(path)):
                shutil.copyfile(path, saved[kind])
        return saved

    def __repr__(self):
        return f"<tinytrace.ConversionResult {self.class_name} in {self.out_dir}>"


class _GeneratedSource(importlib.abc.InspectLoader):
    """Loads NAME.py from its text held in memory, so that the class's source (for
    inspect.getsource and torch.jit.script) outlives a temporary output directory, and so that
    no __pycache__ appears beside the user's outputs."""

    def __init__(self, path, text):
        self.path = path
        self.text = text

    def get_source(self, fullname):
        return self.text

    def get_code(self, fullname):
        return compile(self.text, self.path, "exec", dont_inherit=True)

    def is_package(self, fullname):
        return False


def _import_generated(py_path, class_name):
    """Imports NAME.py under a module name of its own (registered in sys.modules, so the class
    pickles and scripts) and returns the class."""
    module_name = f"tinytrace_generated_{py_path.stem}_{next(_module_numbers)}"
    loader = _GeneratedSource(str(py_path), py_path.read_text())
    spec = importlib.util.spec_from_loader(module_name, loader, origin=str(py_path))
    spec.has_location = True  # __file__ = NAME.py, as for a module imported from a file
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    return getattr(module, class_name)


def _clone(x):
    """A copy of nested inputs, so that a model writing into its inputs in place does not change
    the caller's tensors or the next run's inputs."""
    if isinstance(x, torch.Tensor):
        return x.clone()
    if isinstance(x, (tuple, list)):
        return type(x)(_clone(v) for v in x)
    if isinstance(x, dict):
        return {k: _clone(v) for k, v in x.items()}
    return x


def _flat_tensors(x, path="output"):
    if isinstance(x, torch.Tensor):
        return [(path, x)]
    if isinstance(x, (tuple, list)):
        return [t for i, v in enumerate(x) for t in _flat_tensors(v, f"{path}[{i}]")]
    if isinstance(x, dict):
        return [t for k in sorted(x) for t in _flat_tensors(x[k], f"{path}[{k!r}]")]
    return []


@contextlib.contextmanager
def _in_eval_mode(*modules):
    modes = [(m, m.training) for module in modules for m in module.modules()]
    for module in modules:
        module.eval()
    try:
        yield
    finally:
        for m, training in modes:
            m.training = training


def _check_generated(original, generated, inputs, tolerance, command):
    """verify=True, on the Python side: the generated class, as imported, against the model the
    caller passed, on the example inputs (the CLI's --verify ran its interpreter instead)."""
    with torch.no_grad(), _in_eval_mode(original, generated):
        want = _flat_tensors(original(*_clone(inputs)))
        got = _flat_tensors(generated(*_clone(inputs)))
    if [p for p, _ in want] != [p for p, _ in got]:
        raise VerifyMismatchError(
            f"error: the generated code returns {[p for p, _ in got]} where the model returns "
            f"{[p for p, _ in want]} — this is a bug in tinytrace; please report it with the model",
            command=command)
    for (path, w), (_, g) in zip(want, got):
        if w.shape != g.shape or w.dtype != g.dtype:
            raise VerifyMismatchError(
                f"error: {path} of the generated code is {g.dtype}{list(g.shape)} where the "
                f"model's is {w.dtype}{list(w.shape)} — this is a bug in tinytrace; please "
                "report it with the model", command=command)
        if not w.is_floating_point():
            bad = not torch.equal(w, g)
            what = "differs"
        else:
            scale = w.abs().max().item() if w.numel() else 0.0
            diff = (w - g).abs().max().item() if w.numel() else 0.0
            rel = diff / scale if scale > 0 else diff
            bad = not rel <= tolerance
            what = f"differs by {rel:.3g} (max|diff|/max|expected|) > {tolerance:g}"
        if bad:
            raise VerifyMismatchError(
                f"error: {path} of the generated Python code {what} from the model's on the "
                "example inputs — this is a bug in tinytrace; please report it with the model",
                command=command)


def _emit_kinds(emit):
    extra = emit.split(",") if isinstance(emit, str) else list(emit or [])
    return ALWAYS_EMITTED + [k for k in extra if k and k not in ALWAYS_EMITTED]


def _library_args(load_library):
    paths = [load_library] if _model.is_path(load_library) else list(load_library or [])
    return [a for p in paths for a in ("--load-library", os.fspath(p))]


def convert(model, example_inputs=None, *, out_dir=None, name=None, fuse=False,
            quant_prep=False, qat=False, passes=None, verify=False, emit=None, script=False,
            flat=False, tolerance=None, load_library=None, optimize_for_inference=False):
    """Converts a model with ``tinytrace convert`` and returns a :class:`ConversionResult` holding
    the generated module instance (weights loaded, in the input's train/eval mode), its class,
    the output paths and the parsed report.

    ``model`` is a live ``nn.Module`` (traced in eval mode with ``torch.jit.trace`` on
    ``example_inputs``, or scripted with ``script=True``; the train/eval flags of its submodules
    are restored afterwards), a ``ScriptModule``, or the path of a model file (``.pt``, ``.pt2``,
    ``.onnx``, ``.tir``). ``example_inputs`` is a tensor or a tuple of tensors; their shapes and
    dtypes become ``--input-shape`` (static shapes in the report and example inputs in NAME.py).

    Options (README "Usage"): ``out_dir`` (default: a temporary directory the result keeps),
    ``name`` (default: the class name in snake_case, ``AlexNet`` -> ``alex_net``, class
    ``AlexNet``; with ``name`` the class is exactly ``name``), ``fuse``, ``quant_prep``, ``qat``,
    ``passes`` (a pipeline such as ``"cse,dce"``), ``verify`` (``--verify`` on the example
    inputs, and the imported class run against ``model`` on them; ``tolerance`` overrides the
    default), ``emit`` (more outputs: ``"torchscript"``, ``"tir"``, ``"dot"``), ``flat``,
    ``load_library`` (paths of op libraries, ``--load-library``), ``optimize_for_inference``
    (``--optimize-for-inference``: NAME.pt frozen and optimized by LibTorch; it implies
    ``emit="torchscript"``, and the result's ``paths["torchscript"]`` is that file).

    A failure raises a :class:`tinytrace.ConversionError` subclass whose message is the CLI's
    error line and notes.

    >>> import torch, tinytrace
    >>> net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8),
    ...                           torch.nn.ReLU())
    >>> r = tinytrace.convert(net.train(), torch.rand(1, 3, 16, 16), fuse=True, verify=True)
    >>> r.module.training, net.training, net[1].training  # modes as they were
    (True, True, True)
    >>> x = torch.rand(2, 3, 16, 16)
    >>> torch.allclose(r.module.eval()(x), net.eval()(x), atol=1e-5)
    True
    >>> type(r.module[1]).__name__  # the BatchNorm, folded into the conv
    'Identity'
    """
    inputs = _model.as_tuple(example_inputs)
    work = tempfile.TemporaryDirectory(prefix="tinytrace-")
    result = None
    try:
        staging = os.path.join(work.name, "input")
        os.mkdir(staging)
        model_path = _model.save_model(model, inputs, staging, script)
        target = os.path.abspath(out_dir if out_dir is not None else os.path.join(work.name, "out"))
        args = _library_args(load_library) + ["convert", model_path, "-o", target]
        if name is not None:
            args += ["--name", name]
        args += _model.input_shape_args(inputs)
        for flag, on in (("--fuse", fuse), ("--quant-prep", quant_prep), ("--qat", qat),
                         ("--flat", flat)):
            if on:
                args.append(flag)
        if passes:
            args += ["--passes", passes]
        if verify:
            args.append("--verify")
            if inputs:
                args += ["--verify-inputs", _model.save_inputs(inputs, staging)]
            if tolerance is not None:
                args += ["--tolerance", repr(float(tolerance))]
        kinds = _emit_kinds(emit)
        if optimize_for_inference:
            args.append("--optimize-for-inference")
            if "torchscript" not in kinds:
                kinds.append("torchscript")
        args += ["--emit", ",".join(kinds)]
        proc = _cli.run(args, names=_names([model], [model_path]))
        result = _read_outputs(proc, model)
        if verify and inputs and isinstance(model, torch.nn.Module):
            tolerance = result.report["verification"]["results"][0]["tolerance"]
            _check_generated(model, result.module, inputs, tolerance, proc.args)
    except BaseException:
        # As the CLI does on failure: no output is left behind.
        for path in (result.paths.values() if result else []):
            path.unlink(missing_ok=True)
        work.cleanup()
        raise
    shutil.rmtree(staging, ignore_errors=True)
    if out_dir is None:
        result._keep = work
    else:
        work.cleanup()
    return result


def _read_outputs(proc, model):
    """The result of a successful convert run: the files its stdout lists ("wrote PATH"), the
    class it names ("-> class NAME"), the generated module with its weights."""
    found = re.search(r"-> class (\S+) \(", proc.stdout)
    written = [Path(p) for p in re.findall(r"^\s+wrote (.+)$", proc.stdout, re.MULTILINE)]
    paths = {KINDS[p.suffix]: p for p in written if p.suffix in KINDS}
    if not found or not all(k in paths for k in ALWAYS_EMITTED):
        raise RuntimeError(f"tinytrace convert printed no class or files:\n{proc.stdout}")
    module_class = _import_generated(paths["python"], found.group(1))
    module = module_class()
    module.load_state_dict(torch.load(paths["weights"], weights_only=True), strict=True)
    module.train(model.training if isinstance(model, torch.nn.Module) else False)
    return ConversionResult(module=module, module_class=module_class,
                            name=paths["python"].stem, out_dir=paths["python"].parent,
                            paths=paths, report=json.loads(paths["report"].read_text()),
                            stdout=proc.stdout, stderr=proc.stderr)


def prepare_for_quantization(model, example_inputs, qat=False, **options):
    """The model rewritten for eager-mode quantization (``--quant-prep``, with ``qat=True``
    ``--quant-prep --qat``): a module computing exactly what ``model`` computes, with QuantStub/
    DeQuantStub, fused Conv/BN/ReLU, FloatFunctional and unshared modules, ready for
    ``torch.ao.quantization.prepare`` (``prepare_qat`` with ``qat=True``, after ``.train()``).
    It runs with ``verify=True`` unless told otherwise; other keyword options go to
    :func:`convert`.

    >>> import torch, tinytrace
    >>> class Net(torch.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.conv = torch.nn.Conv2d(3, 4, 3)
    ...     def forward(self, x, y):
    ...         return torch.relu(self.conv(x)) + y
    >>> x, y = torch.rand(1, 3, 8, 8), torch.rand(1, 4, 6, 6)
    >>> m = tinytrace.prepare_for_quantization(Net(), (x, y))
    >>> [type(c).__name__ for c in m.children()]
    ['ConvReLU2d', 'FloatFunctional', 'DeQuantStub', 'QuantStub', 'QuantStub']
    >>> m.qconfig = torch.ao.quantization.get_default_qconfig("qnnpack")
    >>> torch.backends.quantized.engine = "qnnpack"
    >>> p = torch.ao.quantization.prepare(m)
    >>> _ = p(x, y)  # calibrate
    >>> q = torch.ao.quantization.convert(p)
    >>> q(x, y).shape
    torch.Size([1, 4, 6, 6])
    """
    options.setdefault("verify", True)
    return convert(model, example_inputs, quant_prep=True, qat=qat, **options).module


def _names(models, paths, suffixes=("",)):
    """What error messages call each temporary model file: the live module's class."""
    return {p: _model.label(m) + s for m, p, s in zip(models, paths, suffixes)
            if _model.label(m)}


@contextlib.contextmanager
def _model_files(models, inputs, script):
    """The models as files in a temporary directory (paths stay as they are)."""
    with tempfile.TemporaryDirectory(prefix="tinytrace-") as work:
        paths = []
        for i, m in enumerate(models):
            sub = os.path.join(work, str(i))
            os.mkdir(sub)
            paths.append(_model.save_model(m, inputs, sub, script))
        yield paths


def inspect(model, example_inputs=None, *, script=False, load_library=None):
    """``tinytrace inspect --json``: inputs, outputs, modules, op histogram, parameter counts,
    fallbacks and warnings, as a dict (schema: ``lib/emitters/inspect.schema.json``). ``model`` is
    taken as by :func:`convert`; ``example_inputs`` add the dtypes and shapes.

    >>> import torch, tinytrace
    >>> doc = tinytrace.inspect(torch.nn.Linear(4, 2), torch.rand(3, 4))
    >>> doc["summary"]["parameter_count"], doc["outputs"][0]["shape"]
    (10, [3, 2])
    """
    inputs = _model.as_tuple(example_inputs)
    with _model_files([model], inputs, script) as (path,):
        proc = _cli.run(_library_args(load_library) + ["inspect", path, "--json"] +
                        _model.input_shape_args(inputs), names=_names([model], [path]))
    return json.loads(proc.stdout)


def diff(a, b, example_inputs=None, *, script=False, load_library=None):
    """``tinytrace diff --json``: what changed from model ``a`` to model ``b`` (ops, modules,
    parameters, signature), as a dict whose ``identical`` says whether anything did. Each model
    is taken as by :func:`convert` (live modules are traced on the same ``example_inputs``).

    >>> import torch, tinytrace
    >>> torch.manual_seed(0) is not None
    True
    >>> a, b = torch.nn.Linear(4, 2), torch.nn.Linear(4, 2)
    >>> x = torch.rand(1, 4)
    >>> tinytrace.diff(a, a, x)["identical"], tinytrace.diff(a, b, x)["identical"]
    (True, False)
    """
    inputs = _model.as_tuple(example_inputs)
    with _model_files([a, b], inputs, script) as (path_a, path_b):
        # diff follows diff(1): 1 means "different", not an error.
        proc = _cli.run(_library_args(load_library) + ["diff", path_a, path_b, "--json"],
                        ok_codes=(0, 1),
                        names=_names([a, b], [path_a, path_b], (" (model a)", " (model b)")))
    return json.loads(proc.stdout)


def profile(model, example_inputs, *, runs=None, warmup=None, top=None, script=False,
            load_library=None):
    """``tinytrace profile --json``: the model run node by node by tinytrace's interpreter on
    seeded inputs shaped like ``example_inputs`` (mean times per node and per op type, the whole
    run, and for TorchScript the original's time), as a dict.

    >>> import torch, tinytrace
    >>> net = torch.nn.Sequential(torch.nn.Linear(4, 2), torch.nn.ReLU())
    >>> doc = tinytrace.profile(net, torch.rand(3, 4), runs=2, warmup=1)
    >>> doc["runs"], [n["op"] for n in doc["nodes"]]
    (2, ['nn.Linear', 'nn.ReLU'])
    """
    inputs = _model.as_tuple(example_inputs)
    shapes = _model.input_shape_args(inputs)
    if not shapes:
        raise ValueError("profile needs example_inputs: one tensor (not 0-d) per model input")
    options = []
    for flag, value in (("--runs", runs), ("--warmup", warmup), ("--top", top)):
        if value is not None:
            options += [flag, str(value)]
    with _model_files([model], inputs, script) as (path,):
        proc = _cli.run(_library_args(load_library) + ["profile", path, "--json"] + shapes +
                        options, names=_names([model], [path]))
    return json.loads(proc.stdout)
