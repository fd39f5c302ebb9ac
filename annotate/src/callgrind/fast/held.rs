//! The call group the lane holds back: `cob=`, `cfi=`, `cfn=` kept until
//! the callee is known. A native callee's group is copied as it is; a JIT
//! callee's is declined, and the rewriter writes it (`rewrite/call.rs`,
//! the one place call groups are written).

use super::pass::Pass;
use crate::callgrind::format::line::CountLine;
use crate::callgrind::format::quick::plain_count;
use crate::callgrind::rewrite::ids::Sym;
use crate::callgrind::rewrite::{FnKind, Rewriter, Space};

/// The part of a call group the lane has held back: `cob= cfi= cfn=
/// calls=` in that order, each at most once, until the position line.
#[derive(Debug, Default)]
pub(super) struct HeldCall {
    /// How far the group got: 0 nothing, 1 `cob=`, 2 `cfi=`, 3 `cfn=`,
    /// 4 `calls=` (the position line is next).
    pub(super) stage: u8,
    /// The callee's object, if named.
    pub(super) ob: Option<Sym>,
    /// Ids defined by the held `cob=`/`cfi=`, marked as written once the
    /// group is.
    pub(super) defined: [Option<(Space, u64)>; 2],
    /// The callee, once `cfn=` is held: native code, whose call stays as
    /// written (its id, if it has one, is marked as written).
    pub(super) callee: Option<Native>,
}

/// A held call's native callee: its id, if `cfn=` gave one.
#[derive(Clone, Copy, Debug)]
pub(super) struct Native(Option<u64>);

impl HeldCall {
    pub(super) fn is_empty(&self) -> bool {
        self.stage == 0
    }
}

impl HeldCall {
    /// `cob=`, `cfi=`/`cfl=`, `cfn=`, `calls=` of a call between native
    /// functions where the output's defaults equal the input's.
    pub(super) fn pass_call_line(&mut self, rw: &mut Rewriter<'_>, line: &[u8]) -> Option<Pass> {
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
    pub(super) fn enter_stage(&mut self, stage: u8) -> Option<()> {
        (stage > self.stage).then(|| self.stage = stage)
    }

    pub(super) fn hold_name(
        &mut self,
        rw: &mut Rewriter<'_>,
        space: Space,
        value: &[u8],
    ) -> Option<Pass> {
        let (sym, defines) = known_name(rw, space, value)?;
        self.hold_sym(space, sym, defines)
    }

    /// Holds a `cob=`/`cfi=` naming `sym` (defining id `defines`) at the
    /// current stage.
    pub(super) fn hold_sym(
        &mut self,
        space: Space,
        sym: Sym,
        defines: Option<u64>,
    ) -> Option<Pass> {
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
    pub(super) fn hold_callee(
        &mut self,
        rw: &mut Rewriter<'_>,
        value: &[u8],
        id: Option<u64>,
    ) -> Option<Pass> {
        let p = &rw.part;
        let same_defaults = p.same_call_defaults();
        if let Some(id) = id.filter(|&id| p.tables.native_written.contains(id)) {
            same_defaults.then_some(())?;
            self.callee = Some(Native(Some(id)));
            return Some(Pass::Held);
        }
        let object = self.ob.unwrap_or(rw.part.input.ob);
        let f = rw.resolve_fn(value, object).ok()?;
        if matches!(f.kind, FnKind::Jit { .. } | FnKind::Renamed(_)) || !same_defaults {
            return None;
        }
        if let Some(id) = f.id {
            (rw.part.tables.fns.get(id)?.emitted || f.defines).then_some(())?;
        }
        self.callee = Some(Native(f.id));
        Some(Pass::Held)
    }

    /// `calls=` after a held callee, held too: the group is copied with
    /// its position line.
    pub(super) fn pass_calls(&mut self, line: &[u8]) -> Option<Pass> {
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
    pub(super) fn copied(&mut self, rw: &mut Rewriter<'_>) {
        let held = std::mem::take(self);
        for (space, id) in held.defined.into_iter().flatten() {
            if let Some(entry) = rw.space_mut(space).ids.get_mut(id) {
                entry.emitted = true;
            }
        }
        let Some(Native(Some(id))) = held.callee else {
            return;
        };
        if rw.part.tables.native_written.contains(id) {
            return;
        }
        if let Some(entry) = rw.part.tables.fns.get_mut(id) {
            entry.emitted = true;
            if entry.kind == FnKind::Native {
                rw.part.tables.native_written.insert(id);
            }
        }
    }

    /// A whole group is held: its position line is next.
    pub(super) fn awaits_position(&self) -> bool {
        self.stage == 4
    }
}

/// The name of an id the output has defined.
#[inline]
pub(super) fn written_id(rw: &Rewriter<'_>, space: Space, id: u64) -> Option<Sym> {
    let names = match space {
        Space::Objects => &rw.part.tables.obs,
        Space::Files => &rw.part.tables.files,
    };
    let entry = names.ids.get(id)?;
    entry.emitted.then_some(entry.sym)
}

/// The name of a value that can be copied, and the id it defines
/// (bare ids take [`Lane::written_id`]).
pub(super) fn known_name(
    rw: &mut Rewriter<'_>,
    space: Space,
    value: &[u8],
) -> Option<(Sym, Option<u64>)> {
    let (sym, nr) = rw.name_value(space, value).ok()?;
    match (nr.id, nr.name) {
        (Some(id), None) if !rw.space_mut(space).ids.get(id)?.emitted => None,
        (Some(id), Some(_)) => Some((sym, Some(id))),
        _ => Some((sym, None)),
    }
}
