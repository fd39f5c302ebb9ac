#!/usr/bin/env bash
# A/B timing of two callgrind-jit binaries on the MoarVM fixture repeated
# to about 500 MB (one part per copy), runs alternated so that both see the
# same machine, beside `dd bs=256K` (a user-space copy) of the same cached
# file. Prints medians; checks the two outputs are byte-identical.
# Usage: scripts/bench-ab.sh OLD_BINARY NEW_BINARY [RUNS]   (default 15)
set -euo pipefail
cd "$(dirname "$0")/.."
old=$1 new=$2 runs=${3:-15}
dir=$PWD/target/bench-ab
mkdir -p "$dir"
profile=$dir/callgrind.out.2422
map=tests/fixtures/moarvm-words/perf-2422.map
if [ ! -f "$profile" ]; then
  one=tests/fixtures/moarvm-words/callgrind.out.2422
  copies=$(( 500 * 1024 * 1024 / $(stat -c %s "$one") ))
  for _ in $(seq "$copies"); do cat "$one"; done > "$profile"
fi
cat "$profile" "$map" > /dev/null   # page cache

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
run() {   # run NAME CMD...: appends the elapsed seconds to NAME.times
  local name=$1; shift
  rm -f "$dir/out"; sync
  /usr/bin/time -f "%e %M" -o "$dir/time.out" "$@" > /dev/null 2>&1
  cat "$dir/time.out" >> "$dir/$name.times"
}
: > "$dir/old.times"; : > "$dir/new.times"; : > "$dir/dd.times"
for i in $(seq "$runs"); do
  # Each run after the same kind of run before it: the order flips.
  if [ $((i % 2)) = 0 ]; then first=old second=new; else first=new second=old; fi
  run $first "${!first}" annotate -q "$profile" "$map" -o "$dir/out"
  run $second "${!second}" annotate -q "$profile" "$map" -o "$dir/out"
  run dd dd if="$profile" of="$dir/out" bs=256K
done
"$old" annotate -q "$profile" "$map" -o "$dir/old.out"
"$new" annotate -q "$profile" "$map" -o "$dir/new.out"
cmp "$dir/old.out" "$dir/new.out" && echo "outputs byte-identical"
size=$(du -m "$profile" | cut -f1)
dd_s=$(cut -d' ' -f1 "$dir/dd.times" | median)
for name in dd old new; do
  s=$(cut -d' ' -f1 "$dir/$name.times" | median)
  printf "%-4s %s s, %sx dd (max RSS %s KiB)\n" "$name" "$s" \
    "$(awk -v s="$s" -v d="$dd_s" 'BEGIN {printf "%.1f", s / (d > 0 ? d : 0.01)}')" \
    "$(cut -d' ' -f2 "$dir/$name.times" | sort -n | tail -n 1)"
done
echo "profile: $size MB; $runs runs each, alternated; $(nproc) cores, $(uname -r)"
rm -f "$dir/out" "$dir/old.out" "$dir/new.out"
