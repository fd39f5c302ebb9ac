//! callgrind-jit's library: readers for jitdump and perf map files, the
//! symbol table built from them, and the callgrind profile rewriter that
//! names JIT functions consistently for KCachegrind and callgrind_annotate.
#![warn(missing_docs)]

pub mod callgrind;
pub mod clean;
mod code_image;
pub mod command;
mod input;
mod memory;
mod merge;
mod newlines;
mod output;
mod perfmap;
pub mod record;
pub mod runtimes;
mod summary;
pub mod symbols;
mod usage;

pub use memory::OneLineOnFailure;
pub use usage::UsageError;
