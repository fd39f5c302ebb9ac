//! The driver's buffer: each chunk of the input with the unfinished lines
//! of the one before in front of it, where its bytes lie in the input,
//! where its runs of plain cost lines end (marked by the reader thread),
//! and its line numbers, counted only when asked for (an error): most
//! lines are passed over in runs without looking for their ends.

use crate::callgrind::error::RewriteError;
use crate::callgrind::format::plain_lines::Breaks;
use crate::callgrind::rewrite::Rewriter;
use crate::callgrind::stream::reader::{Chunk, Feed, HEADROOM};

/// Longest line accepted; longer ones are an error, not an allocation.
const MAX_LINE: usize = 16 << 20;

/// The input as the driver reads it, a chunk at a time.
pub(super) struct Chunks {
    feed: Feed,
    /// The current chunk, with the unfinished lines of the one before.
    pub buf: Vec<u8>,
    /// The input offset of `buf[0]` (wrapping: the first chunk's data
    /// starts after its headroom).
    base: u64,
    /// Unconsumed bytes are `buf[start..end]`.
    pub start: usize,
    pub end: usize,
    eof: bool,
    pub lines: LineCount,
    /// Lines held back from `buf[held..start]` (a call group the driver
    /// holds): kept for the next chunk like an unfinished line.
    pub held: Option<usize>,
    /// The runs of plain cost lines of the current chunk.
    runs: PlainRuns,
}

/// Where line numbers are counted from.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct LineCount {
    /// Where counting starts in the driver's buffer: a line start.
    anchor: usize,
    /// Lines before that one.
    before: u64,
}

impl LineCount {
    /// The 1-based number of the line holding `buf[at]`.
    pub fn at(&self, buf: &[u8], at: usize) -> u64 {
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

impl Chunks {
    pub fn new(feed: Feed) -> Self {
        Chunks {
            feed,
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

    /// Where the run of plain cost lines starting at the line at `start`
    /// ends; `None` if that line may not be plain.
    #[inline]
    pub fn plain_run(&self, start: usize) -> Option<usize> {
        self.runs.plain_run(start)
    }

    /// The input offset of `buf[at]`.
    #[inline]
    pub fn offset(&self, at: usize) -> u64 {
        self.base.wrapping_add(at as u64)
    }

    /// The 1-based number of the line holding `buf[at]`.
    pub fn line_no(&self, at: usize) -> u64 {
        self.lines.at(&self.buf, at)
    }

    /// Puts the unconsumed tail (and held lines) in front of the next
    /// chunk, and hands the buffer it leaves to the writer; false at the
    /// end of the input.
    pub fn refill(&mut self, rw: &mut Rewriter<'_>) -> Result<bool, RewriteError> {
        if self.eof {
            return Ok(false);
        }
        let keep = self.held.unwrap_or(self.start);
        let tail = self.end - keep;
        if tail > MAX_LINE {
            let message = format!("line longer than {} MiB", MAX_LINE >> 20);
            let line = self.line_no(self.start);
            return Err(RewriteError::Parse { line, message });
        }
        let Chunk {
            buf: mut next,
            start,
            len,
            breaks,
        } = self.feed.next().map_err(RewriteError::Io)?;
        if len == 0 {
            self.eof = true;
            return Ok(self.start < self.end);
        }
        let before = self.lines_before(keep);
        let at = if tail <= HEADROOM {
            let at = start - tail;
            next[at..start].copy_from_slice(&self.buf[keep..self.end]);
            std::mem::swap(&mut self.buf, &mut next);
            self.end = start + len;
            at
        } else {
            // A tail too long for the room in front: a buffer of its own.
            let mut joined = Vec::with_capacity(tail + len);
            joined.extend_from_slice(&self.buf[keep..self.end]);
            joined.extend_from_slice(&next[start..start + len]);
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

    /// At the end of the input: hands the last buffer to the writer; the
    /// number of lines.
    pub fn finish(&mut self, rw: &mut Rewriter<'_>) -> Result<u64, RewriteError> {
        let unfinished = u64::from(self.start < self.end);
        let lines = self.line_no(self.end) - 1 + unfinished;
        let buf = std::mem::take(&mut self.buf);
        let breaks = self.runs.install(Breaks::default(), 0);
        chunk_done(rw, buf, breaks)?;
        Ok(lines)
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
        breaks,
        ..Chunk::default()
    };
    rw.writer.out.chunk_done(chunk).map_err(RewriteError::Io)
}
