//! How handling one line fails: the line is invalid (or one of the call
//! group it ends), writing failed, or a symbol file changed under us.
//! `error.rs` gives the caller's view, with the line's number.

use std::io;

use crate::callgrind::format::line::LineError;

/// A failure inside one line's handling.
pub(in crate::callgrind) enum Fail {
    /// The line is invalid.
    Line(LineError),
    /// The line so many lines before the one handled is invalid (a call
    /// group's, parsed at its position line). Boxed: a larger `Fail`
    /// made every line's result dearer.
    Before(Box<(LineError, u64)>),
    /// Writing failed.
    Io(io::Error),
    /// A symbol file could not give a range it was indexed with (it
    /// changed since): why, naming the file.
    Symbol(String),
}

impl From<String> for Fail {
    fn from(s: String) -> Self {
        Fail::Line(s)
    }
}

impl From<&str> for Fail {
    fn from(s: &str) -> Self {
        Fail::Line(s.to_string())
    }
}

impl From<io::Error> for Fail {
    fn from(e: io::Error) -> Self {
        Fail::Io(e)
    }
}

/// The result of handling one line.
pub(in crate::callgrind) type Res<T = ()> = Result<T, Fail>;

/// `result`, its line's failure made that of the line `back` lines
/// before the one handled.
#[inline]
pub(in crate::callgrind) fn lines_before<T>(result: Res<T>, back: usize) -> Res<T> {
    result.map_err(|fail| fail.before(back))
}

impl Fail {
    /// This failure, of the line `back` lines before the one handled.
    #[cold]
    fn before(self, back: usize) -> Fail {
        match self {
            Fail::Line(why) => Fail::Before(Box::new((why, back as u64))),
            other => other,
        }
    }
}
