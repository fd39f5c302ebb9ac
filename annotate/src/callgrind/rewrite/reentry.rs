//! Re-entry counted once. A call into the middle of JIT function `f` made
//! by another function `x` is `f`'s code resuming, not a new activation:
//! V8's out-of-line prologue returns into `f` by a jump that callgrind
//! sees as a call, a helper calls `f`'s continuation. The call is folded
//! (see `call::folds`): the continuation's lines are `f`'s self cost. But
//! `f` called `x` first, and callgrind's `f -> x` arc holds the
//! continuation's inclusive cost too, so `f`'s inclusive cost would count
//! it twice.
//!
//! The first pass notes each folded call's inclusive cost per
//! (part, `f`, `x`), and the inclusive cost of every arc from JIT code
//! (`Noted`). Where a continuation has arcs to take it from, a second pass
//! takes it out of them (`Plan`), shared in proportion to their cost (one
//! arc: all of it), never below zero. A continuation with no arc from `f`
//! to `x` (the helper was called through others) stays and is reported.

use std::collections::HashMap;

use super::ids::{Interner, Sym};
use super::names::FnKind;
use super::{FnRef, Res, Rewriter};
use crate::callgrind::format::position::{add_costs, all_costs, push_costs};
use crate::symbols::SymbolId;

/// A function as a call names it, in the first pass: a JIT symbol, or a
/// name in an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(in crate::callgrind) enum Who {
    Jit(SymbolId),
    Named { name: Sym, object: Sym },
}

impl Who {
    /// The function `f` names, called with `object` as its object.
    pub fn of(f: FnRef, object: Sym) -> Who {
        match f.kind {
            FnKind::Jit { symbol, .. } => Who::Jit(symbol),
            _ => Who::Named {
                name: f.name,
                object,
            },
        }
    }

    /// The same function by its names' bytes (the second pass has its
    /// own interner).
    fn owned(self, names: &Interner) -> Callee {
        match self {
            Who::Jit(symbol) => Callee::Jit(symbol),
            Who::Named { name, object } => Callee::Named {
                name: names.name(name).into(),
                object: names.name(object).into(),
            },
        }
    }
}

/// [`Who`] with its names spelled out.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Callee {
    Jit(SymbolId),
    Named { name: Box<[u8]>, object: Box<[u8]> },
}

/// One part's `f -> x` pair: `f` resumed by a call from `x`, or `f`
/// calling `x`.
type Pair<W> = (u64, SymbolId, W);

/// What the first pass saw.
#[derive(Default)]
pub(in crate::callgrind) struct Noted {
    /// Inclusive cost of the folded calls into `f`'s middle made by `x`.
    continuations: HashMap<Pair<Who>, Vec<u64>>,
    /// Inclusive cost of the arcs from `f`'s code to `x`.
    arcs: HashMap<Pair<Who>, Vec<u64>>,
}

impl Noted {
    /// Forgets the arcs of `part` that no continuation of it needs (a
    /// profile of many parts keeps only what its second pass uses).
    pub fn end_part(&mut self, part: u64) {
        let continuations = &self.continuations;
        self.arcs
            .retain(|&(p, f, x), _| p != part || continuations.contains_key(&(p, f, x)));
    }

    /// The second pass's work; `None` where there is none.
    pub fn plan(&self, names: &Interner) -> Option<Plan> {
        let mut plan = Plan::default();
        for (&(part, resumed, caller), continuation) in &self.continuations {
            let arcs = self.arcs.get(&(part, resumed, caller));
            plan.unplaced += arcs.map_or(first(continuation), |_| 0);
            let Some(arcs) = arcs else { continue };
            let share = Share {
                take: continuation
                    .iter()
                    .zip(arcs.iter().chain(std::iter::repeat(&0)))
                    .map(|(&c, &a)| c.min(a))
                    .collect(),
                arcs: arcs.clone(),
                seen: vec![0; arcs.len()],
            };
            plan.shares
                .entry((part, resumed))
                .or_default()
                .push((caller.owned(names), share));
        }
        (!plan.shares.is_empty() || plan.unplaced > 0).then_some(plan)
    }
}

impl Plan {
    /// True where arcs have cost to give back (else the first pass's
    /// output stands; only `unplaced` is to report).
    pub fn takes_out(&self) -> bool {
        !self.shares.is_empty()
    }

    /// What the plan leaves in arcs, for the summary.
    pub fn unplaced(&self) -> u64 {
        self.unplaced
    }
}

/// How much of one continuation comes out of the arcs of one pair.
#[derive(Debug)]
struct Share {
    /// The cost to take out, per event (at most the arcs' cost).
    take: Vec<u64>,
    /// The arcs' cost, per event.
    arcs: Vec<u64>,
    /// The arcs' cost passed so far.
    seen: Vec<u64>,
}

impl Share {
    /// What comes out of the next arc, whose costs are `arc`: its part of
    /// `take`, by the running total (the parts add up to `take` exactly).
    fn next(&mut self, arc: &[u64]) -> Vec<u64> {
        arc.iter()
            .enumerate()
            .map(|(e, &a)| {
                let (Some(&total), Some(&take)) = (self.arcs.get(e), self.take.get(e)) else {
                    return 0;
                };
                let before = self.seen[e];
                self.seen[e] = before.saturating_add(a).min(total);
                let upto = |seen: u64| {
                    (u128::from(take) * u128::from(seen) / u128::from(total.max(1))) as u64
                };
                (upto(self.seen[e]) - upto(before)).min(a)
            })
            .collect()
    }
}

/// The second pass's work: per (part, `f`), the callees whose arcs give
/// back a continuation.
#[derive(Debug, Default)]
pub(in crate::callgrind) struct Plan {
    shares: HashMap<(u64, SymbolId), Vec<(Callee, Share)>>,
    /// First-event cost of continuations with no arc to take them from.
    unplaced: u64,
}

fn first(costs: &[u64]) -> u64 {
    costs.first().copied().unwrap_or(0)
}

impl Rewriter<'_> {
    /// A folded call into `resumed`'s middle by `caller`, with the costs
    /// of its position line.
    pub(super) fn note_continuation(
        &mut self,
        resumed: SymbolId,
        caller: Option<Who>,
        costs: &[u8],
    ) -> Res {
        let Some(caller) = caller.filter(|&c| c != Who::Jit(resumed)) else {
            return Ok(());
        };
        if self.reentry.plan.is_some() {
            return Ok(());
        }
        let key = (self.stats.parts, resumed, caller);
        let sum = self.reentry.noted.continuations.entry(key).or_default();
        Ok(add_costs(sum, costs)?)
    }

    /// An arc from `owner`'s code to `callee` with `costs`: noted in the
    /// first pass; in the second, the costs with its share of a
    /// continuation taken out (`None`: unchanged).
    pub(super) fn arc_costs(
        &mut self,
        owner: SymbolId,
        callee: Who,
        costs: &[u8],
    ) -> Res<Option<Vec<u8>>> {
        let part = self.stats.parts;
        let Some(plan) = self.reentry.plan.as_mut() else {
            let sum = self
                .reentry
                .noted
                .arcs
                .entry((part, owner, callee))
                .or_default();
            add_costs(sum, costs)?;
            return Ok(None);
        };
        let Some(shares) = plan.shares.get_mut(&(part, owner)) else {
            return Ok(None);
        };
        let callee = callee.owned(&self.names);
        let Some((_, share)) = shares.iter_mut().find(|(c, _)| *c == callee) else {
            return Ok(None);
        };
        let mut arc = all_costs(costs)?;
        let take = share.next(&arc);
        self.stats.reentry.taken += first(&take);
        for (a, t) in arc.iter_mut().zip(&take) {
            *a -= t;
        }
        let mut out = Vec::with_capacity(costs.len());
        push_costs(&mut out, &arc);
        Ok(Some(out))
    }
}

/// The rewriter's re-entry state: noting (first pass) or taking out
/// (second pass).
#[derive(Default)]
pub(in crate::callgrind) struct State {
    pub noted: Noted,
    pub plan: Option<Plan>,
}

impl State {
    /// The second pass's state for `plan`.
    pub fn taking(plan: Plan) -> State {
        State {
            noted: Noted::default(),
            plan: Some(plan),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_continuation_is_shared_by_its_arcs_in_proportion_and_exactly() {
        // Arcs of 30, 10 and 60 (Ir) give back 50 of 100: 15, 5, 30.
        let mut share = Share {
            take: vec![50, 7],
            arcs: vec![100, 7],
            seen: vec![0, 0],
        };
        let taken: Vec<Vec<u64>> = [[30, 1], [10, 0], [60, 6]]
            .iter()
            .map(|arc| share.next(arc))
            .collect();
        assert_eq!(taken, [vec![15, 1], vec![5, 0], vec![30, 6]]);
        // Odd shares still add up to what is taken, never more than an arc.
        let mut share = Share {
            take: vec![10],
            arcs: vec![3],
            seen: vec![0],
        };
        let taken: u64 = (0..3).map(|_| share.next(&[1])[0]).sum();
        assert_eq!(taken, 3);
    }

    #[test]
    fn a_continuation_with_no_arc_is_left_and_counted() {
        let mut noted = Noted::default();
        let names = Interner::default();
        let (f, x) = (SymbolId(1), Who::Jit(SymbolId(2)));
        noted.continuations.insert((1, f, x), vec![40, 2]);
        let plan = noted.plan(&names).unwrap();
        assert!(!plan.takes_out());
        assert_eq!(plan.unplaced(), 40);
        noted.arcs.insert((1, f, x), vec![30]);
        let plan = noted.plan(&names).unwrap();
        assert!(plan.takes_out());
        let share = &plan.shares[&(1, f)][0].1;
        assert_eq!(share.take, [30, 0]);
    }
}
