#!/usr/bin/env bash
# Installs every Debian package tinytrace needs to build, test and benchmark, and selects
# OpenBLAS as the system BLAS. Safe to run any number of times: it only calls apt when a
# package is missing, and only touches the alternatives when they point elsewhere.
set -euo pipefail
# On a Debian older than 13 this re-runs the script inside the Debian 13 root (scripts/debian13.sh).
source "$(dirname "${BASH_SOURCE[0]}")/debian13.sh"
tt_debian13_reexec "$0" "$@"

PACKAGES=(
  cmake g++ make ccache
  libtorch-dev libcli11-dev nlohmann-json3-dev libspdlog-dev doctest-dev
  libonnx-dev libprotobuf-dev protobuf-compiler
  libssl-dev zlib1g-dev  # libcrypto: the report's sha256; zlib: NAME.pth's CRC-32
  libjemalloc-dev  # the tinytrace executable's malloc (Note [jemalloc] in tools/tinytrace.cpp)
  python3-torch python3-torchvision python3-torchaudio python3-pyflakes python3-jsonschema
  python3-onnx  # torch.onnx.export of torch 2.x needs it (the ONNX test models)
  libopenblas0-pthread graphviz time
  clang libclang-rt-dev  # the suite's sanitize label and scripts/fuzz.sh: ASan, UBSan, libFuzzer
)

# Root runs commands directly (CI is root); anyone else goes through sudo.
if [[ $(id -u) -eq 0 ]]; then
  SUDO=()
elif command -v sudo >/dev/null 2>&1; then
  SUDO=(sudo)
else
  SUDO=()
fi
export DEBIAN_FRONTEND=noninteractive

missing=()
for p in "${PACKAGES[@]}"; do
  # dpkg-query prints "install ok installed" only for a fully installed package.
  if [[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) != "install ok installed" ]]; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 && ${#SUDO[@]} -eq 0 ]]; then
    echo "error: setup.sh: missing packages (${missing[*]}) and not root, no sudo — install them by hand" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}" >&2
  # apt output is noisy; keep it in a log and show it only when something fails.
  log=$(mktemp)
  trap 'rm -f "$log"' EXIT
  if ! "${SUDO[@]}" apt-get update -q >"$log" 2>&1; then
    cat "$log" >&2
    echo "error: setup.sh: apt-get update failed" >&2
    exit 1
  fi
  if ! "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -q --no-install-recommends "${missing[@]}" >"$log" 2>&1; then
    cat "$log" >&2
    echo "error: setup.sh: apt-get install failed" >&2
    exit 1
  fi
  # In the Debian 13 root scripts/debian13.sh made (it has this marker), the downloaded .debs
  # (~500 MB) are of no further use, and a test run needs the disk (Note [Test outputs] in
  # tests/e2e/e2e_outputs.py). A machine of one's own keeps its apt cache.
  if [[ -e /.tinytrace-root-complete ]]; then
    "${SUDO[@]}" apt-get clean
  fi
fi

# Debian's LibTorch links the generic libblas.so.3; the alternatives system decides which
# implementation that is. OpenBLAS (pthread) is ~30x faster on a 1024x1024 matmul than the
# reference BLAS, which matters for the e2e tests and benchmarks.
select_alternative() {
  local name=$1 want=$2
  [[ -e $want ]] || return 0
  local current
  current=$(update-alternatives --query "$name" 2>/dev/null | sed -n 's/^Value: //p')
  if [[ $current != "$want" ]]; then
    if [[ $(id -u) -ne 0 && ${#SUDO[@]} -eq 0 ]]; then
      echo "setup: warning: $name is $current, not OpenBLAS; run as root to select it" >&2
      return 0
    fi
    echo "setup: selecting $want for $name" >&2
    "${SUDO[@]}" update-alternatives --quiet --set "$name" "$want"
  fi
}
arch_dir=/usr/lib/x86_64-linux-gnu
if [[ $(dpkg --print-architecture) == amd64 ]]; then
  select_alternative libblas.so.3-x86_64-linux-gnu "$arch_dir/openblas-pthread/libblas.so.3"
  select_alternative liblapack.so.3-x86_64-linux-gnu "$arch_dir/openblas-pthread/liblapack.so.3"
fi

# The one Python with torch is Debian's; a python3 earlier on PATH (pyenv, venv) may not have it.
if ! /usr/bin/python3 -c 'import torch, torchvision, torchaudio, onnx, pyflakes, jsonschema' >/dev/null 2>&1; then
  echo "error: setup.sh: /usr/bin/python3 cannot import torch/torchvision/torchaudio/onnx/pyflakes/jsonschema" >&2
  exit 1
fi
echo "setup: ok" >&2
