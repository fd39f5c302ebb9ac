//! Writing a call or jump group: the callee's names (a JIT callee's own
//! object and file), the `calls=`/`jump=` line with its target (placed by
//! `target.rs`), and the position line of the call site (with its source
//! line in JIT code). Calls between pieces of
//! one JIT function are folded into self cost, but between two of its
//! recursion levels, which stay calls.

use super::group::{NameLine, Parsed};
use super::ids::Sym;
use super::naming::FnKind;
use super::reader::{Current, FnRef, Group, Space};
use super::reentry::Who;
use super::state::Block;
use super::{Res, Rewriter};
use crate::callgrind::format::line::{parse_u64, CountLine};
use crate::callgrind::format::position::{first_cost, Column, Pos};
use crate::symbols::SymbolId;

impl Rewriter<'_> {
    /// Native code whose lines are copied (`copies_verbatim`): the
    /// positions stay undecoded, the position line is copied after the
    /// group. The names are rewritten where the callee is JIT code (with
    /// the target's source line), the rest is copied; a call into a JIT
    /// function's middle is folded, its position line kept without costs
    /// (see [`folds`]).
    fn write_copied_group(
        &mut self,
        parsed: &Parsed,
        line: CountLine,
        (raw, text, terminated): (&[u8], &[u8], bool),
    ) -> Res {
        let callee = self.group_callee(parsed)?;
        self.cols.check(text)?;
        if parsed.is_call {
            self.note_call_levels(callee, text)?;
        }
        if parsed.is_call && folds(callee) {
            self.stats.folded_calls += 1;
            self.forget_pos();
            self.note_continuation(resumed(callee), self.part.who, self.cols.skip(text)?)?;
            // Its position columns alone (a cost line of zeros): the
            // positions after it mean the same in input and output.
            let positions = self.cols.positions_only(text)?;
            return Ok(self.writer.out.verbatim(positions, true)?);
        }
        if parsed.is_call {
            self.write_callee_names(parsed, callee.ok_or("calls= without cfn=")?)?;
        } else {
            self.write_jump_names(parsed, callee, None)?;
        }
        match callee.map(|f| f.kind) {
            Some(kind @ FnKind::Jit { .. }) => {
                let target = self.jit_target(line.target, kind)?;
                self.emit().count_line(line, target, false)?;
            }
            _ => self.writer.out.verbatim(line.raw, true)?,
        }
        // The target was written against the input's state before the
        // position line, which is copied undecoded.
        self.forget_pos();
        Ok(self.writer.out.verbatim(raw, terminated)?)
    }

    /// `cob=`/`cfi=` where the output's defaults are not the JIT
    /// function's own, and its `cfn=`.
    fn write_jit_callee_names(&mut self, symbol: SymbolId, callee: FnRef) -> Res {
        let ident = self.naming.jit_ident(symbol);
        self.emit().callee_ident(ident)?;
        self.emit().fn_ref("cfn", callee)
    }

    /// A call or jump group, at its position line: the one place groups
    /// are written. In native code whose lines are copied, see
    /// [`write_copied_group`](Self::write_copied_group); anywhere else the
    /// positions are decoded, the site's line mapped in JIT code, and calls
    /// inside one JIT function folded away.
    pub(super) fn write_group(
        &mut self,
        group: &Group,
        raw: &[u8],
        text: &[u8],
        terminated: bool,
    ) -> Res {
        let parsed = self.parse_group(group)?;
        let line = parsed.count.ok_or("group without calls=/jump=")?;
        if self.copies_verbatim() {
            return self.write_copied_group(&parsed, line, (raw, text, terminated));
        }
        let target = self.decode_target(line.target)?;
        let callee = self.group_callee(&parsed)?;
        // In JIT code the site's own function is the one whose code holds
        // it (see `owner`): it decides folding, and gets the call.
        let site = match self.part.block {
            Block::Jit(symbol) => {
                let (pos, costs) = self.decode(text)?;
                first_cost(costs)?;
                self.reader.set_pos(pos);
                let (owner, file, out) = self.naming.locate(&self.cols, symbol, pos);
                Some((owner, file, out, costs))
            }
            Block::Unnamed(_) => self.unnamed_site(text)?,
            Block::Native => None,
        };
        let at = site
            .zip(self.cols.index(Column::Instr))
            .map(|((_, _, out, _), i)| out[i]);
        let owner = site.map(|(owner, _, _, _)| owner);
        if parsed.is_call {
            self.note_call_levels(callee, text)?;
        }
        let into_middle = parsed.is_call && folds(callee);
        let across = into_middle && self.between_names(owner, callee);
        self.stats.level_calls += u64::from(across);
        if into_middle && !across {
            // The callee's lines are its self cost already.
            self.stats.folded_calls += 1;
            let costs = match site {
                Some((_, _, _, costs)) => costs,
                None => {
                    let (pos, costs) = self.decode(text)?;
                    first_cost(costs)?;
                    self.reader.set_pos(pos);
                    costs
                }
            };
            self.writer.synced = false;
            if let (Some(owner), Some(site)) = (owner, at) {
                self.note_folded_call(owner, site, resumed(callee), costs)?;
            }
            let caller = owner.map(Who::Jit).or(self.part.who);
            return self.note_continuation(resumed(callee), caller, costs);
        }
        let site = match site {
            Some((owner, file, out, costs)) => {
                self.charge_to(Some(owner), 0)?;
                if let Some(file) = file {
                    self.emit().switch_file(file)?;
                }
                Some((out, costs))
            }
            None => None,
        };
        if parsed.is_call {
            self.write_callee_names(&parsed, callee.ok_or("calls= without cfn=")?)?;
        } else {
            let internal = matches!(
                (owner, callee.map(|f| f.kind)),
                (Some(s), Some(FnKind::Jit { symbol, .. })) if s == symbol
            );
            self.write_jump_names(&parsed, callee.filter(|_| !internal), Some(target))?;
        }
        let mapped = self.map_target(target, callee);
        let unchanged = mapped == target && self.writer.synced && site.is_none();
        self.emit().count_line(line, mapped, unchanged)?;
        match (site, owner, callee.filter(|_| parsed.is_call)) {
            (Some((out, costs)), Some(owner), Some(callee)) => {
                let who = Who::of(callee, self.group_callee_object(&parsed));
                let less = match across {
                    true => None,
                    false => self.arc_costs(owner, who, at, costs)?,
                };
                let costs = less.as_deref().unwrap_or(costs);
                if self.part.stretch.is_some() {
                    let calls = parse_u64(line.count).ok_or("bad count")?;
                    self.add_to_stretch(out, costs, calls)?;
                }
                self.emit().position(out, costs)
            }
            (Some((out, costs)), _, _) => self.emit().position(out, costs),
            (None, _, _) if self.in_native_code() => self.copy_position(raw, text, terminated),
            (None, _, _) => self.copy_tracked(raw, text, terminated),
        }
    }

    /// True where `owner`'s code calls its own function's middle written
    /// under another name (another recursion level): a call between two
    /// levels, kept as one, so that each keeps what its callers recorded
    /// (folded, the callee's lines would be the other level's cost). It
    /// is no call a continuation returns from (no re-entry share).
    fn between_names(&mut self, owner: Option<SymbolId>, callee: Option<FnRef>) -> bool {
        let (Some(owner), Some(FnKind::Jit { symbol, name, .. })) = (owner, callee.map(|f| f.kind))
        else {
            return false;
        };
        owner == symbol && self.written_name(owner) != name
    }

    /// The site of a call in an address-named block where JIT code holds
    /// it (as in a JIT block: its owner, file, position and costs); else
    /// `None`, the block's own function current again and the line left
    /// undecoded for the copy.
    #[allow(clippy::type_complexity)]
    fn unnamed_site<'t>(
        &mut self,
        text: &'t [u8],
    ) -> Res<Option<(SymbolId, Option<Sym>, Pos, &'t [u8])>> {
        let (pos, costs) = self.decode(text)?;
        first_cost(costs)?;
        let Some((owner, file, out)) = self.naming.jit_at(&self.cols, pos) else {
            self.back_home()?;
            return Ok(None);
        };
        self.reader.set_pos(pos);
        Ok(Some((owner, file, out, costs)))
    }

    /// `cob=`/`cfi=`/`cfn=` for the callee: a JIT callee's own object and
    /// file where the output's defaults differ; the input's lines (or
    /// explicit names where the defaults changed) for anything else.
    fn write_callee_names(&mut self, parsed: &Parsed, callee: FnRef) -> Res {
        match callee.kind {
            FnKind::Jit { symbol, .. } => return self.write_jit_callee_names(symbol, callee),
            _ => {
                let file = parsed
                    .file
                    .as_ref()
                    .map_or(self.reader.current.file, |n| n.sym);
                self.keep_or_name(
                    "cob",
                    Space::Objects,
                    parsed.ob.as_ref(),
                    self.reader.current.ob,
                )?;
                self.keep_or_name("cfi", Space::Files, parsed.file.as_ref(), file)?;
            }
        }
        let (raw, _) = parsed.func.expect("a call has a cfn=");
        self.emit().function("cfn", raw, callee, true)
    }

    /// `jfi=`/`jfn=` for a jump. In JIT code the target's file comes from
    /// the line table (`target` given); a jump into another JIT function
    /// names that function's file. A jump that would name a function in
    /// another object names none (see
    /// [`names_other_object`](Self::names_other_object)).
    fn write_jump_names(
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

    /// Keeps the input's `cob=`/`cfi=` line, or names the callee's
    /// object/file (`want`) where the output's default no longer fits.
    fn keep_or_name(&mut self, key: &str, space: Space, line: Option<&NameLine>, want: Sym) -> Res {
        let current = |c: &Current| match space {
            Space::Objects => c.ob,
            Space::Files => c.file,
        };
        match line {
            Some(named) => self.emit().input_name(space, named.raw, named.nr, true),
            None => self.emit().name_if_changed(key, space, want, current),
        }
    }
}

/// A call to a JIT range's address other than its start is not a new
/// activation: from inside the function, a jump callgrind saw as a call;
/// from elsewhere, a return into the middle of the function (V8's
/// out-of-line prologue, HotSpot's adapters) seen as a call. Either way the
/// callee's lines are already its self cost, and the arc would count an
/// activation twice.
fn folds(callee: Option<FnRef>) -> bool {
    matches!(
        callee.map(|f| f.kind),
        Some(FnKind::Jit { entry: false, .. })
    )
}

/// The JIT function a folded call resumes, and the address.
pub(super) fn resumed(callee: Option<FnRef>) -> (SymbolId, u64) {
    match callee.map(|f| f.kind) {
        Some(FnKind::Jit { symbol, addr, .. }) => (symbol, addr),
        _ => unreachable!("a folded call's callee is JIT code"),
    }
}
