#!/usr/bin/python3
"""A process that has imported torch and forks a copy of itself for each Python script the tests
run (Note [Torch zygote]).

    import torch_zygote; torch_zygote.delegate(__file__)   # first lines of a script, before torch

delegate() returns at once when no zygote can be used (the script then runs as usual); otherwise
the script runs in a fork of the zygote, with this process's arguments, working directory,
environment and standard streams, and this process exits with its exit code.
TT_TORCH_ZYGOTE=0 turns it off (every script imports torch itself).
"""
# Note [Torch zygote]
# `import torch` costs about 1.8 s of CPU, and almost every e2e test runs one or more Python
# scripts that do it (scripts/check_model.py once per input set, most tests/e2e drivers): that was
# about a fifth of the suite's CPU time. The first script that calls delegate() starts a zygote:
# a detached `python3 torch_zygote.py --serve SOCKET` that imports torch (nothing else runs in it:
# no op, no thread pool, no seed), listens on a Unix socket and exits after IDLE_SECONDS without
# a request. Each request is a fork of it: a fresh interpreter after `import torch`, which is what
# the script would be after its own import. The child takes the caller's stdin/stdout/stderr (the
# descriptors themselves, passed over the socket), argv, working directory and environment, runs
# the script as __main__ (runpy, as `python3 SCRIPT` would: sys.path[0] the script's directory,
# SystemExit's code, an exception printed as exit 1, atexit handlers), and sends back the exit
# code; the caller exits with it. The child is the leader of its own process group, and a thread
# waits for the caller's end of the socket to close: when the caller dies (a ctest timeout kills
# it) the whole group is killed, so nothing runs on unseen.
# The zygote is found by a socket name made from what a torch import depends on: this file, the
# interpreter, the mount namespace (Debian 13 roots are entered through a private one, and a
# zygote must see the caller's files), the user, and the environment variables read at import
# (OMP_*, MKL_*, LD_*, PYTHON*, TORCH*, ...). A caller whose environment differs in those gets
# its own zygote. Whatever fails on the way (no socket, a zygote that died or could not start, a
# lost connection before the exit code) makes delegate() return, and the script runs in the
# calling process.
import fcntl
import hashlib
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

IDLE_SECONDS = 30
START_TIMEOUT = 120
IMPORT_ENV = ("OMP_", "MKL_", "KMP_", "GOMP_", "OPENBLAS_", "LD_", "PYTHON", "TORCH", "PYTORCH",
              "ATEN_", "CUDA", "MALLOC_", "GLIBC_TUNABLES", "DNNL_", "ONEDNN_", "LANG", "LC_")

IN_CHILD = False  # set in a zygote's child: a script it runs does not delegate again


def socket_path():
    h = hashlib.sha256()
    with open(os.path.abspath(__file__), "rb") as f:
        h.update(f.read())
    h.update(sys.executable.encode())
    try:
        h.update(os.readlink("/proc/self/ns/mnt").encode())
    except OSError:
        pass
    h.update(str(os.getuid()).encode())
    for k in sorted(os.environ):
        if k.startswith(IMPORT_ENV):
            h.update(f"{k}={os.environ[k]}\0".encode())
    return f"/tmp/tt-torch-zygote-{h.hexdigest()[:20]}.sock"


def _connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
        return s
    except OSError:
        s.close()
        return None


def _connect_or_start(path):
    s = _connect(path)
    if s:
        return s
    with open(path + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one caller starts it, the others wait and connect
        s = _connect(path)
        if s:
            return s
        server = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--serve", path],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, start_new_session=True,
                                  close_fds=True)
        deadline = time.time() + START_TIMEOUT
        while time.time() < deadline:
            time.sleep(0.05)
            s = _connect(path)
            if s:
                return s
            if server.poll() is not None:  # it died starting (a broken torch import): no wait
                break
    return None


def delegate(script):
    """Runs `script` (the caller's own __file__) in a fork of the zygote and exits with its code;
    returns when that cannot be done (Note [Torch zygote])."""
    if IN_CHILD or os.environ.get("TT_TORCH_ZYGOTE") == "0" or not hasattr(socket, "send_fds"):
        return
    try:
        s = _connect_or_start(socket_path())
        if s is None:
            return
        request = json.dumps({"script": os.path.abspath(script), "argv": sys.argv,
                              "cwd": os.getcwd(), "env": dict(os.environ)}).encode()
        socket.send_fds(s, [struct.pack("!Q", len(request))], [0, 1, 2])
        s.sendall(request)
        reply = b""
        while not reply.endswith(b"\n"):
            chunk = s.recv(64)
            if not chunk:
                return  # the zygote died before the script ended: run it here
            reply += chunk
        code = int(reply)
    except (OSError, ValueError):
        return
    os._exit(code)  # nothing of this process ran; the child flushed the script's output


def run_script(script):
    """Runs `script` as `python3 script` would in this process; returns its exit code."""
    sys.path[0] = os.path.dirname(script)
    code = 0
    try:
        import runpy
        runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        if e.code is None:
            code = 0
        elif isinstance(e.code, int):
            code = e.code
        else:
            print(e.code, file=sys.stderr)
            code = 1
    except BaseException as e:
        tb = e.__traceback__  # from the script's frame, as the interpreter prints it
        while tb is not None and tb.tb_frame.f_code.co_filename != script:
            tb = tb.tb_next
        if tb is not None:
            e.__traceback__ = tb
        sys.excepthook(type(e), e, e.__traceback__)
        code = 1
    import atexit
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    return code & 0xFF


def _recv_exact(conn, n):
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def _child(conn):
    """In the fork for one request: becomes the caller's script; never returns."""
    global IN_CHILD
    code = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.setpgid(0, 0)
        head, fds, _, _ = socket.recv_fds(conn, 8, 3)
        if len(head) != 8 or len(fds) != 3:
            os._exit(1)
        req = json.loads(_recv_exact(conn, struct.unpack("!Q", head)[0]))
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.environ.clear()
        os.environ.update(req["env"])
        os.chdir(req["cwd"])
        sys.argv = list(req["argv"])

        def watch():  # the caller died: stop everything this request started
            try:
                conn.recv(1)
            except OSError:
                pass
            os.killpg(0, signal.SIGKILL)
        threading.Thread(target=watch, daemon=True).start()
        IN_CHILD = True
        # This file runs as __main__ here: a script's `import torch_zygote` must find this module
        # (IN_CHILD set), not load a fresh copy that would delegate again.
        sys.modules["torch_zygote"] = sys.modules[__name__]
        code = run_script(req["script"])
        conn.sendall(f"{code}\n".encode())
    except BaseException:
        import traceback
        traceback.print_exc()
    finally:
        os._exit(code)


def serve(path):
    import importlib
    importlib.import_module("torch")  # what every child starts from
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    tmp = f"{path}.{os.getpid()}"
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(tmp)
    srv.listen(64)
    os.rename(tmp, path)  # callers connect only once torch is imported
    srv.settimeout(IDLE_SECONDS)
    try:
        while True:
            try:
                conn, _ = srv.accept()
            except socket.timeout:
                break
            conn.settimeout(None)
            if os.fork() == 0:
                srv.close()
                _child(conn)
            conn.close()
    finally:
        try:
            os.unlink(path)  # before closing: a caller that cannot connect starts a new zygote
        except OSError:
            pass
        srv.close()


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "--serve":
    serve(sys.argv[2])
