//! Runs of a JIT block's cost lines at one place, in one loop: what
//! [`cost_line`](Rewriter::cost_line) does line by line where only the
//! position changes. Callgrind writes a JIT function's code as one cost
//! line per instruction, and a perf map gives the whole function one
//! source line, so most of these lines land where the line before did.
//! An address-named block's lines outside every JIT range are copied as
//! they are, in runs too. The test `a_jit_run_writes_what_cost_line_writes`
//! holds the runs to the lines on every fixture, with its symbol files
//! and with none that name its code.

use std::io;
use std::ops::Range;

use super::state::Block;
use super::Rewriter;
use crate::callgrind::format::pos::Pos;
use crate::callgrind::format::quick;

/// Where a run's lines go: the block's own function at one source line,
/// whose file the output has current.
struct Place {
    /// The addresses that share the place.
    range: Range<u64>,
    /// The line written for each of them.
    line: u64,
}

/// A plain cost line of the columns `instr line` as a run reads it.
struct RunLine<'a> {
    addr: u64,
    line: u64,
    /// The costs, without the blank before them or the LF after.
    costs: &'a [u8],
    /// The first cost.
    cost: u64,
    /// The line's length with its LF.
    size: usize,
}

/// The line at the start of `rest`, against the input's position `input`:
/// `None` where it is not in the form [`quick::instr_line`] and
/// [`quick::first_cost_to_lf`] read (then `cost_line` reads it).
#[inline(always)]
fn run_line<'a>(rest: &'a [u8], input: &Pos) -> Option<RunLine<'a>> {
    let (addr, line, on) = quick::instr_line(rest, input)?;
    let (cost, len) = quick::first_cost_to_lf(on)?;
    Some(RunLine {
        addr,
        line,
        costs: &on[..len],
        cost,
        size: rest.len() - on.len() + len + 1,
    })
}

impl Rewriter<'_> {
    /// Rewrites the cost lines at the start of `lines` (whole plain lines
    /// of the current block, each ending in LF) while each lies where the
    /// line before it was looked up, in the block's own function, and no
    /// stretch is open; the number of bytes taken. The line it stops at
    /// goes to [`cost_line`](Self::cost_line), which looks it up. In a
    /// block named by address, [`unnamed_run`](Self::unnamed_run) takes
    /// the lines instead.
    pub(in crate::callgrind) fn jit_run(&mut self, lines: &[u8]) -> io::Result<usize> {
        if let Block::Unnamed(addr) = self.part.block {
            return self.unnamed_run(addr, lines);
        }
        let Some((symbol, place)) = self.run_place() else {
            return Ok(0);
        };
        let Some(mut input) = self.reader.pos().copied() else {
            return Ok(0);
        };
        let mut output = self.writer.pos;
        let (jit_costs, noted) = (&mut self.jit_costs, &mut self.reentry.noted);
        let taken = self.writer.out.compose_lines(|buf| {
            buf.reserve(lines.len());
            let mut taken = 0;
            while let Some(l) = run_line(&lines[taken..], &input) {
                if !place.range.contains(&l.addr) {
                    break;
                }
                (input[0], input[1]) = (l.addr, l.line);
                let mut out: Pos = input;
                out[1] = place.line;
                jit_costs.add(symbol, l.cost);
                noted.add_ran(l.cost);
                quick::encode_instr_line(buf, &out, &output, false);
                if !l.costs.is_empty() {
                    buf.push(b' ');
                    buf.extend_from_slice(l.costs);
                }
                buf.push(b'\n');
                output = out;
                taken += l.size;
            }
            taken
        })?;
        if taken > 0 {
            self.reader.set_pos(input);
            self.writer.wrote(output, &input);
            self.part.last_own = Some(output);
        }
        Ok(taken)
    }

    /// The block's own function and the place of the last lookup, where a
    /// cost line there would be written as [`jit_run`](Self::jit_run)
    /// writes it: nothing moved to another function, no group open, the
    /// columns `instr line`, the output's state known and its file the
    /// place's.
    fn run_place(&mut self) -> Option<(crate::symbols::SymbolId, Place)> {
        let Block::Jit(symbol) = self.part.block else {
            return None;
        };
        let quiet = self.part.charged.is_none() && self.part.stretch.is_none();
        let plain = self.cols.is_instr_line() && self.reader.group.is_empty();
        if !quiet || !plain || self.writer.absolute_next {
            return None;
        }
        let (range, place, file) = self.naming.last_place()?;
        let home = place.symbol == symbol && file == self.writer.current.file;
        home.then_some((
            symbol,
            Place {
                range,
                line: u64::from(place.line),
            },
        ))
    }

    /// Copies the cost lines at the start of `lines` of the block named by
    /// address `addr` while each lies outside every JIT range, as
    /// `unnamed_cost_line` copies such a line where the output is in step
    /// with the input; the number of bytes taken.
    fn unnamed_run(&mut self, addr: u64, lines: &[u8]) -> io::Result<usize> {
        let Some(mut input) = self.reader.pos().copied() else {
            return Ok(0);
        };
        if !self.copies_unnamed_lines(&input) {
            return Ok(0);
        }
        let (mut cost, mut taken) = (0u64, 0);
        while let Some(l) = run_line(&lines[taken..], &input) {
            if self.naming.lookup(l.addr, None).is_some() {
                break;
            }
            (input[0], input[1]) = (l.addr, l.line);
            cost = cost.wrapping_add(l.cost);
            taken += l.size;
        }
        if taken > 0 {
            let run = &lines[..taken];
            self.writer
                .out
                .compose_lines(|buf| buf.extend_from_slice(run))?;
            self.reader.set_pos(input);
            self.writer.copied_position(input);
            self.part.last_own = Some(input);
            let sum = self.stats.unnamed_cost.entry(addr).or_default();
            *sum = sum.wrapping_add(cost);
        }
        Ok(taken)
    }

    /// True where an address-named block's cost line at a position outside
    /// every JIT range would be copied as it is, leaving the output in
    /// step: nothing charged to another function, the output's file the
    /// input's, the columns `instr line`, no group open, and the output's
    /// position that of the input (`input`).
    fn copies_unnamed_lines(&self, input: &Pos) -> bool {
        let home =
            self.part.charged.is_none() && self.writer.current.file == self.reader.current.file;
        let plain = self.cols.is_instr_line() && self.reader.group.is_empty();
        let in_step = self.writer.synced || self.writer.pos == *input;
        home && plain && in_step && !self.writer.absolute_next
    }
}
