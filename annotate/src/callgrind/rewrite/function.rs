//! Name lines outside calls: `ob=`, `fl=`, `fi=`/`fe=` and `fn=`. A JIT
//! function's `fn=` brings its own object and file (written where the
//! output's current ones differ); leaving its block brings the file back.

use super::naming::FnKind;
use super::reader::Sets;
use super::reader::Space;
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
                self.note_block();
                let which = match key {
                    Key::Ob => Sets::Object,
                    _ => Sets::FunctionFile,
                };
                let (sym, nr) = self.name_value(which.space(), value)?;
                self.emit().input_name(which.space(), raw, nr, terminated)?;
                self.reader.current.set(which, sym);
                self.writer.current.set(which, sym);
                Ok(())
            }
            Key::Fi | Key::Fe => {
                let (sym, nr) = self.name_value(Space::Files, value)?;
                self.reader.current.set(Sets::File, sym);
                if let Block::Jit(_) = self.part.block {
                    return Ok(()); // JIT blocks get their files from the line table
                }
                self.emit().input_name(Space::Files, raw, nr, terminated)?;
                self.writer.current.set(Sets::File, sym);
                Ok(())
            }
            Key::Fn => self.function(raw, value, terminated),
            _ => {
                self.stats.unknown_lines += 1;
                Ok(self.writer.out.verbatim(raw, terminated)?)
            }
        }
    }

    fn function(&mut self, raw: &[u8], value: &[u8], terminated: bool) -> Res {
        self.end_block()?;
        let f = self.resolve_fn(value, self.reader.current.ob)?;
        let (ob, fl) = match f.kind {
            FnKind::Jit { ident, .. } => (ident.object, ident.file),
            _ => (self.reader.current.ob, self.reader.current.fl),
        };
        if self.writer.current.ob != ob {
            self.emit().sym("ob", Space::Objects, ob)?;
            self.writer.current.ob = ob;
        }
        if self.writer.current.fl != fl {
            self.emit().sym("fl", Space::Files, fl)?;
            (self.writer.current.fl, self.writer.current.file) = (fl, fl);
        }
        self.emit().function("fn", raw, f, terminated)?;
        // Callgrind starts every function with absolute positions; so do we
        // wherever our own lines made the output's state differ.
        self.writer.absolute_next = !self.writer.synced;
        self.part.charged = None;
        self.part.block_fn =
            Some(f).filter(|f| matches!(f.kind, FnKind::Jit { .. } | FnKind::Unnamed(_)));
        self.part.who = Some(Who::of(f, self.reader.current.ob));
        self.part.last_own = None;
        self.part.block = match f.kind {
            FnKind::Jit { symbol, .. } => {
                self.writer.absolute_next = true;
                Block::Jit(symbol)
            }
            FnKind::Unnamed(addr) => Block::Unnamed(addr),
            FnKind::Native | FnKind::Renamed(_) => Block::Native,
        };
        self.note_block();
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
        if matches!(self.part.block, Block::Jit(_))
            && self.writer.current.file != self.writer.current.fl
        {
            let fl = self.writer.current.fl;
            self.emit().sym("fe", Space::Files, fl)?;
            self.writer.current.file = fl;
        }
        Ok(())
    }
}
