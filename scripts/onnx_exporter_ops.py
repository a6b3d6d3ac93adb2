#!/usr/bin/python3
"""Lists the ONNX op types torch.onnx.export (the TorchScript-based exporter, dynamo=False) can
write, read from the installed torch's symbolic functions.

    onnx_exporter_ops.py            one op type per line, sorted
    onnx_exporter_ops.py --files    with the symbolic_*.py files that name it

Every string literal in torch/onnx/symbolic_opset9.py ... symbolic_opsetN.py and
symbolic_helper.py that is the name of an op of the default ONNX domain (onnx.defs) counts: the
exporter writes its ops as g.op("Name", ...), also through helpers that take the name as an
argument (_reduce_op_symbolic("ReduceSum")). symbolic_opset7/8.py are left out (opsets below the 9
tinytrace reads), so is symbolic_caffe2.py (Caffe2 ops). A literal that names an op the exporter
never writes would only make the list longer, never shorter: the op-coverage test
(tests/e2e/onnx_op_coverage.py) checks that testdata/onnx/exporter_ops.txt classifies every op
this prints.
"""
import glob
import os
import re
import sys


def exporter_ops():
    import onnx.defs
    import torch.onnx

    d = os.path.dirname(torch.onnx.__file__)
    names = {s.name for s in onnx.defs.get_all_schemas_with_history() if s.domain in ("", "ai.onnx")}
    files = [f for f in glob.glob(os.path.join(d, "symbolic_opset*.py"))
             if int(re.search(r"opset(\d+)", f).group(1)) >= 9]
    files.append(os.path.join(d, "symbolic_helper.py"))
    found = {}
    for f in sorted(files):
        with open(f) as fh:
            src = fh.read()
        for m in re.finditer(r'"([A-Z][A-Za-z0-9]+)"', src):
            if m.group(1) in names:
                found.setdefault(m.group(1), set()).add(os.path.basename(f))
    return found


def main():
    found = exporter_ops()
    for op in sorted(found):
        if "--files" in sys.argv[1:]:
            print(op, " ".join(sorted(found[op])))
        else:
            print(op)
    return 0


if __name__ == "__main__":
    sys.exit(main())
