//! The callgrind profile rewriter: every JIT pseudo-function named after
//! its symbol, consistently for KCachegrind and callgrind_annotate.
//!
//! [`rewrite`] is the whole of it for a caller. Inside, a profile goes
//! through three layers (docs/architecture.md follows one line through
//! them):
//!
//! - `stream`: a reader thread fills chunks of the input, a writer
//!   thread writes batches of output (copied ranges of those chunks, and
//!   lines of our own).
//! - `fast`: the driver cuts chunks into lines; in native code it passes
//!   over runs of plain cost lines and copies the lines that stay as they
//!   are (the lane), and hands every other line to the rewriter.
//! - `rewrite`: the meaning, one function per kind of line, with the
//!   reader state of the input and of the output side by side.
//!
//! [`format`] holds the line format for all of them.

pub mod address_names;
mod error;
mod fast;
pub mod format;
mod rewrite;
mod stats;
mod stream;

use std::fs::File;
use std::io::{self, Read, Seek, Write};

pub use error::RewriteError;
pub use stats::{Ending, Stats};

use crate::symbols::SymbolTable;
use error::error;
use rewrite::state::Tracking;
use rewrite::Rewriter;

/// An output the rewriter can empty and write again from the start.
pub trait Output: Write {
    /// Drops everything written so far.
    fn restart(&mut self) -> io::Result<()>;
}

impl Output for Vec<u8> {
    fn restart(&mut self) -> io::Result<()> {
        self.clear();
        Ok(())
    }
}

impl Output for &File {
    fn restart(&mut self) -> io::Result<()> {
        self.set_len(0)?;
        self.rewind()
    }
}

impl Output for File {
    fn restart(&mut self) -> io::Result<()> {
        (&*self).restart()
    }
}

impl Output for io::Sink {
    fn restart(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<O: Output + ?Sized> Output for &mut O {
    fn restart(&mut self) -> io::Result<()> {
        (**self).restart()
    }
}

/// Rewrites one profile from `input` to `output` with the symbols of
/// `table`. The input is read once, or twice where it is not laid out as
/// callgrind writes it (a function starting with a relative position):
/// then `output` is restarted and every position decoded. With an empty
/// table the output equals the input byte for byte (CRLF line ends
/// become LF).
pub fn rewrite<R, W>(
    mut input: R,
    mut output: W,
    table: &SymbolTable,
) -> Result<Stats, RewriteError>
where
    R: Read + Seek + Send,
    W: Output + Send,
{
    match passes::lazy(&mut input, &mut output, table) {
        Err(RewriteError::NeedsExactMode { .. }) => {
            input.rewind().map_err(RewriteError::Io)?;
            output.restart().map_err(RewriteError::Io)?;
            passes::exact(input, output, table)
        }
        result => result,
    }
}

/// The two passes [`rewrite`] is made of, public so that tests and
/// benchmarks can hold the fast one to the slow reference.
pub mod passes {
    use super::*;

    /// The fast pass: position lines of native code are copied without
    /// decoding them. Stops with [`RewriteError::NeedsExactMode`] where a
    /// function starts with a relative position.
    pub fn lazy<R: Read + Send, W: Write + Send>(
        input: R,
        output: W,
        table: &SymbolTable,
    ) -> Result<Stats, RewriteError> {
        run(input, output, table, Tracking::Lazy)
    }

    /// The reference: every position decoded (any valid input). Its output
    /// means what [`lazy`]'s means; positions may be written differently.
    pub fn exact<R: Read + Send, W: Write + Send>(
        input: R,
        output: W,
        table: &SymbolTable,
    ) -> Result<Stats, RewriteError> {
        run(input, output, table, Tracking::Every)
    }
}

/// One pass: input read and output written on threads of their own
/// (`stream`).
fn run<R: Read + Send, W: Write + Send>(
    input: R,
    output: W,
    table: &SymbolTable,
    tracking: Tracking,
) -> Result<Stats, RewriteError> {
    std::thread::scope(|scope| {
        let (feed, _reader) = stream::reader::spawn(scope, input);
        let (writer, handle) = stream::writer::spawn(scope, output, feed.spent_sender());
        let mut rw = Rewriter::new(table, stream::out::Out::new(writer), tracking);
        let result = fast::Driver::new(feed)
            .run(&mut rw)
            .and_then(|lines| rw.finish().map_err(|f| error(f, lines)));
        // The writer thread's own error explains a failed send best.
        match (stream::writer::join(handle), result) {
            (Err(e), Ok(_) | Err(RewriteError::Io(_))) => Err(RewriteError::Io(e)),
            (_, result) => result,
        }
    })
}
