//! The call group the lane holds back: `cob=`, `cfi=`, `cfn=` kept until
//! the callee is known. A native callee's group is copied as it is; a JIT
//! callee's is rewritten in one piece (`write_held_call`).

use super::pass::Pass;
use crate::callgrind::format::line::CountLine;
use crate::callgrind::format::quick::plain_count;
use crate::callgrind::rewrite::ids::Sym;
use crate::callgrind::rewrite::{FnKind, FnRef, Res, Rewriter, Space};

/// The part of a call group the lane has held back: `cob= cfi= cfn=` in
/// that order, each at most once.
#[derive(Debug, Default)]
pub(super) struct HeldCall {
    /// How far the group got: 0 nothing, 1 `cob=`, 2 `cfi=`, 3 `cfn=`.
    pub(super) stage: u8,
    /// The callee's object, if named.
    pub(super) ob: Option<Sym>,
    /// Ids defined by the held `cob=`/`cfi=`, marked as written once the
    /// group is.
    pub(super) defined: [Option<(Space, u64)>; 2],
    /// The callee, once `cfn=` is held.
    pub(super) callee: Option<Callee>,
}

/// A held call's callee.
#[derive(Clone, Copy, Debug)]
pub(super) enum Callee {
    /// Native code: the call stays as written; its id is marked as written.
    Native(Option<u64>),
    /// JIT code: the call is rewritten.
    Jit(FnRef),
}

impl HeldCall {
    pub(super) fn is_empty(&self) -> bool {
        self.stage == 0
    }
}

impl HeldCall {
    /// `cob=`, `cfi=`/`cfl=`, `cfn=`, `calls=` of a call between native
    /// functions where the output's defaults equal the input's.
    pub(super) fn pass_call_line(&mut self, rw: &mut Rewriter<'_>, line: &[u8]) -> Option<Pass> {
        if rw.group.awaits_verbatim() {
            return None;
        }
        let (stage, value) = if let Some(v) = line.strip_prefix(b"cob=") {
            (1, v)
        } else if let Some(v) = line.strip_prefix(b"cfi=").or(line.strip_prefix(b"cfl=")) {
            (2, v)
        } else if let Some(v) = line.strip_prefix(b"cfn=") {
            (3, v)
        } else if line.starts_with(b"calls=") {
            return self.pass_calls(rw, line);
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

    /// The callee: JIT code (its call is rewritten), or native code with
    /// no `cob=`/`cfi=` owed for it (its call stays as it is); `id` if the
    /// value is only that.
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
            self.callee = Some(Callee::Native(Some(id)));
            return Some(Pass::Held);
        }
        let object = self.ob.unwrap_or(rw.part.input.ob);
        let f = rw.resolve_fn(value, object).ok()?;
        let callee = match (f.kind, f.id) {
            // A call into a function's middle is folded by the rewriter.
            (FnKind::Jit { entry: false, .. }, _) => return None,
            (FnKind::Jit { .. }, _) => Callee::Jit(f),
            (FnKind::Renamed(_), _) => return None,
            (_, id) => {
                same_defaults.then_some(())?;
                if let Some(id) = id {
                    (rw.part.tables.fns.get(id)?.emitted || f.defines).then_some(())?;
                }
                Callee::Native(id)
            }
        };
        self.callee = Some(callee);
        Some(Pass::Held)
    }

    /// `calls=` after a held callee: a native one's group is written as
    /// held; a JIT one's is rewritten.
    pub(super) fn pass_calls(&mut self, rw: &mut Rewriter<'_>, line: &[u8]) -> Option<Pass> {
        let Callee::Native(id) = self.callee? else {
            // `write_held_call` parses the line (failing as the rewriter would).
            return Some(Pass::Rewrite);
        };
        if !plain_count(&line[b"calls=".len()..]) {
            CountLine::parse("calls", line).ok()?;
        }
        let held = std::mem::take(self);
        for (space, id) in held.defined.into_iter().flatten() {
            rw.space_mut(space).ids.get_mut(id)?.emitted = true;
        }
        if let Some(id) = id.filter(|&id| !rw.part.tables.native_written.contains(id)) {
            let entry = rw.part.tables.fns.get_mut(id)?;
            entry.emitted = true;
            if entry.kind == FnKind::Native {
                rw.part.tables.native_written.insert(id);
            }
        }
        rw.group.await_verbatim();
        Some(Pass::Copied)
    }

    /// Writes the call the lane held (see [`Pass::Rewrite`]) in place of
    /// the held lines and `line`, its `calls=` line.
    pub(super) fn write_held_call(&mut self, rw: &mut Rewriter<'_>, line: &[u8]) -> Res {
        let held = std::mem::take(self);
        let Some(Callee::Jit(callee)) = held.callee else {
            unreachable!("Pass::Rewrite is for a held JIT callee")
        };
        rw.write_jit_call(callee, CountLine::parse("calls", line)?)?;
        rw.group.await_verbatim();
        Ok(())
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
