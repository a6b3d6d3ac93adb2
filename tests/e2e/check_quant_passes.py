#!/usr/bin/python3
"""check_quant_passes.py: the first three --quant-prep passes on one generated model (issue 4).

    check_quant_passes.py TINYTRACE MODEL.pt OUT_DIR [OP=N ...]

1. converts MODEL.pt with --passes functional-to-module,unshare-modules,float-functional
   --verify-each --verify (the --input-shape of MODEL.json), emitting python, weights and report;
2. in the report's graph no module path is called by two nodes, and no functional activation that
   functional-to-module handles is left (F.relu, F.relu6, F.hardtanh, F.hardswish, F.elu,
   F.leaky_relu, torch.sigmoid, torch.tanh, F.hardsigmoid, F.prelu);
3. NAME.json has a module_copies list, and every module it names is called in the graph (the
   original may be gone: a ReLU absorbed into add_relu);
4. each OP=N argument: the graph has exactly N nodes with op OP ("FloatFunctional.add_relu=8");
   the special OP "copies" counts module_copies;
5. scripts/check_model.py passes (strict load of NAME.pth into the generated class, outputs
   within 1e-4 of the original's, pyflakes-clean, __main__ runs, report schema); the original
   state_dict is not expected to load (copies add keys).
Exit 0 and one OK line on success; `FAIL: ...` and exit 1 otherwise.
"""
import collections
import json
import os
import subprocess
import sys

from e2e_outputs import passed

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PASSES = "functional-to-module,unshare-modules,float-functional"
FUNCTIONAL_ACTS = {"F.relu", "F.relu6", "F.hardtanh", "F.hardswish", "F.elu", "F.leaky_relu",
                   "torch.sigmoid", "torch.tanh", "F.hardsigmoid", "F.prelu"}


def fail(msg):
    print(f"FAIL: {msg}", flush=True)
    sys.exit(1)


def report_nodes(nodes, out):
    """[(op, module or None)] of every node of the report's graph, nested blocks included."""
    for n in nodes:
        out.append((n["op"], n.get("module")))
        for b in n.get("blocks", []):
            report_nodes(b["nodes"], out)
    return out


def main():
    if len(sys.argv) < 4:
        fail(__doc__)
    tinytrace, model, out_dir = sys.argv[1:4]
    expects = []
    for arg in sys.argv[4:]:
        op, _, n = arg.rpartition("=")
        expects.append((op, int(n)))
    name = os.path.splitext(os.path.basename(model))[0]
    with open(os.path.splitext(model)[0] + ".json", encoding="utf-8") as f:
        shapes = [a for s in json.load(f).get("input_shape_args", []) for a in ("--input-shape", s)]
    cmd = [tinytrace, "convert", model, "-o", out_dir, "--passes", PASSES, "--verify-each",
           "--verify", "--emit", "python,weights,report"] + shapes
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"{' '.join(cmd)} exited {r.returncode}:\n{r.stderr.strip()}")
    if "verify (interpreter): OK" not in r.stdout:
        fail(f"--verify printed no 'verify (interpreter): OK' verdict:\n{r.stdout}")

    with open(os.path.join(out_dir, name + ".json"), encoding="utf-8") as f:
        report = json.load(f)
    nodes = report_nodes(report["graph"]["nodes"], [])
    calls = collections.Counter(mod for _, mod in nodes if mod)
    shared = [m for m, c in calls.items() if c > 1]
    if shared:
        fail(f"{name}: module paths called more than once: {shared[:5]}")
    left = sorted({op for op, _ in nodes if op in FUNCTIONAL_ACTS})
    if left:
        fail(f"{name}: functional activations left: {left}")
    ops = collections.Counter(op for op, _ in nodes)

    copies = report.get("module_copies")
    if not isinstance(copies, list):
        fail(f"{name}.json has no module_copies list")
    for c in copies:
        if c["module"] not in calls:
            fail(f"{name}.json: module_copies names {c['module']}, which the graph does not call")
    ops["copies"] = len(copies)
    for op, n in expects:
        if ops.get(op, 0) != n:
            fail(f"{name}: expected {n} x {op}, found {ops.get(op, 0)}")

    check = subprocess.run(["/usr/bin/python3", os.path.join(REPO, "scripts", "check_model.py"),
                            out_dir, name, model, "--tol", "1e-4", "--state-dict-from", "none"],
                           capture_output=True, text=True)
    if check.returncode != 0:
        fail(f"check_model.py: {(check.stdout + check.stderr).strip()}")
    ff = {k: v for k, v in sorted(ops.items()) if k.startswith("FloatFunctional.")}
    print(f"OK: {name} {PASSES}: {len(copies)} module copies, {ff}; {check.stdout.strip()}",
          flush=True)
    return passed(out_dir)


if __name__ == "__main__":
    sys.exit(main())
