#!/usr/bin/env bash
# Installs what building and testing callgrind-jit needs on a fresh Debian
# machine: libclang (crabgrind generates its bindings with bindgen), gcc,
# valgrind, and for the tests perf, pkg-config and the runtimes recorded
# by the suite: rakudo, Erlang, PHP, Mono (and its C# compiler), .NET
# (PyPI's dotnetcore2), Deno and Bun (npm), QEMU's user mode (Debian 12's
# backports), wasmtime's Python binding and numba (the GDB JIT interface
# test). Safe to run again: it installs only what is missing.
set -euo pipefail

need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
have_pkg libclang-dev || need+=(libclang-dev)
command -v perf >/dev/null || need+=(linux-perf)          # the perf inject test
command -v raku >/dev/null || need+=(rakudo)              # the MoarVM test
command -v erl >/dev/null || need+=(erlang-base)          # the Erlang test
command -v pkg-config >/dev/null || need+=(pkg-config)    # install-c.sh's test
command -v php >/dev/null || need+=(php-cli php-opcache)  # the PHP test
command -v mono >/dev/null || need+=(mono-runtime)        # the Mono test
command -v mcs >/dev/null || need+=(mono-mcs)             # compiles the .NET and Mono tests' program
command -v gcc >/dev/null || need+=(gcc)
command -v valgrind >/dev/null || need+=(valgrind)
command -v callgrind_annotate >/dev/null || need+=(valgrind)
command -v python3 >/dev/null || need+=(python3 python3-pip)  # the wasmtime test
for pkg in "$@"; do have_pkg "$pkg" || need+=("$pkg"); done  # extra packages a caller needs

# Python packages the runtime tests use, once python3 is there: wasmtime's
# binding and numba (an LLVM JIT that registers its code with gdb).
pip_install() {
  python3 -c "import $1" 2>/dev/null && return 0
  echo "setup: installing $1 (pip)" >&2
  python3 -m pip install --quiet "$1" 2>/dev/null ||
    python3 -m pip install --quiet --break-system-packages "$1"
}
python_packages() {
  pip_install wasmtime
  pip_install numba
  pip_install dotnetcore2   # .NET Core 3.1's runtime
}

# Runtimes from the npm registry, where npm is there (Node's tests need it).
npm_install() {
  command -v "$1" >/dev/null && return 0
  command -v npm >/dev/null || return 0
  echo "setup: installing $1 (npm)" >&2
  npm install --global --silent "$1" >/dev/null ||
    echo "setup: could not install $1 (npm); its test will be skipped" >&2
}
npm_packages() {
  npm_install deno
  npm_install bun
}

# QEMU's user mode with -jitdump (8.1 and later; Debian 12 ships 7.2 and
# has 10.0 in bookworm-backports), for the QEMU test.
qemu_user() {
  qemu-x86_64 -h 2>/dev/null | grep -q -- -jitdump && return 0
  local codename
  codename=$( (. /etc/os-release && echo "${VERSION_CODENAME:-}") 2>/dev/null)
  if [ "$codename" != bookworm ] || [ "$(id -u)" -ne 0 ]; then
    echo "setup: QEMU 8.1 or later not installed; its test will be skipped" >&2
    return 0
  fi
  echo "setup: installing qemu-user (bookworm-backports)" >&2
  echo "deb http://deb.debian.org/debian bookworm-backports main" \
    > /etc/apt/sources.list.d/callgrind-jit-backports.list
  { apt-get update -qq && apt-get install -y -qq -t bookworm-backports qemu-user >/dev/null; } ||
    echo "setup: could not install qemu-user; its test will be skipped" >&2
}

if [ ${#need[@]} -eq 0 ]; then
  python_packages
  npm_packages
  qemu_user
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
python_packages
npm_packages
qemu_user
