#!/usr/bin/env bash
# The main job on the built-in demo: build callgrind-jit and the example JIT,
# record the JIT under callgrind, annotate, print the hottest JIT functions.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo build --release --locked -p annotate -p jit-client
out=target/demo
mkdir -p "$out"
gcc -O1 -g examples/c/demo.c -Ijit-client/include target/release/libjit_client.a \
    -lpthread -ldl -lm -o "$out/c-demo"
rm -f "$out"/callgrind.out.* "$out"/callgrind.jit.out.* "$out"/jit-*.dump
exec target/release/callgrind-jit record --out-dir "$out" -- "$out/c-demo" 1000
