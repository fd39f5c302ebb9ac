//! The native fast lane: lines of native code whose output is the input
//! line itself. Only their effect on the reader state is applied; the
//! driver copies them in runs. Whatever the lane is unsure of, it declines,
//! and the general rewriter sees the line (and any call lines held back).
//!
//! The lane is entered only where [`Lane::open`] holds: lazy tracking,
//! native code, output state equal to the input's. A call group's `cob=`,
//! `cfi=`, `cfn=` and `calls=` are held back ([`HeldCall`]) until the
//! callee is known: a native callee's group is copied with its position
//! line; a JIT callee's is declined, and the rewriter writes it
//! (`rewrite/call.rs`, the one place call groups are written). The lane
//! owns what it holds of the group; the driver owns the bytes.

use crate::callgrind::format::line::CountLine;
use crate::callgrind::format::quick::{keyed_id, plain_count, IdKey};
use crate::callgrind::rewrite::ids::Sym;
use crate::callgrind::rewrite::reader::Sets;
use crate::callgrind::rewrite::reentry::Who;
use crate::callgrind::rewrite::state::Block;
use crate::callgrind::rewrite::{FnKind, Rewriter, Space};

/// What the lane did with a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Pass {
    /// Handled: the output line is the input line.
    Copied,
    /// A position line copied (undecoded): the driver notes where the
    /// input's position was forgotten.
    CopiedPosition,
    /// A call's `cob=`/`cfi=`/`cfn=`/`calls=` line, held until the callee
    /// is known to be native (then copied as it is).
    Held,
    /// Not for the lane: the rewriter must see it, after the held lines.
    Declined,
}

/// The fast lane: what it holds back of a call group.
#[derive(Debug, Default)]
pub(super) struct Lane {
    held: HeldCall,
}

impl Lane {
    /// True while the lane may take lines: lazy tracking, native code,
    /// output state equal to the input's, and no call or jump being
    /// rewritten.
    #[inline]
    pub(super) fn open(rw: &Rewriter<'_>) -> bool {
        rw.copies_verbatim() && rw.reader.group.is_empty() && rw.in_body()
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
            self.drop_held();
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

    /// Cost lines from input offset `at` on were copied (a run of plain
    /// ones by the driver, see `plain_lines`, or one the lane passed,
    /// [`Pass::CopiedPosition`]), the first of them the position line of
    /// the call group held, if any: that group is copied with them, and
    /// the input's position is forgotten.
    #[inline]
    pub(super) fn copied_cost_lines(&mut self, rw: &mut Rewriter<'_>, at: u64) {
        self.held_copied(rw);
        rw.reader.forget_pos(at);
    }

    #[inline]
    fn held_copied(&mut self, rw: &mut Rewriter<'_>) {
        if !self.held.is_empty() {
            self.held.copied(rw);
        }
    }

    fn try_pass(&mut self, rw: &mut Rewriter<'_>, line: &[u8]) -> Option<Pass> {
        let (Some(&first), Some(&last)) = (line.first(), line.last()) else {
            let free = self.held.is_empty() && rw.reader.group.is_empty();
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
            b'f' if line.starts_with(b"fl=") => self.pass_name(rw, Sets::FunctionFile, &line[3..]),
            b'f' if line.starts_with(b"fi=") || line.starts_with(b"fe=") => {
                self.pass_name(rw, Sets::File, &line[3..])
            }
            b'o' if line.starts_with(b"ob=") => self.pass_name(rw, Sets::Object, &line[3..]),
            _ => None,
        }
    }

    /// A name line that only refers to an id (`key=(id)`, the common form
    /// once names are defined), without parsing the value again.
    fn pass_id(&mut self, rw: &mut Rewriter<'_>, key: IdKey, id: u64, line: &[u8]) -> Option<Pass> {
        let (stage, space) = match key {
            IdKey::Cob => (1, Space::Objects),
            IdKey::Cfi => (2, Space::Files),
            IdKey::Cfn => (3, Space::Files),
            _ if !self.held.is_empty() => return None,
            IdKey::Fn => return self.pass_function(rw, &line[3..], Some(id)),
            IdKey::Ob => return set_name(rw, Sets::Object, written_id(rw, Space::Objects, id)?),
            IdKey::Fl => {
                return set_name(rw, Sets::FunctionFile, written_id(rw, Space::Files, id)?)
            }
            IdKey::Fi => return set_name(rw, Sets::File, written_id(rw, Space::Files, id)?),
        };
        self.held.enter_stage(stage)?;
        match key {
            IdKey::Cfn => self.held.hold_callee(rw, &line[4..], Some(id)),
            _ => self.held.hold_sym(space, written_id(rw, space, id)?, None),
        }
    }

    /// A cost line, or the position line of a held call (the group is
    /// then copied whole).
    fn pass_position(&mut self, rw: &mut Rewriter<'_>, line: &[u8]) -> Option<Pass> {
        rw.cols.check(line).ok()?;
        self.takes_plain_run().then_some(())?;
        self.held_copied(rw);
        Some(Pass::CopiedPosition)
    }

    /// `ob=`, `fl=` or `fi=`/`fe=` (`which`): kept as written where the
    /// value can be (a definition, marked as written; a plain name; an id
    /// the output has defined).
    fn pass_name(&mut self, rw: &mut Rewriter<'_>, which: Sets, value: &[u8]) -> Option<Pass> {
        let space = which.space();
        let (sym, defines) = known_name(rw, space, value)?;
        if let Some(id) = defines {
            mark_written(rw, space, id)?;
        }
        set_name(rw, which, sym)
    }

    /// `fn=` of a native function, when no object or file line is owed;
    /// `id` if the value is only that.
    fn pass_function(
        &mut self,
        rw: &mut Rewriter<'_>,
        value: &[u8],
        id: Option<u64>,
    ) -> Option<Pass> {
        if !rw.same_function_names() {
            return None;
        }
        let object = rw.reader.current.ob;
        let written = id.filter(|&id| rw.writer.native_written.contains(id));
        let name = match written {
            Some(id) => written_fn(rw, id, object)?,
            None => self.native_fn(rw, value, object)?,
        };
        rw.part.who = Some(Who::Named { name, object });
        rw.part.block = Block::Native;
        rw.writer.absolute_next = false;
        Some(Pass::Copied)
    }

    /// Resolves a `fn`-space value that names a native function and can be
    /// written as it is, marking it as written; its name.
    fn native_fn(&mut self, rw: &mut Rewriter<'_>, value: &[u8], object: Sym) -> Option<Sym> {
        let f = rw.resolve_fn(value, object).ok()?;
        if f.kind != FnKind::Native || f.rekinded {
            return None;
        }
        let Some(id) = f.id else { return Some(f.name) };
        rw.reader.fns.get(id)?;
        if !(rw.writer.defined.fns.contains(id) || f.defines) {
            return None;
        }
        rw.writer.defined.fns.insert(id);
        rw.writer.native_written.insert(id);
        Some(f.name)
    }
}

/// The part of a call group the lane has held back: `cob= cfi= cfn=
/// calls=` in that order, each at most once, until the position line.
#[derive(Debug, Default)]
struct HeldCall {
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

/// A held call's native callee: its id, if `cfn=` gave one.
#[derive(Clone, Copy, Debug)]
struct Native(Option<u64>);

impl HeldCall {
    fn is_empty(&self) -> bool {
        self.stage == 0
    }

    /// `cob=`, `cfi=`/`cfl=`, `cfn=`, `calls=` of a call between native
    /// functions where the output's defaults equal the input's.
    fn pass_call_line(&mut self, rw: &mut Rewriter<'_>, line: &[u8]) -> Option<Pass> {
        let (stage, value) = if let Some(v) = line.strip_prefix(b"cob=") {
            (1, v)
        } else if let Some(v) = line.strip_prefix(b"cfi=").or(line.strip_prefix(b"cfl=")) {
            (2, v)
        } else if let Some(v) = line.strip_prefix(b"cfn=") {
            (3, v)
        } else if line.starts_with(b"calls=") {
            return self.pass_calls(line);
        } else {
            return None;
        };
        self.enter_stage(stage)?;
        match stage {
            1 => self.hold_name(rw, Space::Objects, value),
            2 => self.hold_name(rw, Space::Files, value),
            _ => self.hold_callee(rw, value, None),
        }
    }

    /// Moves the held group on to `stage` (1 `cob=`, 2 `cfi=`, 3 `cfn=`);
    /// `None` if the group is past it already.
    fn enter_stage(&mut self, stage: u8) -> Option<()> {
        (stage > self.stage).then(|| self.stage = stage)
    }

    fn hold_name(&mut self, rw: &mut Rewriter<'_>, space: Space, value: &[u8]) -> Option<Pass> {
        let (sym, defines) = known_name(rw, space, value)?;
        self.hold_sym(space, sym, defines)
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

    /// The callee, where it is native code with no `cob=`/`cfi=` owed for
    /// it (its call stays as it is); `id` if the value is only that. A
    /// JIT callee is declined: its call is rewritten.
    fn hold_callee(
        &mut self,
        rw: &mut Rewriter<'_>,
        value: &[u8],
        id: Option<u64>,
    ) -> Option<Pass> {
        let same_defaults = rw.same_call_defaults();
        let object = self.ob.unwrap_or(rw.reader.current.ob);
        if let Some(id) = id.filter(|&id| rw.writer.native_written.contains(id)) {
            same_defaults.then_some(())?;
            written_fn(rw, id, object)?;
            self.callee = Some(Native(Some(id)));
            return Some(Pass::Held);
        }
        let f = rw.resolve_fn(value, object).ok()?;
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

    /// The held group is copied with its position line: the ids it
    /// defined and its callee's are written now.
    /// The ids were resolved when their lines were held: each is in its
    /// table.
    fn copied(&mut self, rw: &mut Rewriter<'_>) {
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

    /// A whole group is held: its position line is next.
    fn awaits_position(&self) -> bool {
        self.stage == 4
    }
}

/// The name of function id `id`, written as native code, where `object`
/// is the one it was defined under (else the id may name another function
/// there: see `FnEntry::object`).
#[inline(always)]
fn written_fn(rw: &Rewriter<'_>, id: u64, object: Sym) -> Option<Sym> {
    let e = rw.reader.fns.get(id)?;
    (e.object == object).then_some(e.name)
}

/// Both readers' state after a copied `ob=`, `fl=` or `fi=`/`fe=` line
/// setting `which` to `sym`.
#[inline(always)]
fn set_name(rw: &mut Rewriter<'_>, which: Sets, sym: Sym) -> Option<Pass> {
    rw.reader.current.set(which, sym);
    rw.writer.current.set(which, sym);
    rw.part.block = Block::Native;
    Some(Pass::Copied)
}

/// Marks object or file id `id`, defined by a line copied as it is, as
/// defined in the output too; `None` if the input has no such id.
#[inline(always)]
fn mark_written(rw: &mut Rewriter<'_>, space: Space, id: u64) -> Option<()> {
    rw.reader.name_of(space, id)?;
    rw.writer.defined.space_mut(space).insert(id);
    Some(())
}

/// The name of an id the output has defined.
#[inline(always)]
fn written_id(rw: &Rewriter<'_>, space: Space, id: u64) -> Option<Sym> {
    let sym = rw.reader.name_of(space, id)?;
    rw.writer.defined.space(space).contains(id).then_some(sym)
}

/// The name of a value that can be copied, and the id it defines
/// (bare ids take [`written_id`]).
fn known_name(rw: &mut Rewriter<'_>, space: Space, value: &[u8]) -> Option<(Sym, Option<u64>)> {
    let (sym, nr) = rw.name_value(space, value).ok()?;
    match (nr.id, nr.name) {
        (Some(id), None) if written_id(rw, space, id).is_none() => None,
        (Some(id), Some(_)) => Some((sym, Some(id))),
        _ => Some((sym, None)),
    }
}
