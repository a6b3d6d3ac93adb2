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
from ._cli import find_binary
from .api import ConversionResult, convert, diff, inspect, prepare_for_quantization, profile
from .errors import (BinaryNotFoundError, ConversionError, InternalError, NotAModelError,
                     TraceError, UnsupportedError, UsageError, VerifyMismatchError)

__all__ = [
    "convert", "prepare_for_quantization", "inspect", "diff", "profile", "find_binary",
    "ConversionResult", "ConversionError", "InternalError", "UsageError", "NotAModelError",
    "UnsupportedError", "VerifyMismatchError", "TraceError", "BinaryNotFoundError",
]
