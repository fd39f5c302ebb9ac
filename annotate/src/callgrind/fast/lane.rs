//! The native fast lane: lines of native code whose output is the input
//! line itself. Only their effect on the reader state is applied; the
//! driver copies them in runs. Whatever the lane is unsure of, it declines,
//! and the general rewriter sees the line (and any call lines held back).
//!
//! The lane is entered only where [`Lane::open`] holds: lazy tracking,
//! native code, output state equal to the input's. It owns the call
//! lines it holds back (a native call group, up to its position line);
//! the driver owns their bytes.

use super::held::{known_name, written_id, HeldCall};
pub(super) use super::pass::Pass;
use crate::callgrind::format::quick::{keyed_id, IdKey};
use crate::callgrind::rewrite::ids::Sym;
use crate::callgrind::rewrite::reentry::Who;
use crate::callgrind::rewrite::state::Block;
use crate::callgrind::rewrite::{FnKind, Rewriter, Space};

/// The fast lane: what it holds back of a call group.
#[derive(Debug, Default)]
pub(super) struct Lane {
    pub(super) held: HeldCall,
}

impl Lane {
    /// True while the lane may take lines: lazy tracking, native code,
    /// output state equal to the input's, and no call or jump being
    /// rewritten.
    #[inline]
    pub(super) fn open(rw: &Rewriter<'_>) -> bool {
        rw.copies_verbatim() && rw.group.is_empty() && rw.in_body()
    }

    /// Forgets the held lines: the rewriter is to see them.
    pub(super) fn drop_held(&mut self) {
        self.held = HeldCall::default();
    }

    /// Handles `line` in the lane if it can (see [`Pass`]). On
    /// [`Pass::Declined`] nothing held is kept: the rewriter is to see the
    /// held lines again.
    #[inline]
    pub(super) fn pass(&mut self, rw: &mut Rewriter<'_>, line: &[u8]) -> Pass {
        let pass = self.try_pass(rw, line).unwrap_or(Pass::Declined);
        if pass == Pass::Declined {
            self.held = HeldCall::default();
        }
        pass
    }

    /// True where the driver may pass over a run of plain cost lines in
    /// one step: nothing held, or a whole call group whose position line
    /// the run begins with.
    #[inline]
    pub(super) fn takes_plain_run(&self) -> bool {
        self.held.is_empty() || self.held.awaits_position()
    }

    /// Cost lines were copied (a run of plain ones by the driver, see
    /// `plain_lines`, or one by [`pass_position`](Self::pass_position)),
    /// the first of them the position line of the call group held, if
    /// any: that group is copied with them.
    #[inline]
    pub(super) fn copied_cost_lines(&mut self, rw: &mut Rewriter<'_>) {
        if !self.held.is_empty() {
            self.held.copied(rw);
        }
        rw.part.pos.forget_input();
    }

    fn try_pass(&mut self, rw: &mut Rewriter<'_>, line: &[u8]) -> Option<Pass> {
        let (Some(&first), Some(&last)) = (line.first(), line.last()) else {
            let free = self.held.is_empty() && rw.group.is_empty();
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
            b'c' => self.held.pass_call_line(rw, line),
            _ if !self.held.is_empty() => None,
            b'f' if line.starts_with(b"fn=") => self.pass_function(rw, &line[3..], None),
            b'f' if line.starts_with(b"fl=") => self.pass_name(rw, Space::Files, true, &line[3..]),
            b'f' if line.starts_with(b"fi=") || line.starts_with(b"fe=") => {
                self.pass_name(rw, Space::Files, false, &line[3..])
            }
            b'o' if line.starts_with(b"ob=") => {
                self.pass_name(rw, Space::Objects, true, &line[3..])
            }
            _ => None,
        }
    }

    /// A name line that only refers to an id (`key=(id)`, the common form
    /// once names are defined), without parsing the value again.
    fn pass_id(&mut self, rw: &mut Rewriter<'_>, key: IdKey, id: u64, line: &[u8]) -> Option<Pass> {
        let stage = match key {
            IdKey::Cob => 1,
            IdKey::Cfi => 2,
            IdKey::Cfn => 3,
            _ if !self.held.is_empty() => return None,
            IdKey::Fn => return self.pass_function(rw, &line[3..], Some(id)),
            IdKey::Ob => return self.pass_name_id(rw, Space::Objects, true, id),
            IdKey::Fl => return self.pass_name_id(rw, Space::Files, true, id),
            IdKey::Fi => return self.pass_name_id(rw, Space::Files, false, id),
        };
        self.held.enter_stage(stage)?;
        match key {
            IdKey::Cob => {
                self.held
                    .hold_sym(Space::Objects, written_id(rw, Space::Objects, id)?, None)
            }
            IdKey::Cfi => self
                .held
                .hold_sym(Space::Files, written_id(rw, Space::Files, id)?, None),
            _ => self.held.hold_callee(rw, &line[4..], Some(id)),
        }
    }

    /// `ob=(id)`/`fl=(id)` (`sets_function_file`) or `fi=(id)`/`fe=(id)`.
    fn pass_name_id(
        &mut self,
        rw: &mut Rewriter<'_>,
        space: Space,
        sets_function_file: bool,
        id: u64,
    ) -> Option<Pass> {
        let sym = written_id(rw, space, id)?;
        self.set_name(rw, space, sets_function_file, sym)
    }

    /// A cost line, or the position line of a held call (the group is
    /// then copied whole).
    fn pass_position(&mut self, rw: &mut Rewriter<'_>, line: &[u8]) -> Option<Pass> {
        rw.cols.check(line).ok()?;
        self.takes_plain_run().then_some(())?;
        self.copied_cost_lines(rw);
        Some(Pass::Copied)
    }

    /// `ob=`/`fl=` (`sets_function_file`) or `fi=`/`fe=`: kept as written
    /// where the output already knows the id it names.
    fn pass_name(
        &mut self,
        rw: &mut Rewriter<'_>,
        space: Space,
        sets_function_file: bool,
        value: &[u8],
    ) -> Option<Pass> {
        let sym = self.written_name(rw, space, value)?;
        self.set_name(rw, space, sets_function_file, sym)
    }

    /// The reader state after a copied `ob=`/`fl=`/`fi=`/`fe=` naming `sym`.
    #[inline]
    fn set_name(
        &mut self,
        rw: &mut Rewriter<'_>,
        space: Space,
        sets_function_file: bool,
        sym: Sym,
    ) -> Option<Pass> {
        let p = &mut rw.part;
        match (space, sets_function_file) {
            (Space::Objects, _) => (p.input.ob, p.output.ob) = (sym, sym),
            (Space::Files, true) => {
                (p.input.fl, p.input.file, p.output.fl, p.output.file) = (sym, sym, sym, sym)
            }
            (Space::Files, false) => (p.input.file, p.output.file) = (sym, sym),
        }
        p.block = Block::Native;
        Some(Pass::Copied)
    }

    /// Resolves an `ob`/`fl`-like value that can be written as it is (a
    /// definition, a plain name, or an id the output has defined), marking
    /// a definition as written.
    fn written_name(&mut self, rw: &mut Rewriter<'_>, space: Space, value: &[u8]) -> Option<Sym> {
        let (sym, defines) = known_name(rw, space, value)?;
        if let Some(id) = defines {
            rw.space_mut(space).ids.get_mut(id)?.emitted = true;
        }
        Some(sym)
    }

    /// `fn=` of a native function, when no object or file line is owed;
    /// `id` if the value is only that.
    fn pass_function(
        &mut self,
        rw: &mut Rewriter<'_>,
        value: &[u8],
        id: Option<u64>,
    ) -> Option<Pass> {
        let p = &rw.part;
        if !p.same_function_names() {
            return None;
        }
        let written = id.filter(|&id| p.tables.native_written.contains(id));
        let name = match written {
            Some(id) => p.tables.fns.get(id).map(|e| e.name),
            None => Some(self.native_fn(rw, value, rw.part.input.ob)?),
        };
        let object = rw.part.input.ob;
        rw.part.who = name.map(|name| Who::Named { name, object });
        rw.part.block = Block::Native;
        rw.part.pos.absolute_next = false;
        Some(Pass::Copied)
    }

    /// Resolves a `fn`-space value that names a native function and can be
    /// written as it is, marking it as written; its name.
    fn native_fn(&mut self, rw: &mut Rewriter<'_>, value: &[u8], object: Sym) -> Option<Sym> {
        let f = rw.resolve_fn(value, object).ok()?;
        if f.kind != FnKind::Native {
            return None;
        }
        let Some(id) = f.id else { return Some(f.name) };
        let entry = rw.part.tables.fns.get_mut(id)?;
        if !(entry.emitted || f.defines) {
            return None;
        }
        entry.emitted = true;
        rw.part.tables.native_written.insert(id);
        Some(f.name)
    }
}
