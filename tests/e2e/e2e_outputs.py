"""What a passing test leaves on disk: nothing (Note [Test outputs]).

Note [Test outputs]
Every end-to-end test writes to a directory of its own under build/ (NAME.py, NAME.pth,
NAME.json, a generated NAME.pt, ...). On a full run these add up to gigabytes (the weights of the
torchvision, detection and ONNX models, written once per mode), and the suite once failed with
"No space left on device" on a CI machine with little disk. So a test removes its directory when
it passes, as its last step; a failing test keeps it, for the rerun command test.sh prints.
TT_KEEP_OUTPUTS=1 keeps the outputs of passing tests too (to read what a conversion wrote):

    TT_KEEP_OUTPUTS=1 ctest --test-dir build -R e2e_resnet18
"""
import os
import shutil

KEEP_VAR = "TT_KEEP_OUTPUTS"


def keep():
    return os.environ.get(KEEP_VAR, "") not in ("", "0")


def passed(*dirs):
    """The test passed: removes its output directories (unless TT_KEEP_OUTPUTS=1); returns 0, the
    exit status, so that `return passed(out_dir)` ends a main()."""
    if not keep():
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)
    return 0


def kept_env():
    """The environment for a driver run by another one that reads its outputs afterwards
    (check_export.py runs run_convert.py): that driver keeps them, the caller removes them."""
    return dict(os.environ, **{KEEP_VAR: "1"})
