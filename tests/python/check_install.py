#!/usr/bin/python3
"""check_install.py: what `cmake --install` and `cpack -G DEB` put where, and that it works there.

    check_install.py BUILD_DIR WORK_DIR install|deb|completion

install     `cmake --install BUILD_DIR --prefix WORK_DIR/prefix`: the binary, the Python package in
            lib/python3.X/dist-packages (with _installed.py), the man page, the completion; then,
            from outside the checkout, with no TINYTRACE_BIN and no tinytrace on PATH,
            /usr/bin/python3 imports the installed package, which finds the installed binary,
            converts a live module and matches it numerically; `python3 -m tinytrace` too.
deb         `cpack -G DEB`: `dpkg-deb -I` (name, version, architecture, Depends naming the
            package of every library the binary links, per readelf -d and dpkg -S, and
            python3-torch), `dpkg-deb -c` (/usr/bin/tinytrace, the package in
            /usr/lib/python3/dist-packages, man page, completion); then the package's files
            extracted into a throwaway root (dpkg-deb -x) run as above, and `apt-get install
            --simulate ./tinytrace_*.deb` finds every dependency installed here. (A real
            `apt install` would need a second Debian root with LibTorch: too slow for the suite.)
completion  the generated bash completion, sourced into bash: subcommands and each one's options.

One OK line, or `FAIL: ...` and exit 1.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import textwrap

PYTHON = "/usr/bin/python3"


def fail(msg):
    print(f"FAIL: {msg}", flush=True)
    sys.exit(1)


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        fail(f"{' '.join(cmd)} exited {r.returncode}:\n{r.stdout}{r.stderr}")
    return r.stdout


def expect_files(root, paths):
    missing = [p for p in paths if not os.path.exists(os.path.join(root, p))]
    if missing:
        fail(f"not installed under {root}: {missing}")


# Run by the installed package's Python, from outside the checkout: the binary must be the one
# installed beside it, and a live module must convert and match.
SMOKE = textwrap.dedent("""
    import os, sys, torch, tinytrace
    want_pkg, want_bin = sys.argv[1:3]
    if not tinytrace.__file__.startswith(want_pkg):
        sys.exit(f"imported {tinytrace.__file__}, not the installed package in {want_pkg}")
    if os.path.realpath(tinytrace.find_binary()) != os.path.realpath(want_bin):
        sys.exit(f"the package runs {tinytrace.find_binary()}, not {want_bin}")
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                              torch.nn.Linear(4 * 6 * 6, 3)).eval()
    x = torch.rand(2, 3, 8, 8)
    r = tinytrace.convert(net, x)
    d = float((r.module(x) - net(x)).abs().max() / net(x).abs().max())
    if not d <= 1e-4:
        sys.exit(f"the converted module differs by {d}")
    print(f"converted with {want_bin}: {r.class_name}, max rel diff {d:.2g}")
""")


def check_runs(root, pydir, binary, work):
    """The installed package and binary under `root`, used with a clean environment."""
    env = {"PATH": "/usr/bin:/bin", "HOME": work, "LANG": "C.UTF-8",
           "PYTHONPATH": os.path.join(root, pydir)}
    if shutil.which("tinytrace", path=env["PATH"]):
        fail(f"a tinytrace is on {env['PATH']} ({shutil.which('tinytrace', path=env['PATH'])}): "
             "the test cannot tell which binary the package finds")
    out = run([os.path.join(root, binary), "--version"], env=env, cwd=work)
    if not out.startswith("tinytrace "):
        fail(f"{binary} --version printed {out!r}")
    said = run([PYTHON, "-c", SMOKE, os.path.join(root, pydir, "tinytrace"),
                os.path.join(root, binary)], env=env, cwd=work)
    module = run([PYTHON, "-m", "tinytrace", "--version"], env=env, cwd=work)
    if module != out:
        fail(f"python3 -m tinytrace --version printed {module!r}, the binary {out!r}")
    return said.strip()


def python_version():
    return run([PYTHON, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"]).strip()


def case_install(build, work):
    prefix = os.path.join(work, "prefix")
    run(["cmake", "--install", build, "--prefix", prefix])
    pydir = f"lib/python{python_version()}/dist-packages"
    expect_files(prefix, ["bin/tinytrace", f"{pydir}/tinytrace/__init__.py",
                          f"{pydir}/tinytrace/__main__.py", f"{pydir}/tinytrace/_installed.py",
                          "share/man/man1/tinytrace.1.gz",
                          "share/bash-completion/completions/tinytrace"])
    if glob.glob(os.path.join(prefix, pydir, "tinytrace", "__pycache__")):
        fail("__pycache__ was installed")
    said = check_runs(prefix, pydir, "bin/tinytrace", work)
    print(f"OK: cmake --install --prefix: {said}; python3 -m tinytrace runs it")


def needed_packages(binary):
    """The Debian packages owning the libraries `binary` links directly (readelf -d NEEDED)."""
    needed = re.findall(r"\(NEEDED\).*\[(.+)\]", run(["readelf", "-d", binary]))
    # The directory the loader takes each library from (ldd), so that multilib copies of the same
    # name (/usr/lib32/libgcc_s.so.1 of lib32gcc-s1) do not count.
    found = dict(re.findall(r"^\s*(\S+) => (\S+)", run(["ldd", binary]), re.M))
    def dir_name(path):
        return os.path.basename(os.path.dirname(path))

    owners = set()
    for lib in needed:
        libdir = dir_name(found.get(lib, ""))
        for line in run(["dpkg", "-S", f"*/{lib}"]).splitlines():
            package, _, path = line.partition(": ")
            path = path.strip()
            if path.endswith("/" + lib) and (not libdir or dir_name(path) == libdir):
                owners.add(package.split(":")[0])
    return needed, owners


def case_deb(build, work):
    out_dir = os.path.join(work, "deb")
    run(["cpack", "-G", "DEB", "-B", out_dir, "--config", os.path.join(build, "CPackConfig.cmake")])
    debs = glob.glob(os.path.join(out_dir, "tinytrace_*.deb"))
    if len(debs) != 1:
        fail(f"cpack made {os.listdir(out_dir)}, not one tinytrace_*.deb")
    deb = debs[0]
    info = run(["dpkg-deb", "-I", deb])
    fields = dict(re.findall(r"^ ([A-Za-z-]+): (.*)$", info, re.MULTILINE))
    arch = run(["dpkg", "--print-architecture"]).strip()
    if fields.get("Package") != "tinytrace" or fields.get("Architecture") != arch:
        fail(f"dpkg-deb -I: Package {fields.get('Package')}, Architecture "
             f"{fields.get('Architecture')} (expected tinytrace, {arch}):\n{info}")
    if os.path.basename(deb) != f"tinytrace_{fields.get('Version')}_{arch}.deb":
        fail(f"{os.path.basename(deb)} is not named tinytrace_VERSION_ARCH.deb")
    depends = {d.strip().split(" ")[0] for d in fields.get("Depends", "").split(",")}
    needed, owners = needed_packages(os.path.join(build, "tinytrace"))
    missing = sorted(owners - depends)
    if missing or "python3-torch" not in depends:
        fail(f"Depends ({sorted(depends)}) lacks {missing or ['python3-torch']}: the packages of "
             f"the binary's libraries {needed} are {sorted(owners)}")
    listing = run(["dpkg-deb", "-c", deb])
    files = {line.split()[-1].lstrip(".") for line in listing.splitlines()}
    pydir = "usr/lib/python3/dist-packages"
    want = ["/usr/bin/tinytrace", f"/{pydir}/tinytrace/__init__.py",
            f"/{pydir}/tinytrace/_installed.py", "/usr/share/man/man1/tinytrace.1.gz",
            "/usr/share/bash-completion/completions/tinytrace"]
    if [f for f in want if f not in files]:
        fail(f"dpkg-deb -c lacks {[f for f in want if f not in files]}:\n{listing}")
    if any("__pycache__" in f or f.startswith("/usr/local") for f in files):
        fail(f"the package holds __pycache__ or /usr/local files:\n{listing}")
    root = os.path.join(work, "root")
    run(["dpkg-deb", "-x", deb, root])
    said = check_runs(root, pydir, "usr/bin/tinytrace", work)
    # Every dependency is satisfied by what is installed here: apt would install tinytrace alone.
    sim = run(["apt-get", "install", "--simulate", "-o", "Debug::NoLocking=true",
               "--no-install-recommends", deb])
    inst = re.findall(r"^Inst (\S+)", sim, re.MULTILINE)
    if inst != ["tinytrace"]:
        fail(f"apt-get install --simulate {deb} would install {inst}, not just tinytrace:\n{sim}")
    print(f"OK: {os.path.basename(deb)}: Depends {fields['Depends']}; extracted: {said}; "
          "apt-get --simulate finds every dependency installed")


def case_completion(build, work):
    script = os.path.join(build, "doc", "tinytrace.bash")
    probe = textwrap.dedent("""
        source "$1"
        complete_words() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _tinytrace; echo "${COMPREPLY[*]}"; }
        complete_words tinytrace ""
        complete_words tinytrace convert --quant-
        complete_words tinytrace -v inspect m.pt --j
        complete_words tinytrace --lo
    """)
    lines = run(["bash", "-c", probe, "bash", script]).splitlines()
    # The commands of DESIGN.md section 1, then one option of each kind of place.
    want = [{"convert", "passes", "opt", "inspect", "diff", "profile"}, {"--quant-prep"},
            {"--json"}, {"--load-library"}]
    got = [set(line.split()) for line in lines]
    if got != want:
        fail(f"completions {got}, expected {want}")
    print(f"OK: bash completion: {sorted(got[0])}; convert --quant- -> --quant-prep; inspect --j -> "
          "--json; --lo -> --load-library")


CASES = {"install": case_install, "deb": case_deb, "completion": case_completion}


def main():
    if len(sys.argv) != 4 or sys.argv[3] not in CASES:
        fail(f"usage: check_install.py BUILD_DIR WORK_DIR {'|'.join(CASES)}")
    build, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    CASES[sys.argv[3]](build, work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
