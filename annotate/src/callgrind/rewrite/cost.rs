//! Position lines: copied while the output's reader state equals the
//! input's, decoded and re-encoded (with source lines) inside JIT blocks.

use super::state::Block;
use super::{Fail, Res, Rewriter};
use crate::callgrind::format::position::{first_cost, Pos};
use crate::callgrind::format::quick;

impl Rewriter<'_> {
    /// Decodes a position line against the input's state. Where the lazy
    /// pass forgot that state, an absolute line is placed as it is and a
    /// relative one after reading back (`recall.rs`).
    pub(in crate::callgrind) fn decode<'a>(&mut self, text: &'a [u8]) -> Res<(Pos, &'a [u8])> {
        if let Some(state) = self.reader.pos() {
            return Ok(self.cols.decode(text, state)?);
        }
        match self.cols.decode_absolute(text) {
            Ok(decoded) => {
                // The output's state is unknown too: its next line must be
                // absolute.
                self.writer.absolute_next = true;
                Ok(decoded)
            }
            Err(Some(e)) => Err(Fail::Line(e)),
            Err(None) => self.decode_recalled(text),
        }
    }

    /// The position, costs and first cost of a JIT block's cost line in
    /// one pass, where positions are tracked and the line has the common
    /// form of `positions: instr line` (see [`quick::instr_line`]);
    /// `None` for any other line, which [`decode`](Self::decode) reads.
    #[inline]
    fn quick_decode<'a>(&self, text: &'a [u8]) -> Option<(Pos, &'a [u8], u64)> {
        let state = *self.reader.pos().filter(|_| self.cols.is_instr_line())?;
        let (addr, line, costs) = quick::instr_line(text, &state)?;
        let cost = quick::first_cost(costs)?;
        let mut pos = state;
        (pos[0], pos[1]) = (addr, line);
        Some((pos, costs, cost))
    }

    pub(in crate::callgrind) fn cost_line(
        &mut self,
        raw: &[u8],
        text: &[u8],
        terminated: bool,
    ) -> Res {
        match self.part.block {
            Block::Jit(symbol) => {
                let (pos, costs, cost) = match self.quick_decode(text) {
                    Some(decoded) => decoded,
                    None => {
                        let (pos, costs) = self.decode(text)?;
                        (pos, costs, first_cost(costs)?)
                    }
                };
                self.reader.set_pos(pos);
                let (owner, file, out) = self.naming.locate(&self.cols, symbol, pos);
                if owner != symbol || self.part.charged.is_some() {
                    self.charge_to(Some(owner), cost)?;
                }
                self.jit_costs.add(owner, cost);
                if let Some(file) = file {
                    self.emit().switch_file(file)?;
                }
                self.note_ran(cost);
                match self.part.stretch {
                    Some(_) => self.add_to_stretch(out, costs, cost)?,
                    None => self.part.last_own = Some(out),
                }
                self.emit().position(out, costs)
            }
            Block::Unnamed(addr) => self.unnamed_cost_line(addr, raw, text, terminated),
            Block::Native => self.copy_position(raw, text, terminated),
        }
    }

    /// A cost line of address-named block `addr`: at an address of a JIT
    /// function, written under it (see `owner`); else the block's own.
    fn unnamed_cost_line(&mut self, addr: u64, raw: &[u8], text: &[u8], terminated: bool) -> Res {
        let before = self.reader.pos().copied();
        let (pos, costs) = self.decode(text)?;
        let cost = first_cost(costs)?;
        let Some((owner, file, out)) = self.naming.jit_at(&self.cols, pos) else {
            // The lines coming home writes (a stretch's call) go before
            // this one: the output's state is then compared with the
            // input's before it, which a relative line is read against.
            self.back_home()?;
            self.reader.set_pos(pos);
            *self.stats.unnamed_cost.entry(addr).or_default() += cost;
            self.part.last_own = Some(pos);
            return self.copy_decoded(raw, text, terminated, before, (pos, costs));
        };
        self.reader.set_pos(pos);
        self.charge_to(Some(owner), cost)?;
        self.jit_costs.add(owner, cost);
        if let Some(file) = file {
            self.emit().switch_file(file)?;
        }
        self.add_to_stretch(out, costs, cost)?;
        self.emit().position(out, costs)
    }

    /// Copies a position line outside JIT blocks: verbatim while the
    /// output's state equals the input's (in fast mode without decoding
    /// it), else decoded and re-encoded until the two agree again.
    pub(in crate::callgrind) fn copy_position(
        &mut self,
        raw: &[u8],
        text: &[u8],
        terminated: bool,
    ) -> Res {
        if self.copies_verbatim() {
            self.cols.check(text)?;
            self.forget_pos();
            return Ok(self.writer.out.verbatim(raw, terminated)?);
        }
        self.copy_tracked(raw, text, terminated)
    }

    /// Copies a position line as [`copy_position`](Self::copy_position)
    /// does, the input's position kept known (an address-named block's
    /// next lines are looked up).
    pub(in crate::callgrind) fn copy_tracked(
        &mut self,
        raw: &[u8],
        text: &[u8],
        terminated: bool,
    ) -> Res {
        let before = self.reader.pos().copied();
        let (pos, costs) = self.decode(text)?;
        first_cost(costs)?;
        self.reader.set_pos(pos);
        self.copy_decoded(raw, text, terminated, before, (pos, costs))
    }

    /// [`copy_position`](Self::copy_position) of a line decoded to `line`
    /// (position and costs) from the input's position `before`.
    fn copy_decoded(
        &mut self,
        raw: &[u8],
        text: &[u8],
        terminated: bool,
        before: Option<Pos>,
        (pos, costs): (Pos, &[u8]),
    ) -> Res {
        let absolute = self.cols.is_absolute(text);
        let same_meaning = self.writer.synced || Some(self.writer.pos) == before || absolute;
        if same_meaning && (absolute || !self.writer.absolute_next) {
            // An absolute line is what `absolute_next` asks for.
            self.writer.copied_position(pos);
            return Ok(self.writer.out.verbatim(raw, terminated)?);
        }
        self.emit().position(pos, costs)
    }
}
