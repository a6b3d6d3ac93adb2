"""A model whose weights are larger than the memory it converts in (issue #17; Note [Weights mapped
from the archive] in lib/loaders/torchscript/mapped_load.cpp).

    check_mapped_weights.py TINYTRACE JIT_LOAD_FLOOR WORK_DIR

Generates a traced stack of Linear(4096, 4096) layers (8 x 64 MiB of float32 weights, 512 MiB),
evicts the file from the page cache, and runs in a memory cgroup limited to 192 MiB:
  1. build/jit_load_floor (torch::jit::load alone, which copies every record into memory): it must
     be killed by the limit, which shows the limit is real;
  2. `tinytrace convert --input-shape 1,4096 --verify`: it must succeed.
Then, outside the cgroup, NAME.pth must hold the original's tensors bit for bit and NAME.py with
NAME.pth must reproduce the original's output exactly. Exit 77 (skipped) when no memory cgroup can
be created here (cgroup v1 or v2, as root).
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


def main():
    tinytrace, floor, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    cgroup = make_cgroup("tt-mapped-%d" % os.getpid(), LIMIT_MB << 20)
    if cgroup is None:
        print("SKIP: cannot create a memory cgroup here (needs root and cgroup v1 or v2)")
        sys.exit(SKIP)
    try:
        torch.manual_seed(0)
        layers = []
        for _ in range(LAYERS):
            layers += [torch.nn.Linear(WIDTH, WIDTH), torch.nn.ReLU()]
        model = torch.nn.Sequential(*layers).eval()
        x = torch.randn(1, WIDTH)
        with torch.no_grad():
            traced = torch.jit.trace(model, x)
            expected = traced(x)
        src = os.path.join(work, "big.pt")
        traced.save(src)
        del model, layers, traced
        weights_mb = os.path.getsize(src) >> 20
        if weights_mb < 2 * LIMIT_MB:
            fail("the model (%d MiB) should be at least twice the limit" % weights_mb)

        evict(src)
        t0 = time.monotonic()
        r = run_limited(cgroup, [floor, src])
        if r.returncode != -signal.SIGKILL:
            fail("torch::jit::load of the %d MiB model under a %d MiB limit should be killed, "
                 "got exit %s: the limit does not hold\n%s" % (weights_mb, LIMIT_MB,
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
        print("torch::jit::load killed by the limit after %.1f s; convert of %d MiB of weights under "
              "a %d MiB memory limit: OK in %.1f s" % (t1 - t0, weights_mb, LIMIT_MB,
                                                       time.monotonic() - t1))
    finally:
        os.rmdir(cgroup)

    # Outside the cgroup: NAME.pth and NAME.py against the original.
    original = torch.jit.load(src)
    state = torch.load(os.path.join(out, "Big.pth"), mmap=True)
    ref = original.state_dict()
    if len(state) != len(ref):
        fail("NAME.pth has %d tensors, the original %d" % (len(state), len(ref)))
    for (k, v), (rk, rv) in zip(state.items(), ref.items()):
        if not torch.equal(v, rv):
            fail("NAME.pth's %s differs from the original's %s" % (k, rk))
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
