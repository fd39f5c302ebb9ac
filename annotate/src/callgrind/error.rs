//! How a rewrite fails, as its caller sees it.

use std::io;

use super::rewrite::Fail;

/// Why a rewrite stopped. Nothing it wrote should be kept.
#[derive(Debug)]
pub enum RewriteError {
    /// The input is not a valid callgrind profile at this line.
    Parse {
        /// 1-based line number.
        line: u64,
        /// What was wrong.
        message: String,
    },
    /// Reading or writing failed.
    Io(io::Error),
    /// A symbol file changed after the table was built: a range it gave
    /// could not be read again to be named (the output would name it by
    /// its address).
    SymbolFile(String),
}

impl std::fmt::Display for RewriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RewriteError::Parse { line, message } => write!(f, "line {line}: {message}"),
            RewriteError::Io(e) => write!(f, "{e}"),
            RewriteError::SymbolFile(why) => write!(f, "{why}"),
        }
    }
}

impl std::error::Error for RewriteError {}

/// A line's failure as the caller sees it.
pub(super) fn error(fail: Fail, line: u64) -> RewriteError {
    match fail {
        Fail::Line(message) => RewriteError::Parse { line, message },
        Fail::Before(earlier) => RewriteError::Parse {
            line: line.saturating_sub(earlier.1),
            message: earlier.0,
        },
        Fail::Io(e) => RewriteError::Io(e),
        Fail::Symbol(why) => RewriteError::SymbolFile(why),
    }
}
