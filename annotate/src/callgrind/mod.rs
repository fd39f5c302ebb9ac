//! The callgrind profile format: reading it line by line and rewriting it
//! with JIT functions named (see `rewrite` for the approach).

mod calls;
mod emit;
pub mod fnname;
mod ids;
pub mod line;
pub mod position;
mod rewrite;
mod stats;

pub use rewrite::{rewrite, RewriteError};
pub use stats::Stats;
