"""A model whose weights are larger than the memory it converts in (issue #17; Note [Weights mapped
from the archive] in lib/loaders/mapped_records.cpp).

    check_mapped_weights.py TINYTRACE JIT_LOAD_FLOOR WORK_DIR [torchscript|export]

Generates a stack of Linear(4096, 4096) layers (8 x 64 MiB of float32 weights, 512 MiB), traced
and saved as a TorchScript archive, or (`export`) exported with torch.export and saved as a .pt2
(whose state dict is a torch.save zip stored inside the .pt2's zip, usually at an offset that is
not a multiple of 4), evicts the file from the page cache, and runs in a memory cgroup limited to
192 MiB:
  1. what the weights cost without mapping, which the limit must kill to show it is real:
     build/jit_load_floor (torch::jit::load alone, which copies every record into memory) for the
     archive; for the .pt2, a process that reads the file into memory (as the .pt2 loader did);
  2. `tinytrace convert --input-shape 1,4096 --verify`: it must succeed, its weights mapped, and
     the 8 weight matrices copied to NAME.pth from the input (unchanged records).
Then, outside the cgroup, NAME.pth must hold the original's tensors bit for bit, name by name, and
NAME.py with NAME.pth must reproduce the original's output exactly. Exit 77 (skipped) when no
memory cgroup can be created here (cgroup v1 or v2, as root).
"""
import os
import shutil
import signal
import subprocess
import sys
import time

import torch

SKIP = 77
LAYERS, WIDTH = 8, 4096
LIMIT_MB = 192


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def make_cgroup(name, limit):
    """A memory cgroup limited to `limit` bytes: (its directory, its procs file), or None."""
    v2 = "/sys/fs/cgroup"
    v1 = "/sys/fs/cgroup/memory"
    candidates = []
    if os.path.exists(os.path.join(v2, "cgroup.controllers")):
        candidates.append((v2, "memory.max", ["memory.swap.max"]))
    if os.path.exists(os.path.join(v1, "memory.limit_in_bytes")):
        candidates.append((v1, "memory.limit_in_bytes", []))
    for root, knob, zero in candidates:
        d = os.path.join(root, name)
        try:
            os.mkdir(d)
        except OSError:
            continue
        try:
            with open(os.path.join(d, knob), "w") as f:
                f.write(str(limit))
            for z in zero:
                if os.path.exists(os.path.join(d, z)):
                    with open(os.path.join(d, z), "w") as f:
                        f.write("0")
            return d
        except OSError:
            os.rmdir(d)
    return None


def run_limited(cgroup, cmd):
    procs = os.path.join(cgroup, "cgroup.procs")

    def enter():
        with open(procs, "w") as f:
            f.write(str(os.getpid()))
    return subprocess.run(cmd, preexec_fn=enter, capture_output=True, text=True)


def evict(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def make_model(fmt, work):
    """Saves the model in `fmt`: (its path, its state_dict, an input, the output for it)."""
    torch.manual_seed(0)
    layers = []
    for _ in range(LAYERS):
        layers += [torch.nn.Linear(WIDTH, WIDTH), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers).eval()
    x = torch.randn(1, WIDTH)
    with torch.no_grad():
        expected = model(x)
    if fmt == "export":
        src = os.path.join(work, "big.pt2")
        torch.export.save(torch.export.export(model, (x,)), src)
    else:
        src = os.path.join(work, "big.pt")
        with torch.no_grad():
            torch.jit.trace(model, x).save(src)
    return src, model.state_dict(), x, expected


def main():
    tinytrace, floor, work = sys.argv[1:4]
    fmt = sys.argv[4] if len(sys.argv) > 4 else "torchscript"
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    cgroup = make_cgroup("tt-mapped-%d" % os.getpid(), LIMIT_MB << 20)
    if cgroup is None:
        print("SKIP: cannot create a memory cgroup here (needs root and cgroup v1 or v2)")
        sys.exit(SKIP)
    try:
        src, ref, x, expected = make_model(fmt, work)
        weights_mb = os.path.getsize(src) >> 20
        if weights_mb < 2 * LIMIT_MB:
            fail("the model (%d MiB) should be at least twice the limit" % weights_mb)

        evict(src)
        t0 = time.monotonic()
        unmapped = [floor, src] if fmt == "torchscript" else [
            sys.executable, "-c", "import sys; open(sys.argv[1], 'rb').read()", src]
        r = run_limited(cgroup, unmapped)
        if r.returncode != -signal.SIGKILL:
            fail("%s of the %d MiB model under a %d MiB limit should be killed, got exit %s: the "
                 "limit does not hold\n%s" % (" ".join(unmapped[:-1]), weights_mb, LIMIT_MB,
                                               r.returncode, r.stderr))
        t1 = time.monotonic()
        evict(src)
        out = os.path.join(work, "out")
        r = run_limited(cgroup, [tinytrace, "convert", src, "-o", out, "--input-shape",
                                 "1,%d" % WIDTH, "--name", "Big", "--verify", "-vv"])
        if r.returncode != 0:
            fail("convert under a %d MiB limit failed (exit %s):\n%s" % (LIMIT_MB, r.returncode,
                                                                         r.stderr))
        if "mapped from the archive" not in r.stderr:
            fail("the weights were not mapped:\n" + r.stderr)
        # Plain conversion: every weight reaches NAME.pth unchanged (Note [Unchanged records]).
        if "%d records (%d MiB) copied unchanged" % (LAYERS, LAYERS * WIDTH * WIDTH * 4 >> 20) \
                not in r.stderr:
            fail("the unchanged weights were not copied from the input:\n" + r.stderr)
        for line in r.stderr.splitlines():
            if "mapped from the archive" in line or "copied unchanged" in line:
                print(line.strip())
        print("the unmapped load killed by the limit after %.1f s; convert of %d MiB of weights "
              "under a %d MiB memory limit: OK in %.1f s" % (t1 - t0, weights_mb, LIMIT_MB,
                                                           time.monotonic() - t1))
    finally:
        os.rmdir(cgroup)

    # Outside the cgroup: NAME.pth and NAME.py against the original.
    state = torch.load(os.path.join(out, "Big.pth"), mmap=True)
    if list(state) != list(ref):
        fail("NAME.pth has the tensors %s, the original %s" % (list(state), list(ref)))
    for k, v in state.items():
        if not torch.equal(v, ref[k]):
            fail("NAME.pth's %s differs from the original's" % k)
    sys.path.insert(0, out)
    import Big
    gen = Big.Big().eval()
    gen.load_state_dict(state, strict=True)
    with torch.no_grad():
        got = gen(x)
    if not torch.equal(got, expected):
        fail("NAME.py's output differs from the original's: max |diff| %g"
             % (got - expected).abs().max().item())
    print("NAME.pth (%d tensors) and NAME.py reproduce the original exactly" % len(state))
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
