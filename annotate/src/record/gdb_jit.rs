//! The GDB JIT interface: `record` preloads callgrind-jit's library that
//! reads what JITs register with gdb (gdb-jit/ in this workspace), so
//! numba, LLVM JITs and others are named without writing perf files.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The library's file name.
pub const LIBRARY: &str = "libcallgrind_jit_gdb.so";

/// Where the library is: `$CALLGRIND_JIT_GDB_LIB`, else beside this
/// program (a cargo build), in `../lib` from it (an install prefix), or
/// in the system's library folders (`scripts/install-c.sh`).
pub fn library() -> Option<PathBuf> {
    if let Some(given) = std::env::var_os("CALLGRIND_JIT_GDB_LIB") {
        return Some(PathBuf::from(given));
    }
    let exe = std::env::current_exe().ok()?;
    let beside = exe.parent()?;
    let mut places = vec![beside.to_path_buf(), beside.join("../lib")];
    places.extend(["/usr/local/lib", "/usr/lib"].map(PathBuf::from));
    places
        .into_iter()
        .map(|dir| dir.join(LIBRARY))
        .find(|p| p.is_file())
}

/// Adds `library` to the program's `LD_PRELOAD`, after the user's own.
pub fn preload(cmd: &mut Command, library: &Path) {
    let mut value = OsString::new();
    if let Some(theirs) = std::env::var_os("LD_PRELOAD").filter(|v| !v.is_empty()) {
        value.push(theirs);
        value.push(":");
    }
    value.push(library);
    cmd.env("LD_PRELOAD", value);
}

/// What `record` says when the library is missing.
pub fn missing() -> String {
    format!(
        "the GDB JIT interface is off: {LIBRARY} is not beside this program, in ../lib, \
         /usr/local/lib or /usr/lib (scripts/install-c.sh installs it; CALLGRIND_JIT_GDB_LIB \
         names it); JITs that only tell gdb stay unnamed"
    )
}
