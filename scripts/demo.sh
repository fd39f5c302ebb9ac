#!/usr/bin/env bash
# The main job on the built-in demo: build callgrind-jit and the example JIT
# (examples/toyjit, a small language compiled with Cranelift), record it
# under callgrind, annotate, and print its hottest functions with their
# source lines. Exits non-zero if any step fails or no JIT function is named.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo build --release --locked -p callgrind-jit --bin callgrind-jit
cargo build --release --locked -p callgrind-jit-suite --example toyjit
out=target/demo
mkdir -p "$out"
rm -f "$out"/callgrind.out.* "$out"/callgrind.jit.out.* "$out"/jit-*.dump
# record prints its summary and the hottest list on stderr; keep a copy to
# check that the JIT's functions were named. A pipeline, not a process
# substitution: the check below must not run before tee has written the
# copy (it once did, and the demo failed with the list on the screen).
{ target/release/callgrind-jit record --out-dir "$out" -- \
    target/release/examples/toyjit examples/toyjit/demo.toy examples/toyjit/math.toy \
    2>&1 1>&3 3>&- | tee "$out/record.log" >&2; } 3>&1
if ! grep -q "hottest JIT functions" "$out/record.log"; then
  echo "demo: no JIT function was named (see $out/record.log)" >&2
  exit 1
fi
