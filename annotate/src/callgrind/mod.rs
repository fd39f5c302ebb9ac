//! The callgrind profile rewriter: every JIT pseudo-function named after
//! its symbol, consistently for KCachegrind and callgrind_annotate.
//!
//! [`rewrite()`] is the whole of it for a caller. Inside, a profile goes
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
//! `format` holds the line format for all of them.

mod error;
mod fast;
pub(crate) mod format;
mod rewrite;
mod stats;
mod stream;
pub mod touched;

use std::fs::File;
use std::io::{self, Read, Seek, Write};

pub use error::RewriteError;
pub use stats::{Ending, ReadBack, Reading, Stats};

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
/// `table` ([`Rewrite`] for the settings). With an empty table the output
/// equals the input byte for byte (CRLF line ends become LF).
pub fn rewrite<R, W>(input: R, output: W, table: &SymbolTable) -> Result<Stats, RewriteError>
where
    R: Read + Seek + Send,
    W: Output + Send,
{
    Rewrite::new(table).run(input, output)
}

/// A rewrite's settings: the symbols, where the code image is, and how
/// native positions are read.
#[derive(Clone, Copy)]
pub struct Rewrite<'a> {
    table: &'a SymbolTable,
    image: Option<&'a str>,
    tracking: Tracking,
    /// Whether the re-entry plan is made before writing; `None`: where
    /// the profile's program resumes JIT code by calls.
    plan_first: Option<bool>,
    /// Runs of a JIT block's cost lines at one place rewritten in one
    /// loop (`rewrite/jit_run.rs`); else line by line.
    jit_runs: bool,
}

impl<'a> Rewrite<'a> {
    /// A rewrite with the symbols of `table`.
    pub fn new(table: &'a SymbolTable) -> Self {
        Rewrite {
            table,
            image: None,
            tracking: Tracking::Lazy,
            plan_first: None,
            jit_runs: true,
        }
    }

    /// Whether the re-entry plan is made by a first reading that writes
    /// nothing, so that the output is written once. By default it is
    /// where the profile's program (its `cmd:`) is a runtime that resumes
    /// its compiled code by calls into its middle (V8, HotSpot, BEAM), or
    /// a symbol file was written by one of them (in a program of another
    /// name: an embedder, a launcher): their profiles need the plan. Any
    /// other profile is written in its first reading, and written again
    /// where it turns out to need one.
    pub fn plan_reentry_first(self, first: bool) -> Self {
        Rewrite {
            plan_first: Some(first),
            ..self
        }
    }

    /// A jitdump's functions put under `image`: the object name of the
    /// code image written beside the output (see
    /// [`crate::symbols::object_name`]).
    pub fn image(self, image: &'a str) -> Self {
        Rewrite {
            image: Some(image),
            ..self
        }
    }

    /// Every position decoded, native code's too: the slower reference
    /// the default is held to. Its output means the same; positions may be
    /// written differently.
    pub fn every_position(self) -> Self {
        Rewrite {
            tracking: Tracking::Every,
            ..self
        }
    }

    /// Each cost line of JIT code rewritten on its own: the reference the
    /// default's runs of lines at one place are held to (the output is
    /// the same, byte for byte).
    pub fn line_by_line(self) -> Self {
        Rewrite {
            jit_runs: false,
            ..self
        }
    }

    /// Rewrites `input` into `output`. The input is read once, or twice
    /// where a JIT function was resumed by a call into its middle (then the
    /// continuation's cost is taken out of the arcs that hold it twice; see
    /// `rewrite/reentry/`): planned first where that was foreseen (see
    /// [`Rewrite::plan_reentry_first`]), else with `output` restarted.
    /// [`Stats::reads`] says how often, and why; [`Stats::read_back`] how
    /// much of it was read again to place positions not laid out as
    /// callgrind lays them out (`rewrite/recall.rs`).
    pub fn run<R, W>(self, input: R, output: W) -> Result<Stats, RewriteError>
    where
        R: Read + Seek + Send,
        W: Output + Send,
    {
        with_reentry(input, output, self)
    }
}

/// Rewinds the input and empties the output for another pass.
fn again<R: Seek, W: Output>(input: &mut R, output: &mut W) -> Result<(), RewriteError> {
    input.rewind().map_err(RewriteError::Io)?;
    output.restart().map_err(RewriteError::Io)
}

/// A pass, and a second one where the first found continuations to take
/// out of arcs (see `rewrite/reentry/`), or where the plan is made first.
fn with_reentry<R, W>(mut input: R, mut output: W, how: Rewrite) -> Result<Stats, RewriteError>
where
    R: Read + Seek + Send,
    W: Output + Send,
{
    let plan_first = match how.plan_first {
        Some(first) => first,
        None => {
            let by_cmd = resumes_by_calls(&mut input).map_err(RewriteError::Io)?;
            by_cmd || how.table.by_runtime_resuming_by_calls()
        }
    };
    if plan_first {
        return planned_first(input, output, how);
    }
    let state = rewrite::reentry::State::default();
    let mut stats = match run(&mut input, &mut output, how, state)? {
        (_, Some(plan)) if plan.takes_out() => {
            again(&mut input, &mut output)?;
            let state = rewrite::reentry::State::taking(plan);
            let (mut stats, _) = run(input, output, how, state)?;
            stats.reads.push(Reading::Reentry);
            stats
        }
        (stats, _) => stats,
    };
    stats.reads.insert(0, Reading::First);
    Ok(stats)
}

/// True where the `cmd:` in the profile's head names a runtime whose
/// compiled code is resumed by calls (the input is rewound).
fn resumes_by_calls<R: Read + Seek>(input: &mut R) -> io::Result<bool> {
    let mut head = Vec::with_capacity(crate::input::HEAD);
    input
        .by_ref()
        .take(crate::input::HEAD as u64)
        .read_to_end(&mut head)?;
    input.rewind()?;
    let cmd = crate::input::command_in(&head).unwrap_or_default();
    let words: Vec<String> = cmd.split_whitespace().map(String::from).collect();
    let runtime = crate::runtimes::of_command(&words);
    Ok(runtime.is_some_and(|r| r.resumes_by_calls))
}

/// The re-entry plan made by a first pass that writes nothing, then the
/// output written once by a second.
fn planned_first<R, W>(mut input: R, output: W, how: Rewrite) -> Result<Stats, RewriteError>
where
    R: Read + Seek + Send,
    W: Write + Send,
{
    let noting = rewrite::reentry::State::default();
    let (_, plan) = run(&mut input, io::sink(), how, noting)?;
    input.rewind().map_err(RewriteError::Io)?;
    let state = match plan {
        Some(plan) if plan.takes_out() => rewrite::reentry::State::taking(plan),
        _ => rewrite::reentry::State::default(),
    };
    let (mut stats, _) = run(input, output, how, state)?;
    stats.reads = vec![Reading::Plan, Reading::Write];
    Ok(stats)
}

/// One pass: input read and output written on threads of their own
/// (`stream`). Gives the counts, and a second pass's work where
/// re-entries are to be taken out of arcs.
fn run<R: Read + Seek + Send, W: Write + Send>(
    input: R,
    output: W,
    how: Rewrite,
    reentry: rewrite::reentry::State,
) -> Result<(Stats, Option<rewrite::reentry::Plan>), RewriteError> {
    let input = stream::shared::Shared::new(input).map_err(RewriteError::Io)?;
    std::thread::scope(|scope| {
        let (feed, _reader) = stream::reader::spawn(scope, &input).map_err(RewriteError::Io)?;
        let spent = feed.spent_sender();
        let (writer, handle) =
            stream::writer::spawn(scope, output, spent).map_err(RewriteError::Io)?;
        let out = stream::out::Out::new(writer);
        let mut rw = Rewriter::new(how.table, how.image, out, how.tracking, reentry, &input);
        rw.jit_runs = how.jit_runs;
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

/// The two readings alone, for the unit tests.
#[cfg(test)]
pub(crate) mod passes {
    use super::*;

    /// Native positions copied undecoded (the default).
    pub fn lazy<R: Read + Seek + Send, W: Output + Send>(
        input: R,
        output: W,
        table: &SymbolTable,
    ) -> Result<Stats, RewriteError> {
        Rewrite::new(table).run(input, output)
    }

    /// Every position decoded.
    pub fn exact<R: Read + Seek + Send, W: Output + Send>(
        input: R,
        output: W,
        table: &SymbolTable,
    ) -> Result<Stats, RewriteError> {
        Rewrite::new(table).every_position().run(input, output)
    }
}
