#!/usr/bin/env bash
# Runs every test of the workspace (the real valgrind, callgrind_annotate,
# perf and rakudo included), after installing what is missing. A test that
# cannot run here (no root for mknod, chown or mount) fails in CI and is
# listed at the end elsewhere.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
rm -rf target/it-skipped
cargo test --workspace --locked "$@"
if [ -d target/it-skipped ]; then
  echo "skipped, for want of a privilege or a tool:"
  for note in target/it-skipped/*; do
    echo "  $(basename "$note"): $(cat "$note")"
  done
fi
