#!/usr/bin/env bash
# The main job on the built-in demo: build callgrind-jit and the example JIT
# (examples/toyjit, a small language compiled with Cranelift), record it
# under callgrind, annotate, and print its hottest functions with their
# source lines.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo build --release --locked -p annotate -p callgrind-jit-suite --example toyjit
out=target/demo
mkdir -p "$out"
rm -f "$out"/callgrind.out.* "$out"/callgrind.jit.out.* "$out"/jit-*.dump
exec target/release/callgrind-jit record --out-dir "$out" -- \
    target/release/examples/toyjit examples/toyjit/demo.toy examples/toyjit/math.toy
