#!/usr/bin/python3
"""check_mutation.py: in-place ops on views, "exit 0 means correct" (the mutation e2e tests).

    check_mutation.py TINYTRACE MODELS_DIR OUT_DIR [--shard K/N] [--modes plain,fuse,quant]
                      [--only NAME[,NAME...]] [--jobs 2] [-v]

MODELS_DIR is what scripts/gen_mutation_models.py wrote (manifest.json lists the archives). The
conversions are every archive in every mode -- plain, --fuse, and --quant-prep on the archives the
manifest marks `quant` (all modes with --only) -- and shard K of N (1-based) takes conversion j
when j % N == K - 1. Each one runs

    TINYTRACE convert A.pt -o OUT_DIR/A_MODE --input-shape ... [--fuse | --quant-prep]

(at most --jobs conversions at a time; no --verify: the check is against PyTorch, here) and then:

  exit 0  the generated A.py is imported, its class instantiated, A.pth loaded with strict=True,
          and it is run on clones of the saved inputs; every output must match the original
          archive's (torch.jit.load, on other clones): max|diff| <= tol * max(1, max|expected|)
          with tol 1e-5 (plain), 1e-4 (--fuse), 1e-3 (--quant-prep, the float model), same
          count, shapes and dtypes; the inputs must be left as the original leaves them (a model
          that writes into its input must write the same values). With --quant-prep also:
          qnnpack qconfig, torch.ao.quantization.prepare, calibration on the inputs, convert,
          run: must not raise nor return a quantized tensor.
  exit 4  refused: accepted when stderr starts with exactly one `error:` line and no output file
          is left in the output directory; the line is recorded.
  other   any other exit code is a failure (1 internal error, 3, 5, a signal, a timeout).

Failures are printed with the archive, mode, model source, command and the difference; then a
summary line per mode, `N exact, M refused, F failed`. Exits 1 when anything failed.
Example (one shard by hand, from the repository root):

    /usr/bin/python3 scripts/gen_mutation_models.py --out build/testmodels_mutation
    /usr/bin/python3 tests/e2e/check_mutation.py build/tinytrace build/testmodels_mutation \\
        /tmp/mut_out --shard 1/6
"""
import zygote
zygote.delegate()  # first, before torch is imported: Note [Torch zygote]
import argparse
import concurrent.futures
import copy
import importlib.util
import inspect
import json
import os
import shutil
import subprocess
import sys
import time
import traceback
import warnings

import torch

from e2e_outputs import passed

MODES = {"plain": ([], 1e-5), "fuse": (["--fuse"], 1e-4), "quant": (["--quant-prep"], 1e-3)}
TIMEOUT = 120


def flat(x):
    if isinstance(x, (tuple, list)):
        return [t for item in x for t in flat(item)]
    if isinstance(x, dict):
        return [t for k in sorted(x) for t in flat(x[k])]
    return [x]


def clones(inputs):
    return tuple(t.clone() for t in inputs)


class Failure(Exception):
    def __init__(self, kind, detail):
        super().__init__(detail)
        self.kind = kind
        self.detail = detail


def compare(got, expected, tol, what, kind="wrong numbers"):
    """Raises Failure(kind) on any difference beyond tol * max(1, max|expected|)."""
    g, e = flat(got), flat(expected)
    if len(g) != len(e):
        raise Failure(kind, f"{what}: {len(g)} value(s), expected {len(e)}")
    worst = 0.0
    for i, (a, b) in enumerate(zip(g, e)):
        where = f"{what}[{i}]"
        if not isinstance(a, torch.Tensor):
            raise Failure(kind, f"{where} is a {type(a).__name__}, expected a tensor")
        if a.is_quantized:
            a = a.dequantize()
        if a.shape != b.shape:
            raise Failure(kind, f"{where}: shape {list(a.shape)}, expected {list(b.shape)}")
        if a.dtype != b.dtype:
            raise Failure(kind, f"{where}: dtype {a.dtype}, expected {b.dtype}")
        if b.numel() == 0:
            continue
        if not torch.isfinite(a).all():
            raise Failure(kind, f"{where}: non-finite values (expected finite)")
        scale = max(1.0, float(b.abs().max()))
        diffs = (a.double() - b.double()).abs()
        diff = float(diffs.max())
        if diff > tol * scale:
            n_bad = int((diffs > tol * scale).sum())
            at = tuple(int(k) for k in torch.nonzero(diffs == diffs.max())[0])
            raise Failure(kind,
                          f"{where} shape {list(b.shape)}: max|diff| = {diff:.4g} at {at} "
                          f"(got {float(a[at]):.6g}, expected {float(b[at]):.6g}); "
                          f"{n_bad} of {b.numel()} elements off; tolerance {tol:g} * {scale:.3g}")
        worst = max(worst, diff / scale)
    return worst


def load_generated(out_dir, name, mode):
    py = os.path.join(out_dir, name + ".py")
    pth = os.path.join(out_dir, name + ".pth")
    for p in (py, pth):
        if not os.path.isfile(p):
            raise Failure("crash", f"exit 0 but {os.path.basename(p)} was not written")
    mod_name = f"tt_mutation_{name}_{mode}"
    try:
        spec = importlib.util.spec_from_file_location(mod_name, py)
        module = importlib.util.module_from_spec(spec)
        sys.modules[mod_name] = module
        spec.loader.exec_module(module)
        classes = [c for _, c in inspect.getmembers(module, inspect.isclass)
                   if issubclass(c, torch.nn.Module) and c.__module__ == mod_name]
        camel = "".join(p[:1].upper() + p[1:] for p in name.split("_"))
        if len(classes) > 1:
            classes = [c for c in classes if c.__name__ == camel]
        if len(classes) != 1:
            raise Failure("crash", f"{py}: no single nn.Module class (looked for {camel})")
        model = classes[0]()
        model.load_state_dict(torch.load(pth), strict=True)
        return model.eval()
    except Failure:
        raise
    except Exception as e:
        raise Failure("crash", f"importing/instantiating/loading {name}.py raised "
                      f"{type(e).__name__}: {e}")


def run_model(model, inputs, what):
    ins = clones(inputs)
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = model(*ins)
    except Exception as e:
        tb = traceback.extract_tb(e.__traceback__)
        loc = next((f"{os.path.basename(f.filename)}:{f.lineno}: {f.line}" for f in reversed(tb)
                    if f.filename.endswith(".py") and "torch" not in f.filename), "")
        raise Failure("crash", f"{what} raised {type(e).__name__}: {str(e).splitlines()[0]}"
                      + (f" [{loc}]" if loc else ""))
    return [t.clone() if isinstance(t, torch.Tensor) else t for t in flat(out)], ins


def ptq(model, inputs):
    torch.backends.quantized.engine = "qnnpack"
    import torch.ao.quantization as tq
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = copy.deepcopy(model).eval()
            m.qconfig = tq.get_default_qconfig("qnnpack")
            prepared = tq.prepare(m, inplace=False)
            with torch.no_grad():
                prepared(*clones(inputs))
            q = tq.convert(prepared, inplace=False)
            with torch.no_grad():
                out = q(*clones(inputs))
    except Exception as e:
        raise Failure("ptq", f"prepare/calibrate/convert/run raised {type(e).__name__}: "
                      f"{str(e).splitlines()[0] if str(e) else ''}")
    quantized = [i for i, t in enumerate(flat(out)) if isinstance(t, torch.Tensor) and t.is_quantized]
    if quantized:
        raise Failure("ptq", f"after convert, output(s) {quantized} are quantized tensors "
                      "(a missing DeQuantStub)")


def convert(tinytrace, pt, out_dir, shapes, flags):
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    cmd = [tinytrace, "convert", pt, "-o", out_dir] + \
        [a for s in shapes for a in ("--input-shape", s)] + flags
    env = dict(os.environ, OMP_NUM_THREADS="1")
    t0 = time.time()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, env=env)
        rc, err = r.returncode, r.stderr
    except subprocess.TimeoutExpired:
        rc, err = "timeout", f"no exit within {TIMEOUT} s"
    return cmd, rc, err, time.time() - t0


class Reference:
    """The original archive's outputs and post-call inputs, once per archive."""

    def __init__(self, models_dir):
        self.dir = models_dir
        self.cache = {}

    def get(self, name):
        if name not in self.cache:
            base = os.path.join(self.dir, name)
            inputs = tuple(torch.load(base + ".inputs.pt"))
            original = torch.jit.load(base + ".pt").eval()
            out, after = run_model(original, inputs, "the original archive")
            saved = torch.load(base + ".expected.pt")
            compare(out, saved, 0.0, "original vs its saved outputs")  # a stale model dir
            self.cache[name] = (inputs, out, after)
        return self.cache[name]


def check(result, ref, meta):
    """Verdict of one conversion: ('exact', worst) | ('refused', line); raises Failure."""
    name, mode, out_dir, cmd, rc, err = result
    if rc == 4:
        lines = [ln for ln in err.splitlines() if ln.strip()]
        n_err = sum(ln.startswith("error:") for ln in lines)
        if not lines or not lines[0].startswith("error:") or n_err != 1:
            raise Failure("bad refusal", "exit 4 but stderr does not start with exactly one "
                          f"'error:' line:\n{err.strip()[:2000]}")
        left = os.listdir(out_dir)
        if left:
            raise Failure("bad refusal", f"exit 4 but files were left behind: {sorted(left)}")
        return "refused", lines[0]
    if rc != 0:
        raise Failure(f"exit {rc}", err.strip()[-3000:] or "(no stderr)")
    tol = MODES[mode][1]
    inputs, expected, expected_after = ref.get(name)
    model = load_generated(out_dir, name, mode)
    got, got_after = run_model(model, inputs, "the generated forward")
    worst = compare(got, expected, tol, "output")
    if meta.get("mutates_input") or any(not torch.equal(a, b) for a, b in zip(got_after, inputs)):
        compare(list(got_after), list(expected_after), tol, "input after the call",
                "input side effect")
    if mode == "quant":
        ptq(model, inputs)
    return "exact", worst


def generated_forward(out_dir, name, limit=60):
    py = os.path.join(out_dir, name + ".py")
    if not os.path.isfile(py):
        return ""
    lines = open(py, encoding="utf-8").read().split("\n")
    start = next((i for i, ln in enumerate(lines) if "def forward" in ln), 0)
    end = next((i for i, ln in enumerate(lines) if ln.startswith("if __name__")), len(lines))
    body = lines[start:end]
    if len(body) > limit:
        body = body[:limit] + [f"    ... ({len(body) - limit} more lines)"]
    return "\n".join(body).rstrip()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tinytrace")
    ap.add_argument("models_dir")
    ap.add_argument("out_dir")
    ap.add_argument("--shard", default="1/1", help="K/N, K in 1..N")
    ap.add_argument("--modes", default="plain,fuse,quant")
    ap.add_argument("--only", help="comma-separated archive (mut_r0003_t) or case (r0003) names")
    ap.add_argument("--jobs", type=int, default=2, help="conversions at a time")
    ap.add_argument("-v", "--verbose", action="store_true", help="one line per conversion")
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    k, n = (int(p) for p in args.shard.split("/"))
    if not 1 <= k <= n:
        ap.error("--shard K/N needs 1 <= K <= N")
    modes = [m for m in args.modes.split(",") if m]
    for m in modes:
        if m not in MODES:
            ap.error(f"unknown mode '{m}' (plain, fuse, quant)")
    with open(os.path.join(args.models_dir, "manifest.json")) as f:
        manifest = json.load(f)
    models = manifest["models"]
    if args.only:
        only = set(args.only.split(","))
        models = [m for m in models if m["name"] in only or m["case"] in only]
    jobs = [(m["name"], mode) for mode in modes for m in models
            if mode != "quant" or m["quant"] or args.only]
    jobs = jobs[k - 1::n]  # conversion j is in shard j % N + 1: shards of equal cost
    metas = {}
    for name, _ in jobs:
        if name not in metas:
            with open(os.path.join(args.models_dir, name + ".json")) as f:
                metas[name] = json.load(f)
    print(f"check_mutation: shard {k}/{n}: {len(jobs)} conversions of {len(metas)} archives "
          f"({args.jobs} at a time)", flush=True)

    ref = Reference(args.models_dir)
    tally = {m: {"exact": 0, "refused": 0, "failed": 0} for m in modes}
    refusals = {}
    failures = []
    t0 = time.time()

    def submit(pool, name, mode):
        out_dir = os.path.join(args.out_dir, f"{name}_{mode}")
        pt = os.path.join(args.models_dir, name + ".pt")
        return pool.submit(convert, args.tinytrace, pt, out_dir,
                           metas[name]["input_shape_args"], MODES[mode][0])

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {submit(pool, name, mode): (name, mode) for name, mode in jobs}
        lines = {}
        # Each conversion is checked as soon as it finishes (the other one keeps running).
        for fut in concurrent.futures.as_completed(futures):
            name, mode = futures[fut]
            cmd, rc, err, secs = fut.result()
            out_dir = os.path.join(args.out_dir, f"{name}_{mode}")
            try:
                verdict, info = check((name, mode, out_dir, cmd, rc, err), ref, metas[name])
                tally[mode][verdict] += 1
                if verdict == "refused":
                    refusals.setdefault(mode, []).append((name, info))
                line = f"{verdict} ({info:.1e})" if verdict == "exact" else f"refused: {info}"
            except Failure as f:
                tally[mode]["failed"] += 1
                failures.append((name, mode, cmd, f, out_dir))
                line = f"FAILED ({f.kind})"
            lines[(name, mode)] = f"  {name} {mode}: {line} [{secs:.1f}s]"
    if args.verbose:
        for job in jobs:
            print(lines[job])
    order = {job: i for i, job in enumerate(jobs)}
    failures.sort(key=lambda f: order[(f[0], f[1])])
    for mode in refusals:
        refusals[mode].sort()

    for name, mode, cmd, f, out_dir in failures:
        meta = metas[name]
        print(f"\n=== FAIL {name} [{mode}] ({meta['kind']}): {f.kind}")
        print(f"command: {' '.join(cmd)}")
        print(f"detail: {f.detail}")
        print(f"model source ({os.path.join(args.models_dir, meta['source_file'])}):")
        print(textwrap_indent(meta["source"].rstrip()))
        fwd = generated_forward(out_dir, name)
        if fwd:
            print(f"generated ({os.path.join(out_dir, name + '.py')}):")
            print(textwrap_indent(fwd))
    if refusals and args.verbose:
        print("\nrefusals:")
        for mode, items in refusals.items():
            for name, line in items:
                print(f"  {name} [{mode}]: {line}")
    print(f"\ncheck_mutation: shard {k}/{n}, {time.time() - t0:.0f} s")
    for mode in modes:
        t = tally[mode]
        kinds = {}
        for _, m, _, f, _ in failures:
            if m == mode:
                kinds[f.kind] = kinds.get(f.kind, 0) + 1
        extra = f" ({', '.join(f'{v} {k}' for k, v in sorted(kinds.items()))})" if kinds else ""
        print(f"{mode}: {t['exact']} exact, {t['refused']} refused, {t['failed']} failed{extra}")
    return 1 if failures else passed(args.out_dir)


def textwrap_indent(text):
    return "\n".join("    " + ln for ln in text.split("\n"))


if __name__ == "__main__":
    sys.exit(main())
