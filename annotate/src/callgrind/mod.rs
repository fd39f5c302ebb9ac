//! The callgrind profile format: reading it line by line and rewriting it
//! with JIT functions named (see `rewrite` for the approach, `driver` for
//! the fast path).

mod calls;
mod costs;
mod driver;
mod emit;
mod feed;
pub mod fnname;
mod ids;
mod lane;
pub mod line;
mod naming;
mod newlines;
mod pipe;
mod plain_lines;
pub mod position;
mod rewrite;
mod stats;

pub use driver::{rewrite, rewrite_slice, Mode, RewriteError};
pub use stats::Stats;
