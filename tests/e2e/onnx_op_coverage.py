#!/usr/bin/python3
"""ONNX op coverage (issue 21): every op torch.onnx.export can write is mapped or refused on purpose.

    onnx_op_coverage.py TINYTRACE WORK_DIR [--shard K/N] [--only OP,OP...]

testdata/onnx/exporter_ops.txt classifies op types: "mapped", or "refused REASON" (no exact
PyTorch equivalent; the conversion must exit 4 naming the op and giving REASON). This test
  1. lists the ops the installed torch's exporter can write (scripts/onnx_exporter_ops.py) and
     fails on any that the file does not classify (a new torch, a new op: decide what it is);
  2. for every op of the file (or shard K of N of them), builds its models from
     tests/e2e/onnx_op_cases.py (one node, or the few nodes the op needs around it) and converts
     each with tinytrace:
     - mapped: exit 0; the generated NAME.py, with NAME.pth loaded strictly, computes what ONNX's
       reference implementation (onnx.reference; where it departs from the spec, the case's
       own reference: Note [Where onnx.reference is wrong]) computes on the case's inputs (max|d| /
       max|expected| <= the case's tolerance, integers and booleans exactly, NaN/inf in the same
       places); pyflakes is quiet on every NAME.py;
     - refused: exit 4, one `error:` line naming "ONNX op OP" and containing REASON, only
       `note:` lines after it (one placing the error at its node), nothing written.
An op of the file without a case, or a case whose op the file does not list, fails the test.
Prints one line per model and a summary; exits 1 on any failure.
"""
import zygote
zygote.delegate()  # first, before torch is imported: Note [Torch zygote]
import argparse
import os
import shutil
import subprocess
import sys
import warnings

import numpy as np

from e2e_outputs import passed

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(REPO, "testdata", "onnx", "exporter_ops.txt")
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "scripts"))
import onnx_batch  # noqa: E402  (load, outputs_problem, refusal_problem, pyflakes_problem)
import onnx_op_cases  # noqa: E402
import onnx_exporter_ops  # noqa: E402


def read_data():
    ops = {}
    with open(DATA) as f:
        for k, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            fields = line.split(None, 2)
            if len(fields) < 2 or fields[1] not in ("mapped", "refused") or \
                    (fields[1] == "refused") != (len(fields) == 3):
                raise SystemExit(f"FAIL: {DATA}:{k}: expected 'OP mapped' or 'OP refused REASON'")
            if fields[0] in ops:
                raise SystemExit(f"FAIL: {DATA}:{k}: {fields[0]} listed twice")
            ops[fields[0]] = (fields[1], fields[2] if len(fields) == 3 else None)
    return ops


def check_case(tinytrace, case, status, reason, work):
    """None when the case passes, else the failure."""
    import onnx
    from onnx.reference import ReferenceEvaluator
    name = case.name
    out_dir = os.path.join(work, name)
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    path = os.path.join(work, name + ".onnx")
    feeds = case.feeds()
    expected = None
    if status == "mapped":
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                outs = case.ref(*feeds.values()) if case.ref else \
                    ReferenceEvaluator(case.model()).run(None, feeds)
                expected = [np.array(e) for e in outs]
        except Exception as e:  # a case ONNX itself cannot run is a broken case
            return f"ONNX's reference implementation fails on the case: {type(e).__name__}: {e}"
        types = [(onnx.helper.np_dtype_to_tensor_dtype(e.dtype), e.shape) for e in expected]
        model = case.model(types)
    else:
        model = case.model()
    onnx.save(model, path)
    r = subprocess.run([tinytrace, "convert", path, "-o", out_dir, "--name", name],
                       capture_output=True, text=True, timeout=300)
    if status == "refused":
        return onnx_batch.refusal_problem(r, [f"ONNX op {case.op}", reason], out_dir)
    if r.returncode != 0:
        return f"exit {r.returncode}: {r.stderr.strip()[:400]}"
    import torch
    try:
        m = onnx_batch.load(out_dir, name)
        with torch.no_grad():
            got = onnx_batch.flatten(m(*[torch.from_numpy(np.array(a)) for a in feeds.values()]))
    except Exception as e:  # the generated code must run
        return f"the generated code fails: {type(e).__name__}: {str(e)[:300]}"
    return onnx_batch.outputs_problem(got, [torch.from_numpy(e) for e in expected], case.tol)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tinytrace")
    ap.add_argument("work")
    ap.add_argument("--shard", default="1/1", help="K/N: the K-th of N shares of the ops")
    ap.add_argument("--only", help="comma-separated op types")
    args = ap.parse_args()
    data = read_data()
    failures = []
    exporter = onnx_exporter_ops.exporter_ops()
    unclassified = sorted(set(exporter) - set(data))
    if unclassified:
        failures.append(f"the exporter can write ops {DATA} does not classify: {unclassified}")
    all_cases = onnx_op_cases.cases()
    for op in sorted(set(all_cases) - set(data)):
        failures.append(f"{op}: has cases but is not in {DATA}")
    for op in sorted(set(data) - set(all_cases)):
        failures.append(f"{op}: listed as {data[op][0]} but has no case in onnx_op_cases.py")
    k, n = (int(v) for v in args.shard.split("/"))
    ops = sorted(op for op in data if op in all_cases)
    ops = ops[k - 1::n]
    if args.only:
        ops = [op for op in ops if op in args.only.split(",")]
    os.makedirs(args.work, exist_ok=True)
    count = 0
    generated = []
    for op in ops:
        status, reason = data[op]
        for case in all_cases[op]:
            count += 1
            why = check_case(args.tinytrace, case, status, reason, args.work)
            print(f"{'ok  ' if not why else 'FAIL'} {case.name} ({status}){': ' + why if why else ''}",
                  flush=True)
            if why:
                failures.append(f"{case.name}: {why}")
            elif status == "mapped":
                generated.append(os.path.join(args.work, case.name, case.name + ".py"))
    why = onnx_batch.pyflakes_problem(generated)
    if why:
        failures.append(why)
    print(f"{count} model(s) of {len(ops)} op(s), {len(failures)} failure(s)")
    for f in failures:
        print(f"FAIL: {f}", file=sys.stderr)
    return 1 if failures else passed(args.work)


if __name__ == "__main__":
    sys.exit(main())
