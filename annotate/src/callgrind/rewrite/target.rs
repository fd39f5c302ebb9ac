//! Call and jump targets: decoded against the input's state (which
//! targets never move), and given their source line where they lie in JIT
//! code.

use super::naming::FnKind;
use super::reader::FnRef;
use super::state::Block;
use super::{Fail, Res, Rewriter};
use crate::callgrind::format::position::{Column, Pos};
use crate::callgrind::format::quick;

impl Rewriter<'_> {
    /// A call or jump target relative to the input's state (targets never
    /// move the state), read back where the lazy pass forgot that state
    /// (`recall.rs`).
    pub(super) fn decode_target(&mut self, text: &[u8]) -> Res<Pos> {
        match self.placed_target(text)? {
            Some(pos) => Ok(pos),
            None => Ok(self.decode_recalled(text)?.0),
        }
    }

    /// A call or jump target, where it can be placed without reading
    /// back: `None` for a relative one after the position was forgotten.
    fn placed_target(&self, text: &[u8]) -> Res<Option<Pos>> {
        if let Some(pos) = self.quick_target(text) {
            return Ok(Some(pos));
        }
        if let Some(state) = self.reader.pos() {
            return Ok(Some(self.cols.decode(text, state)?.0));
        }
        match self.cols.decode_absolute(text) {
            Ok(decoded) => Ok(Some(decoded.0)),
            Err(Some(e)) => Err(Fail::Line(e)),
            Err(None) => Ok(None),
        }
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
    /// a target in a JIT block's own function). A function of no JIT
    /// range keeps the position callgrind gave, wherever it lies: a
    /// callee (BEAM's threads enter JIT code under the name `clone`), or
    /// an address-named stub's own jump into JIT code.
    pub(super) fn map_target(&mut self, target: Pos, callee: Option<FnRef>) -> Pos {
        match (callee.map(|f| f.kind), self.part.block) {
            (Some(kind @ FnKind::Jit { .. }), _) => self.jit_target_pos(target, kind),
            (None, Block::Jit(symbol)) if self.cols.index(Column::Instr).is_some() => {
                self.naming.locate(&self.cols, symbol, target).2
            }
            _ => target,
        }
    }

    /// The target of a call into JIT code from native code: decoded if it
    /// can be without reading back, else the pseudo-function's own address
    /// (callgrind names each one after its call target), with its source
    /// line: the line callgrind gave is replaced either way.
    pub(super) fn jit_target(&mut self, text: &[u8], callee: FnKind) -> Res<Pos> {
        let target = self.placed_target(text)?.unwrap_or_default();
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
                target[li] = u64::from(self.naming.symbols.get(symbol).line);
                target
            }
            (None, None) => target,
        }
    }
}
