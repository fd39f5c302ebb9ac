#!/usr/bin/env bash
# Symbol files at scale: `callgrind-jit annotate` on a jitdump and on a perf
# map of N functions (default 1,000,000; a profile touches 1,000 of them),
# against `cat` of the same page-cached file, with peak memory. Each file
# twice: its functions loaded in address order, and interleaved from two
# code spaces as V8 and HotSpot load them (annotate/examples/gen_symbols.rs).
# Prints a markdown table of medians. Not part of CI.
# Usage: scripts/bench-symbols.sh [FUNCTIONS]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000000}
runs=7
cargo build --release --locked -q -p callgrind-jit --bin callgrind-jit --example gen_symbols
bin=$PWD/target/release/callgrind-jit
for order in ordered interleaved; do
  dir=$PWD/target/bench/symbols-$n-$order
  [ -f "$dir/callgrind.out.4242" ] || target/release/examples/gen_symbols "$n" 1000 "$dir" "$order"
done
runs_of=(ordered/jit-4242.dump ordered/perf-4242.map interleaved/jit-4242.dump interleaved/perf-4242.map)

# node's own map, renamed for pid 4242, and a profile of 1,000 of its
# ranges (every Nth line's start) called from main
node_dir=$PWD/target/bench/symbols-node
if command -v node > /dev/null; then
  if [ ! -f "$node_dir/callgrind.out.4242" ]; then
    mkdir -p "$node_dir"
    # (in its folder: node leaves an isolate log where it runs)
    (cd "$node_dir" && exec node --perf-basic-prof "$OLDPWD/annotate/examples/many_functions.js" > /dev/null) &
    pid=$!
    wait "$pid"
    mv "/tmp/perf-$pid.map" "$node_dir/perf-4242.map"
    awk -v step="$(( $(wc -l < "$node_dir/perf-4242.map") / 1000 ))" '
      BEGIN { print "# callgrind format\nversion: 1\npid: 4242\ncmd: node\npart: 1\n\npositions: instr line\nevents: Ir\n" }
      NR % step == 0 && n < 1000 {
        n++; addr = sprintf("%16s", $1); gsub(/ /, "0", addr)
        printf "ob=???\nfl=???\nfn=0x%s\n0x%s 0 7\n\n", addr, $1
      }
      END { print "totals: " n * 7 }' "$node_dir/perf-4242.map" > "$node_dir/callgrind.out.4242"
  fi
  runs_of+=(node/perf-4242.map)
fi

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# seconds of each of N runs of CMD, one a line, to the microsecond by
# bash's clock (/usr/bin/time rounds to 10 ms, a quarter of the perf
# map's figure; `date` would add a process to each)
time_runs() {
  local n=$1
  shift
  for _ in $(seq "$n"); do
    local t0=$EPOCHREALTIME
    "$@" > /dev/null
    awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.6f\n", b - a}'
  done
}

echo "| symbol file | load order | size | cat | annotate | annotate / cat | annotate max RSS |"
echo "|---|---|---|---|---|---|---|"
for run in "${runs_of[@]}"; do
  order=${run%/*} f=${run#*/}
  dir=$PWD/target/bench/symbols-$n-$order
  [ "$order" = node ] && dir=$node_dir
  cat "$dir/$f" > /dev/null   # page cache
  cat_s=$(time_runs 21 cat "$dir/$f" | median)
  an_s=$(time_runs "$runs" "$bin" annotate -q "$dir/callgrind.out.4242" "$dir/$f" -o "$dir/out" | median)
  rss=$( { /usr/bin/time -f "%M" "$bin" annotate -q "$dir/callgrind.out.4242" "$dir/$f" -o "$dir/out"; } 2>&1 | tail -n 1)
  mb=$(du -m "$dir/$f" | cut -f1)
  awk -v f="$f" -v o="$order" -v mb="$mb" -v c="$cat_s" -v a="$an_s" -v kb="$rss" 'BEGIN {
    printf "| %s | %s | %d MB | %.3f s | %.3f s | %.1fx | %.1f MiB |\n", f, o, mb, c, a, a / (c > 0 ? c : 0.001), kb / 1024 }'
done
echo
echo "functions: $n, touched: 1000; machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -r); medians of $runs runs (cat: 21)"
