#!/usr/bin/env bash
# Fuzzes annotate's three parsers with libFuzzer (cargo fuzz), seeded from
# the test fixtures. Not part of CI. Every target runs to the end, whatever
# it finds: each finding (crash, timeout, out of memory, sanitizer report)
# is kept as an input under annotate/fuzz/artifacts/TARGET/, with the full
# report of running it again beside it (FINDING.report), and each target's
# whole log under target/fuzz-logs/TARGET.log.
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]   (default 600 s, all targets)
# Exit status: 0 if nothing was found, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(callgrind jitdump perfmap)
command -v cargo-fuzz >/dev/null || cargo install --locked cargo-fuzz || exit 1
# cargo fuzz needs nightly features: the nightly toolchain if there is one,
# else the installed toolchain with them unlocked.
if cargo +nightly --version >/dev/null 2>&1; then
  fuzz=(cargo +nightly fuzz)
else
  fuzz=(env RUSTC_BOOTSTRAP=1 cargo fuzz)
fi

fx=tests/fixtures
corpus=annotate/fuzz/corpus
logs=$PWD/target/fuzz-logs
mkdir -p "$corpus"/{callgrind,jitdump,perfmap} "$logs"
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
found=0
summary=()
for t in "${targets[@]}"; do
  artifacts=fuzz/artifacts/$t
  mkdir -p "$artifacts"
  touch "$logs/.$t.start"
  echo "== fuzzing $t for ${seconds}s (log: $logs/$t.log)"
  # Fork mode goes on past every crash, timeout and out-of-memory input.
  "${fuzz[@]}" run "$t" "fuzz/corpus/$t" -- -max_total_time="$seconds" -max_len=1048576 \
      -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
      -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
      -artifact_prefix="$artifacts/" > "$logs/$t.log" 2>&1
  status=$?
  # Fork mode's job logs are temporary: replay each new finding for its report.
  new=0
  while IFS= read -r finding; do
    new=$((new + 1))
    "${fuzz[@]}" run "$t" "$finding" -- -runs=1 -rss_limit_mb=2048 -timeout=10 \
        > "$finding.report" 2>&1
  done < <(find "$artifacts" -type f ! -name '*.report' -newer "$logs/.$t.start")
  if [ "$new" -gt 0 ] || [ "$status" -ne 0 ]; then found=1; fi
  summary+=("$t: exit $status, $new new findings in annotate/$artifacts/ (each with a .report)")
done
echo "== summary"
printf '%s\n' "${summary[@]}"
exit $found
