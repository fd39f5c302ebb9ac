#!/usr/bin/env bash
# Side-by-side timing of `callgrind-jit annotate` against `cp` and a naive
# `sed -E` rename of the same page-cached profile, at two sizes, with peak
# memory. Prints a markdown table of medians. Not part of CI.
# Usage: scripts/bench-annotate.sh [SIZES_MB...]   (default: 50 500)
# CALL_JIT_PERCENT=73 gives the JIT-call-heavy variant (default 15, as in
# the real MoarVM profile).
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(50 500)
runs=5
calls=${CALL_JIT_PERCENT:-15}
cargo build --release --locked -q -p callgrind-jit --bin callgrind-jit --example gen_profile
bin=$PWD/target/release/callgrind-jit
dir=$PWD/target/bench
mkdir -p "$dir"

# median of the numbers on stdin
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# time_it NAME OUT CMD...: prints "seconds maxrss_kb" per run into
# $dir/NAME.times. OUT, the file CMD writes, is removed first: freeing the
# blocks of a 500 MB file takes longer than copying one, and would be
# timed as part of CMD otherwise.
time_it() {
  local name=$1 out=$2; shift 2
  : > "$dir/$name.times"
  for _ in $(seq $runs); do
    rm -f "$out"
    sync   # earlier runs' dirty pages would throttle this one
    /usr/bin/time -f "%e %M" -o "$dir/time.out" "$@" > /dev/null
    cat "$dir/time.out" >> "$dir/$name.times"
  done
}

echo "| profile | cp | sed -E rename | callgrind-jit annotate | annotate / cp | sed / annotate | annotate max RSS |"
echo "|---|---|---|---|---|---|---|"
for mb in "${sizes[@]}"; do
  d=$dir/$mb-$calls
  [ -f "$d/callgrind.out.4242" ] || target/release/examples/gen_profile "$mb" "$d" 10 "$calls" > /dev/null
  cat "$d/callgrind.out.4242" "$d/jit-4242.dump" > /dev/null   # page cache
  time_it cp "$d/copy.out" cp "$d/callgrind.out.4242" "$d/copy.out"
  time_it sed "$d/sed.out" sed -E -e 's/^fn=\(([0-9]+)\) 0x00000000400.*/fn=(\1) renamed/' -e 'w '"$d/sed.out" "$d/callgrind.out.4242"
  time_it annotate "$d/annotated.out" "$bin" annotate -q "$d/callgrind.out.4242" "$d/jit-4242.dump" -o "$d/annotated.out"
  cp_s=$(cut -d' ' -f1 "$dir/cp.times" | median)
  sed_s=$(cut -d' ' -f1 "$dir/sed.times" | median)
  an_s=$(cut -d' ' -f1 "$dir/annotate.times" | median)
  an_kb=$(cut -d' ' -f2 "$dir/annotate.times" | sort -n | tail -n 1)
  size=$(du -m "$d/callgrind.out.4242" | cut -f1)
  awk -v size="$size" -v c="$cp_s" -v s="$sed_s" -v a="$an_s" -v kb="$an_kb" 'BEGIN {
    printf "| %d MB | %.2f s | %.2f s | %.2f s | %.1fx | %.1fx | %.1f MiB |\n", size, c, s, a, a / (c > 0 ? c : 0.01), s / a, kb / 1024 }'
  rm -f "$d/copy.out" "$d/sed.out" "$d/annotated.out"
done
echo
echo "calls into JIT code: $calls%; machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -r); medians of $runs runs"
