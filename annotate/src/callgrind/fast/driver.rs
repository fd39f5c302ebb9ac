//! Feeding a profile to the rewriter, line by line, at close to copy speed.
//!
//! While the lane is open ([`Rewriter::lane_open`]), runs of plain cost
//! lines are passed over in one step, name lines that stay as they are
//! only change both reader states (`names.rs`), and a native call group is
//! held back ([`Lane`]) until its callee is known: copied with its
//! position line, or declined for a JIT callee. The writer thread copies
//! all of these from the input chunk; every other line, after any held
//! before it, goes through [`Rewriter::line`] (a call group to
//! `rewrite/call.rs`), a JIT block's plain lines first through
//! [`Rewriter::jit_run`].

use super::chunks::{Chunks, LineCount};
use super::names::{self, known_name, mark_written, written_id, Pass};
use crate::callgrind::error::{error, RewriteError};
use crate::callgrind::format::line::CountLine;
use crate::callgrind::format::quick::{keyed_id, plain_count, IdKey};
use crate::callgrind::rewrite::ids::Sym;
use crate::callgrind::rewrite::reader::Sets;
use crate::callgrind::rewrite::{FnKind, Rewriter, Space};
use crate::callgrind::stream::reader::Feed;
use crate::newlines::Newlines;

/// Feeds the lines of a profile to the rewriter and the lane.
pub(in crate::callgrind) struct Driver {
    chunks: Chunks,
    /// The lane, and what it holds back of a call group (whose bytes are
    /// `chunks.buf[held..start]`).
    lane: Lane,
}

impl Driver {
    pub(in crate::callgrind) fn new(feed: Feed) -> Self {
        Driver {
            chunks: Chunks::new(feed),
            lane: Lane::default(),
        }
    }

    /// Feeds every line to `rw`; the number of lines.
    pub(in crate::callgrind) fn run(&mut self, rw: &mut Rewriter<'_>) -> Result<u64, RewriteError> {
        loop {
            self.lines(rw)?;
            if !self.chunks.refill(rw)? {
                self.end(rw)?;
                return self.chunks.finish(rw);
            }
        }
    }

    /// Handles the whole lines in the buffer, copying runs of the lines
    /// the lane passes (most lines) straight from the chunk.
    fn lines(&mut self, rw: &mut Rewriter<'_>) -> Result<(), RewriteError> {
        let c = &mut self.chunks;
        let mut run_start = c.held.unwrap_or(c.start);
        let mut lane = rw.lane_open();
        let base = c.start;
        let mut newlines = Newlines::new(&c.buf[base..c.end]);
        loop {
            if lane && self.lane.takes_plain_run() {
                if let Some(to) = c.plain_run(c.start) {
                    let at = c.offset(c.start);
                    c.start = to;
                    newlines.skip_to(to - base);
                    self.lane.copied_cost_lines(rw, at);
                    c.held = None;
                }
            } else if !lane && c.held.is_none() && rw.takes_jit_runs() {
                if let Some(to) = c.plain_run(c.start) {
                    copy_input(rw, run_start..c.start)?;
                    c.start += rw.jit_run(&c.buf[c.start..to]).map_err(RewriteError::Io)?;
                    newlines.skip_to(c.start - base);
                    run_start = c.start;
                }
            }
            let Some(nl) = newlines.next() else { break };
            let (line_start, line_end) = (c.start, base + nl);
            c.start = line_end + 1;
            let line = &c.buf[line_start..line_end];
            let pass = if lane {
                self.lane.pass(rw, line)
            } else {
                Pass::Declined
            };
            match pass {
                Pass::Copied => c.held = None,
                Pass::CopiedPosition => {
                    c.held = None;
                    rw.reader.forget_pos(c.offset(line_start));
                }
                Pass::Held => {
                    c.held.get_or_insert(line_start);
                }
                Pass::Declined => {
                    copy_input(rw, run_start..c.held.unwrap_or(line_start))?;
                    run_start = c.start;
                    rw.recall.line_at = c.offset(line_start);
                    let held = c.held.take();
                    let site = Site {
                        buf: &c.buf[..line_end],
                        start: line_start,
                        lines: c.lines,
                    };
                    rewrite_line(rw, &site, held)?;
                }
            }
            lane = rw.lane_open();
        }
        copy_input(rw, run_start..c.held.unwrap_or(c.start))
    }

    /// At the end of the input: held lines go to the rewriter after all,
    /// then the final line if it has no newline.
    fn end(&mut self, rw: &mut Rewriter<'_>) -> Result<(), RewriteError> {
        let c = &mut self.chunks;
        if let Some(from) = c.held.take() {
            self.lane = Lane::default();
            rw.recall.line_at = c.offset(from);
            let (buf, lines) = (&c.buf, c.lines);
            replay(rw, &buf[from..c.start], || lines.at(buf, from))?;
        }
        if c.start == c.end {
            return Ok(());
        }
        let line = &c.buf[c.start..c.end];
        let content = line.strip_suffix(b"\r").unwrap_or(line);
        let line_no = c.line_no(c.start);
        rw.recall.line_at = c.offset(c.start);
        rw.line(content, false).map_err(|f| error(f, line_no))
    }
}

/// Lines of the chunk the writer copies (see `Out::copy_input`).
fn copy_input(rw: &mut Rewriter<'_>, lines: std::ops::Range<usize>) -> Result<(), RewriteError> {
    rw.writer.out.copy_input(lines).map_err(RewriteError::Io)
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
    site: &Site<'_>,
    held: Option<usize>,
) -> Result<(), RewriteError> {
    let Site { buf, start, lines } = *site;
    let line_no = || lines.at(buf, start);
    let line = &buf[start..];
    if let Some(from) = held {
        replay(rw, &buf[from..start], || lines.at(buf, from))?;
    } else if rw.takes_position(line) {
        return rw
            .cost_line(line, line, true)
            .map_err(|f| error(f, line_no()));
    }
    let content = line.strip_suffix(b"\r").unwrap_or(line);
    rw.line(content, true).map_err(|f| error(f, line_no()))
}

/// Gives the rewriter call lines the lane held back (whole lines,
/// `first` giving the number of the first: counted only for an error, as
/// counting means reading the chunk up to them).
fn replay(
    rw: &mut Rewriter<'_>,
    lines: &[u8],
    first: impl Fn() -> u64,
) -> Result<(), RewriteError> {
    let lines = lines.strip_suffix(b"\n").unwrap_or(lines);
    for (i, line) in lines.split(|&b| b == b'\n').enumerate() {
        let content = line.strip_suffix(b"\r").unwrap_or(line);
        rw.line(content, true)
            .map_err(|f| error(f, first() + i as u64))?;
    }
    Ok(())
}

/// The fast lane: it takes the lines that stay as they are, and holds
/// back the part of a call group it has seen, `cob= cfi= cfn= calls=` in
/// that order, each at most once, until the position line.
#[derive(Debug, Default)]
struct Lane {
    /// How far the group got: 0 nothing, 1 `cob=`, 2 `cfi=`, 3 `cfn=`,
    /// 4 `calls=` (the position line is next).
    stage: u8,
    /// The callee's object, if named.
    ob: Option<Sym>,
    /// Ids defined by the held `cob=`/`cfi=`, marked as written once the
    /// group is.
    defined: [Option<(Space, u64)>; 2],
    /// The callee, once `cfn=` is held: native code, whose call stays as
    /// written (its id, if it has one, is marked as written).
    callee: Option<Native>,
}

impl Lane {
    fn is_empty(&self) -> bool {
        self.stage == 0
    }

    /// True where the driver may pass over a run of plain cost lines in
    /// one step: nothing held, or a whole call group (up to `calls=`) whose
    /// position line the run begins with.
    #[inline]
    fn takes_plain_run(&self) -> bool {
        self.stage == 0 || self.stage == 4
    }

    /// Handles `line` in the lane if it can (see [`Pass`]). On
    /// [`Pass::Declined`] nothing held is kept: the rewriter is to see the
    /// held lines again.
    #[inline]
    fn pass(&mut self, rw: &mut Rewriter<'_>, line: &[u8]) -> Pass {
        let pass = self.try_pass(rw, line).unwrap_or(Pass::Declined);
        if pass == Pass::Declined {
            *self = Lane::default();
        }
        pass
    }

    fn try_pass(&mut self, rw: &mut Rewriter<'_>, line: &[u8]) -> Option<Pass> {
        let (Some(&first), Some(&last)) = (line.first(), line.last()) else {
            let free = self.is_empty() && rw.reader.group.is_empty();
            return free.then_some(Pass::Copied);
        };
        if last == b'\r' {
            return None; // CRLF lines are rewritten as LF by the rewriter
        }
        if let Some((key, id)) = keyed_id(line) {
            return self.pass_id(rw, key, id, line);
        }
        match first {
            b'0'..=b'9' | b'+' | b'-' | b'*' => self.pass_position(rw, line),
            b'c' => self.pass_call_line(rw, line),
            _ if !self.is_empty() => None,
            b'f' if line.starts_with(b"fn=") => names::pass_function(rw, &line[3..], None),
            b'f' if line.starts_with(b"fl=") => {
                names::pass_name(rw, Sets::FunctionFile, &line[3..])
            }
            b'f' if line.starts_with(b"fi=") || line.starts_with(b"fe=") => {
                names::pass_name(rw, Sets::File, &line[3..])
            }
            b'o' if line.starts_with(b"ob=") => names::pass_name(rw, Sets::Object, &line[3..]),
            _ => None,
        }
    }

    /// A line that only refers to an id (`key=(id)`): a call's
    /// `cob=`/`cfi=`/`cfn=` is held, a name line is the lane's.
    fn pass_id(&mut self, rw: &mut Rewriter<'_>, key: IdKey, id: u64, line: &[u8]) -> Option<Pass> {
        let (stage, space) = match key {
            IdKey::Cob => (1, Space::Objects),
            IdKey::Cfi => (2, Space::Files),
            IdKey::Cfn => (3, Space::Files),
            _ if !self.is_empty() => return None,
            _ => return names::pass_name_id(rw, key, id, line),
        };
        self.enter_stage(stage)?;
        match key {
            IdKey::Cfn => self.hold_callee(rw, &line[4..], Some(id)),
            _ => self.hold_sym(space, written_id(rw, space, id)?, None),
        }
    }

    /// A cost line, or the position line of a held call (the group is
    /// then copied whole).
    fn pass_position(&mut self, rw: &mut Rewriter<'_>, line: &[u8]) -> Option<Pass> {
        rw.cols.check(line).ok()?;
        self.takes_plain_run().then_some(())?;
        self.copied(rw);
        Some(Pass::CopiedPosition)
    }

    /// Cost lines from input offset `at` on were copied (a run of plain
    /// ones by the driver, or one the lane passed,
    /// [`Pass::CopiedPosition`]), the first of them the position line of
    /// the call group held, if any: that group is copied with them, and
    /// the input's position is forgotten.
    #[inline]
    fn copied_cost_lines(&mut self, rw: &mut Rewriter<'_>, at: u64) {
        self.copied(rw);
        rw.reader.forget_pos(at);
    }

    /// `cob=`, `cfi=`/`cfl=`, `cfn=`, `calls=` of a call between native
    /// functions where the output's defaults equal the input's.
    fn pass_call_line(&mut self, rw: &mut Rewriter<'_>, line: &[u8]) -> Option<Pass> {
        let (stage, space, value) = if let Some(v) = line.strip_prefix(b"cob=") {
            (1, Space::Objects, v)
        } else if let Some(v) = line.strip_prefix(b"cfi=").or(line.strip_prefix(b"cfl=")) {
            (2, Space::Files, v)
        } else if let Some(v) = line.strip_prefix(b"cfn=") {
            (3, Space::Files, v)
        } else if line.starts_with(b"calls=") {
            return self.pass_calls(line);
        } else {
            return None;
        };
        self.enter_stage(stage)?;
        if stage == 3 {
            return self.hold_callee(rw, value, None);
        }
        let (sym, defines) = known_name(rw, space, value)?;
        self.hold_sym(space, sym, defines)
    }

    /// Moves the held group on to `stage` (1 `cob=`, 2 `cfi=`, 3 `cfn=`);
    /// `None` if the group is past it already.
    fn enter_stage(&mut self, stage: u8) -> Option<()> {
        (stage > self.stage).then(|| self.stage = stage)
    }

    /// Holds a `cob=`/`cfi=` naming `sym` (defining id `defines`) at the
    /// current stage.
    fn hold_sym(&mut self, space: Space, sym: Sym, defines: Option<u64>) -> Option<Pass> {
        if space == Space::Objects {
            self.ob = Some(sym);
        }
        let slot = usize::from(self.stage - 1);
        self.defined[slot] = defines.map(|id| (space, id));
        Some(Pass::Held)
    }

    /// The callee (`cfn=`'s value), where it is native code with no
    /// `cob=`/`cfi=` owed for it (its call stays as it is); `id` if the
    /// value is only that. A JIT callee is declined: its call is
    /// rewritten.
    fn hold_callee(&mut self, rw: &mut Rewriter<'_>, cfn: &[u8], id: Option<u64>) -> Option<Pass> {
        let same_defaults = rw.same_call_defaults();
        let object = self.ob.unwrap_or(rw.reader.current.ob);
        if let Some(id) = id.filter(|&id| rw.writer.native_written.contains(id)) {
            same_defaults.then_some(())?;
            rw.reader.fn_under(id, object)?;
            self.callee = Some(Native(Some(id)));
            return Some(Pass::Held);
        }
        let f = rw.resolve_fn(cfn, object).ok()?;
        if f.renamed() || !same_defaults {
            return None;
        }
        if let Some(id) = f.id {
            rw.reader.fns.get(id)?;
            (rw.writer.defined.fns.contains(id) || f.defines).then_some(())?;
        }
        self.callee = Some(Native(f.id));
        Some(Pass::Held)
    }

    /// `calls=` after a held callee, held too: the group is copied with
    /// its position line.
    fn pass_calls(&mut self, line: &[u8]) -> Option<Pass> {
        self.callee?;
        if !plain_count(&line[b"calls=".len()..]) {
            CountLine::parse("calls", line).ok()?;
        }
        self.enter_stage(4)?;
        Some(Pass::Held)
    }

    /// The held group, if any, is copied with its position line.
    #[inline]
    fn copied(&mut self, rw: &mut Rewriter<'_>) {
        if !self.is_empty() {
            self.write_held(rw);
        }
    }

    /// The held group was copied: the ids it defined and its callee's are
    /// written now. The ids were resolved when their lines were held: each
    /// is in its table.
    fn write_held(&mut self, rw: &mut Rewriter<'_>) {
        let held = std::mem::take(self);
        for (space, id) in held.defined.into_iter().flatten() {
            mark_written(rw, space, id);
        }
        let Some(Native(Some(id))) = held.callee else {
            return;
        };
        if rw.writer.native_written.contains(id) {
            return;
        }
        if let Some(entry) = rw.reader.fns.get(id) {
            rw.writer.defined.fns.insert(id);
            if entry.kind == FnKind::Native {
                rw.writer.native_written.insert(id);
            }
        }
    }
}

/// A held call's native callee: its id, if `cfn=` gave one.
#[derive(Clone, Copy, Debug)]
struct Native(Option<u64>);
