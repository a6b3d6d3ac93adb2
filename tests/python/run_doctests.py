#!/usr/bin/python3
"""run_doctests.py: the docstring examples of the tinytrace Python package, run as doctests.

    run_doctests.py WORK_DIR

Every public name of the package (``tinytrace.__all__``, and the public methods of its classes)
must have a docstring with an example (``>>>``), and every example in the package's modules must
pass: they convert real (small) models with the CLI that TINYTRACE_BIN names. Runs in WORK_DIR,
so files an example writes stay out of the checkout. One OK line, or FAIL lines and exit 1.
"""
import doctest
import importlib
import inspect
import os
import pkgutil
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "tools", "python"))
import tinytrace  # noqa: E402


def public_objects():
    """(qualified name, object) of every public function, class and public method."""
    for name in tinytrace.__all__:
        obj = getattr(tinytrace, name)
        yield f"tinytrace.{name}", obj
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if not attr.startswith("_") and inspect.isfunction(member):
                    yield f"tinytrace.{name}.{attr}", member


def main():
    if len(sys.argv) != 2:
        print("usage: run_doctests.py WORK_DIR", file=sys.stderr)
        return 2
    os.makedirs(sys.argv[1], exist_ok=True)
    os.chdir(sys.argv[1])
    # Subprocesses the examples start (python3 -m tinytrace) import the same package.
    os.environ["PYTHONPATH"] = os.path.join(REPO, "tools", "python")
    problems = [f"{qual} has no docstring with an example (>>>)"
                for qual, obj in public_objects() if ">>>" not in (inspect.getdoc(obj) or "")]
    modules = [tinytrace] + [importlib.import_module(f"tinytrace.{m.name}")
                             for m in pkgutil.iter_modules(tinytrace.__path__)]
    tried = 0
    for module in modules:
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        tried += result.attempted
        if result.failed:
            problems.append(f"{module.__name__}: {result.failed} of {result.attempted} examples "
                            "failed (above)")
    for p in problems:
        print(f"FAIL: {p}")
    if problems:
        return 1
    print(f"OK: {tried} examples in {len(modules)} modules pass; every public name has one")
    return 0


if __name__ == "__main__":
    sys.exit(main())
