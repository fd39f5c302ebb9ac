#!/usr/bin/env bash
# Installs what building and testing callgrind-jit needs on a fresh Debian
# machine: libclang (crabgrind generates its bindings with bindgen), gcc,
# valgrind, and for the tests perf, rakudo and pkg-config. Safe to run
# again: it installs only what is missing.
set -euo pipefail

need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
have_pkg libclang-dev || need+=(libclang-dev)
command -v perf >/dev/null || need+=(linux-perf)          # the perf inject test
command -v raku >/dev/null || need+=(rakudo)              # the MoarVM test
command -v pkg-config >/dev/null || need+=(pkg-config)    # install-c.sh's test
command -v gcc >/dev/null || need+=(gcc)
command -v valgrind >/dev/null || need+=(valgrind)
command -v callgrind_annotate >/dev/null || need+=(valgrind)
for pkg in "$@"; do have_pkg "$pkg" || need+=("$pkg"); done  # extra packages a caller needs

if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
echo "setup: installing ${need[*]}" >&2
if [ "$(id -u)" -eq 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null; then
  SUDO="sudo"
else
  echo "setup: please install as root: apt-get install -y ${need[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq "${need[@]}" >/dev/null
