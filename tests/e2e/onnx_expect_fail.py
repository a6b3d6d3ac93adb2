#!/usr/bin/python3
"""ONNX failure-case driver: `tinytrace convert` must fail cleanly with a given exit code.

    onnx_expect_fail.py TINYTRACE MODEL.onnx WORK_DIR CODE [TEXT...]

Asserts (DESIGN.md §1): the exit code is CODE (3: malformed file, 4: an op without a mapping),
stderr has exactly one "error: " line, any further lines are "note: " lines, the error line
contains every TEXT (e.g. the op type) except a TEXT starting with "note: ", which one of the note
lines must contain (the error's place in the model, Note [Located errors]), nothing
looks like a stack trace, stdout is empty, no output is left in WORK_DIR/out, and the input is
unchanged.
"""
import hashlib
import os
import shutil
import subprocess
import sys

STACK_TRACE_MARKERS = ["terminate called", "Exception raised from", "what():", "frame #",
                       "Traceback (most recent call last)", "Segmentation fault", "core dumped",
                       "Aborted", "c10::Error", "std::exception"]


def die(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main():
    if len(sys.argv) < 5:
        die(__doc__)
    tinytrace, model, work, code = sys.argv[1:5]
    texts = sys.argv[5:]
    if not os.path.isfile(model):
        die(f"{model} not found — run scripts/gen_onnx_models.py")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    out_dir = os.path.join(work, "out")
    before = sha256(model)
    cmd = [tinytrace, "convert", model, "-o", out_dir]
    print("+", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=work)
    sys.stdout.write(r.stdout)
    sys.stderr.write(r.stderr)
    if r.returncode != int(code):
        die(f"exit code {r.returncode}, expected {code}")
    if r.stdout.strip():
        die("stdout is not empty")
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error: ")]
    if len(errors) != 1 or not lines[0].startswith("error: "):
        die(f"expected exactly one leading 'error: ' line, got {len(errors)}")
    notes = lines[1:]
    if any(not line.startswith("note: ") for line in notes):
        die("stderr has lines besides the error line and 'note: ' lines")
    for marker in STACK_TRACE_MARKERS:
        if marker in r.stderr:
            die(f"stderr looks like a stack trace ({marker!r})")
    for t in texts:
        if t.startswith("note: "):
            if not any(t in line for line in notes):
                die(f"no note line contains {t!r}")
        elif t not in errors[0]:
            die(f"the error line does not mention {t!r}")
    if os.path.exists(out_dir) and os.listdir(out_dir):
        die(f"files left in {out_dir}: {', '.join(sorted(os.listdir(out_dir)))}")
    if set(os.listdir(work)) - {"out"}:
        die(f"files left in {work}: {', '.join(sorted(os.listdir(work)))}")
    if sha256(model) != before:
        die("the input was modified")
    print(f"onnx_expect_fail: exit {code} as expected: {errors[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
