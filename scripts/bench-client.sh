#!/usr/bin/env bash
# jit-client's cost inside the JIT: callgrind's own instruction count of
# cgjit_code_loaded per load (deterministic, unlike time), with live mode
# off and on: for tests/c/live.c (3 functions sharing pages) and for N
# functions each on a page of its own (tests/c/live_many.c). The first
# load also opens the session (about 20,000 once). Then the GDB JIT
# interface's preload on tests/c/gdb_jit.c. Prints a markdown table.
# Not part of CI.
# Usage: scripts/bench-client.sh [N...]   (default: 3 500 10000)
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(3 500 10000)
cargo build --release --locked -q -p jit-client -p callgrind-jit-gdb
dir=$PWD/target/bench/client
rm -rf "$dir"
mkdir -p "$dir"
lib=target/release/libjit_client.a
gcc -O1 -g tests/c/live_many.c -I jit-client/include -I tests/c "$lib" -lpthread -ldl -lm \
  -o "$dir/live_many"
gcc -O1 -g tests/c/live.c -I jit-client/include -I tests/c "$lib" -lpthread -ldl -lm \
  -o "$dir/live"
gcc -O1 -g -fno-pic -fno-asynchronous-unwind-tables -c tests/c/gdb_jit_code.c -o "$dir/code.o"
gcc -O1 -g tests/c/gdb_jit.c -lpthread -o "$dir/gdb_jit"

# How many times PROFILE's code called FUNCTION (default
# cgjit_code_loaded), and the inclusive Ir of those calls: the calls=
# lines of its call sites and the cost lines after them, read from the
# profile itself (callgrind_annotate's inclusive column changes with the
# folder it runs in). Names are compressed to ids.
calls() {
  python3 - "$1" "${2:-cgjit_code_loaded}" <<'PY'
import re, sys
names, callee, n, ir, cost_next = {}, None, 0, 0, False
for line in open(sys.argv[1]):
    if cost_next:
        ir += int(line.split()[1])  # position, then Ir
        cost_next = False
        continue
    m = re.match(r"(c?fn)=\((\d+)\)(?: (.*))?", line.rstrip("\n"))
    if m:
        names.setdefault(m.group(2), m.group(3))
        callee = names[m.group(2)] if m.group(1) == "cfn" else None
    elif line.startswith("calls="):
        if callee == sys.argv[2]:
            n += int(line[6:].split()[0])
            cost_next = True
        callee = None
print(n, ir)
PY
}

# Runs ENV... -- PROGRAM ARG... under callgrind in a fresh folder (its
# jitdump and profile there, parts combined); prints the profile's path.
run() {
  local env=() out
  while [ "$1" != -- ]; do env+=("$1"); shift; done
  shift
  out=$(mktemp -d -p "$dir")
  (cd "$out" && env "${env[@]}" JITDUMPDIR="$out" valgrind --tool=callgrind -q \
     --combine-dumps=yes --callgrind-out-file=callgrind.out.%p "$@" > /dev/null 2>&1)
  local profile
  profile=$(ls "$out"/callgrind.out.*)
  rm -f "/tmp/perf-${profile##*.}.map"
  echo "$profile"
}

# Inclusive Ir of cgjit_code_loaded per call, in a run of ENV... --
# PROGRAM ARG... (jitdump and perf map written, as by default).
per_load() {
  local n ir
  read -r n ir < <(calls "$(run "$@")")
  echo $(( ir / n ))
}

# A row with live mode's cost as a multiple of the plain path's (its
# anchor, measured in the same run).
row() {
  awk -v p="$2" -v l="$3" -v what="$1" 'BEGIN {
    printf "| %s | %d | %d | %.1fx |\n", what, p, l, l / (p > 0 ? p : 1) }'
}

echo "| program | plain (Ir per load) | live mode (Ir per load) | live / plain |"
echo "|---|---|---|---|"
# live.c turns live mode on itself unless told "plain".
plain=$(per_load CALLGRIND_JIT=1 -- "$dir/live" 10 plain)
live=$(per_load CALLGRIND_JIT=1 -- "$dir/live" 10)
row "tests/c/live.c (3 functions, pages shared)" "$plain" "$live"
for n in "${sizes[@]}"; do
  plain=$(per_load CALLGRIND_JIT=1 -- "$dir/live_many" "$n")
  live=$(per_load CALLGRIND_JIT=1 CALLGRIND_JIT_LIVE=1 -- "$dir/live_many" "$n")
  row "live_many $n (a page each)" "$plain" "$live"
done

# The GDB JIT interface's preload: per registration (the object read and
# each of its functions handed to jit-client), and per function the part
# jit-client's session takes (plain path).
profile=$(run LD_PRELOAD="$PWD/target/release/libcallgrind_jit_gdb.so" CALLGRIND_JIT=1 \
  -- "$dir/gdb_jit" "$dir/code.o")
read -r registrations registered < <(calls "$profile" cgjit_gdb_registered)
read -r functions handed < <(calls "$profile" "jit_client::session::Session::code_loaded")
echo
echo "GDB JIT interface preload, tests/c/gdb_jit.c: $registrations registrations," \
  "$(( registered / registrations )) Ir each; $functions functions handed to jit-client," \
  "$(( handed / functions )) Ir each"
echo
echo "valgrind $(valgrind --version), $(uname -r)"
