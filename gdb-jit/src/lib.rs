//! callgrind-jit-gdb: JIT code registered through gdb's JIT interface,
//! told to Valgrind with no change to the JIT.
//!
//! Preloaded (`LD_PRELOAD=libcallgrind_jit_gdb.so valgrind ...`, which
//! `callgrind-jit record` does), it has Valgrind wrap
//! `__jit_debug_register_code` in every object that defines it. At each
//! registration it reads the object the JIT handed to gdb (an ELF with
//! symbols and often DWARF lines) and gives each function to jit-client,
//! as if the JIT had called `code_loaded`: jitdump records with the code
//! and lines, the perf map, and live mode where it is on. An unregistration
//! unloads the entry's functions. Outside Valgrind nothing is wrapped and
//! the library does nothing.

mod descriptor;
mod lines;
mod memory;
mod registry;
mod symfile;

pub use symfile::{functions, Function};

extern "C" {
    fn cgjit_gdb_wrapper_body();
}

/// The wrapper: its name tells Valgrind to run it instead of
/// `__jit_debug_register_code` in any object (`Za`, the soname pattern
/// `*`), even where the symbol is local. The body is C (src/wrap.c).
#[no_mangle]
pub extern "C" fn _vgw00000ZU_Za___jit_debug_register_code() {
    // SAFETY: a C function with no arguments that only issues Valgrind
    // client requests and calls back into `cgjit_gdb_registered`.
    unsafe { cgjit_gdb_wrapper_body() }
}

/// Called by the wrapper before the original runs: the JIT has just
/// updated the descriptor of the object that defines `original`.
#[no_mangle]
pub extern "C" fn cgjit_gdb_registered(original: *const std::ffi::c_void) {
    // A panic must never unwind into the JIT.
    let _ = std::panic::catch_unwind(|| registry::on_registration(original as usize));
}
