#!/usr/bin/python3
"""check_fuse.py: end-to-end check of `tinytrace convert --fuse` on one generated model (issue 3).

    check_fuse.py TINYTRACE MODEL.pt OUT_DIR

1. converts MODEL.pt with --fuse --verify-each (and the --input-shape of MODEL.json), also
   emitting NAME.tir;
2. no foldable BatchNorm is left: every nn.BatchNorm* still in NAME.tir reads a value that is not
   the single-use output of a Conv / ConvTranspose / Linear (densenet's BN-before-conv stays);
3. NAME.json lists the passes of the fuse pipeline in order, each with changed, nodes before/after,
   rewrites and milliseconds, and fold-batchnorm's rewrites equal the number of BNs that went;
4. scripts/check_model.py passes with tolerance 1e-3 (NAME.pth loads strictly into the generated
   class, outputs match, pyflakes, __main__ runs, report schema); the original state_dict is not
   expected to load (folding removes the BN keys).
Exit 0 and one OK line on success; `FAIL: ...` and exit 1 otherwise.
"""
import json
import os
import re
import subprocess
import sys

from e2e_outputs import passed

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FUSE = ["eliminate-noops", "fold-constants", "fold-batchnorm", "dce"]
PRODUCERS = re.compile(r"^nn\.(Conv[123]d|ConvTranspose[123]d|Linear)$")
NODE = re.compile(r"^\s*(%.*?) = ([A-Za-z_][\w.:]*)(\[.*?\])?\((.*?)\)")


def fail(msg):
    print(f"FAIL: {msg}", flush=True)
    sys.exit(1)


def tir_nodes(path):
    """[(outputs, op, inputs)] of the top-level and nested nodes of a .tir file."""
    nodes = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("weights {"):
                break
            m = NODE.match(line)
            if not m:
                continue
            outs = re.findall(r"%([\w.]+) :", m.group(1))
            ins = re.findall(r"%([\w.]+)", m.group(4))
            nodes.append((outs, m.group(2), ins))
    return nodes


def main():
    if len(sys.argv) != 4:
        fail(__doc__)
    tinytrace, model, out_dir = sys.argv[1:]
    name = os.path.splitext(os.path.basename(model))[0]
    meta_path = os.path.splitext(model)[0] + ".json"
    shapes = []
    if os.path.isfile(meta_path):
        with open(meta_path, encoding="utf-8") as f:
            for s in json.load(f).get("input_shape_args", []):
                shapes += ["--input-shape", s]
    cmd = [tinytrace, "convert", model, "-o", out_dir, "--fuse", "--verify-each",
           "--emit", "python,weights,report,tir"] + shapes
    if shapes:
        cmd.append("--verify")  # the interpreter must agree with torch::jit within 1e-3
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"{' '.join(cmd)} exited {r.returncode}:\n{r.stderr.strip()}")
    if shapes and "verify (interpreter): OK" not in r.stdout:
        fail("--verify printed no 'verify (interpreter): OK' verdict")

    nodes = tir_nodes(os.path.join(out_dir, name + ".tir"))
    producer = {}
    uses = {}
    for outs, op, ins in nodes:
        for o in outs:
            producer[o] = op
        for i in ins:
            uses[i] = uses.get(i, 0) + 1
    bns_left = 0
    for outs, op, ins in nodes:
        if not op.startswith("nn.BatchNorm"):
            continue
        bns_left += 1
        x = ins[0] if ins else None
        if x and PRODUCERS.match(producer.get(x, "")) and uses.get(x, 0) == 1:
            fail(f"{name}: %{outs[0]} = {op} reads the single-use output %{x} of "
                 f"{producer[x]}: it should have been folded")

    with open(os.path.join(out_dir, name + ".json"), encoding="utf-8") as f:
        report = json.load(f)
    pipeline = report.get("pipeline")
    if not isinstance(pipeline, list):
        fail(f"{name}.json has no pipeline list")
    names = [p.get("name") for p in pipeline]
    if names[:len(FUSE)] != FUSE:
        fail(f"{name}.json pipeline is {names}, expected it to start with {FUSE}")
    for p in pipeline:
        for key in ("changed", "nodes_before", "nodes_after", "rewrites", "milliseconds"):
            if key not in p:
                fail(f"{name}.json pipeline entry {p.get('name')} has no '{key}'")
    folded = pipeline[FUSE.index("fold-batchnorm")]["rewrites"]
    bn_ops = sum(v for k, v in report.get("summary", {}).get("op_histogram", {}).items()
                 if k.startswith("nn.BatchNorm")) if isinstance(report.get("summary"), dict) else None
    if bn_ops is not None and bn_ops != bns_left:
        fail(f"{name}.json summary counts {bn_ops} BatchNorm ops, NAME.tir has {bns_left}")

    check = subprocess.run(["/usr/bin/python3", os.path.join(REPO, "scripts", "check_model.py"),
                            out_dir, name, model, "--tol", "1e-3", "--state-dict-from", "none"],
                           capture_output=True, text=True)
    if check.returncode != 0:
        fail(f"check_model.py: {(check.stdout + check.stderr).strip()}")
    print(f"OK: {name} --fuse: {folded} BatchNorm(s) folded, {bns_left} left (not foldable); "
          f"{check.stdout.strip()}", flush=True)
    return passed(out_dir)


if __name__ == "__main__":
    sys.exit(main())
