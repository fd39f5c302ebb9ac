//! Name lines outside calls: `ob=`, `fl=`, `fi=`/`fe=` and `fn=`. A JIT
//! function's `fn=` brings its own object and file (written where the
//! output's current ones differ); leaving its block brings the file back.

use super::names::Space;
use super::naming::FnKind;
use super::reentry::Who;
use super::state::Block;
use super::{Res, Rewriter};
use crate::callgrind::format::line::Key;

impl Rewriter<'_> {
    /// `ob=`, `fl=`, `fi=`, `fe=`, `fn=`, and keys outside the spec.
    pub(super) fn spec(&mut self, raw: &[u8], key: Key, value: &[u8], terminated: bool) -> Res {
        match key {
            Key::Ob | Key::Fl => {
                self.end_block()?;
                self.part.block = Block::Native;
                let space = if key == Key::Ob {
                    Space::Objects
                } else {
                    Space::Files
                };
                let (sym, nr) = self.name_value(space, value)?;
                self.emit_input_name(space, raw, nr, terminated)?;
                if key == Key::Ob {
                    (self.part.input.ob, self.part.output.ob) = (sym, sym);
                } else {
                    (
                        self.part.input.fl,
                        self.part.input.file,
                        self.part.output.fl,
                        self.part.output.file,
                    ) = (sym, sym, sym, sym);
                }
                Ok(())
            }
            Key::Fi | Key::Fe => {
                let (sym, nr) = self.name_value(Space::Files, value)?;
                self.part.input.file = sym;
                if let Block::Jit(_) = self.part.block {
                    return Ok(()); // JIT blocks get their files from the line table
                }
                self.emit_input_name(Space::Files, raw, nr, terminated)?;
                self.part.output.file = sym;
                Ok(())
            }
            Key::Fn => self.function(raw, value, terminated),
            _ => {
                self.stats.unknown_lines += 1;
                Ok(self.out.verbatim(raw, terminated)?)
            }
        }
    }

    fn function(&mut self, raw: &[u8], value: &[u8], terminated: bool) -> Res {
        self.end_block()?;
        let f = self.resolve_fn(value, self.part.input.ob)?;
        let (ob, fl) = match f.kind {
            FnKind::Jit { symbol, .. } => {
                let ident = self.naming.jit_ident(symbol);
                (ident.object, ident.file)
            }
            _ => (self.part.input.ob, self.part.input.fl),
        };
        if self.part.output.ob != ob {
            self.emit_sym("ob", Space::Objects, ob)?;
            self.part.output.ob = ob;
        }
        if self.part.output.fl != fl {
            self.emit_sym("fl", Space::Files, fl)?;
            (self.part.output.fl, self.part.output.file) = (fl, fl);
        }
        self.emit_fn("fn", raw, f, terminated)?;
        // Callgrind starts every function with absolute positions; so do we
        // wherever our own lines made the output's state differ.
        self.part.pos.absolute_next = !self.part.pos.synced;
        self.part.charged = None;
        self.part.block_fn =
            Some(f).filter(|f| matches!(f.kind, FnKind::Jit { .. } | FnKind::Unnamed(_)));
        self.part.who = Some(Who::of(f, self.part.input.ob));
        self.part.last_own = None;
        self.part.block = match f.kind {
            FnKind::Jit { symbol, .. } => {
                self.part.pos.absolute_next = true;
                Block::Jit(symbol)
            }
            FnKind::Unnamed(addr) => Block::Unnamed(addr),
            FnKind::Native | FnKind::Renamed(_) => Block::Native,
        };
        Ok(())
    }

    /// Leaves a JIT block (or code it jumped into; see `owner`) with the
    /// output's file back at the function's.
    pub(super) fn end_block(&mut self) -> Res {
        self.file_back()?;
        if self.part.stretch.is_some() {
            self.close_stretch()?;
            self.file_back()?;
        }
        Ok(())
    }

    /// In a JIT block, the output's file back at the function's.
    fn file_back(&mut self) -> Res {
        if matches!(self.part.block, Block::Jit(_)) && self.part.output.file != self.part.output.fl
        {
            self.emit_sym("fe", Space::Files, self.part.output.fl)?;
            self.part.output.file = self.part.output.fl;
        }
        Ok(())
    }
}
