#!/usr/bin/env bash
# tinytrace builds and tests against Debian 13 (trixie): LibTorch/PyTorch 2.6, torchvision 0.21,
# torchaudio 2.6, ONNX 1.17. On a Debian 13 system everything runs natively. On an older Debian
# (12, bookworm: these machines and CI) the scripts run inside a Debian 13 root instead:
#
#   .debian13-root/        (git-ignored, in the checkout) a minimal Debian 13 made once with
#                          debootstrap (~30 s) plus the packages scripts/setup.sh installs in it
#                          (~1 min); every later run reuses it. Delete the folder to start afresh.
#   inside it              the checkout is bind-mounted at its own path, so build/ and every path
#                          printed inside are the same paths outside; /proc, /dev and /sys are
#                          mounted in a private mount namespace (unshare), so nothing stays
#                          mounted after the command ends. ccache's cache lives in the root.
#
# Used two ways:
#   source scripts/debian13.sh; tt_debian13_reexec "$0" "$@"
#       at the top of setup.sh/build.sh/test.sh/example.sh: on Debian 13 it returns at once;
#       elsewhere it creates the root when missing and re-runs the calling script inside it.
#   scripts/debian13.sh run CMD [ARGS...]    run one command inside the root (from the checkout),
#                                            e.g. scripts/debian13.sh run build/tinytrace --help
#   scripts/debian13.sh shell                an interactive shell inside the root
#
# Both (and the re-run scripts) put the checkout's Python package on PYTHONPATH
# (tools/python: `import tinytrace`, `python3 -m tinytrace`, which run build/tinytrace), also on
# Debian 13 itself; nothing is installed into the root for that.
#
# TT_DEBIAN13_ROOT moves the root elsewhere; TT_DEBIAN_MIRROR picks the mirror
# (default http://deb.debian.org/debian). Needs root (or sudo) on the host: debootstrap, unshare
# and chroot do.

TT_CHECKOUT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TT_DEBIAN13_ROOT=${TT_DEBIAN13_ROOT:-$TT_CHECKOUT/.debian13-root}
TT_DEBIAN_MIRROR=${TT_DEBIAN_MIRROR:-http://deb.debian.org/debian}

# True on Debian 13 or later (natively, or already inside the root).
tt_is_debian13() {
  local id="" version=""
  if [[ -r /etc/os-release ]]; then
    id=$(. /etc/os-release && echo "${ID:-}")
    version=$(. /etc/os-release && echo "${VERSION_ID:-}")
  fi
  [[ $id == debian && -n $version && ${version%%.*} -ge 13 ]] && return 0
  # Debian testing/sid have no VERSION_ID; their debian_version names trixie or later.
  [[ $id == debian && -z $version ]] && grep -qE '^(trixie|forky|duke|sid)' /etc/debian_version 2>/dev/null
}

tt_debian13_die() {
  echo "error: debian13.sh: $*" >&2
  exit 1
}

# Runs "$@" as root: directly when root, else through sudo.
tt_as_root() {
  if [[ $(id -u) -eq 0 ]]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    tt_debian13_die "this needs root (debootstrap, unshare, chroot) and there is no sudo — run as root"
  fi
}

# Creates the Debian 13 root when it is missing (or a previous attempt was interrupted).
tt_debian13_ensure_root() {
  local r=$TT_DEBIAN13_ROOT
  [[ -f $r/.tinytrace-root-complete ]] && return 0
  if ! command -v debootstrap >/dev/null 2>&1 && [[ ! -x /usr/sbin/debootstrap ]]; then
    echo "debian13: installing debootstrap on the host" >&2
    tt_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >/dev/null ||
      { tt_as_root apt-get update -q >/dev/null && tt_as_root env DEBIAN_FRONTEND=noninteractive \
          apt-get install -y -q debootstrap >/dev/null; } ||
      tt_debian13_die "cannot install debootstrap on the host (apt-get install debootstrap)"
  fi
  local tmp=$r.partial
  tt_as_root rm -rf "$tmp"
  echo "debian13: creating a Debian 13 (trixie) root in $r with debootstrap (about 30 s)" >&2
  local log
  log=$(mktemp)
  if ! tt_as_root env PATH="/usr/sbin:/sbin:$PATH" debootstrap --variant=minbase trixie "$tmp" \
      "$TT_DEBIAN_MIRROR" >"$log" 2>&1; then
    tail -20 "$log" >&2
    rm -f "$log"
    tt_as_root rm -rf "$tmp"
    tt_debian13_die "debootstrap of Debian 13 from $TT_DEBIAN_MIRROR failed (log above)"
  fi
  rm -f "$log"
  echo "deb $TT_DEBIAN_MIRROR trixie main" | tt_as_root tee "$tmp/etc/apt/sources.list" >/dev/null
  tt_as_root touch "$tmp/.tinytrace-root-complete"
  tt_as_root mv "$tmp" "$r"
}

# Runs "$@" inside the root, in the current directory (which must be inside the checkout), with
# a clean environment plus the variables the scripts and CTest read.
tt_debian13_exec() {
  tt_debian13_ensure_root
  local cwd=$PWD
  case $cwd/ in
    "$TT_CHECKOUT"/*) ;;
    *) cwd=$TT_CHECKOUT ;;
  esac
  local -a envs=(HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
                 LANG=C.UTF-8 TT_IN_DEBIAN13_ROOT=1 PYTHONPATH=$TT_CHECKOUT/tools/python)
  # The command sees a clean environment plus the variables that steer the scripts: the build's,
  # ctest's, the benchmarks' (BENCH_*, SIZES, ...), the fuzzer's and sanitizers', ccache's and
  # tinytrace's own TT_* (except the ones describing the root, set above or on the host only).
  local v
  for v in $(compgen -e); do
    case $v in
      TT_DEBIAN13_ROOT | TT_DEBIAN_MIRROR | TT_CHECKOUT | TT_IN_DEBIAN13_ROOT) continue ;;
      TERM | CI | BUILD_DIR | SOURCE_DATE_EPOCH | http_proxy | https_proxy | no_proxy) ;;
      TT_* | CTEST_* | CCACHE_* | BENCH_* | SIZES | FANOUT_SIZES | DEEP | DEEP_REPS | FUZZ_ENGINE) ;;
      JIT_LOAD_FLOOR | TINYTRACE | ASAN_OPTIONS | UBSAN_OPTIONS | LSAN_OPTIONS) ;;
      *) continue ;;
    esac
    envs+=("$v=${!v}")
  done
  # The mount namespace is private: the mounts vanish with the command, nothing to clean up.
  tt_as_root unshare --mount --propagation private -- /bin/bash -c '
    set -e
    r=$1 checkout=$2 cwd=$3; shift 3
    mount -t proc proc "$r/proc"
    mount --rbind /dev "$r/dev"
    mount --rbind /sys "$r/sys" 2>/dev/null || true  # cpu topology for torch; optional
    mkdir -p "$r$checkout"
    mount --bind "$checkout" "$r$checkout"
    cp -L /etc/resolv.conf "$r/etc/resolv.conf" 2>/dev/null || true
    exec chroot "$r" /bin/bash -c "cd \"\$1\" && shift && exec \"\$@\"" bash "$cwd" "$@"
  ' bash "$TT_DEBIAN13_ROOT" "$TT_CHECKOUT" "$cwd" /usr/bin/env -i "${envs[@]}" "$@"
}

# At the top of a script: tt_debian13_reexec "$0" "$@". Returns on Debian 13; elsewhere runs the
# script inside the root and exits with its status.
tt_debian13_reexec() {
  tt_is_debian13 && return 0
  local script
  script=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
  shift
  if [[ ! -r /etc/debian_version ]]; then
    tt_debian13_die "this is not Debian; tinytrace needs Debian 13 (or a Debian host to make a Debian 13 root on)"
  fi
  tt_debian13_exec /bin/bash "$script" "$@"
  exit $?
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  set -euo pipefail
  # On Debian 13 run/shell exec directly: the same PYTHONPATH as inside the root.
  export PYTHONPATH=$TT_CHECKOUT/tools/python${PYTHONPATH:+:$PYTHONPATH}
  case ${1:-} in
    run)
      shift
      [[ $# -gt 0 ]] || tt_debian13_die "usage: scripts/debian13.sh run CMD [ARGS...]"
      if tt_is_debian13; then exec "$@"; fi
      tt_debian13_exec "$@"
      ;;
    shell)
      if tt_is_debian13; then exec /bin/bash -i; fi
      tt_debian13_exec /bin/bash -i
      ;;
    *)
      echo "usage: scripts/debian13.sh run CMD [ARGS...] | shell   (see the comment at the top)" >&2
      exit 2
      ;;
  esac
fi
