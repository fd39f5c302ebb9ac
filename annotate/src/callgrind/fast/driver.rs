//! Feeding a profile to the rewriter, line by line, at close to copy speed.
//!
//! In native code whose output state equals the input's, runs of plain
//! cost lines (marked on the reader thread by `plain_lines`) are passed
//! over in one step, the fast lane (`lane`) handles the other lines that
//! stay as they are, and runs of both are written by the writer thread
//! straight from the input chunk; only the other lines, found with a
//! block-wise newline scan, enter the general rewriter.

use super::lane::{Lane, Pass};
use crate::callgrind::error::{error, RewriteError};
use crate::callgrind::format::plain_lines::Breaks;
use crate::callgrind::rewrite::Rewriter;
use crate::callgrind::stream::reader::{Chunk, Feed, HEADROOM};
use crate::newlines::Newlines;

/// Longest line accepted; longer ones are an error, not an allocation.
const MAX_LINE: usize = 16 << 20;

/// Feeds the lines of a profile to the rewriter and the lane.
pub(in crate::callgrind) struct Driver {
    feed: Feed,
    lane: Lane,
    /// The current chunk, with the unfinished lines of the one before.
    buf: Vec<u8>,
    /// The input offset of `buf[0]` (wrapping: the first chunk's data
    /// starts after its headroom).
    base: u64,
    /// Unconsumed bytes are `buf[start..end]`.
    start: usize,
    end: usize,
    eof: bool,
    lines: LineCount,
    /// Call lines the fast lane holds back, `buf[offset..start]`.
    held: Option<usize>,
    /// The runs of plain cost lines of the current chunk.
    runs: PlainRuns,
}

/// Line numbers, counted only when asked for (an error): most lines are
/// passed over in runs without looking for their ends.
#[derive(Clone, Copy, Debug, Default)]
struct LineCount {
    /// Where counting starts in the driver's buffer: a line start.
    anchor: usize,
    /// Lines before that one.
    before: u64,
}

impl LineCount {
    /// The 1-based number of the line holding `buf[at]`.
    fn at(&self, buf: &[u8], at: usize) -> u64 {
        self.before + newlines(&buf[self.anchor..at]) + 1
    }
}

fn newlines(bytes: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', bytes).count() as u64
}

/// The reader's [`Breaks`] of the current chunk, placed in the driver's
/// buffer: where runs of plain cost lines end.
#[derive(Default)]
struct PlainRuns {
    breaks: Breaks,
    /// Where the chunk's data starts in the driver's buffer.
    data_start: usize,
}

impl PlainRuns {
    /// Where the run of plain cost lines starting at the line at `start`
    /// ends; `None` if the line at `start` may not be plain.
    #[inline]
    fn plain_run(&self, start: usize) -> Option<usize> {
        let at = start.checked_sub(self.data_start)?;
        let next = self.breaks.next_from(at)?;
        (next > at).then_some(self.data_start + next)
    }

    /// Takes the breaks of the chunk whose data now starts at
    /// `data_start`. Returns the old ones.
    fn install(&mut self, breaks: Breaks, data_start: usize) -> Breaks {
        self.data_start = data_start;
        std::mem::replace(&mut self.breaks, breaks)
    }
}

impl Driver {
    pub(in crate::callgrind) fn new(feed: Feed) -> Self {
        Driver {
            feed,
            lane: Lane::default(),
            buf: Vec::new(),
            base: 0,
            start: 0,
            end: 0,
            eof: false,
            lines: LineCount::default(),
            held: None,
            runs: PlainRuns::default(),
        }
    }

    /// Feeds every line to `rw`; the number of lines.
    pub(in crate::callgrind) fn run(&mut self, rw: &mut Rewriter<'_>) -> Result<u64, RewriteError> {
        loop {
            self.lines(rw)?;
            if !self.refill(rw)? {
                self.replay_held(rw)?;
                self.last_line(rw)?;
                let unfinished = u64::from(self.start < self.end);
                let lines = self.lines.at(&self.buf, self.end) - 1 + unfinished;
                let buf = std::mem::take(&mut self.buf);
                let breaks = self.runs.install(Breaks::default(), 0);
                chunk_done(rw, buf, breaks)?;
                return Ok(lines);
            }
        }
    }

    /// Handles the whole lines in the buffer. Runs of plain cost lines in
    /// the lane (most lines), marked by the reader, are passed over in one
    /// step; other lines the lane copies join them in runs the writer
    /// copies from the chunk; the rest go through the rewriter.
    fn lines(&mut self, rw: &mut Rewriter<'_>) -> Result<(), RewriteError> {
        let mut run_start = self.held.unwrap_or(self.start);
        let mut lane = Lane::open(rw);
        let base = self.start;
        let mut newlines = Newlines::new(&self.buf[base..self.end]);
        loop {
            if lane && self.lane.takes_plain_run() {
                if let Some(to) = self.runs.plain_run(self.start) {
                    let at = self.offset(self.start);
                    self.start = to;
                    newlines.skip_to(to - base);
                    self.lane.copied_cost_lines(rw, at);
                    self.held = None;
                }
            }
            let Some(nl) = newlines.next() else { break };
            let (line_start, line_end) = (self.start, base + nl);
            self.start = line_end + 1;
            let line = &self.buf[line_start..line_end];
            let pass = if lane {
                self.lane.pass(rw, line)
            } else {
                Pass::Declined
            };
            match pass {
                Pass::Copied => self.held = None,
                Pass::CopiedPosition => {
                    self.held = None;
                    rw.reader.forget_pos(self.offset(line_start));
                }
                Pass::Held => {
                    self.held.get_or_insert(line_start);
                }
                Pass::Declined => {
                    let run_end = self.held.unwrap_or(line_start);
                    rw.writer
                        .out
                        .copy_input(run_start..run_end)
                        .map_err(RewriteError::Io)?;
                    run_start = self.start;
                    rw.recall.line_at = self.offset(line_start);
                    let held = self.held.take();
                    let site = Site {
                        buf: &self.buf[..line_end],
                        start: line_start,
                        lines: self.lines,
                    };
                    rewrite_line(rw, &mut self.lane, &site, held)?;
                }
            }
            lane = Lane::open(rw);
        }
        let run_end = self.held.unwrap_or(self.start);
        rw.writer
            .out
            .copy_input(run_start..run_end)
            .map_err(RewriteError::Io)
    }

    /// At the end of the input: held lines go to the rewriter after all.
    fn replay_held(&mut self, rw: &mut Rewriter<'_>) -> Result<(), RewriteError> {
        match self.held.take() {
            Some(from) => {
                rw.recall.line_at = self.offset(from);
                let (buf, lines) = (&self.buf, self.lines);
                replay(rw, &mut self.lane, &buf[from..self.start], || {
                    lines.at(buf, from)
                })
            }
            None => Ok(()),
        }
    }

    /// The final line when it has no newline.
    fn last_line(&mut self, rw: &mut Rewriter<'_>) -> Result<(), RewriteError> {
        if self.start == self.end {
            return Ok(());
        }
        let line = &self.buf[self.start..self.end];
        let content = line.strip_suffix(b"\r").unwrap_or(line);
        let line_no = self.lines.at(&self.buf, self.start);
        rw.recall.line_at = self.offset(self.start);
        rw.line(content, false).map_err(|f| error(f, line_no))
    }

    /// Puts the unconsumed tail (and held lines) in front of the next
    /// chunk, and hands the buffer it leaves to the writer; false at the
    /// end of the input.
    fn refill(&mut self, rw: &mut Rewriter<'_>) -> Result<bool, RewriteError> {
        if self.eof {
            return Ok(false);
        }
        let keep = self.held.unwrap_or(self.start);
        let tail = self.end - keep;
        if tail > MAX_LINE {
            let message = format!("line longer than {} MiB", MAX_LINE >> 20);
            return Err(RewriteError::Parse {
                line: self.lines.at(&self.buf, self.start),
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
        let before = self.lines_before(keep);
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
        self.lines = LineCount { anchor: at, before };
        self.base = self.offset(keep).wrapping_sub(at as u64);
        let old = self.runs.install(breaks, self.end - len);
        chunk_done(rw, next, old)?;
        self.start = self.start - keep + at;
        self.held = self.held.map(|_| at);
        Ok(true)
    }

    /// The input offset of `buf[at]`.
    #[inline]
    fn offset(&self, at: usize) -> u64 {
        self.base.wrapping_add(at as u64)
    }

    /// The lines before `buf[keep]`, counting those of the chunk's data
    /// as the reader did.
    fn lines_before(&self, keep: usize) -> u64 {
        let LineCount { anchor, before } = self.lines;
        let data_start = self.runs.data_start;
        let count = |range: std::ops::Range<usize>| newlines(&self.buf[range]);
        if keep < data_start {
            return before + count(anchor..keep);
        }
        before + count(anchor..data_start) + self.runs.breaks.newlines() - count(keep..self.end)
    }
}

/// Hands the buffer the output copies from, with its breaks, to the
/// writer (both go back to the reader from there).
fn chunk_done(rw: &mut Rewriter<'_>, buf: Vec<u8>, breaks: Breaks) -> Result<(), RewriteError> {
    let chunk = Chunk {
        buf,
        len: 0,
        breaks,
    };
    rw.writer.out.chunk_done(chunk).map_err(RewriteError::Io)
}

/// Where a line is: `buf[start..]`, and how to count its number.
#[derive(Clone, Copy)]
struct Site<'a> {
    buf: &'a [u8],
    start: usize,
    lines: LineCount,
}

/// A line the lane did not copy, for the rewriter after any lines the
/// lane `held`.
fn rewrite_line(
    rw: &mut Rewriter<'_>,
    lane: &mut Lane,
    site: &Site<'_>,
    held: Option<usize>,
) -> Result<(), RewriteError> {
    let Site { buf, start, lines } = *site;
    let line_no = || lines.at(buf, start);
    let line = &buf[start..];
    if let Some(from) = held {
        replay(rw, lane, &buf[from..start], || lines.at(buf, from))?;
    } else if rw.takes_position(line) {
        return rw
            .cost_line(line, line, true)
            .map_err(|f| error(f, line_no()));
    }
    let content = line.strip_suffix(b"\r").unwrap_or(line);
    rw.line(content, true).map_err(|f| error(f, line_no()))
}

/// Gives the rewriter call lines the fast lane held back (whole lines,
/// `first` giving the number of the first: counted only for an error, as
/// counting means reading the chunk up to them).
fn replay(
    rw: &mut Rewriter<'_>,
    lane: &mut Lane,
    lines: &[u8],
    first: impl Fn() -> u64,
) -> Result<(), RewriteError> {
    lane.drop_held();
    let lines = lines.strip_suffix(b"\n").unwrap_or(lines);
    for (i, line) in lines.split(|&b| b == b'\n').enumerate() {
        let content = line.strip_suffix(b"\r").unwrap_or(line);
        rw.line(content, true)
            .map_err(|f| error(f, first() + i as u64))?;
    }
    Ok(())
}
