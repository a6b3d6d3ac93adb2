"""``python3 -m tinytrace ARGS``: runs the tinytrace CLI with the same arguments (and exit code).

    python3 -m tinytrace convert model.pt -o out --input-shape 1,3,224,224
"""
import os
import sys

from ._cli import find_binary
from .errors import BinaryNotFoundError


def main(argv):
    """Replaces this process with ``tinytrace ARGV...``; without a binary prints the error and
    returns 2 (never 1: for ``diff``, 1 means "different").

    >>> import subprocess, sys
    >>> subprocess.run([sys.executable, "-m", "tinytrace", "--version"],
    ...                capture_output=True, text=True).stdout.startswith("tinytrace ")
    True
    """
    try:
        binary = find_binary()
    except BinaryNotFoundError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    sys.stdout.flush()
    os.execv(binary, ["tinytrace", *argv])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
