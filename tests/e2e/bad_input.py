#!/usr/bin/python3
"""Bad-input test driver: one case of issue 2's list per invocation.

    bad_input.py TINYTRACE TESTMODELS_DIR WORK_DIR CASE
    bad_input.py --list

Runs `tinytrace convert` on a malformed input (files from scripts/gen_models.py --only badinput,
in TESTMODELS_DIR/badinput) and asserts the contract of DESIGN.md §1:
  - the exit code is the expected one (3: not a model / unreadable; 2: bad arguments), not a
    crash or a signal;
  - stderr is exactly one line starting with "error: ", optionally followed by "note: " lines,
    and for exit 3 that line names the input file;
  - nothing looks like a C++ or Python stack trace, and stdout is empty;
  - no file or directory is left behind: the -o directory (a not-yet-existing subdirectory of
    WORK_DIR/CASE/out, which must stay as it was) and the current directory are unchanged;
  - the input is unchanged (sha256 before and after).

The "unreadable" case: chmod 000 means nothing to root (CI runs as root), so as root the command
runs under `setpriv` with CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH dropped from the bounding set:
still uid 0, but now bound by the file's permission bits. Where setpriv cannot do that, the case
is skipped (exit 77, reported by CTest as skipped), never passed silently.
"""
import hashlib
import os
import shutil
import stat
import subprocess
import sys

SKIP = 77
STACK_TRACE_MARKERS = ["terminate called", "Exception raised from", "what():", "frame #",
                       "Traceback (most recent call last)", "Segmentation fault", "core dumped",
                       "Aborted", "c10::Error", "std::exception"]
DROP_DAC = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search",
            "--inh-caps", "-dac_override,-dac_read_search"]

# case -> (input file, how it is prepared, expected exit code, extra args, hint words)
# "hint words": case-insensitive texts the error line must contain (the "how to fix" part that
# issue 2 asks for where a hint helps).
CASES = {
    "empty_file": ("badinput/empty.pt", "file", 3, [], []),
    "random_bytes": ("badinput/random_bytes.pt", "file", 3, [], []),
    "truncated_archive": ("badinput/truncated.pt", "file", 3, [], []),
    "zip_not_torchscript": ("badinput/not_torchscript.pt", "file", 3, [], []),
    "state_dict": ("badinput/state_dict.pt", "file", 3, [], ["state_dict", "torch.jit"]),
    "pickled_module": ("badinput/pickled_module.pt", "file", 3, [], ["torch.jit"]),
    "directory": ("a_directory.pt", "mkdir", 3, [], []),
    "missing_path": ("does_not_exist.pt", "absent", 3, [], []),
    "unreadable_file": ("unreadable.pt", "unreadable", 3, [], []),
    "fifo": ("a_fifo.pt", "fifo", 3, [], []),
    "invalid_input_shape": ("badinput/valid.pt", "file", 2, ["--input-shape", "1,3,abc"],
                            ["1,3,abc"]),
    "output_is_input": ("clash.pth", "clash", 2, [], []),
    # A deliberately wrong transformation (the test-only pass perturbs one weight) must be caught
    # by --verify: exit 5, one error line, nothing written.
    "verify_catches_wrong_pass": ("badinput/valid.pt", "file", 5,
                                  ["--input-shape", "1,3,32,32", "--passes", "test-perturb-weight",
                                   "--verify"], ["verify", "FAILED", "a pass changed",
                                                 "the first value that differs from the graph as loaded"]),
    "verify_without_input_shape": ("badinput/valid.pt", "file", 2, ["--verify"],
                                   ["--input-shape"]),
    # --optimize-for-inference works on NAME.pt: without --emit torchscript it is a usage error
    # that names the missing output.
    "optimize_without_torchscript": ("badinput/valid.pt", "file", 2,
                                     ["--optimize-for-inference", "--emit", "python,weights"],
                                     ["--optimize-for-inference", "--emit torchscript"]),
    # An op of a library that is not loaded (nor a Python package's that tinytrace finds): the op
    # and the option that loads the library (tests/oplib.cmake adds that fixture).
    "custom_op_library_not_loaded": ("oplib/custom_ops.pt", "file", 3, [],
                                     ["tt_test::", "--load-library"]),
    "custom_op_library_missing": ("oplib/custom_ops.pt", "file", 2,
                                  ["--load-library", "/nonexistent/libtt_ops.so"],
                                  ["cannot load the op library /nonexistent/libtt_ops.so"]),
    # A quantized module tinytrace cannot reproduce (tests/quantized.cmake adds that fixture):
    # exit 4 naming the module, why and the 8-bit qconfig that would do.
    "quantized_embedding_4bit": ("quantized/q_embedding_4bit.pt", "file", 4,
                                 ["--input-shape", "2,3:int64", "--quantized-engine", "qnnpack"],
                                 ["'bag'", "QUInt4x2", "float_qparams_weight_only_qconfig"]),
    # A class name that is also a class NAME.py defines (the dynamic LSTM's helper): a usage error
    # naming the clash, not a file where one class replaces the other.
    "name_clashes_with_helper": ("quantized/q_dynamic_lstm.pt", "file", 2,
                                 ["--name", "DynamicQuantizedLSTM", "--input-shape", "2,5,8",
                                  "--quantized-engine", "qnnpack"],
                                 ["'DynamicQuantizedLSTM'", "helper class", "--name"]),
}


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def snapshot(root):
    """Every path under root with its type, size and mtime: any new or changed entry shows."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            st = os.lstat(p)
            out[os.path.relpath(p, root)] = (stat.S_IFMT(st.st_mode), st.st_size, st.st_mtime_ns)
    return out


def fail(msg, r=None):
    print(f"FAIL: {msg}", file=sys.stderr)
    if r is not None:
        print(f"--- exit code: {r.returncode}\n--- stdout:\n{r.stdout}--- stderr:\n{r.stderr}---",
              file=sys.stderr)
    sys.exit(1)


def can_drop_dac():
    try:
        r = subprocess.run(DROP_DAC + ["true"], capture_output=True, timeout=30)
        return r.returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def main():
    if sys.argv[1:] == ["--list"]:
        print("\n".join(CASES))
        return 0
    if len(sys.argv) != 5 or sys.argv[4] not in CASES:
        fail(f"usage: bad_input.py TINYTRACE TESTMODELS_DIR WORK_DIR CASE ({', '.join(CASES)})")
    tinytrace, models_dir, work, case = sys.argv[1:]
    tinytrace = os.path.abspath(tinytrace)
    rel, prep, want_code, extra, hints = CASES[case]

    case_dir = os.path.abspath(os.path.join(work, case))
    if os.path.isdir(case_dir):
        for dirpath, dirnames, filenames in os.walk(case_dir):  # a previous run's chmod 000
            for n in filenames:
                os.chmod(os.path.join(dirpath, n), 0o644)
        shutil.rmtree(case_dir)
    out_parent = os.path.join(case_dir, "out")
    os.makedirs(out_parent)
    # A file already in the output area must survive untouched.
    with open(os.path.join(out_parent, "keep.txt"), "w") as f:
        f.write("not touched by tinytrace\n")
    out_dir = os.path.join(out_parent, "new_subdir")
    cwd = os.path.join(case_dir, "cwd")
    os.makedirs(cwd)

    prefix = []
    if prep == "file":
        model = os.path.join(os.path.abspath(models_dir), rel)
        if not os.path.exists(model):
            fail(f"{model} not found — run scripts/gen_models.py --only badinput --out {models_dir}")
    elif prep == "mkdir":
        model = os.path.join(case_dir, rel)
        os.makedirs(model)
        with open(os.path.join(model, "inside.txt"), "w") as f:
            f.write("a file inside the directory\n")
    elif prep == "absent":
        model = os.path.join(case_dir, rel)
    elif prep == "unreadable":
        model = os.path.join(case_dir, rel)
        shutil.copy(os.path.join(models_dir, "badinput", "valid.pt"), model)
        os.chmod(model, 0)
        if os.geteuid() == 0:
            if not can_drop_dac():
                print("SKIP: running as root and setpriv cannot drop CAP_DAC_OVERRIDE here, so no "
                      "file is unreadable")
                return SKIP
            prefix = DROP_DAC
    elif prep == "fifo":
        model = os.path.join(case_dir, rel)
        os.mkfifo(model)
    elif prep == "clash":
        # MODEL clash.pth converted into its own directory: NAME.pth would be the input itself.
        out_dir = out_parent
        model = os.path.join(out_parent, rel)
        shutil.copy(os.path.join(models_dir, "badinput", "valid.pt"), model)
    else:
        fail(f"unknown preparation {prep}")

    regular = os.path.isfile(model) and not os.path.islink(model)
    before_input = None
    if regular:
        if prep == "unreadable":
            os.chmod(model, 0o644)  # so that a non-root run of this script can hash it
        before_input = sha256(model)
        if prep == "unreadable":
            os.chmod(model, 0)
    before_out = snapshot(case_dir)

    cmd = prefix + [tinytrace, "convert", model, "-o", out_dir] + extra
    print("+", " ".join(cmd), flush=True)
    try:
        # TT_TEST_PASSES=1: the CLI knows the test-only pass test-perturb-weight (passes/pass.h).
        r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120,
                           stdin=subprocess.DEVNULL, env={**os.environ, "TT_TEST_PASSES": "1"})
    except subprocess.TimeoutExpired:
        fail(f"tinytrace did not finish in 120 s on '{case}' (does it block reading "
             f"{os.path.basename(model)}?)")
    sys.stdout.write(r.stderr)

    if r.returncode < 0:
        fail(f"tinytrace was killed by signal {-r.returncode}", r)
    if r.returncode != want_code:
        fail(f"exit code {r.returncode}, expected {want_code}", r)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    if not lines or not lines[0].startswith("error: "):
        fail("stderr does not start with a line 'error: ...'", r)
    others = [l for l in lines[1:] if not l.lstrip().startswith("note: ")]
    if others:
        fail(f"stderr has {len(others)} line(s) besides the error and notes, e.g. {others[0]!r}", r)
    for marker in STACK_TRACE_MARKERS:
        if marker in r.stdout or marker in r.stderr:
            fail(f"output contains '{marker}' (a stack trace or crash leaked out)", r)
    if r.stdout.strip():
        fail("stdout is not empty on failure (stdout carries only results)", r)
    if want_code == 3 and os.path.basename(model) not in lines[0]:
        fail(f"the error line does not name the input file ({os.path.basename(model)})", r)
    for hint in hints:
        if hint.lower() not in r.stderr.lower():
            fail(f"the message gives no hint mentioning '{hint}'", r)

    if prep == "unreadable":
        os.chmod(model, 0o644)
    after_out = snapshot(case_dir)
    if after_out != before_out:
        added = sorted(set(after_out) - set(before_out))
        changed = sorted(k for k in before_out if after_out.get(k) != before_out[k])
        fail(f"files left behind or changed under {case_dir}: added {added}, changed {changed}", r)
    if before_input is not None and sha256(model) != before_input:
        fail(f"the input {model} was modified", r)
    print(f"bad_input: {case} OK: exit {r.returncode}; {lines[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
