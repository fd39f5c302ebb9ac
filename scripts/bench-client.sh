#!/usr/bin/env bash
# jit-client's cost inside the JIT: callgrind's own instruction count of
# cgjit_code_loaded per load (deterministic, unlike time), for N functions
# each on a page of its own (tests/c/live_many.c), with live mode off and
# on. Prints a markdown table. Not part of CI.
# Usage: scripts/bench-client.sh [N...]   (default: 3 500 10000)
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(3 500 10000)
cargo build --release --locked -q -p jit-client
dir=$PWD/target/bench/client
mkdir -p "$dir"
gcc -O1 -g tests/c/live_many.c -I jit-client/include -I tests/c \
  target/release/libjit_client.a -lpthread -ldl -lm -o "$dir/live_many"

# Inclusive Ir of cgjit_code_loaded in a run of N loads with ENV, per
# load (jitdump and perf map written, as by default).
per_load() {
  local n=$1; shift
  rm -f "$dir"/callgrind.out.* "$dir"/jit-*.dump
  (cd "$dir" && env "$@" JITDUMPDIR="$dir" valgrind --tool=callgrind -q \
     --callgrind-out-file=callgrind.out.%p ./live_many "$n" > /dev/null 2>&1)
  local profile total
  profile=$(ls "$dir"/callgrind.out.*)
  rm -f "/tmp/perf-${profile##*.}.map"
  total=$(callgrind_annotate --inclusive=yes --auto=no --threshold=100 "$profile" \
    | awk '/cgjit_code_loaded/ {gsub(",", "", $1); print $1; exit}')
  echo $(( total / n ))
}

echo "| functions | plain (Ir per load) | live mode (Ir per load) |"
echo "|---|---|---|"
for n in "${sizes[@]}"; do
  plain=$(per_load "$n" CALLGRIND_JIT=1)
  live=$(per_load "$n" CALLGRIND_JIT=1 CALLGRIND_JIT_LIVE=1)
  echo "| $n | $plain | $live |"
done
echo
echo "valgrind $(valgrind --version), $(uname -r)"
