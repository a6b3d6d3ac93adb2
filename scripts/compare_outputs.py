#!/usr/bin/python3
"""Prove a refactor keeps behaviour: convert every test model with two tinytrace binaries and
compare what they write.

    compare_outputs.py OLD_TINYTRACE NEW_TINYTRACE [--models DIR ...] [--modes plain,fuse,quant]
                       [--out DIR] [-j N] [--emit LIST] [--keep] [--bytes]

Every model archive in the --models directories (default: the generated test-model directories
of build-d13/ or build/: testmodels*, *.pt / *.pt2 / *.onnx, not NAME.inputs[.K].pt /
NAME.expected[.K].pt) is converted by both binaries in each mode (plain, --fuse, --quant-prep), with
the --input-shape arguments the generator wrote into NAME.json when there is one. Then:

- the exit codes must be equal, and so must the first line of stderr (the error message); when
  only that line differs (a reworded warning), the files are still compared;
- the same files must be written, and NAME.py / NAME.pth (and NAME.pt, NAME.tir with --emit)
  must be byte-identical;
- NAME.json must be equal once timings ("milliseconds", "seconds") are dropped and the two output
  directories are spelled the same; with --bytes it must be byte-identical once the values of the
  timing keys and the output directories are masked in the text (a change to the report writer
  must keep its layout, number formatting and escaping, not only the document).

Prints one line per difference and a summary; exit 0 when everything is identical, 1 otherwise.
The binaries must be runnable here (inside the Debian 13 root on a Debian 12 host: run this
through scripts/debian13.sh run).
"""
import argparse
import concurrent.futures
import filecmp
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODES = {"plain": [], "fuse": ["--fuse"], "quant": ["--quant-prep"]}
TIMING_KEYS = {"milliseconds", "seconds"}


def default_model_dirs():
    for build in ("build-d13", "build"):
        dirs = sorted(d for d in glob.glob(os.path.join(REPO, build, "testmodels*")) if os.path.isdir(d))
        if dirs:
            return dirs
    return []


def model_files(dirs):
    out = []
    for d in dirs:
        for root, _, files in os.walk(d):
            for f in sorted(files):
                if re.search(r"\.(inputs|expected)(\.\d+)?\.pt$", f):  # NAME.inputs.0.pt too
                    continue
                if f.endswith((".pt", ".pt2", ".onnx")):
                    out.append(os.path.join(root, f))
    return sorted(out)


def shape_args(model):
    meta = os.path.splitext(model)[0] + ".json"
    try:
        with open(meta) as f:
            shapes = json.load(f).get("input_shape_args", [])
    except (OSError, ValueError):
        return []
    args = []
    for s in shapes:
        args += ["--input-shape", s]
    return args


def run(binary, model, out_dir, extra):
    cmd = [binary, "convert", model, "-o", out_dir] + shape_args(model) + extra
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    first = r.stderr.strip().splitlines()[0] if r.stderr.strip() else ""
    # the message names the output directory, which differs between the two runs
    return r.returncode, first.replace(out_dir, "OUT")


def normalized_report(path, out_dir):
    with open(path) as f:
        text = f.read().replace(out_dir, "OUT")

    def strip(o):
        if isinstance(o, dict):
            return {k: strip(v) for k, v in o.items() if k not in TIMING_KEYS}
        if isinstance(o, list):
            return [strip(v) for v in o]
        return o

    return strip(json.loads(text))


TIMING_TEXT = re.compile(('"(' + "|".join(sorted(TIMING_KEYS)) + ')": [-+.0-9eE]+').encode())


def masked_report_text(path, out_dir):
    with open(path, "rb") as f:
        text = f.read().replace(out_dir.encode(), b"OUT")
    return TIMING_TEXT.sub(rb'"\1": T', text)


def compare_one(job):
    old_bin, new_bin, model, mode, root, emit, as_bytes = job
    tag = os.path.relpath(model, REPO) + " [" + mode + "]"
    name = os.path.splitext(os.path.basename(model))[0]
    key = f"{abs(hash(model)) % 10**8}_{name}_{mode}"
    extra = MODES[mode] + (["--emit", emit] if emit else [])
    dirs = {}
    results = {}
    for side, binary in (("old", old_bin), ("new", new_bin)):
        d = os.path.join(root, side, key)
        shutil.rmtree(d, ignore_errors=True)
        dirs[side] = d
        results[side] = run(binary, model, d, extra)
    diffs = []
    if results["old"] != results["new"]:
        diffs.append(f"{tag}: exit/message differ: old {results['old']} new {results['new']}")
        # Same exit code, another message (a reworded warning): the files are still compared.
        if results["old"][0] != results["new"][0]:
            return tag, diffs
    files = {s: sorted(os.listdir(d)) if os.path.isdir(d) else [] for s, d in dirs.items()}
    if files["old"] != files["new"]:
        diffs.append(f"{tag}: written files differ: old {files['old']} new {files['new']}")
        return tag, diffs
    for f in files["old"]:
        a, b = os.path.join(dirs["old"], f), os.path.join(dirs["new"], f)
        if f.endswith(".json") and as_bytes:
            if masked_report_text(a, dirs["old"]) != masked_report_text(b, dirs["new"]):
                diffs.append(f"{tag}: {f} differs in its text beyond timings and paths")
        elif f.endswith(".json"):
            if normalized_report(a, dirs["old"]) != normalized_report(b, dirs["new"]):
                diffs.append(f"{tag}: {f} differs beyond timings and paths")
        elif not filecmp.cmp(a, b, shallow=False):
            diffs.append(f"{tag}: {f} differs")
    return tag, diffs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--models", nargs="+", help="directories of model archives (default: the test models)")
    ap.add_argument("--modes", default="plain,fuse", help="comma-separated: plain, fuse, quant")
    ap.add_argument("--emit", default="", help="--emit list passed to both (default: the CLI's)")
    ap.add_argument("--out", help="where the outputs go (default: a temporary directory)")
    ap.add_argument("--keep", action="store_true", help="keep the outputs")
    ap.add_argument("--bytes", action="store_true", help="compare NAME.json as text (timings masked)")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    modes = [m for m in a.modes.split(",") if m]
    for m in modes:
        if m not in MODES:
            ap.error(f"unknown mode {m!r} (plain, fuse, quant)")
    dirs = a.models or default_model_dirs()
    models = model_files(dirs)
    if not models:
        print("compare_outputs: no models found (generate them with scripts/test.sh first)", file=sys.stderr)
        return 2
    root = a.out or tempfile.mkdtemp(prefix="tt-compare-")
    # The parents exist before the parallel jobs start: two tinytrace runs creating the same
    # missing parent at once can fail with "cannot create output directory ... (File exists)".
    for side in ("old", "new"):
        os.makedirs(os.path.join(root, side), exist_ok=True)
    jobs = [(os.path.abspath(a.old), os.path.abspath(a.new), m, mode, root, a.emit, a.bytes) for m in models for mode in modes]
    differing = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.j) as pool:
        for tag, diffs in pool.map(compare_one, jobs):
            for d in diffs:
                print(d, flush=True)
            differing += bool(diffs)
    print(f"compare_outputs: {len(jobs)} conversions of {len(models)} models ({', '.join(modes)}): "
          f"{len(jobs) - differing} identical, {differing} differ")
    if not a.keep and not a.out:
        shutil.rmtree(root, ignore_errors=True)
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
