//! callgrind-jit's library: readers for jitdump and perf map files, the
//! symbol table built from them, and the callgrind profile rewriter that
//! names JIT functions consistently for KCachegrind and callgrind_annotate.
#![warn(missing_docs)]

pub mod callgrind;
pub mod clean;
pub mod code_image;
pub mod command;
pub mod input;
pub mod memory;
pub mod merge;
mod output;
pub mod perfmap;
pub mod record;
pub mod summary;
pub mod symbols;
mod usage;

pub use usage::UsageError;
