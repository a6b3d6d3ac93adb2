"""`import zygote; zygote.delegate()` as a driver's first lines runs the driver in a fork of a
process that has imported torch already (Note [Torch zygote], scripts/torch_zygote.py); the rest
of the driver is unchanged. Without a zygote (TT_TORCH_ZYGOTE=0, or none can be started) it runs
in its own process."""
import os
import sys

import __main__

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "scripts"))
import torch_zygote  # noqa: E402


def delegate():
    """Runs the main script in a fork of the zygote and exits with its code, or returns."""
    if getattr(__main__, "__file__", None):
        torch_zygote.delegate(__main__.__file__)
