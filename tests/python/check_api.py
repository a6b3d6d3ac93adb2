#!/usr/bin/python3
"""check_api.py: the Python package (tools/python/tinytrace) on live modules, one case per run.

    check_api.py CASE WORK_DIR        (check_api.py --list shows the cases)

Run with tools/python on PYTHONPATH and TINYTRACE_BIN set (tests/python_api.cmake does both).
Every case compares what the package returns with what PyTorch computes on the live model:

  alexnet          a live torchvision alexnet (random weights, train mode, 64x64 input):
                   outputs within 1e-4, the original state_dict loads strictly, every
                   submodule's train/eval flag restored, result.save(), the report;
  prepare_*        the three model-preparer examples (a functional ReLU, one ReLU instance
                   reused, an add of two inputs) through prepare_for_quantization: float outputs
                   within 1e-3 of the model's, QuantStub per float input, DeQuantStub per
                   output, no shared module, the expected fused modules and FloatFunctional
                   uses, then PTQ (prepare -> calibrate -> convert) runs close to float;
  qat_loop         prepare_for_quantization(qat=True) -> prepare_qat -> a training loop whose
                   loss falls -> convert; the int8 model agrees with the fake-quantized one;
  scripted         script=True on data-dependent control flow (both branches), a ScriptModule
                   and a model path as input, torch.jit.script of the generated class after the
                   temporary directory is gone;
  errors           each exit code as its exception type with the CLI's error line and notes,
                   TraceError, BinaryNotFoundError, nothing left in out_dir, the input model
                   unchanged;
  tools            inspect/diff/profile dicts against PyTorch's own numbers, python3 -m
                   tinytrace (same output and exit codes as the binary).

Prints one OK line; `FAIL: ...` and exit 1 otherwise.
"""
import gc
import os
import shutil
import subprocess
import sys
import tempfile

import torch
import torch.ao.quantization as tq

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGE_PATH = os.path.join(REPO, "tools", "python")  # the checkout's package is under test
sys.path[:0] = [PACKAGE_PATH, os.path.join(REPO, "scripts"), os.path.join(REPO, "tests", "e2e")]
import check_quant  # noqa: E402  (structure(), ptq(), cosine(): the quant tests' own checks)
import gen_models  # noqa: E402  (the small test models and their randomisation)
import tinytrace  # noqa: E402


def fail(msg):
    print(f"FAIL: {msg}", flush=True)
    sys.exit(1)


def rel_diff(got, want):
    """max|got - want| / max|want| over every output tensor (nested tuples/lists/dicts)."""
    a, b = check_quant.flat_tensors(got), check_quant.flat_tensors(want)
    if len(a) != len(b) or any(x.shape != y.shape for x, y in zip(a, b)):
        fail(f"outputs differ in structure: {[tuple(x.shape) for x in a]} vs "
             f"{[tuple(y.shape) for y in b]}")
    scale = max(float(y.abs().max()) for y in b)
    return max(float((x - y).abs().max()) for x, y in zip(a, b)) / scale


def check_close(got, want, tol, what):
    d = rel_diff(got, want)
    if not d <= tol:
        fail(f"{what}: outputs differ by {d:.3g} (max|diff|/max|expected|) > {tol:g}")
    return d


def test_model(name):
    """The small test model `name` of scripts/gen_models.py, randomised as the generator does
    (BatchNorm statistics too), in eval mode, with its example inputs."""
    spec = gen_models.SPECS[name]
    torch.manual_seed(gen_models.SEED)
    gen = torch.Generator().manual_seed(gen_models.SEED + 1)
    model = spec.build()
    gen_models.randomize_(model, spec, gen)
    return model.eval(), gen_models.make_inputs(spec, gen), spec


def modes(model):
    return [(n, m.training) for n, m in model.named_modules()]


# --------------------------------------------------------------------------------------------


def case_alexnet(work):
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.alexnet(weights=None).train()  # has Dropout: the mode matters
    x = torch.rand(1, 3, 64, 64)
    before = modes(model)
    # (verify=False: the comparison below is the check; verify=True has the doctests' cases.)
    r = tinytrace.convert(model, x, out_dir=os.path.join(work, "out"))
    if modes(model) != before:
        fail("the train/eval flags of the model's submodules changed")
    if not r.module.training:
        fail("the generated module is in eval mode; the input model was in train mode")
    if r.class_name != "AlexNet" or r.python_path.name != "alex_net.py":
        fail(f"class {r.class_name} in {r.python_path}, expected AlexNet in alex_net.py")
    # The original's state_dict loads strictly (same keys, shapes).
    r.module.load_state_dict(model.state_dict(), strict=True)
    model.eval()
    r.module.eval()
    with torch.no_grad():
        d = check_close(r.module(x), model(x), 1e-4, "alexnet")
        xb = torch.rand(3, 3, 80, 72)  # other batch and size: the code is shape-general
        check_close(r.module(xb), model(xb), 1e-4, "alexnet at 3x3x80x72")
    if r.report["format"] != "tinytrace-report" or r.report["summary"]["parameter_count"] != \
            sum(p.numel() for p in model.parameters()):
        fail("the report is not a tinytrace report counting the model's parameters")
    saved = r.save(os.path.join(work, "saved"))
    if sorted(p.name for p in saved.values()) != ["alex_net.json", "alex_net.pth", "alex_net.py"]:
        fail(f"save() wrote {sorted(saved.values())}")
    print(f"OK: live alexnet converted, max rel diff {d:.2g}, modes restored, "
          f"{len(r.module.state_dict())} state_dict keys load strictly")


# The three model-preparer examples: model -> (counts that must hold after prepare).
PREPARE = {
    "functional_relu": {"QuantStub": 1, "DeQuantStub": 1, "ConvReLU2d": 2, "LinearReLU": 1},
    "shared_relu": {"QuantStub": 1, "DeQuantStub": 1, "ConvReLU2d": 3, "LinearReLU": 1},
    "two_inputs_add": {"QuantStub": 2, "DeQuantStub": 1, "FloatFunctional.add": 2},
}


def case_prepare(work, name):
    model, inputs, spec = test_model(name)
    state = {k: v.clone() for k, v in model.state_dict().items()}
    m = tinytrace.prepare_for_quantization(model, inputs)
    if m.training:
        fail("the prepared module is in train mode; the model was in eval mode")
    with torch.no_grad():
        d = check_close(m(*inputs), model(*inputs), 1e-3, f"{name} prepared (float)")
        gen = torch.Generator().manual_seed(7)
        other = gen_models.make_inputs(spec, gen, batch=3)
        check_close(m(*other), model(*other), 1e-3, f"{name} prepared (float), batch 3")
    if any(not torch.equal(v, model.state_dict()[k]) for k, v in state.items()):
        fail("prepare_for_quantization changed the input model's weights")
    counts, problems = check_quant.structure(m, list(inputs))
    if problems:
        fail(f"{name}: " + "; ".join(problems))
    want = PREPARE[name]
    got = {k: counts.get(k, 0) for k in want}
    if got != want:
        fail(f"{name}: prepared structure {got}, expected {want} (all counts: {counts})")
    cos, q = check_quant.ptq(m, list(inputs), torch.Generator().manual_seed(3))
    if not cos > 0.95:
        fail(f"{name}: int8 output after PTQ has cosine {cos:.4f} to the float output")
    print(f"OK: {name} prepared (float diff {d:.2g}), {got}; PTQ runs, int8 vs float cosine "
          f"{cos:.4f}")


def case_qat_loop(work):
    model, inputs, spec = test_model("functional_relu")  # Conv+BN+ReLU: ConvBnReLU2d for QAT
    m = tinytrace.prepare_for_quantization(model, inputs, qat=True)
    with torch.no_grad():
        check_close(m(*inputs), model(*inputs), 1e-4, "prepared for QAT (float, eval)")
    if not any(type(c).__name__ == "ConvBnReLU2d" for c in m.modules()):
        fail("--qat kept no ConvBnReLU2d: " + ", ".join(sorted({type(c).__name__
                                                                  for c in m.modules()})))
    torch.backends.quantized.engine = "qnnpack"
    m.train()
    m.qconfig = tq.get_default_qat_qconfig("qnnpack")
    prepared = tq.prepare_qat(m)
    gen = torch.Generator().manual_seed(11)
    xs = [gen_models.make_inputs(spec, gen, batch=8) for _ in range(4)]
    with torch.no_grad():  # targets the network can reach: its own outputs, scaled and shifted
        targets = [1.5 * model(*x) + 0.1 for x in xs]
    opt = torch.optim.SGD(prepared.parameters(), lr=0.05, momentum=0.9)
    losses = []
    for step in range(40):
        x, t = xs[step % 4], targets[step % 4]
        loss = torch.nn.functional.mse_loss(prepared(*x), t)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss))
    first, last = sum(losses[:4]) / 4, sum(losses[-4:]) / 4
    if not last < 0.7 * first:
        fail(f"QAT loss did not fall: first 4 steps {first:.4g}, last 4 {last:.4g}")
    prepared.eval()
    q = tq.convert(prepared)
    with torch.no_grad():
        fake, real = prepared(*inputs), q(*inputs)
    cos = check_quant.cosine(real, fake)
    if not cos > 0.99:
        fail(f"the converted int8 model's output has cosine {cos:.4f} to the fake-quantized one")
    print(f"OK: QAT loop: loss {first:.4g} -> {last:.4g} in 40 steps; converted int8 model vs "
          f"fake-quantized cosine {cos:.4f}")


class Branchy(torch.nn.Module):
    """Data-dependent control flow (only torch.jit.script keeps both branches), a Dropout and a
    branch on self.training (the model is given in train mode; tinytrace converts what it
    computes in eval mode)."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.drop = torch.nn.Dropout(0.5)

    def forward(self, x):
        y = self.drop(self.conv(x))
        if self.training:  # resolved while converting: saved in eval mode, this is not taken
            y = y + 100.0
        if bool(y.mean() > 0):
            y = torch.relu(y) * 2.0
        else:
            y = torch.sigmoid(y) - 1.0
        return y


def case_scripted(work):
    torch.manual_seed(1)
    model = Branchy().train()
    x = torch.rand(1, 3, 8, 8)
    shifts = (-10.0, 10.0)
    with torch.no_grad():
        if {bool(model.conv(x + s).mean() > 0) for s in shifts} != {False, True}:
            fail("the inputs do not take both branches")
    r = tinytrace.convert(model, x, script=True, verify=True)
    # From a ScriptModule (in train mode too), from a file, from the .tir it emits: the same
    # outputs; --name, --emit.
    scripted = torch.jit.script(model)
    path = os.path.join(work, "branchy.pt")
    torch.jit.script(Branchy().eval()).save(path)  # ... a file: what is saved is converted
    s = tinytrace.convert(scripted, x, name="branchy_net", emit="tir,torchscript")
    if not (model.training and model.drop.training and scripted.training and
            scripted.drop.training and r.module.training and s.module.training):
        fail("the train mode of a model or of the generated module was not kept")
    if s.class_name != "branchy_net" or sorted(s.paths) != ["python", "report", "tir",
                                                            "torchscript", "weights"]:
        fail(f"name/emit: class {s.class_name}, files {sorted(s.paths)}")
    # optimize_for_inference=True implies emit="torchscript": a frozen NAME.pt, verified.
    frozen = tinytrace.convert(scripted, x, optimize_for_inference=True, verify=True)
    if "inference_optimization" not in frozen.report or "torchscript" not in frozen.paths:
        fail(f"optimize_for_inference: no frozen NAME.pt reported, files {sorted(frozen.paths)}")
    from_path = tinytrace.convert(path, x).module
    from_path.load_state_dict(model.state_dict())
    sources = {"script=True": r.module, "ScriptModule": s.module, "path": from_path,
               ".tir": tinytrace.convert(s.paths["tir"]).module,
               "--emit torchscript": torch.jit.load(s.paths["torchscript"]),
               "--optimize-for-inference": torch.jit.load(frozen.paths["torchscript"])}
    model.eval()
    with torch.no_grad():
        for what, m in sources.items():
            for shift in shifts:
                check_close(m.eval()(x + shift), model(x + shift), 1e-4,
                            f"from {what} (x {shift:+})")
    # The class's source outlives the temporary directory: scripting it still works.
    py_path, module = r.python_path, r.module
    del r
    gc.collect()
    if py_path.exists():
        fail(f"{py_path} still exists after the result was dropped")
    again = torch.jit.script(module)
    with torch.no_grad():
        check_close(again(x + 10.0), model(x + 10.0), 1e-4, "torch.jit.script of the class")
    print("OK: script=True keeps both branches; ScriptModule, path and .tir inputs, name and "
          "emit; the generated class scripts after its temporary files are gone")


class HashModel(torch.nn.Module):
    """hash() of a str: C++'s std::hash in TorchScript, which Python cannot reproduce, so
    tinytrace refuses it (exit 4)."""

    def forward(self, x):
        return x * float(hash(str(x.size(0))) % 7)


def expect(exc_type, code, fn, *words):
    try:
        fn()
    except exc_type as e:
        if not isinstance(e, tinytrace.ConversionError) or e.returncode != code:
            fail(f"{exc_type.__name__} with returncode {getattr(e, 'returncode', None)}, "
                 f"expected {code}")
        if not str(e).startswith("error: ") or str(e).count("error: ") != 1:
            fail(f"{exc_type.__name__}'s message is not one error line plus notes: {e}")
        if str(e).splitlines()[0] != e.error or any("note: " + n not in str(e) for n in e.notes):
            fail(f"{exc_type.__name__}: error/notes attributes do not match the message: {e}")
        missing = [w for w in words if w not in str(e)]
        if missing:
            fail(f"{exc_type.__name__}'s message lacks {missing}: {e}")
        return e
    except Exception as e:
        fail(f"expected {exc_type.__name__}, got {type(e).__name__}: {e}")
    fail(f"expected {exc_type.__name__}, nothing was raised")


def case_errors(work):
    x = torch.rand(1, 3, 8, 8)
    garbage = os.path.join(work, "garbage.pt")
    with open(garbage, "wb") as f:
        f.write(os.urandom(256))
    out = os.path.join(work, "out")
    expect(tinytrace.NotAModelError, 3, lambda: tinytrace.convert(garbage, out_dir=out), garbage)
    expect(tinytrace.NotAModelError, 3, lambda: tinytrace.inspect(os.path.join(work, "no.pt")))
    net = torch.nn.Conv2d(3, 4, 3)
    expect(tinytrace.UsageError, 2,
           lambda: tinytrace.convert(net, x, name="not an identifier", out_dir=out), "--name")
    expect(tinytrace.UsageError, 2, lambda: tinytrace.convert(net, x, passes="no-such-pass"),
           "no-such-pass")
    # The error names the live module (not the temporary archive) and the line in this file.
    e = expect(tinytrace.UnsupportedError, 4,
               lambda: tinytrace.convert(HashModel(), x, script=True, out_dir=out),
               "error: HashModel: ", "aten::hash", "check_api.py:")
    if tempfile.gettempdir() in str(e):
        fail(f"the error names the temporary archive: {e}")
    # A deliberately wrong pass (test-only) makes --verify fail: exit 5.
    os.environ["TT_TEST_PASSES"] = "1"
    try:
        expect(tinytrace.VerifyMismatchError, 5,
               lambda: tinytrace.convert(net, x, passes="test-perturb-weight", verify=True,
                                         out_dir=out), "verify")
    finally:
        del os.environ["TT_TEST_PASSES"]
    if os.path.exists(out) and os.listdir(out):
        fail(f"failed conversions left files in out_dir: {os.listdir(out)}")

    class NotTraceable(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.drop = torch.nn.Dropout()

        def forward(self, x):
            return {1, 2}

    bad = NotTraceable().train()
    try:
        tinytrace.convert(bad, x)
        fail("tracing a model returning a set did not raise")
    except tinytrace.TraceError as e:
        if e.returncode is not None or e.__cause__ is None or "NotTraceable" not in e.error:
            fail(f"TraceError without the model's name or its cause: {e!r}")
    if not bad.training or not bad.drop.training:
        fail("a failed trace left the model in eval mode")
    try:
        tinytrace.convert(net)
        fail("a live module without example inputs did not raise")
    except ValueError as e:
        if "example_inputs" not in str(e):
            fail(f"no word of example_inputs in: {e}")

    # No binary: TINYTRACE_BIN naming nothing, and a copy of the package outside the checkout
    # with no tinytrace on PATH (as python3 -m tinytrace and as an import).
    saved = os.environ["TINYTRACE_BIN"]
    os.environ["TINYTRACE_BIN"] = os.path.join(work, "nothing")
    try:
        tinytrace.convert(net, x)
        fail("TINYTRACE_BIN naming no file did not raise")
    except tinytrace.BinaryNotFoundError as e:
        if "TINYTRACE_BIN" not in str(e):
            fail(f"the error does not name TINYTRACE_BIN: {e}")
    finally:
        os.environ["TINYTRACE_BIN"] = saved
    lone = os.path.join(work, "lone")
    shutil.copytree(os.path.dirname(tinytrace.__file__), os.path.join(lone, "tinytrace"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": lone, "HOME": work}
    r = subprocess.run([sys.executable, "-m", "tinytrace", "--version"], env=env, cwd=work,
                       capture_output=True, text=True)
    if r.returncode != 2 or not r.stderr.startswith("error: cannot find the tinytrace binary") \
            or "TINYTRACE_BIN" not in r.stderr:
        fail(f"python3 -m tinytrace without a binary: exit {r.returncode}, {r.stderr!r}")
    print("OK: exit codes 2/3/4/5 as UsageError/NotAModelError/UnsupportedError/"
          "VerifyMismatchError with the CLI's lines; TraceError; BinaryNotFoundError")


def case_tools(work):
    torch.manual_seed(2)
    a = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
                            torch.nn.Flatten(), torch.nn.Linear(8 * 6 * 6, 5)).eval()
    b = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
                            torch.nn.Flatten(), torch.nn.Linear(8 * 6 * 6, 5)).eval()
    x = torch.rand(2, 3, 8, 8)
    doc = tinytrace.inspect(a, x)
    params = sum(p.numel() for p in a.parameters())
    if doc["summary"]["parameter_count"] != params:
        fail(f"inspect: parameter_count {doc['summary']['parameter_count']}, PyTorch {params}")
    if doc["outputs"][0]["shape"] != list(a(x).shape):
        fail(f"inspect: output shape {doc['outputs'][0]['shape']}, PyTorch {list(a(x).shape)}")
    same, other = tinytrace.diff(a, a, x), tinytrace.diff(a, b, x)
    if not same["identical"] or other["identical"]:
        fail(f"diff: identical {same['identical']} for a model and itself, "
             f"{other['identical']} for two differently initialised ones")
    changed = {p["name"] for p in other["parameters"]["changed"]}
    sa, sb = a.state_dict(), b.state_dict()
    if changed != {k for k in sa if not torch.equal(sa[k], sb[k])}:
        fail(f"diff: changed parameters {sorted(changed)}")
    prof = tinytrace.profile(a, x, runs=2, warmup=0)
    ops = sorted(n["op"] for n in prof["nodes"])
    if prof["runs"] != 2 or ops != ["nn.BatchNorm2d", "nn.Conv2d", "nn.Flatten", "nn.Linear",
                                    "nn.ReLU"]:
        fail(f"profile: runs {prof['runs']}, nodes {ops}")

    # python3 -m tinytrace: the binary's output and exit codes.
    path = os.path.join(work, "a.pt")
    torch.jit.trace(a, x).save(path)
    path_b = os.path.join(work, "b.pt")
    torch.jit.trace(b, x).save(path_b)

    def module_cli(*args):
        return subprocess.run([sys.executable, "-m", "tinytrace", *args], capture_output=True,
                              text=True, cwd=work)

    version = subprocess.run([tinytrace.find_binary(), "--version"], capture_output=True,
                             text=True).stdout
    if module_cli("--version").stdout != version or not version.startswith("tinytrace "):
        fail(f"python3 -m tinytrace --version printed something else than {version!r}")
    runs = [module_cli("diff", path, path), module_cli("diff", path, path_b),
            module_cli("inspect", os.path.join(work, "missing.pt"))]
    if [r.returncode for r in runs] != [0, 1, 3] or not runs[0].stdout.startswith("identical") \
            or not runs[2].stderr.startswith("error: "):
        fail("python3 -m tinytrace diff same/different, inspect missing: exits "
             f"{[r.returncode for r in runs]} (expected [0, 1, 3]): {[r.stdout for r in runs]}")
    m = module_cli("convert", path, "-o", os.path.join(work, "cli"), "--input-shape", "2,3,8,8")
    if m.returncode or not os.path.isfile(os.path.join(work, "cli", "a.py")):
        fail(f"python3 -m tinytrace convert: exit {m.returncode}: {m.stderr}")
    print("OK: inspect/diff/profile agree with PyTorch; python3 -m tinytrace = the binary")


CASES = {
    "alexnet": case_alexnet,
    **{f"prepare_{n}": (lambda work, _n=n: case_prepare(work, _n)) for n in PREPARE},
    "qat_loop": case_qat_loop,
    "scripted": case_scripted,
    "errors": case_errors,
    "tools": case_tools,
}


def main():
    if sys.argv[1:] == ["--list"]:
        print("\n".join(CASES))
        return 0
    if len(sys.argv) != 3 or sys.argv[1] not in CASES:
        fail(f"usage: check_api.py CASE WORK_DIR ({', '.join(CASES)})")
    os.makedirs(sys.argv[2], exist_ok=True)
    os.environ["PYTHONPATH"] = PACKAGE_PATH  # for python3 -m tinytrace in subprocesses
    with tempfile.TemporaryDirectory(dir=sys.argv[2]) as work:
        CASES[sys.argv[1]](work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
