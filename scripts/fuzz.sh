#!/usr/bin/env bash
# Fuzzes annotate's three parsers with libFuzzer (cargo fuzz, nightly
# toolchain), seeded from the test fixtures. Not part of CI.
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]   (default 600 s, all targets)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(callgrind jitdump perfmap)
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz
fx=tests/fixtures
corpus=annotate/fuzz/corpus
mkdir -p "$corpus"/{callgrind,jitdump,perfmap}
# Seeds: whole small fixtures, and the first 64 KiB of the large ones.
for f in $fx/c-demo/callgrind.out.* $fx/c-demo-variants/*.callgrind.out.* $fx/c-demo-parts/combined.out.*; do
  cp "$f" "$corpus/callgrind/$(basename "$f")"
done
for f in $fx/moarvm-words/callgrind.out.* $fx/rakudo-fib/callgrind.out.*; do
  head -c 65536 "$f" > "$corpus/callgrind/head-$(basename "$f")"
done
cp $fx/c-demo/jit-*.dump $fx/c-demo-variants/jit-*.dump "$corpus/jitdump/"
gzip -dc $fx/node-fib/jit-13064.dump.gz > "$corpus/jitdump/node.dump"
truncate -s 262144 "$corpus/jitdump/node.dump"
cp $fx/*/perf-*.map "$corpus/perfmap/"
cd annotate
for t in "${targets[@]}"; do
  echo "== fuzzing $t for ${seconds}s"
  cargo +nightly fuzz run "$t" "fuzz/corpus/$t" -- -max_total_time="$seconds" -max_len=1048576 \
      -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 2>&1 | tail -n 25
done
