//! The names of a jump's target (`jfi=`/`jfn=`): a JIT function's own
//! file, the line table's file inside JIT code, or none where the output
//! could only name another function than the input does.

use super::call::Parsed;
use super::naming::FnKind;
use super::reader::{FnRef, Space};
use super::state::Block;
use super::{Res, Rewriter};
use crate::callgrind::format::position::Pos;

impl Rewriter<'_> {
    /// `jfi=`/`jfn=` for a jump. In JIT code the target's file comes from
    /// the line table (`target` given); a jump into another JIT function
    /// names that function's file. A jump that would name a function in
    /// another object names none (see
    /// [`names_other_object`](Self::names_other_object)).
    pub(super) fn write_jump_names(
        &mut self,
        parsed: &Parsed,
        target_fn: Option<FnRef>,
        target: Option<Pos>,
    ) -> Res {
        if target_fn.is_some_and(|f| self.names_other_object(f)) {
            return Ok(());
        }
        let jit_file = match target_fn.map(|f| f.kind) {
            Some(FnKind::Jit { symbol, .. }) => Some(self.naming.jit_ident(symbol).file),
            _ => None,
        };
        match (self.part.block, target) {
            (Block::Jit(symbol), Some(target)) => {
                let here = self.naming.locate(&self.cols, symbol, target).1;
                let file = jit_file.or(here).unwrap_or(self.writer.current.file);
                self.emit()
                    .name_if_changed("jfi", Space::Files, file, |c| c.file)?;
            }
            _ => match (jit_file, parsed.file.as_ref()) {
                (Some(file), _) => self
                    .emit()
                    .name_if_changed("jfi", Space::Files, file, |c| c.file)?,
                (None, Some(named)) => {
                    self.emit()
                        .input_name(Space::Files, named.raw, named.nr, true)?
                }
                (None, None) => {}
            },
        }
        match (target_fn, parsed.func) {
            (Some(f), Some((raw, _))) => self.emit().function("jfn", raw, f, true),
            _ => Ok(()),
        }
    }

    /// True where a jump's target `f` is no JIT code and the output's
    /// object is not the input's (a JIT block jumping into a stub
    /// callgrind named when it was called): `jfn=` takes the current
    /// object, so it could only name another function than the input's.
    /// KCachegrind would list a second one of that name, or, where `jfn=`
    /// first defines its id, bind the stub's own lines to the JIT code's
    /// object and file. Such a jump is written as one inside the jumping
    /// function, as callgrind writes a jump that stays in one.
    fn names_other_object(&self, f: FnRef) -> bool {
        !f.renamed() && self.writer.current.ob != self.reader.current.ob
    }
}
