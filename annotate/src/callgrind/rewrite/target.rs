//! Call and jump targets: decoded against the input's state (targets
//! never move it), given their source line where they lie in JIT code,
//! and written out again on the `calls=`/`jump=`/`jcnd=` line.

use super::names::FnRef;
use super::naming::FnKind;
use super::state::Block;
use super::{Fail, Res, Rewriter};
use crate::callgrind::format::line::CountLine;
use crate::callgrind::format::position::{Column, Pos};
use crate::callgrind::format::quick;

impl Rewriter<'_> {
    /// A call or jump target relative to the input's state (targets never
    /// move the state).
    pub(super) fn decode_target(&mut self, text: &[u8]) -> Res<Pos> {
        if let Some(pos) = self.quick_target(text) {
            return Ok(pos);
        }
        if let Some(state) = self.reader.pos() {
            return Ok(self.cols.decode(text, state)?.0);
        }
        self.cols
            .decode_absolute(text)
            .map(|d| d.0)
            .map_err(|e| e.map_or(Fail::NeedsExact, Fail::Line))
    }

    /// A target of the common `instr line` form, after one blank, read in
    /// one pass (see [`quick::instr_line`]); `None` for any other, which
    /// [`decode_target`](Self::decode_target) reads.
    #[inline]
    fn quick_target(&self, text: &[u8]) -> Option<Pos> {
        if !self.cols.is_instr_line() {
            return None;
        }
        let text = text.strip_prefix(b" ")?;
        let (mut pos, (addr, line, _)) = match self.reader.pos().copied() {
            Some(state) => (state, quick::instr_line(text, &state)?),
            None => (Pos::default(), quick::absolute_instr_line(text)?),
        };
        (pos[0], pos[1]) = (addr, line);
        Some(pos)
    }

    /// A target inside JIT code gets its source line (a JIT callee's, or
    /// any target of a jump in a JIT block).
    pub(super) fn map_target(&mut self, target: Pos, callee: Option<FnRef>) -> Pos {
        if let Some(kind @ FnKind::Jit { .. }) = callee.map(|f| f.kind) {
            return self.jit_target_pos(target, kind);
        }
        match (self.part.block, self.cols.index(Column::Instr)) {
            (Block::Jit(symbol), Some(_)) => self.naming.locate(&self.cols, symbol, target).2,
            (Block::Unnamed(_), Some(_)) => self
                .naming
                .jit_at(&self.cols, target)
                .map_or(target, |(_, _, at)| at),
            _ => target,
        }
    }

    /// The target of a call into JIT code from native code: decoded if it
    /// can be, else the pseudo-function's own address (callgrind names each
    /// one after its call target), with its source line.
    pub(super) fn jit_target(&mut self, text: &[u8], callee: FnKind) -> Res<Pos> {
        let target = match self.decode_target(text) {
            Ok(t) => t,
            Err(Fail::NeedsExact) => [0; 3],
            Err(e) => return Err(e),
        };
        Ok(self.jit_target_pos(target, callee))
    }

    /// A target in JIT pseudo-function `callee` with its source line: the
    /// line table's where addresses are known, else the function's own
    /// line.
    fn jit_target_pos(&mut self, mut target: Pos, callee: FnKind) -> Pos {
        let FnKind::Jit {
            symbol, addr, line, ..
        } = callee
        else {
            unreachable!("a JIT callee")
        };
        match (
            self.cols.index(Column::Instr),
            self.cols.index(Column::Line),
        ) {
            (Some(i), li) => {
                if target[i] == 0 {
                    target[i] = addr;
                }
                match li {
                    Some(li) if target[i] == addr => target[li] = u64::from(line),
                    _ => target = self.naming.locate(&self.cols, symbol, target).2,
                }
                target
            }
            (None, Some(li)) => {
                target[li] = u64::from(self.naming.table.symbol(symbol).line);
                target
            }
            (None, None) => target,
        }
    }

    /// The `calls=`/`jump=` line: as it was, or with its target written
    /// out (absolutely where the output's state is not known).
    pub(super) fn write_count_line(
        &mut self,
        line: CountLine,
        target: Pos,
        unchanged: bool,
    ) -> Res {
        if unchanged {
            return Ok(self.writer.out.verbatim(line.raw, true)?);
        }
        let mut text = std::mem::take(&mut self.writer.buf);
        text.clear();
        text.extend_from_slice(line.count);
        text.push(b' ');
        let absolute = self.reader.pos().is_none() || self.writer.absolute_next;
        self.cols
            .encode(&mut text, &target, &self.writer.pos, absolute);
        let result = self.writer.out.spec(line.key, &text);
        self.writer.buf = text;
        Ok(result?)
    }
}
