//! The jitdump format (perf's file format for JIT code), in one place for
//! the side that writes it (jit-client, inside a JIT) and the side that
//! reads it (the `callgrind-jit` tool): its layout ([`format`](mod@format)), the
//! records both share (here), an encoder ([`write`](mod@write)) and, with the `read`
//! feature, two readers: [`read`](fn@read), of a file held in memory, and
//! [`scan`], of a file too large to hold. A JIT links only the first
//! three; the readers bring the parser (`nom`).
#![warn(missing_docs)]

#[cfg(feature = "read")]
mod ahead;
#[cfg(feature = "read")]
pub mod aligned;
#[cfg(feature = "read")]
mod body;
#[cfg(feature = "read")]
pub mod file_window;
pub mod format;
#[cfg(feature = "read")]
pub mod read;
#[cfg(feature = "read")]
mod records;
#[cfg(feature = "read")]
pub mod scan;
#[cfg(all(test, feature = "read"))]
mod tests;
pub mod write;

#[cfg(feature = "read")]
pub use read::{
    is_jitdump, read, read_header, Header, Jitdump, Move, Problem, ProblemKind, ReadError, Record,
};

/// A CODE_LOAD record: a function's code placed at an address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodeLoad<'a> {
    /// Process id of the writer.
    pub pid: u32,
    /// Thread that loaded the code.
    pub tid: u32,
    /// Address of the code.
    pub code_addr: u64,
    /// Size of the code in bytes.
    pub code_size: u64,
    /// The writer's unique, increasing id for this load.
    pub code_index: u64,
    /// Function name as written (not necessarily UTF-8; no NUL).
    pub name: &'a [u8],
    /// The code bytes, where the record carries them (jvmti and .NET may
    /// leave them out).
    pub code: Option<&'a [u8]>,
}

/// One DEBUG_INFO entry: the source position of the instructions from
/// `addr` on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DebugEntry<'a> {
    /// Absolute address of the first instruction of this position.
    pub addr: u64,
    /// 1-based source line; 0 = none (jit-client ends a function's last
    /// range with such an entry).
    pub line: u32,
    /// Column + 1 (V8, jit-client; 0 for none), or a DWARF discriminator
    /// (LLVM).
    pub discrim: u32,
    /// Source file name (empty = none; no NUL).
    pub file: &'a [u8],
}
