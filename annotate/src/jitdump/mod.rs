//! Reading jitdump files (perf's format for JIT code), robustly.
//!
//! The layout numbers come from [`jit_client::jitdump::format`], shared
//! with the writer. [`read`] checks every size against the bytes present,
//! never panics, and turns damage into counted [`Problem`]s: a damaged
//! record is skipped, a truncated tail ends the file.

mod read;

pub use read::{
    is_jitdump, read, DebugEntry, Header, Jitdump, Load, Move, Problem, ProblemKind, ReadError,
    Record,
};
