#!/usr/bin/python3
"""--emit torchscript end to end: NAME.pt loads with torch.jit.load, has the original's forward
signature and state_dict keys (equal to NAME.pth's, in order), and matches the original model.

    check_torchscript.py TINYTRACE TESTMODELS_DIR OUT_DIR MODEL [--fuse] [--optimize-for-inference]

Relative difference max|ours - original| / max|original| must be <= 1e-4 (1e-3 with --fuse, which
folds BatchNorm), on the example inputs scripts/gen_models.py saved (MODEL.inputs.pt).
The conversion also runs --verify with MODEL.json's --input-shape: the CLI must print an OK
verdict for the emitted NAME.pt ("verify (torchscript): OK") and NAME.json must carry its figures.

With --optimize-for-inference NAME.pt is frozen by LibTorch (Note [Optimizing NAME.pt for
inference]): instead of the state_dict check, NAME.pt must have no state_dict left, NAME.json's
"inference_optimization" must list the passes, and every aten::batch_norm of the forward before
freezing must be gone from the NAME.pt loaded in Python (folded into the convs); the tolerance is
1e-3 when the report says the folds changed the arithmetic.
"""
import zygote
zygote.delegate()  # first, before torch is imported: Note [Torch zygote]
import json
import os
import shutil
import subprocess
import sys

from e2e_outputs import passed


def die(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def flat(x):
    import torch
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for e in x for t in flat(e)]
    if isinstance(x, dict):
        return [t for k in x for t in flat(x[k])]
    return []


def main():
    if len(sys.argv) < 5:
        die(__doc__)
    tinytrace, models_dir, out_dir, name = sys.argv[1:5]
    fuse = "--fuse" in sys.argv[5:]
    optimize = "--optimize-for-inference" in sys.argv[5:]
    tol = 1e-3 if fuse else 1e-4
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    original_path = os.path.join(models_dir, name + ".pt")
    with open(os.path.join(models_dir, name + ".json")) as f:
        shape_args = json.load(f)["input_shape_args"]
    cmd = [tinytrace, "convert", original_path, "-o", out_dir, "--emit", "weights,torchscript,report",
           "--verify"]
    for a in shape_args:
        cmd += ["--input-shape", a]
    if fuse:
        cmd.append("--fuse")
    if optimize:
        cmd.append("--optimize-for-inference")
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        die(f"{' '.join(cmd)} exited {r.returncode}: {r.stderr.strip()}")
    written = sorted(os.listdir(out_dir))
    if written != sorted([name + ".pt", name + ".pth", name + ".json"]):
        die(f"expected {name}.pt, {name}.pth and {name}.json in {out_dir}, found {written}")
    if "verify (torchscript): OK" not in r.stdout:
        die(f"--verify --emit torchscript printed no 'verify (torchscript): OK' verdict: {r.stdout.strip()}")
    with open(os.path.join(out_dir, name + ".json")) as f:
        report = json.load(f)
    verification = report["verification"]
    optimization = report.get("inference_optimization")
    if optimize:
        if not optimization or "freeze" not in optimization["passes"]:
            die(f"NAME.json has no inference_optimization entry naming freeze: {optimization}")
        if optimization["reassociated"]:
            tol = 1e-3
    elif optimization is not None:
        die("NAME.json has an inference_optimization entry without --optimize-for-inference")
    ts = [e for e in verification["results"] if e["engine"] == "torchscript"]
    if len(ts) != 1 or not ts[0]["passed"] or not verification["passed"]:
        die(f"NAME.json has no passing torchscript verification entry: {verification}")
    if not ts[0]["outputs"] or not ts[0]["max_rel_diff"] <= tol:
        die(f"torchscript verification figures missing or beyond {tol:g}: {ts[0]}")

    import torch
    # A frozen graph's second call compiles its fusion groups with LLVM when LibTorch's
    # TensorExpr fuser is on; that takes minutes here (scripts/bench_fuse.sh).
    torch._C._jit_set_texpr_fuser_enabled(False)

    ours = torch.jit.load(os.path.join(out_dir, name + ".pt")).eval()
    original = torch.jit.load(original_path).eval()

    weights = torch.load(os.path.join(out_dir, name + ".pth"))
    keys, want_keys = list(ours.state_dict().keys()), list(weights.keys())
    if optimize:
        if keys:
            die(f"the frozen NAME.pt still has a state_dict: {keys[:5]}")
        bn_before = optimization["aten_ops_before"].get("aten::batch_norm", 0)
        bn_after = str(ours.graph).count("aten::batch_norm(")
        if bn_after or optimization["aten_ops_after"].get("aten::batch_norm", 0):
            die(f"aten::batch_norm left in the optimized NAME.pt ({bn_after} in its graph; "
                f"{bn_before} before freezing)")
        # Note [Prepacked convolutions in NAME.pt]: with oneDNN every conv2d runs prepacked, in
        # a call of the method that runs mkldnn_prepacked::conv2d_run.
        if torch.backends.mkldnn.is_available():
            graph = str(ours.graph)
            convs = optimization["aten_ops_before"].get("aten::conv2d", 0)
            runs = graph.count('prim::CallMethod[name="_conv2d_prepacked"]')
            if "prepack-convolutions" not in optimization["passes"] or "aten::conv2d(" in graph \
                    or runs != convs or optimization["aten_ops_after"].get(
                        "mkldnn_prepacked::conv2d_run") != convs \
                    or "mkldnn_prepacked.conv2d_run(" not in ours._conv2d_prepacked.code:
                die(f"expected all {convs} aten::conv2d prepacked: {runs} conv2d_run in NAME.pt, "
                    f"report {optimization}")
        print(f"NAME.pt frozen: {bn_before} batch_norm folded, passes {optimization['passes']}")
        keys = want_keys = []
    if keys != want_keys:
        extra = sorted(set(keys) - set(want_keys))[:5]
        lacking = sorted(set(want_keys) - set(keys))[:5]
        die(f"state_dict keys differ from {name}.pth (extra {extra}, missing {lacking}, "
            f"{len(keys)} vs {len(want_keys)})")
    for k, v in ours.state_dict().items():
        if not torch.equal(v, weights[k]):
            die(f"state_dict[{k!r}] differs from {name}.pth")

    def arg_types(m):
        return [str(a.type) for a in m.forward.schema.arguments[1:]]

    if arg_types(ours) != arg_types(original):
        die(f"forward signature differs: {arg_types(ours)} vs original {arg_types(original)}")

    inputs = torch.load(os.path.join(models_dir, name + ".inputs.pt"))
    if not isinstance(inputs, (tuple, list)):
        inputs = (inputs,)
    with torch.no_grad():
        want = flat(original(*[i.clone() for i in inputs]))
        got = flat(ours(*[i.clone() for i in inputs]))
    if len(want) != len(got):
        die(f"{len(got)} output tensor(s), the original has {len(want)}")
    worst = 0.0
    for i, (a, b) in enumerate(zip(got, want)):
        if a.shape != b.shape:
            die(f"output {i}: shape {list(a.shape)}, the original's {list(b.shape)}")
        if b.is_complex():  # compared as (real, imaginary) pairs
            a, b = torch.view_as_real(a.resolve_conj()), torch.view_as_real(b.resolve_conj())
        if not b.is_floating_point():  # integer and bool outputs: equal
            if a.dtype != b.dtype or not torch.equal(a, b):
                die(f"output {i}: {a.dtype} values differ from the original's {b.dtype} ones")
            continue
        denom = b.abs().max().item() if b.numel() else 0.0
        diff = (a.double() - b.double()).abs().max().item() if b.numel() else 0.0
        rel = diff / denom if denom > 0 else diff
        worst = max(worst, rel)
        if not rel <= tol:
            die(f"output {i}: relative difference {rel:.3g} > {tol:g} (max |diff| {diff:.3g})")
    if optimize:
        # Frozen and prepacked for the --input-shape of the conversion, NAME.pt stays
        # shape-general: another batch size and spatial size give the original's result.
        other = [torch.randn(2, *i.shape[1:-2], i.shape[-2] + 13, i.shape[-1] + 7)
                 if i.is_floating_point() and i.dim() == 4 else i for i in inputs]
        with torch.no_grad():
            want = flat(original(*[i.clone() for i in other]))
            got = flat(ours(*[i.clone() for i in other]))
        for i, (a, b) in enumerate(zip(got, want)):
            rel = (a.double() - b.double()).abs().max().item() / max(b.abs().max().item(), 1e-30)
            if a.shape != b.shape or not rel <= tol:
                die(f"output {i} at input shapes {[list(t.shape) for t in other]}: shape "
                    f"{list(a.shape)} vs {list(b.shape)}, relative difference {rel:.3g} > {tol:g}")
    print(f"OK: {name}{' --fuse' if fuse else ''}{' --optimize-for-inference' if optimize else ''}: "
          f"NAME.pt loads, {len(keys)} state_dict keys equal "
          f"NAME.pth's, worst relative difference {worst:.3g} <= {tol:g}")
    passed(out_dir)


if __name__ == "__main__":
    main()
