"""tinytrace from Python: convert live ``nn.Module`` s, prepare them for quantization, inspect,
diff and profile models — the ``tinytrace`` command-line tool underneath (this package runs it;
it converts nothing itself).

>>> import torch, tinytrace
>>> net = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU())
>>> r = tinytrace.convert(net, torch.rand(2, 8))
>>> print(r.python_path.name, r.class_name)
sequential.py Sequential
>>> x = torch.rand(5, 8)
>>> torch.equal(r.module(x), net(x))
True

The binary is found through ``TINYTRACE_BIN``, next to the installed package, on ``PATH``, or in
the checkout's ``build/`` (:func:`find_binary`). ``python3 -m tinytrace ARGS`` runs the CLI.
"""
import importlib

from ._cli import find_binary
from .errors import (BinaryNotFoundError, ConversionError, InternalError, NotAModelError,
                     SystemResourceError, TraceError, UnsupportedError, UsageError,
                     VerifyMismatchError)

# The functions that need torch are imported on first use (PEP 562), so that `python3 -m
# tinytrace` and the error classes do not pay for importing torch (seconds).
_LAZY = {name: "api" for name in ("ConversionResult", "convert", "diff", "inspect",
                                   "prepare_for_quantization", "profile")}

__all__ = [
    "convert", "prepare_for_quantization", "inspect", "diff", "profile", "find_binary",
    "ConversionResult", "ConversionError", "InternalError", "UsageError", "NotAModelError",
    "UnsupportedError", "VerifyMismatchError", "SystemResourceError", "TraceError",
    "BinaryNotFoundError",
]


def __getattr__(name):
    if name in _LAZY:
        value = getattr(importlib.import_module("." + _LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
