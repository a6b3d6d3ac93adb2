"""Finding the tinytrace binary and running it: the one place the package starts a process."""
import logging
import os
import shutil
import subprocess

from .errors import BinaryNotFoundError, error_for

PACKAGE_DIR = os.path.dirname(os.path.realpath(__file__))
# tools/python/tinytrace in a checkout: the checkout is three levels up.
CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(PACKAGE_DIR)))

log = logging.getLogger("tinytrace")


def _is_executable(path):
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _installed_binary():
    """The binary `cmake --install` put beside this package (its path relative to the package
    directory is in _installed.py, which only an installed copy has; tools/install.cmake)."""
    try:
        from ._installed import BINARY
    except ImportError:
        return None
    return os.path.normpath(os.path.join(PACKAGE_DIR, BINARY))


def _checkout_binary():
    """build/tinytrace of the checkout this package is in (tools/python/tinytrace), if it is."""
    if not os.path.isfile(os.path.join(CHECKOUT, "tools", "tinytrace.cpp")):
        return None
    return os.path.join(CHECKOUT, "build", "tinytrace")


def find_binary():
    """The path of the ``tinytrace`` binary the package runs.

    Looked for, in order: the ``TINYTRACE_BIN`` environment variable (which must then name an
    executable), the binary installed together with this package (``cmake --install``, the
    ``.deb``: ``PREFIX/bin/tinytrace``), ``tinytrace`` on ``PATH``, and ``build/tinytrace`` of the
    checkout when the package is imported from one (``tools/python``). Raises
    :class:`tinytrace.BinaryNotFoundError` saying how to get one otherwise.

    >>> import os, tinytrace
    >>> os.access(tinytrace.find_binary(), os.X_OK)
    True
    """
    env = os.environ.get("TINYTRACE_BIN")
    if env:
        if _is_executable(env):
            return env
        raise BinaryNotFoundError(
            f"TINYTRACE_BIN={env} is not an executable file — point it at the tinytrace binary "
            "(build/tinytrace in a checkout) or unset it")
    looked = []
    for where, path in (("next to the installed package", _installed_binary()),
                        ("on PATH", shutil.which("tinytrace")),
                        ("in the checkout's build/", _checkout_binary())):
        if path and _is_executable(path):
            return path
        looked.append(f"{where} ({path})" if path else where)
    raise BinaryNotFoundError(
        "cannot find the tinytrace binary (looked in TINYTRACE_BIN, " + ", ".join(looked) +
        ") — build it with scripts/build.sh in the checkout, install it with "
        "'cmake --install build' or the .deb, or set TINYTRACE_BIN=/path/to/tinytrace")


def _log_stderr(text):
    """The CLI's log lines (spdlog's "warning: ...", "info: ...") as records of the "tinytrace"
    logger; error and note lines go into the exception instead."""
    levels = {"warning": logging.WARNING, "info": logging.INFO, "debug": logging.DEBUG,
              "trace": logging.DEBUG}
    for line in text.splitlines():
        level, _, rest = line.partition(": ")
        if level in levels:
            log.log(levels[level], "%s", rest)


def run(args, ok_codes=(0,), names=None):
    """Runs ``tinytrace ARGS``; returns the CompletedProcess (text stdout/stderr) when the exit
    code is one of ``ok_codes``, raises the typed :class:`ConversionError` otherwise (its message
    calls each path of ``names`` by its name there).

    >>> run(["--version"]).stdout.startswith("tinytrace ")
    True
    """
    command = [find_binary(), *[str(a) for a in args]]
    proc = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, errors="replace")
    _log_stderr(proc.stderr)
    if proc.returncode not in ok_codes:
        raise error_for(proc.returncode, proc.stderr, command, names)
    return proc
