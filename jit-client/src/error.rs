//! The error type of the Rust API.

use std::fmt;

/// What went wrong, in a form the C ABI maps to a status code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// An argument was unusable (a range that wraps around, say).
    InvalidArgument,
    /// Writing a file failed; that file is no longer written.
    Io,
    /// The session was closed (explicitly or at exit): nothing was written.
    Closed,
}

/// An error from a session call. The session has already reported it once
/// on stderr (and in Valgrind's log); the JIT can ignore it and go on.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    detail: String,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, detail: impl Into<String>) -> Self {
        Error {
            kind,
            detail: detail.into(),
        }
    }

    /// The kind of failure.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.detail)
    }
}

impl std::error::Error for Error {}

/// Result of a session call.
pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_reads_as_its_detail_and_keeps_its_kind() {
        let e = Error::new(ErrorKind::Closed, "closed at exit");
        assert_eq!(
            (e.to_string(), e.kind()),
            ("closed at exit".into(), ErrorKind::Closed)
        );
    }
}
