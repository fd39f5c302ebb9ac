//! Position lines: copied while the output's reader state equals the
//! input's, decoded and re-encoded (with source lines) inside JIT blocks.

use super::ids::Sym;
use super::line;
use super::position::{self, first_cost, Column, Pos};
use super::rewrite::{Block, Fail, Res, Rewriter, Space};

/// The symbol table's answer for a range of addresses.
#[derive(Debug)]
pub(super) struct Located {
    range: std::ops::Range<u64>,
    /// The symbol's segment, which holds the range.
    segment: std::ops::Range<u64>,
    /// Where the row search ended (a hint for the next one).
    row_index: usize,
    symbol: u32,
    row: Option<crate::symbols::Row>,
}

impl Rewriter<'_> {
    /// The output file and position for a position inside JIT block
    /// `symbol`: the line table's row for the address, else the
    /// function's declaration line.
    pub(super) fn locate(&mut self, symbol: u32, pos: Pos) -> (Sym, Pos) {
        let Some(li) = self.cols.index(Column::Line) else {
            return (self.part.out_file, pos);
        };
        let mut out = pos;
        let Some(addr) = self.cols.index(Column::Instr).map(|i| pos[i]) else {
            out[li] = u64::from(self.table.symbol(symbol).line);
            return (self.jit_ident(symbol).1, out);
        };
        match self.lookup(addr, symbol) {
            None => (self.jit_ident(symbol).1, pos),
            Some((_, Some(row))) => {
                out[li] = u64::from(row.line);
                (self.file_sym(row.file), out)
            }
            Some((found, None)) => {
                out[li] = u64::from(self.table.symbol(found).line);
                (self.jit_ident(found).1, out)
            }
        }
    }

    /// The symbol and row covering `addr`, remembering the addresses that
    /// share the answer: cost lines of one function hit it in a row, or
    /// at least stay in its segment (then only its rows are searched).
    /// `near` is the symbol the address most likely belongs to.
    #[inline]
    fn lookup(&mut self, addr: u64, near: u32) -> Option<(u32, Option<crate::symbols::Row>)> {
        match &self.last_found {
            Some(found) if found.range.contains(&addr) => Some((found.symbol, found.row)),
            _ => self.lookup_again(addr, near),
        }
    }

    /// [`lookup`](Self::lookup) outside the last answer's range.
    fn lookup_again(&mut self, addr: u64, near: u32) -> Option<(u32, Option<crate::symbols::Row>)> {
        let (segment, symbol, hint) = match &self.last_found {
            Some(found) if found.segment.contains(&addr) => {
                (found.segment.clone(), found.symbol, found.row_index)
            }
            _ => {
                let (segment, hit) = self.table.lookup_range_near(addr, near)?;
                (segment, hit.symbol, 0)
            }
        };
        let (span, row, row_index) = self.table.symbol(symbol).row_span_near(addr, hint);
        let range = segment.start.max(span.start)..segment.end.min(span.end);
        let found = Located {
            range,
            segment,
            row_index,
            symbol,
            row,
        };
        self.last_found = Some(found);
        Some((symbol, row))
    }

    /// Switches the output's current file with `fi=`/`fe=`.
    pub(super) fn switch_file(&mut self, file: Sym) -> Res {
        if file == self.part.out_file {
            return Ok(());
        }
        let key = if file == self.part.out_fl { "fe" } else { "fi" };
        self.emit_sym(key, Space::Files, file)?;
        self.part.out_file = file;
        Ok(())
    }

    /// Writes a position line for `pos` (relative to the output state,
    /// absolute where that is unknown) followed by `costs`.
    pub(super) fn write_position(&mut self, pos: Pos, costs: &[u8]) -> Res {
        let (cols, prev, absolute) = (&self.cols, &self.part.out_pos, self.part.absolute_next);
        self.out.composed(|buf| {
            cols.encode(buf, &pos, prev, absolute);
            if !costs.is_empty() {
                buf.push(b' ');
                buf.extend_from_slice(costs);
            }
        })?;
        self.part.out_pos = pos;
        self.part.absolute_next = false;
        self.part.synced = pos == self.part.in_pos;
        Ok(())
    }

    /// Decodes a position line against the input's state. Where fast mode
    /// has not tracked that state, only absolute values can be placed.
    pub(super) fn decode<'a>(&mut self, text: &'a [u8]) -> Res<(Pos, &'a [u8])> {
        if self.part.known {
            return Ok(self.cols.decode(text, &self.part.in_pos)?);
        }
        let decoded = self
            .cols
            .decode_absolute(text)
            .map_err(|e| e.map_or(Fail::NeedsExact, Fail::Line))?;
        // The output's state is unknown too: its next line must be absolute.
        (self.part.known, self.part.absolute_next) = (true, true);
        Ok(decoded)
    }

    /// The position, costs and first cost of a JIT block's cost line in
    /// one pass, where positions are tracked and the line has the common
    /// form of `positions: instr line` (see [`position::instr_line`]);
    /// `None` for any other line, which [`decode`](Self::decode) reads.
    #[inline]
    fn quick_decode<'a>(&self, text: &'a [u8]) -> Option<(Pos, &'a [u8], u64)> {
        if !(self.part.known && self.cols.is_instr_line()) {
            return None;
        }
        let (addr, line, costs) = position::instr_line(text, &self.part.in_pos)?;
        let cost = position::first_cost_quick(costs)?;
        let mut pos = self.part.in_pos;
        (pos[0], pos[1]) = (addr, line);
        Some((pos, costs, cost))
    }

    pub(super) fn cost_line(&mut self, raw: &[u8], text: &[u8], terminated: bool) -> Res {
        match self.part.block {
            Block::Jit(symbol) => {
                let (pos, costs, cost) = match self.quick_decode(text) {
                    Some(decoded) => decoded,
                    None => {
                        let (pos, costs) = self.decode(text)?;
                        (pos, costs, first_cost(costs)?)
                    }
                };
                self.part.in_pos = pos;
                *self.jit_costs[symbol as usize].get_or_insert(0) += cost;
                let (file, out) = self.locate(symbol, pos);
                self.switch_file(file)?;
                self.write_position(out, costs)
            }
            Block::Unnamed(addr) => {
                let cost = first_cost(self.cols.skip(text)?)?;
                *self.stats.unnamed_cost.entry(addr).or_default() += cost;
                self.copy_position(raw, text, terminated)
            }
            Block::Native => self.copy_position(raw, text, terminated),
        }
    }

    /// Copies a position line outside JIT blocks: verbatim while the
    /// output's state equals the input's (in fast mode without decoding
    /// it), else decoded and re-encoded until the two agree again.
    pub(super) fn copy_position(&mut self, raw: &[u8], text: &[u8], terminated: bool) -> Res {
        if self.part.synced && self.fast() {
            self.cols.check(text)?;
            self.part.known = false;
            return Ok(self.out.verbatim(raw, terminated)?);
        }
        let before = self.part.in_pos;
        let (pos, costs) = self.decode(text)?;
        first_cost(costs)?;
        self.part.in_pos = pos;
        let absolute = self.cols.is_absolute(text);
        let same_meaning = self.part.synced || self.part.out_pos == before || absolute;
        if same_meaning && (absolute || !self.part.absolute_next) {
            (self.part.out_pos, self.part.synced) = (pos, true);
            return Ok(self.out.verbatim(raw, terminated)?);
        }
        self.write_position(pos, costs)
    }
}

/// Checks a count field (`calls=` count, `jcnd=` taken/executed).
pub(super) fn check_count(token: &[u8]) -> Res {
    let plain = !token.is_empty() && token.len() < 20 && token.iter().all(u8::is_ascii_digit);
    let ok = plain
        || token
            .split(|&b| b == b'/')
            .all(|n| line::parse_u64(n).is_some());
    if ok {
        Ok(())
    } else {
        Err(format!("bad count '{}'", String::from_utf8_lossy(token)).into())
    }
}
