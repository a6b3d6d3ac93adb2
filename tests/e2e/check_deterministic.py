"""The same input converts to the same bytes, whatever the heap layout (Note [Constant propagation
to a fixpoint] in lib/loaders/torchscript/lifter_scripted.cpp).

    check_deterministic.py TINYTRACE WORK_DIR MODEL.pt[:ARGS] ...

Each model is converted once per allocator setting below, in plain and --fuse mode, into the same
output directory, with the environment's own ASLR, so that addresses differ from run to run.
NAME.py and NAME.pth must be byte-identical across the runs and NAME.json too once the values of
its timing keys are masked. Output that depends on where malloc put something (a hash table or a
map keyed by pointers iterated, an analysis answering for a freed object whose address was
reused) shows up as a difference here. ARGS after a colon are extra convert arguments, separated
by spaces (one command-line argument: "m.pt:--input-shape 2,5,16").

The executable runs on jemalloc (Note [jemalloc] in tools/tinytrace.cpp), which reads MALLOC_CONF;
a build with TT_JEMALLOC=OFF runs on glibc's malloc, which reads GLIBC_TUNABLES. Each setting
sets both, and each allocator ignores the other's variable. `tcache:false` matters most: without
jemalloc's per-thread cache a freed block is not handed back by the next allocation of its size.

Two findings: a scripted Swin block, whose window-size product LibTorch's ConstantPropagation
folded in some runs and not in others; and fold-constants taking a new constant at a destroyed
value's address for written memory (Value::serial), which changed bi_encoder_masked's --fuse
report between the default jemalloc and tcache:false.
"""
import os
import re
import shutil
import subprocess
import sys

# (GLIBC_TUNABLES, MALLOC_CONF) per run; the first run is the reference.
SETTINGS = [
    ("", ""),
    ("glibc.malloc.mmap_threshold=65536", "tcache:false"),
    ("glibc.malloc.top_pad=4194304:glibc.malloc.tcache_count=0", "narenas:1,tcache_max:1024"),
    ("glibc.malloc.mmap_threshold=1048576:glibc.malloc.arena_max=1", "junk:true,retain:false"),
    ("glibc.malloc.tcache_count=3:glibc.malloc.trim_threshold=0",
     "tcache:false,oversize_threshold:0"),
]
TIMING = re.compile(rb'"(milliseconds|seconds)": [-+.0-9eE]+')


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def outputs(out_dir):
    """{file name: bytes} of a conversion, timings masked in the report."""
    files = {}
    for name in sorted(os.listdir(out_dir)):
        with open(os.path.join(out_dir, name), "rb") as f:
            data = f.read()
        files[name] = TIMING.sub(rb'"\1": T', data) if name.endswith(".json") else data
    return files


def main():
    tinytrace, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    checked = 0
    for spec in sys.argv[3:]:
        model, _, extra = spec.partition(":")
        stem = os.path.splitext(os.path.basename(model))[0]
        for mode in (["plain"], ["fuse", "--fuse"]):
            out = os.path.join(work, stem + "_" + mode[0])
            first = None
            for tunables, conf in SETTINGS:
                setting = "GLIBC_TUNABLES='%s' MALLOC_CONF='%s'" % (tunables, conf)
                shutil.rmtree(out, ignore_errors=True)
                env = dict(os.environ, GLIBC_TUNABLES=tunables, MALLOC_CONF=conf)
                cmd = [tinytrace, "-q", "convert", model, "-o", out] + mode[1:] + \
                    extra.split()
                r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                if r.returncode != 0:
                    fail("%s (%s) exit %d: %s" %
                         (" ".join(cmd), setting, r.returncode, r.stderr.decode()[-500:]))
                got = outputs(out)
                if first is None:
                    first = (setting, got)
                    continue
                if sorted(got) != sorted(first[1]):
                    fail("%s %s: files %s vs %s" % (stem, mode[0], sorted(got), sorted(first[1])))
                for name, data in got.items():
                    if data != first[1][name]:
                        a, b = first[1][name].splitlines(), data.splitlines()
                        line = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]),
                                    min(len(a), len(b)))
                        fail("%s %s: %s differs between %s and %s (line %d: %r vs %r)" %
                             (stem, mode[0], name, first[0], setting, line + 1,
                              a[line] if line < len(a) else b"",
                              b[line] if line < len(b) else b""))
            checked += 1
            print("ok: %s %s: %d conversions identical" % (stem, mode[0], len(SETTINGS)))
    if checked == 0:
        fail("no model given")
    print("PASS: %d model/mode pairs" % checked)


if __name__ == "__main__":
    main()
