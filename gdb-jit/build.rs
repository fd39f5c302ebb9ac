//! Compiles the wrapper of `__jit_debug_register_code` (src/wrap.c) with
//! Valgrind's own header, which the `valgrind` package installs.

fn main() {
    println!("cargo:rerun-if-changed=src/wrap.c");
    cc::Build::new()
        .file("src/wrap.c")
        .warnings(true)
        .compile("cgjit_gdb_wrap");
}
