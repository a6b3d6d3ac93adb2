"""The exceptions of the tinytrace package.

A failing ``tinytrace`` command raises a :class:`ConversionError`, typed by the CLI's exit code
(README "Usage", DESIGN.md section 1); its message is the CLI's own error line and notes:

    ====  ==========================  ===============================================
    exit  exception                   meaning
    ====  ==========================  ===============================================
    1     :class:`InternalError`      a bug in tinytrace
    2     :class:`UsageError`         bad arguments (an unknown pass, a bad name, ...)
    3     :class:`NotAModelError`     the input cannot be read or is not a model
    4     :class:`UnsupportedError`   the model uses something tinytrace cannot convert
    5     :class:`VerifyMismatchError` ``verify=True`` found outputs that differ
    ====  ==========================  ===============================================

:class:`TraceError` says that ``torch.jit.trace``/``torch.jit.script`` failed on a live module
before the CLI ran, and :class:`BinaryNotFoundError` that there is no ``tinytrace`` binary to run.
"""


class ConversionError(Exception):
    """A tinytrace command failed; ``str(e)`` is the CLI's ``error:`` line and its ``note:`` lines.

    Attributes: ``returncode`` (the CLI's exit code, None when the CLI did not run), ``error``
    (the ``error:`` line), ``notes`` (the ``note:`` lines), ``stderr`` (everything the CLI
    logged) and ``command`` (the argument list that was run).

    >>> import tinytrace
    >>> try:
    ...     tinytrace.convert("/nonexistent/model.pt")
    ... except tinytrace.ConversionError as e:
    ...     print(type(e).__name__, e.returncode, e.error.startswith("error: /nonexistent/model.pt"))
    NotAModelError 3 True
    """

    returncode_of_class = None  # the exit code a subclass stands for

    def __init__(self, message, *, returncode=None, stderr="", command=()):
        super().__init__(message)
        self.returncode = returncode
        self.stderr = stderr
        self.command = list(command)
        lines = message.splitlines()
        self.error = lines[0] if lines else ""
        self.notes = [line[len("note: "):] for line in lines[1:] if line.startswith("note: ")]


class InternalError(ConversionError):
    """Exit 1: a bug in tinytrace (please report it with the model).

    >>> issubclass(InternalError, ConversionError)
    True
    """

    returncode_of_class = 1


class UsageError(ConversionError):
    """Exit 2: bad arguments, e.g. an unknown pass name or a name that is not an identifier.

    >>> import torch, tinytrace
    >>> try:
    ...     tinytrace.convert(torch.nn.ReLU(), torch.rand(2), passes="no-such-pass")
    ... except tinytrace.UsageError as e:
    ...     print(e.returncode, "no-such-pass" in e.error)
    2 True
    """

    returncode_of_class = 2


class NotAModelError(ConversionError):
    """Exit 3: the input cannot be read or is not a model (empty, a state_dict, a directory, ...).

    >>> import tinytrace
    >>> try:
    ...     tinytrace.inspect("/nonexistent/model.pt")
    ... except tinytrace.NotAModelError as e:
    ...     print(e.returncode)
    3
    """

    returncode_of_class = 3


class UnsupportedError(ConversionError):
    """Exit 4: the model uses something tinytrace cannot convert; the message names the op and
    where it is.

    >>> issubclass(UnsupportedError, ConversionError)
    True
    """

    returncode_of_class = 4


class VerifyMismatchError(ConversionError):
    """Exit 5: ``verify=True`` found outputs that differ beyond the tolerance.

    >>> issubclass(VerifyMismatchError, ConversionError)
    True
    """

    returncode_of_class = 5


class SystemResourceError(ConversionError):
    """Exit 6: the system failed the run — out of memory, or an output that cannot be written (full
    disk, read-only or removed output directory). Nothing is left behind; the same call succeeds
    once the system is fixed.

    >>> issubclass(SystemResourceError, ConversionError)
    True
    """

    returncode_of_class = 6


class TraceError(ConversionError):
    """``torch.jit.trace`` (or ``torch.jit.script`` with ``script=True``) failed on the live module,
    so the CLI never ran; the cause is chained (``e.__cause__``).

    >>> import torch, tinytrace
    >>> class Odd(torch.nn.Module):
    ...     def forward(self, x):
    ...         return {1, 2}  # a set: neither traceable nor scriptable
    >>> try:
    ...     tinytrace.convert(Odd(), torch.rand(2))
    ... except tinytrace.TraceError as e:
    ...     print(e.error.split(":")[0], e.returncode)
    error None
    """


class BinaryNotFoundError(RuntimeError):
    """There is no ``tinytrace`` binary to run: not in ``TINYTRACE_BIN``, not next to the installed
    package, not on ``PATH``, not in the checkout's ``build/``. The message says how to get one.

    >>> issubclass(BinaryNotFoundError, RuntimeError)
    True
    """


_BY_CODE = {cls.returncode_of_class: cls for cls in
            (InternalError, UsageError, NotAModelError, UnsupportedError, VerifyMismatchError,
             SystemResourceError)}


def error_for(returncode, stderr, command, names=None):
    """The exception for a failed CLI run: its class from the exit code, its message the
    ``error:`` line and the ``note:`` lines after it, with each path in ``names`` replaced by its
    name there (a live module's temporary archive by the module's class).

    >>> e = error_for(4, "warning: x\\nerror: m.pt: aten::foo — no\\nnote: at %y\\n", ["convert"])
    >>> type(e).__name__, str(e), e.notes
    ('UnsupportedError', 'error: m.pt: aten::foo — no\\nnote: at %y', ['at %y'])
    """
    lines = stderr.splitlines()
    first = next((i for i, line in enumerate(lines) if line.startswith("error: ")), None)
    if first is not None:
        kept = [lines[first]] + [line for line in lines[first + 1:] if line.startswith("note: ")]
        message = "\n".join(kept)
    elif returncode < 0:
        message = f"error: tinytrace was killed by signal {-returncode}"
    else:
        tail = "\n".join("note: " + line for line in lines[-5:])
        message = (f"error: tinytrace exited with code {returncode} without an error line — "
                   f"this is a bug in tinytrace; please report it" + ("\n" + tail if tail else ""))
    for path, name in (names or {}).items():
        message = message.replace(path, name)
    cls = _BY_CODE.get(returncode, ConversionError)
    return cls(message, returncode=returncode, stderr=stderr, command=command)
