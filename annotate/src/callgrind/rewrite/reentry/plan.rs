//! The second pass's plan for re-entry (see the parent module): which
//! arcs give back how much of which continuations, which continuations
//! take a lower level, and which middles of JIT functions are entry
//! points.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::{Arcs, Callee, Entered, Of};
use crate::callgrind::format::position::{all_costs, push_costs};
use crate::callgrind::rewrite::Res;
use crate::symbols::SymbolId;

impl Plan {
    /// True where the second pass changes the output (else the first
    /// pass's output stands; only `unplaced` is to report).
    pub fn takes_out(&self) -> bool {
        !self.shares.is_empty()
            || !self.levels.is_empty()
            || !self.entries.is_empty()
            || self.gives_back_into()
    }

    /// True where calls into JIT functions give back continuations
    /// (`called_back`, `own_levels`).
    pub fn gives_back_into(&self) -> bool {
        !self.called_back.is_empty() || !self.own_levels.is_empty()
    }

    /// The name a block of JIT range `x` that callgrind named `name`,
    /// entered at `entered`, is written under: a continuation's with its
    /// level lowered where the plan lowers it; an entry's, or an entry
    /// point's, as it is. The second pass names its blocks so, and the
    /// plan tells by it which calls a block makes under its own name.
    pub(super) fn written_name<'a>(
        &'a self,
        x: SymbolId,
        name: &'a [u8],
        (addr, entry): Entered,
    ) -> &'a [u8] {
        if entry || self.entries.contains(&(x, addr)) {
            return name;
        }
        let lowered = self.levels.get(&(x, name.to_vec()));
        lowered.map_or(name, Vec::as_slice)
    }

    /// How many addresses inside JIT functions are entry points.
    pub fn entry_points(&self) -> u64 {
        self.entries.len() as u64
    }

    /// What the plan leaves in arcs, and the continuations' cost in all
    /// (first event), for the summary.
    pub fn unplaced(&self) -> (u64, u64) {
        (self.unplaced, self.resumed)
    }
}

/// How much of one group of continuations comes out of its arcs.
#[derive(Debug)]
pub(super) struct Share {
    /// The cost to take out, per event (at most the arcs' cost).
    pub(super) take: Vec<u64>,
    /// The arcs' cost, per event.
    pub(super) arcs: Vec<u64>,
    /// The arcs' cost passed so far.
    pub(super) seen: Vec<u64>,
}

impl Share {
    /// `continuation`'s cost out of arcs costing `arcs`: all of it, at
    /// most what they hold.
    pub(super) fn new(continuation: &[u64], arcs: &[u64]) -> Share {
        let take = continuation
            .iter()
            .zip(arcs.iter().chain(std::iter::repeat(&0)))
            .map(|(&c, &a)| c.min(a))
            .collect();
        Share {
            take,
            arcs: arcs.to_vec(),
            seen: vec![0; arcs.len()],
        }
    }

    /// `costs` (a position line's) less this share's part of them, and
    /// the first event taken out and held.
    pub(super) fn take_out(&mut self, costs: &[u8]) -> Res<(Vec<u8>, u64, u64)> {
        let mut arc = all_costs(costs)?;
        let take = self.next(&arc);
        let held = first(&arc);
        for (a, t) in arc.iter_mut().zip(&take) {
            *a -= t;
        }
        let mut out = Vec::with_capacity(costs.len());
        push_costs(&mut out, &arc);
        Ok((out, first(&take), held))
    }

    /// What comes out of the next arc, whose costs are `arc`: its part of
    /// `take`, by the running total (the parts add up to `take` exactly).
    pub(super) fn next(&mut self, arc: &[u64]) -> Vec<u64> {
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

/// Per (part, JIT range), by name, what the calls into it give back
/// (keyed by the name's bytes, so that a call's name is looked up
/// without copying it).
pub(super) type CalledBackShares = HashMap<(u64, SymbolId), HashMap<Vec<u8>, CalledBack>>;

/// Continuations a JIT function `x` called back, out of the calls into
/// it (see `Noted::called_back_shares`).
#[derive(Debug)]
pub(super) struct CalledBack {
    /// Their cost, shared over the calls into `x`.
    pub(super) share: Share,
    /// The functions resumed: their own calls into `x` are not among
    /// those (a function's arcs give back its continuations at the sites
    /// they return to), nor are those of functions in `Plan::shares`.
    pub(super) resumed: HashSet<SymbolId>,
}

/// Per (part, JIT range), by name, what the calls into it from its own
/// code under another name give back (`Noted::own_levels`).
pub(super) type OwnLevels = HashMap<Of, HashMap<Vec<u8>, Share>>;

/// Continuations (range and name) whose level is lowered, and the name
/// they are written under.
pub(super) type Lowered = HashMap<(SymbolId, Vec<u8>), Vec<u8>>;

/// The second pass's work: per (part, `f`), the arcs that give back
/// continuations, and the continuations whose level is lowered.
#[derive(Debug, Default)]
pub(in crate::callgrind) struct Plan {
    /// Per (part, `f`), the arcs continuations come out of, and how much.
    pub(super) shares: HashMap<Of, Vec<(Arcs<Callee>, Share)>>,
    /// Continuations (range and name) whose level is lowered, and the
    /// new name.
    pub(super) levels: Lowered,
    /// Addresses of JIT functions, other than their start, that are
    /// entry points: calls there are calls.
    pub(super) entries: HashSet<(SymbolId, u64)>,
    /// Per (part, JIT range, name) that called continuations back, their
    /// cost out of the calls into it.
    pub(super) called_back: CalledBackShares,
    /// Per (part, JIT range) called under several names, by name, what
    /// the calls into it from its own code under another name give back.
    pub(super) own_levels: OwnLevels,
    /// First-event cost of continuations with no arc to take them from.
    pub(super) unplaced: u64,
    /// First-event cost of every continuation.
    pub(super) resumed: u64,
}

/// `values` added to `sum`, event by event (saturating).
pub(super) fn add(sum: &mut Vec<u64>, values: &[u64]) {
    if sum.len() < values.len() {
        sum.resize(values.len(), 0);
    }
    for (s, v) in sum.iter_mut().zip(values) {
        *s = s.saturating_add(*v);
    }
}

/// The first event's cost (0 for none).
pub(super) fn first(costs: &[u64]) -> u64 {
    costs.first().copied().unwrap_or(0)
}
