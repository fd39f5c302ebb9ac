#!/usr/bin/env bash
# Mutation testing of the rewrite core: cargo-mutants puts small plausible
# bugs into the meaning-level files of annotate/src/callgrind/ (rewrite/) and runs the
# fast part of the suite (the unit tests, and annotate/tests/fast.rs: the golden cases and the
# oracle) against each. A mutant that survives is a wrong answer no test
# notices: add a test, or write down why it cannot matter.
# Usage: scripts/mutants.sh [FILE...]   (default: rewrite/ and its folders)
# Results: mutants.out/ (missed.txt lists the survivors). Takes about 2 s a mutant.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo-mutants >/dev/null || cargo install --locked cargo-mutants
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  files=(annotate/src/callgrind/rewrite/*.rs annotate/src/callgrind/rewrite/*/*.rs)
fi
args=()
for f in "${files[@]}"; do args+=(-f "$f"); done
cargo mutants -j 1 -p callgrind-jit "${args[@]}" --test-package callgrind-jit -- --lib --test fast
