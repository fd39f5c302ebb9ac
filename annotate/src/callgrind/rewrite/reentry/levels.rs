//! The level a continuation is written at (see the parent module): the
//! first pass notes, per name of a JIT range (`fib`, `fib'2`), whether its
//! entry was called at that name, what those calls held, and what the
//! calls into its continuations of that name held (at each call:
//! `calls.rs`); the plan lowers the continuations whose level cannot be
//! theirs.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::super::ids::{Interner, Sym};
use super::super::naming::FnKind;
use super::super::{FnRef, Rewriter};
use crate::callgrind::rewrite::naming::JitName;
use crate::symbols::SymbolId;

/// A range and one of its names, as the first pass interned it.
pub(super) type Named = (SymbolId, Sym);

/// What the first pass saw of each range's names.
#[derive(Default)]
pub(in crate::callgrind) struct Levels {
    /// JIT ranges' entries, with the names of their levels (`fib'2`).
    pub(super) entered: HashSet<(SymbolId, Vec<u8>)>,
    /// Continuations named with a level above 1, by range and name.
    pub(super) resumed: HashMap<(SymbolId, Vec<u8>), JitName>,
    /// First-event cost of the calls into each range's entry by the name
    /// called, from anything but code of that name.
    pub(super) called: HashMap<Named, u64>,
    /// First-event cost of the calls into each range's middle (its
    /// continuations) by the name and address called, from anything but
    /// code of that name.
    pub(super) resumed_cost: HashMap<(Named, u64), u64>,
}

impl Levels {
    /// Notes the name a pseudo-function of `jit`'s range has.
    pub fn note_name(&mut self, jit: &JitName) {
        match jit.entry {
            true => _ = self.entered.insert((jit.symbol, jit.name.clone())),
            false if jit.level() > 1 => {
                let key = (jit.symbol, jit.name.clone());
                self.resumed.insert(key, jit.clone());
            }
            false => {}
        }
    }

    /// Names whose entry's callers called them with at least what the
    /// calls into each of their continuations hold (an activation's
    /// continuations run inside its call; those of one activation nest in
    /// each other, so they are not added up).
    fn held(&self, names: &Interner) -> HashSet<(SymbolId, Vec<u8>)> {
        let mut most: HashMap<Named, u64> = HashMap::default();
        for (&(named, _), &cost) in &self.resumed_cost {
            let m = most.entry(named).or_default();
            *m = (*m).max(cost);
        }
        let resumed = |key: &Named| most.get(key).copied().unwrap_or(0);
        self.called
            .iter()
            .filter(|&(key, &called)| called >= resumed(key))
            .map(|(&(symbol, name), _)| (symbol, names.name(name).to_vec()))
            .collect()
    }

    /// Continuations whose level cannot be theirs, with the name they are
    /// to have: a level is a continuation's where its range was entered
    /// at it and the calls into that entry hold the calls into that
    /// level's continuations (a loop nested by callgrind at each iteration
    /// makes continuation levels no activation had); else the highest
    /// such level below, or level 1.
    pub fn lowered(&self, names: &Interner) -> HashMap<(SymbolId, Vec<u8>), Vec<u8>> {
        let held = self.held(names);
        let real = |jit: &JitName, level: u32| {
            let key = (jit.symbol, jit.at_level(level));
            self.entered.contains(&key) && held.contains(&key)
        };
        let mut lowered = HashMap::default();
        for (key, jit) in &self.resumed {
            let level = jit.level();
            if real(jit, level) {
                continue;
            }
            let below = (2..level).rev().find(|&l| real(jit, l)).unwrap_or(1);
            lowered.insert(key.clone(), jit.at_level(below));
        }
        lowered
    }
}

impl Rewriter<'_> {
    /// The name a JIT pseudo-function is written under: its own, noted in
    /// the first pass; a continuation's with its level lowered where the
    /// plan says so in the second.
    pub(in crate::callgrind::rewrite) fn leveled_name(&mut self, jit: &JitName) -> Vec<u8> {
        let Some(plan) = &self.reentry.plan else {
            self.reentry.noted.levels.note_name(jit);
            return jit.name.clone();
        };
        let entered = (jit.addr, jit.entry);
        plan.written_name(jit.symbol, &jit.name, entered).to_vec()
    }

    /// True where `owner`'s code calls its own function's middle written
    /// under another name (another recursion level): a call between two
    /// levels, kept as one, so that each keeps what its callers recorded
    /// (folded, the callee's lines would be the other level's cost). It
    /// is no call a continuation returns from (no re-entry share).
    pub(in crate::callgrind::rewrite) fn between_names(
        &mut self,
        owner: Option<SymbolId>,
        callee: Option<FnRef>,
    ) -> bool {
        let (Some(owner), Some(FnKind::Jit { symbol, name, .. })) = (owner, callee.map(|f| f.kind))
        else {
            return false;
        };
        owner == symbol && self.written_name(owner) != name
    }
}
