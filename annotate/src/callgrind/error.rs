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

/// Why a pass stopped: an error, or (only where native positions are
/// copied undecoded) a relative position it cannot place, after which
/// [`rewrite`](fn@super::rewrite) decodes every position.
#[derive(Debug)]
pub(super) enum Stop {
    Error(RewriteError),
    /// At this line.
    NeedsExact {
        line: u64,
    },
}

impl Stop {
    pub(super) fn io(e: io::Error) -> Stop {
        Stop::Error(RewriteError::Io(e))
    }

    /// The error, where the stop is one (the exact pass never needs
    /// itself).
    pub(super) fn error(self) -> RewriteError {
        match self {
            Stop::Error(e) => e,
            Stop::NeedsExact { line } => RewriteError::Parse {
                line,
                message: "relative position needs exact mode".into(),
            },
        }
    }
}

/// A line's failure as the caller sees it.
pub(super) fn error(fail: Fail, line: u64) -> Stop {
    match fail {
        Fail::Line(message) => Stop::Error(RewriteError::Parse { line, message }),
        Fail::NeedsExact => Stop::NeedsExact { line },
        Fail::Io(e) => Stop::io(e),
    }
}
