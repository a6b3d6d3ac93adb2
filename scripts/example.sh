#!/usr/bin/env bash
# Sets up, builds, and converts the bundled example model (testdata/models/tiny_cnn.pt, a small
# traced conv/bn/relu/pool/linear net made by scripts/gen_models.py --only example), then runs
# the generated code once. Usage: scripts/example.sh [OUT_DIR]   (default: out/example)
set -euo pipefail
# On a Debian older than 13 this re-runs the script inside the Debian 13 root (scripts/debian13.sh).
source "$(dirname "${BASH_SOURCE[0]}")/debian13.sh"
tt_debian13_reexec "$0" "$@"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$root/out/example}
build_dir=${BUILD_DIR:-$root/build}
model=$root/testdata/models/tiny_cnn.pt

"$root/scripts/setup.sh"
BUILD_DIR=$build_dir "$root/scripts/build.sh"

echo
echo "+ $build_dir/tinytrace convert testdata/models/tiny_cnn.pt -o $out --input-shape 1,3,32,32"
"$build_dir/tinytrace" convert "$model" -o "$out" --input-shape 1,3,32,32

echo
echo "+ /usr/bin/python3 $out/tiny_cnn.py"
/usr/bin/python3 "$out/tiny_cnn.py"

# The Python package (tools/python/tinytrace) on a live module: it traces, runs this build's
# binary and imports the generated class.
echo
echo "+ /usr/bin/python3: tinytrace.convert(a live nn.Module, example input)"
PYTHONPATH=$root/tools/python${PYTHONPATH:+:$PYTHONPATH} TINYTRACE_BIN=$build_dir/tinytrace \
  /usr/bin/python3 -c '
import torch, tinytrace
net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU()).eval()
x = torch.rand(1, 3, 32, 32)
r = tinytrace.convert(net, x)
print(f"class {r.class_name} in {r.python_path.name}, same outputs: {torch.equal(r.module(x), net(x))}")'

# Re-run from a Debian 12 host: torch 2.6 and the binary live in the Debian 13 root.
py=/usr/bin/python3
[[ ${TT_IN_DEBIAN13_ROOT:-} == 1 ]] && py="$root/scripts/debian13.sh run /usr/bin/python3"
cat <<MSG

Outputs are in $out:
  tiny_cnn.py    the model as readable PyTorch code (class TinyCnn)
  tiny_cnn.pth   its weights: TinyCnn().load_state_dict(torch.load("tiny_cnn.pth"), strict=True)
  tiny_cnn.json  the graph report
Run it again:      $py $out/tiny_cnn.py
Check it against the original (outputs, strict state_dict load, pyflakes):
                   $py $root/scripts/check_model.py $out tiny_cnn $model
From Python (README "Python"; debian13.sh puts tools/python on PYTHONPATH):
                   $root/scripts/debian13.sh run /usr/bin/python3 -c "import tinytrace; help(tinytrace)"
MSG
