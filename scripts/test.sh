#!/usr/bin/env bash
# Runs every test of the workspace (the real valgrind and callgrind_annotate
# included), after installing what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo test --workspace --locked "$@"
