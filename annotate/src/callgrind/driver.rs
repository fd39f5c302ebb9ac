//! Feeding a profile to the rewriter, line by line, at close to copy speed.
//!
//! In native code whose output state equals the input's, runs of plain
//! cost lines (marked on the reader thread by `plain_lines`) are passed
//! over in one step, the fast lane (`lane`) handles the other lines that
//! stay as they are, and runs of both are written by the writer thread
//! straight from the input chunk; only the other lines, found with a
//! block-wise newline scan, enter the general rewriter.

use std::io::{self, Read, Write};

use super::feed::{Chunk, Feed, HEADROOM};
use super::lane::Pass;
use super::newlines::Newlines;
use super::plain_lines::Break;
use super::rewrite::{Fail, Rewriter};
use super::stats::Stats;
use crate::symbols::SymbolTable;

/// Longest line accepted; longer ones are an error, not an allocation.
const MAX_LINE: usize = 16 << 20;

/// How the rewriter tracks positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Decode positions only where needed. Relies on callgrind's habit of
    /// writing the first position of each function absolutely, and stops
    /// with [`RewriteError::NeedsExactMode`] where input breaks it.
    Fast,
    /// Decode every position line (any valid input).
    Exact,
}

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
    /// Fast mode met a relative position it cannot place: run again with
    /// [`Mode::Exact`].
    NeedsExactMode {
        /// 1-based line number.
        line: u64,
    },
    /// Reading or writing failed.
    Io(io::Error),
}

impl std::fmt::Display for RewriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RewriteError::Parse { line, message } => write!(f, "line {line}: {message}"),
            RewriteError::NeedsExactMode { line } => {
                write!(f, "line {line}: relative position needs exact mode")
            }
            RewriteError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for RewriteError {}

/// Rewrites one profile from `input` to `output` with the symbols of
/// `table` in [`Mode::Fast`], falling back to [`Mode::Exact`] when the
/// input needs it (`input` must then be readable again: it is a slice).
/// With an empty table the output equals the input byte for byte (CRLF
/// line ends become LF).
pub fn rewrite_slice<W: Write + Send>(
    input: &[u8],
    output: &mut W,
    table: &SymbolTable,
) -> Result<Stats, RewriteError> {
    let mut first = Vec::new();
    match rewrite(input, &mut first, table, Mode::Fast) {
        Err(RewriteError::NeedsExactMode { .. }) => rewrite(input, output, table, Mode::Exact),
        Ok(stats) => {
            output.write_all(&first).map_err(RewriteError::Io)?;
            Ok(stats)
        }
        Err(e) => Err(e),
    }
}

/// Rewrites one profile from `input` to `output` (see [`Mode`]). Input
/// is read and output written on threads of their own
/// ([`feed`](super::feed), [`pipe`](super::pipe)).
pub fn rewrite<R: Read + Send, W: Write + Send>(
    input: R,
    output: W,
    table: &SymbolTable,
    mode: Mode,
) -> Result<Stats, RewriteError> {
    std::thread::scope(|scope| {
        let (feed, _reader) = super::feed::spawn(scope, input);
        let (writer, handle) = super::pipe::spawn(scope, output, feed.spent_sender());
        let result = rewrite_to(feed, writer, table, mode);
        // The writer thread's own error explains a failed send best.
        match (super::pipe::join(handle), result) {
            (Err(e), Ok(_) | Err(RewriteError::Io(_))) => Err(RewriteError::Io(e)),
            (_, result) => result,
        }
    })
}

fn rewrite_to(
    feed: Feed,
    output: super::pipe::Sender,
    table: &SymbolTable,
    mode: Mode,
) -> Result<Stats, RewriteError> {
    let mut driver = Driver {
        feed,
        buf: Vec::new(),
        start: 0,
        end: 0,
        eof: false,
        line_no: 0,
        held: None,
        marks: Marks::default(),
    };
    let mut rw = Rewriter::new(table, output, mode);
    driver.run(&mut rw)?;
    let line = driver.line_no;
    rw.finish().map_err(|f| error(f, line))
}

fn error(fail: Fail, line: u64) -> RewriteError {
    match fail {
        Fail::Line(message) => RewriteError::Parse { line, message },
        Fail::NeedsExact => RewriteError::NeedsExactMode { line },
        Fail::Io(e) => RewriteError::Io(e),
    }
}

struct Driver {
    feed: Feed,
    /// The current chunk, with the unfinished lines of the one before.
    buf: Vec<u8>,
    /// Unconsumed bytes are `buf[start..end]`.
    start: usize,
    end: usize,
    eof: bool,
    line_no: u64,
    /// Call lines the fast lane holds back, `buf[offset..start]`, and the
    /// number of the first one.
    held: Option<(usize, u64)>,
    /// The lines of the current chunk that may not be plain cost lines.
    marks: Marks,
}

/// The reader's [`Break`]s of the current chunk, for passing over runs of
/// plain cost lines.
#[derive(Default)]
struct Marks {
    breaks: Vec<Break>,
    /// The first break not behind the driver.
    cursor: usize,
    /// Where the chunk's data starts in the driver's buffer.
    data_start: usize,
    /// Lines before the chunk's data.
    base_line: u64,
}

impl Marks {
    /// Where the run of plain cost lines starting at the line at `start`
    /// ends, and the number of lines before that point; `None` if the
    /// line at `start` may not be plain.
    fn plain_run(&mut self, start: usize) -> Option<(usize, u64)> {
        let at = u32::try_from(start.checked_sub(self.data_start)?).ok()?;
        while self.breaks.get(self.cursor).is_some_and(|b| b.offset < at) {
            self.cursor += 1;
        }
        let next = self.breaks.get(self.cursor)?;
        let end = self.data_start + next.offset as usize;
        (next.offset > at).then_some((end, self.base_line + u64::from(next.newlines)))
    }

    /// Takes the breaks of the chunk whose data now starts at `data_start`;
    /// `line_no` lines came before it. Returns the old ones.
    fn install(&mut self, breaks: Vec<Break>, data_start: usize, line_no: u64) -> Vec<Break> {
        self.cursor = 0;
        self.data_start = data_start;
        self.base_line = line_no;
        std::mem::replace(&mut self.breaks, breaks)
    }
}

impl Driver {
    fn run(&mut self, rw: &mut Rewriter<'_>) -> Result<(), RewriteError> {
        loop {
            self.lines(rw)?;
            if !self.refill(rw)? {
                self.replay_held(rw)?;
                self.last_line(rw)?;
                let buf = std::mem::take(&mut self.buf);
                let breaks = self.marks.install(Vec::new(), 0, self.line_no);
                return chunk_done(rw, buf, breaks);
            }
        }
    }

    /// Handles the whole lines in the buffer. Runs of plain cost lines in
    /// the lane (most lines), marked by the reader, are passed over in one
    /// step; other lines the lane copies join them in runs the writer
    /// copies from the chunk; the rest go through the rewriter.
    fn lines(&mut self, rw: &mut Rewriter<'_>) -> Result<(), RewriteError> {
        let mut run_start = self.held.map_or(self.start, |h| h.0);
        let mut lane = rw.lane_open();
        let base = self.start;
        let mut newlines = Newlines::new(&self.buf[base..self.end]);
        loop {
            if lane && self.held.is_none() {
                if let Some((to, line_no)) = self.marks.plain_run(self.start) {
                    (self.start, self.line_no) = (to, line_no);
                    newlines.skip_to(to - base);
                    rw.copied_cost_lines();
                }
            }
            let Some(nl) = newlines.next() else { break };
            let (line_start, line_end) = (self.start, base + nl);
            self.start = line_end + 1;
            self.line_no += 1;
            let line = &self.buf[line_start..line_end];
            let pass = if lane { rw.pass(line) } else { Pass::Declined };
            match pass {
                Pass::Copied => self.held = None,
                Pass::Held => {
                    self.held.get_or_insert((line_start, self.line_no));
                }
                Pass::Rewrite | Pass::Declined => {
                    let run_end = self.held.map_or(line_start, |h| h.0);
                    rw.out
                        .copy_input(run_start..run_end)
                        .map_err(RewriteError::Io)?;
                    run_start = self.start;
                    let held = self.held.take();
                    let line_no = self.line_no;
                    rewrite_line(rw, pass, &self.buf[..line_end], line_start, held, line_no)?;
                }
            }
            lane = rw.lane_open();
        }
        let run_end = self.held.map_or(self.start, |h| h.0);
        rw.out
            .copy_input(run_start..run_end)
            .map_err(RewriteError::Io)
    }

    /// At the end of the input: held lines go to the rewriter after all.
    fn replay_held(&mut self, rw: &mut Rewriter<'_>) -> Result<(), RewriteError> {
        match self.held.take() {
            Some((from, first)) => replay(rw, &self.buf[from..self.start], first),
            None => Ok(()),
        }
    }

    /// The final line when it has no newline.
    fn last_line(&mut self, rw: &mut Rewriter<'_>) -> Result<(), RewriteError> {
        if self.start == self.end {
            return Ok(());
        }
        self.line_no += 1;
        let line = &self.buf[self.start..self.end];
        let content = line.strip_suffix(b"\r").unwrap_or(line);
        rw.line(content, false).map_err(|f| error(f, self.line_no))
    }

    /// Puts the unconsumed tail (and held lines) in front of the next
    /// chunk, and hands the buffer it leaves to the writer; false at the
    /// end of the input.
    fn refill(&mut self, rw: &mut Rewriter<'_>) -> Result<bool, RewriteError> {
        if self.eof {
            return Ok(false);
        }
        let keep = self.held.map_or(self.start, |h| h.0);
        let tail = self.end - keep;
        if tail > MAX_LINE {
            let message = format!("line longer than {} MiB", MAX_LINE >> 20);
            return Err(RewriteError::Parse {
                line: self.line_no + 1,
                message,
            });
        }
        let Chunk {
            buf: mut next,
            len,
            breaks,
        } = self.feed.next().map_err(RewriteError::Io)?;
        if len == 0 {
            self.eof = true;
            return Ok(self.start < self.end);
        }
        let at = if tail <= HEADROOM {
            let at = HEADROOM - tail;
            next[at..HEADROOM].copy_from_slice(&self.buf[keep..self.end]);
            std::mem::swap(&mut self.buf, &mut next);
            self.end = HEADROOM + len;
            at
        } else {
            // A tail too long for the room in front: a buffer of its own.
            let mut joined = Vec::with_capacity(tail + len);
            joined.extend_from_slice(&self.buf[keep..self.end]);
            joined.extend_from_slice(&next[HEADROOM..HEADROOM + len]);
            self.feed.give_back(Chunk {
                buf: std::mem::take(&mut next),
                ..Chunk::default()
            });
            next = std::mem::replace(&mut self.buf, joined);
            self.end = self.buf.len();
            0
        };
        let old = self.marks.install(breaks, self.end - len, self.line_no);
        chunk_done(rw, next, old)?;
        self.start = self.start - keep + at;
        self.held = self.held.map(|(_, line)| (at, line));
        Ok(true)
    }
}

/// Hands the buffer the output copies from, with its breaks, to the
/// writer (both go back to the reader from there).
fn chunk_done(rw: &mut Rewriter<'_>, buf: Vec<u8>, breaks: Vec<Break>) -> Result<(), RewriteError> {
    let chunk = Chunk {
        buf,
        len: 0,
        breaks,
    };
    rw.out.chunk_done(chunk).map_err(RewriteError::Io)
}

/// A line the lane did not copy, `buf[start..]`: a call the lane
/// rewrites, or a line for the rewriter after any lines the lane `held`.
fn rewrite_line(
    rw: &mut Rewriter<'_>,
    pass: Pass,
    buf: &[u8],
    start: usize,
    held: Option<(usize, u64)>,
    line_no: u64,
) -> Result<(), RewriteError> {
    let line = &buf[start..];
    if pass == Pass::Rewrite {
        return rw.write_held_call(line).map_err(|f| error(f, line_no));
    }
    if let Some((from, first)) = held {
        replay(rw, &buf[from..start], first)?;
    } else if rw.takes_position(line) {
        return rw
            .cost_line(line, line, true)
            .map_err(|f| error(f, line_no));
    }
    let content = line.strip_suffix(b"\r").unwrap_or(line);
    rw.line(content, true).map_err(|f| error(f, line_no))
}

/// Gives the rewriter call lines the fast lane held back (whole lines,
/// `first` being the number of the first).
fn replay(rw: &mut Rewriter<'_>, lines: &[u8], first: u64) -> Result<(), RewriteError> {
    rw.held = Default::default();
    let lines = lines.strip_suffix(b"\n").unwrap_or(lines);
    for (i, line) in lines.split(|&b| b == b'\n').enumerate() {
        let content = line.strip_suffix(b"\r").unwrap_or(line);
        rw.line(content, true)
            .map_err(|f| error(f, first + i as u64))?;
    }
    Ok(())
}
