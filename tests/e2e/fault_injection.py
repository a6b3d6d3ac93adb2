#!/usr/bin/python3
"""Fault-injection tests (issue 19): one system fault per invocation.

    fault_injection.py TINYTRACE SHIM MODEL WORK_DIR CASE
    fault_injection.py --list

Converts MODEL (the committed testdata/models/tiny_cnn.pt) while the system fails in one way and
asserts what README's "Reliability" section promises:
  - the exit code is the documented one: 6 (ExitCode::System, Note [Exit code 6]) for a full disk,
    a file size limit, a read-only or removed output directory and out of memory; killed by the
    signal itself (SIGINT/SIGTERM/SIGHUP) for a signal, never a crash (SIGSEGV, SIGABRT, SIGXFSZ);
  - stderr is exactly one line starting with "error: " (plus "note: " lines) naming the file and
    the reason, and nothing looks like a stack trace;
  - nothing is left in the output directory (it is as it was before, or gone when this run made
    it or the test removed it), and the input is unchanged (sha256 before and after).

The copy_* cases convert a Linear(256, 128) traced here instead (its 128 KiB weight is a record
NAME.pth copies from the input with copy_file_range, Note [Unchanged records]) while that copy
fails (EIO, ENOSPC, EXDEV) or stops short: the run must succeed with NAME.pth byte for byte what a
run without faults writes and holding the original weights; when the writes that replace the copy
fail too (copy_and_write_fail), it is the full-disk error above.

SHIM is the LD_PRELOAD library of tests/fault/fault_shim.cpp (Note [Fault shim]): it makes the
writes of one file fail with ENOSPC, or stops the process (SIGSTOP) at the first read of the input
or the first write of one output, so the test acts at that exact moment and then continues it.
"""
import os
import shutil
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bad_input import DROP_DAC, SKIP, STACK_TRACE_MARKERS, can_drop_dac, sha256  # noqa: E402

# case -> (expected exit code, or -signal; words the error line must contain)
CASES = {
    "full_disk_weights": (6, ["tiny_cnn.pth", "No space left on device", "free disk space"]),
    "full_disk_python": (6, ["tiny_cnn.py", "No space left on device"]),
    "file_size_limit": (6, ["File too large"]),
    "readonly_output_dir": (6, ["not writable"]),
    "readonly_output_parent": (6, ["cannot create output directory", "Permission denied"]),
    "output_dir_removed": (6, ["No such file or directory", "removed"]),
    "out_of_memory": (6, ["out of memory"]),
    "sigint_while_loading": (-signal.SIGINT, []),
    "sigterm_while_loading": (-signal.SIGTERM, []),
    "sighup_while_loading": (-signal.SIGHUP, []),
    "sigint_while_writing_weights": (-signal.SIGINT, []),
    "sigterm_while_writing_weights": (-signal.SIGTERM, []),
    "sighup_while_writing_weights": (-signal.SIGHUP, []),
    "sigterm_while_writing_report": (-signal.SIGTERM, []),
    # NAME.pth's copy of an unchanged input record (copy_file_range, Note [Unchanged records])
    # failing or stopping short: the rest is written from memory, the output is still right.
    "copy_fails_EIO": (0, []),
    "copy_fails_ENOSPC": (0, []),
    "copy_fails_EXDEV": (0, []),
    "copy_short": (0, []),
    "copy_short_then_EIO": (0, []),
    # ... and when the writes that replace the copy fail too, it is a full disk as above.
    "copy_and_write_fail": (6, ["linear.pth", "No space left on device", "free disk space"]),
}

# The copy_* cases convert a model with one record of at least 64 KiB (the records NAME.pth copies
# from the input; tiny_cnn's are all smaller): Linear(256, 128), 128 KiB of weights.
COPY_MODEL = "linear.pt"
COPY_FAULTS = {"copy_fails_EIO": "EIO", "copy_fails_ENOSPC": "ENOSPC",
               "copy_fails_EXDEV": "EXDEV", "copy_short": "short",
               "copy_short_then_EIO": "short+EIO", "copy_and_write_fail": "ENOSPC"}


def make_copy_model(path):
    """Saves the traced Linear(256, 128) at path; returns its state_dict."""
    import torch
    torch.manual_seed(0)
    m = torch.nn.Linear(256, 128).eval()
    with torch.no_grad():
        torch.jit.trace(m, torch.randn(1, 256)).save(path)
    return m.state_dict()


def check_copy_output(tinytrace, src, out, work, ref, log):
    """A successful copy_* run: the shim did fail copies (its log), NAME.pth is byte for byte what
    a run without faults writes and holds the original weights."""
    import torch
    with open(log) as f:
        injected = f.read().split()
    if "copy" not in injected:
        fail("no copy_file_range into linear.pth was made: the case tests nothing")
    clean = os.path.join(work, "clean")
    r = subprocess.run([tinytrace, "convert", src, "-o", clean, "-vv"], capture_output=True,
                       text=True)
    if r.returncode != 0 or "1 records (0 MiB) copied unchanged" not in r.stderr:
        fail("the run without faults did not copy the weight from the input:\n" + r.stderr)
    with open(os.path.join(out, "linear.pth"), "rb") as a, \
            open(os.path.join(clean, "linear.pth"), "rb") as b:
        if a.read() != b.read():
            fail("linear.pth differs from the one a run without faults writes")
    shutil.rmtree(clean)
    state = torch.load(os.path.join(out, "linear.pth"))
    if list(state) != list(ref) or not all(torch.equal(state[k], ref[k]) for k in ref):
        fail("linear.pth does not hold the original weights")
    print("%d copy faults injected; linear.pth is exact" % injected.count("copy"))


def listing(d):
    if not os.path.exists(d):
        return None
    return sorted(os.path.relpath(os.path.join(r, n), d)
                  for r, dirs, files in os.walk(d) for n in dirs + files)


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run_stopped(cmd, env, at_stop):
    """Runs cmd; when the shim stops it (SIGSTOP), calls at_stop(pid), then lets it continue.
    Returns (returncode, stderr)."""
    # The signals start at their default action, whatever this test inherited (nohup, a CI
    # runner that ignores SIGHUP): tinytrace keeps an ignored signal ignored, as nohup wants.
    def default_signals():
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=default_signals)
    _, status = os.waitpid(p.pid, os.WUNTRACED)
    if not os.WIFSTOPPED(status):
        # It ended without reaching the fault point: the test cannot say anything.
        p.returncode = os.waitstatus_to_exitcode(status)
        out, err = p.communicate()
        fail("the process never reached the fault point (exit %s); stderr:\n%s"
             % (p.returncode, err.decode(errors="replace")))
    at_stop(p.pid)
    os.kill(p.pid, signal.SIGCONT)
    out, err = p.communicate(timeout=120)
    if out.strip() and p.returncode == 0:
        fail("the run succeeded although a fault was injected")
    return p.returncode, err.decode(errors="replace")


def address_space_that_runs(tinytrace, model, work):
    """An RLIMIT_AS (MB) under which a plain conversion of the model succeeds: 3 GB, or twice
    that while it does not (LibTorch maps its libraries and thread stacks)."""
    for mb in (3072, 6144, 12288):
        out = os.path.join(work, "probe")
        r = subprocess.run(["prlimit", "--as=%d" % (mb << 20), tinytrace, "convert", model,
                            "-o", out, "-q"], capture_output=True)
        shutil.rmtree(out, ignore_errors=True)
        if r.returncode == 0:
            return mb
    fail("tinytrace did not run under an address-space limit of 12 GB")


def main():
    if sys.argv[1:] == ["--list"]:
        print("\n".join(CASES))
        return
    tinytrace, shim, model, work, case = sys.argv[1:6]
    tinytrace, shim, model = map(os.path.abspath, (tinytrace, shim, model))
    expected, words = CASES[case]
    work = os.path.abspath(os.path.join(work, case))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    # A copy, so that the committed file is never at risk; its hash is checked at the end.
    src = os.path.join(work, "tiny_cnn.pt")
    if case.startswith("copy_"):
        src = os.path.join(work, COPY_MODEL)
        ref = make_copy_model(src)
    else:
        shutil.copyfile(model, src)
    before = sha256(src)
    out = os.path.join(work, "out")   # made by the run unless the case makes it first
    cmd = [tinytrace, "convert", src, "-o", out]
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = "1"
    preload = dict(env, LD_PRELOAD=shim)
    expect_out = None   # listing the output directory must have afterwards (None: absent)

    if case.startswith("full_disk_"):
        name = "tiny_cnn.pth" if case.endswith("weights") else "tiny_cnn.py"
        env = dict(preload, TT_FAULT="ENOSPC", TT_FAULT_OP="write",
                   TT_FAULT_PATH="*/." + name + ".tmp-*")
        r = subprocess.run(cmd, env=env, capture_output=True, text=True)
        code, err = r.returncode, r.stderr
    elif case == "file_size_limit":
        # A real kernel limit: past 4 KB the write fails (EFBIG) instead of SIGXFSZ killing us.
        r = subprocess.run(["prlimit", "--fsize=4096", *cmd], env=env, capture_output=True,
                           text=True)
        code, err = r.returncode, r.stderr
    elif case.startswith("readonly_"):
        if not can_drop_dac():
            sys.exit(SKIP)
        parent = os.path.join(work, "ro")
        os.makedirs(parent)
        if case == "readonly_output_dir":
            out = parent
            expect_out = []
        else:
            out = os.path.join(parent, "sub")
        cmd = [tinytrace, "convert", src, "-o", out]
        os.chmod(parent, 0o555)
        r = subprocess.run(DROP_DAC + cmd, env=env, capture_output=True, text=True)
        os.chmod(parent, 0o755)
        code, err = r.returncode, r.stderr
        if case == "readonly_output_parent":
            out = parent
            expect_out = []
    elif case == "output_dir_removed":
        env = dict(preload, TT_FAULT="stop", TT_FAULT_OP="write",
                   TT_FAULT_PATH="*/.tiny_cnn.py.tmp-*")
        code, err = run_stopped(cmd, env, lambda pid: shutil.rmtree(out))
    elif case == "out_of_memory":
        # Under AddressSanitizer (the sanitize label sets ASAN_OPTIONS) the shadow memory alone
        # needs terabytes of address space, so RLIMIT_AS cannot model "too little memory" there.
        if shutil.which("prlimit") is None or "ASAN_OPTIONS" in os.environ:
            sys.exit(SKIP)
        mb = address_space_that_runs(tinytrace, src, work)
        # --verify runs the model on an input four times the limit: it cannot be allocated.
        side = int(((4 * (mb << 20)) // 12) ** 0.5) + 1
        r = subprocess.run(["prlimit", "--as=%d" % (mb << 20), *cmd, "--input-shape",
                            "1,3,%d,%d" % (side, side), "--verify"], env=env,
                           capture_output=True, text=True)
        code, err = r.returncode, r.stderr
    elif case.startswith("copy_"):
        log = os.path.join(work, "faults.log")
        env = dict(preload, TT_FAULT=COPY_FAULTS[case], TT_FAULT_LOG=log,
                   TT_FAULT_OP="copy+write" if case == "copy_and_write_fail" else "copy",
                   TT_FAULT_PATH="*/.linear.pth.tmp-*")
        r = subprocess.run(cmd, env=env, capture_output=True, text=True)
        code, err = r.returncode, r.stderr
        if code == 0:
            check_copy_output(tinytrace, src, out, work, ref, log)
            expect_out = listing(out)
            if any(".tmp-" in n for n in expect_out):
                fail("temporary files left in the output directory: %s" % expect_out)
        else:
            with open(log) as f:
                injected = f.read().split()
            if "copy" not in injected or "write" not in injected:
                fail("expected a failed copy, then failed writes: %s" % injected)
        os.remove(log)
    elif "_while_" in case:
        sig = getattr(signal, case.split("_")[0].upper())
        if case.endswith("_loading"):
            env = dict(preload, TT_FAULT="stop", TT_FAULT_OP="read", TT_FAULT_PATH=src)
        else:
            name = "tiny_cnn.pth" if case.endswith("weights") else "tiny_cnn.json"
            env = dict(preload, TT_FAULT="stop", TT_FAULT_OP="write",
                       TT_FAULT_PATH="*/." + name + ".tmp-*")
        code, err = run_stopped(cmd, env, lambda pid: os.kill(pid, sig))
        if code != expected:
            fail("expected death by %s, got exit %s; stderr:\n%s" % (sig.name, code, err))
        if err.strip():
            fail("a signal should end the run silently, stderr:\n" + err)
    else:
        fail("unknown case " + case)

    print("exit %s; stderr:\n%s" % (code, err))
    if code != expected:
        fail("expected exit %s, got %s" % (expected, code))
    if expected > 0:
        lines = [ln for ln in err.splitlines() if ln.strip()]
        if not lines or not lines[0].startswith("error: "):
            fail("stderr does not start with one 'error: ' line")
        extra = [ln for ln in lines[1:] if not ln.startswith("note: ")]
        if extra:
            fail("more than one error line: %r" % extra)
        for w in words:
            if w.lower() not in lines[0].lower():
                fail("the error line does not say %r" % w)
    for marker in STACK_TRACE_MARKERS:
        if marker in err:
            fail("stderr looks like a crash (%r)" % marker)
    left = listing(out)
    if left != expect_out:
        fail("the output directory %s should be %s, it holds %s"
             % (out, "absent" if expect_out is None else expect_out, left))
    if sha256(src) != before:
        fail("the input changed")
    if sorted(os.listdir(work)) not in (["tiny_cnn.pt"], ["ro", "tiny_cnn.pt"], [COPY_MODEL],
                                        [COPY_MODEL, "out"]):
        fail("files left beside the input: %s" % os.listdir(work))
    print("ok")


if __name__ == "__main__":
    main()
