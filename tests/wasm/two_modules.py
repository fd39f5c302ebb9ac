"""Two wasm modules, each with a function named fib: one recursive, one
iterative; each fib calls a small function named helper (the identity),
which its module aligns apart from fib by padding. Usage: python3 two_modules.py jitdump|perfmap|gdb
(wasmtime's Config.profiler; gdb: no profiler, debug_info on, so wasmtime registers each module
with gdb's JIT interface). Prints fib(20) and fib(60)."""
import wasmtime, sys
cfg = wasmtime.Config()
mode = sys.argv[1] if len(sys.argv) > 1 else "jitdump"
if mode == "gdb":
    cfg.debug_info = True
else:
    cfg.profiler = mode
engine = wasmtime.Engine(cfg)
store = wasmtime.Store(engine)
rec = wasmtime.Module(engine, """(module (func $helper (param i32) (result i32) (local.get 0))
  (func $fib (export "fib") (param i32) (result i32)
  (if (result i32) (i32.lt_u (local.get 0) (i32.const 2)) (then (call $helper (local.get 0)))
    (else (i32.add (call $fib (i32.sub (local.get 0) (i32.const 1))) (call $fib (i32.sub (local.get 0) (i32.const 2))))))))""")
it = wasmtime.Module(engine, """(module (func $helper (param i32) (result i32) (local.get 0))
  (func $fib (export "fib") (param i32) (result i32) (local i32 i32 i32)
  (local.set 1 (i32.const 0)) (local.set 2 (i32.const 1))
  (block (loop (br_if 1 (i32.eqz (local.get 0)))
    (local.set 3 (i32.add (local.get 1) (call $helper (local.get 2)))) (local.set 1 (local.get 2)) (local.set 2 (local.get 3))
    (local.set 0 (i32.sub (local.get 0) (i32.const 1))) (br 0)))
  (local.get 1)))""")
a = wasmtime.Instance(store, rec, []).exports(store)["fib"]
b = wasmtime.Instance(store, it, []).exports(store)["fib"]
print(a(store, 20), b(store, 60))
