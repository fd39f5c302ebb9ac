//! Re-entry counted once. A call into the middle of JIT function `f` made
//! by another function `x` is `f`'s code resuming, not a new activation:
//! V8's out-of-line prologue returns into `f` by a jump that callgrind
//! sees as a call, a helper calls `f`'s continuation. The call is folded
//! (see `call::folds`): the continuation's lines are `f`'s self cost. But
//! callgrind's arc from `f`'s code to the callee that came back holds the
//! continuation's inclusive cost too, so `f`'s inclusive cost would count
//! it twice.
//!
//! Which arc holds it: the call it returns from, the last call site of
//! `f` before the continuation's address (its return address). That holds
//! for a continuation reached through a chain of calls too (`f -> a -> b
//! -> x -> middle of f`: V8's builtins calling on until one jumps back):
//! it is in `f`'s arc to `a`, made at that site. The native arcs inside
//! the chain keep it, each in what it was called with and in what it
//! calls, so their inclusive cost stays within their callers'. Without
//! instruction addresses, the arcs from `f` to `x` are taken (a chain's
//! continuation then stays, and is reported).
//!
//! Callgrind does not always nest a continuation under the call it
//! returns from. V8's builtins, returned into by `f`'s code and charged by
//! callgrind to `f`, call on (the next JavaScript function), and callgrind
//! nests everything after under that call, the continuation included,
//! while the call it returns from holds only its first steps. What the
//! arcs at the return address cannot hold of a continuation therefore
//! comes out of `f`'s arcs made at sites in no JIT range (`Arcs::Outside`;
//! not those a continuation returns to), in proportion to their cost.
//!
//! The first pass notes each folded call's inclusive cost per (part, `f`,
//! its address, `x`), and the inclusive cost of every arc from JIT code
//! per call site and per callee (`Noted`). A second pass takes the
//! continuations out of their arcs (`Plan`), shared in proportion to the
//! arcs' cost (one arc: all of it), never below zero.
//!
//! Not every call into the middle is a return: HotSpot enters a compiled
//! method at its verified entry (past the inline-cache check at its
//! start), its interpreter at a method kind's entry, its call stub in the
//! middle of a blob of stubs. Where positions have instruction addresses,
//! a call from another function to address `c` of `f` is a continuation
//! only where `c` can be the return address of one of `f`'s own calls (a
//! call site of `f` at most [`LONGEST_INSTRUCTION`] bytes below `c`);
//! otherwise it is a call to another entry point of `f`, a new activation
//! that the second pass writes as a call (`Plan::entries`).
//!
//! A continuation runs at the recursion level of the activation it
//! resumes. Callgrind's level on it (`'2`) counts how often its address
//! was re-entered, which is the activation's level when every activation
//! passes through it, but a loop whose body a builtin jumps back into
//! nests it deeper at each iteration. So a continuation keeps its level
//! where its range was entered at that level and the calls into that
//! entry hold the calls into that level's continuations (each
//! activation's continuations run inside its call), and takes the highest
//! such level below it otherwise, level 1 at least (the first pass notes the levels; the second writes the names;
//! see `levels`).

use std::collections::{BTreeMap, HashMap, HashSet};

use super::ids::{Interner, Sym};
use super::naming::FnKind;
use super::{FnRef, Res, Rewriter};
use crate::callgrind::format::position::{add_costs, all_costs, push_costs};
use crate::callgrind::rewrite::naming::JitName;
use crate::symbols::SymbolId;

mod levels;
mod plan;
use levels::Levels;
pub(in crate::callgrind) use plan::Plan;
use plan::Share;

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

/// The arcs a continuation comes out of: those made at one call site of
/// `f`, or (without instruction addresses) those from `f` to one callee.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Arcs<W> {
    Site(u64),
    To(W),
    /// `f`'s arcs made at sites in no JIT range (code callgrind charged
    /// to `f`), but for those a continuation returns to.
    Outside,
}

/// The longest x86-64 instruction: a call site further below an address
/// cannot return to it.
const LONGEST_INSTRUCTION: u64 = 15;

/// A part and the function resumed (or calling).
type Of = (u64, SymbolId);

/// One folded call: part, `f`, the address resumed, the caller `x`.
type Resumption = (u64, SymbolId, u64, Who);

/// Continuations' cost summed, and the cost of the arcs they come out of.
type Taken<'a> = (Vec<u64>, &'a Vec<u64>);

/// Inclusive cost of arcs from JIT code, per call site (where positions
/// have an instruction address).
#[derive(Clone, Debug, Default)]
struct Sites {
    /// Of the arcs from `f`'s code.
    all: HashMap<Of, BTreeMap<u64, Vec<u64>>>,
    /// Of the arcs charged to `f` made at sites in no JIT range.
    outside: HashMap<Of, BTreeMap<u64, Vec<u64>>>,
}

impl Sites {
    /// An arc from `of`'s code at `site` (in no JIT range: `outside`).
    fn add(&mut self, of: Of, site: u64, costs: &[u8], outside: bool) -> Res {
        add_costs(
            self.all.entry(of).or_default().entry(site).or_default(),
            costs,
        )?;
        if outside {
            let sites = self.outside.entry(of).or_default();
            add_costs(sites.entry(site).or_default(), costs)?;
        }
        Ok(())
    }

    /// `other`'s arcs added to these.
    fn merge(&mut self, other: &Sites) {
        for (mine, theirs) in [
            (&mut self.all, &other.all),
            (&mut self.outside, &other.outside),
        ] {
            for (&of, sites) in theirs {
                let into = mine.entry(of).or_default();
                for (&site, cost) in sites {
                    add(into.entry(site).or_default(), cost);
                }
            }
        }
    }

    fn retain(&mut self, keep: impl Fn(u64, SymbolId) -> bool) {
        self.all.retain(|&(p, f), _| keep(p, f));
        self.outside.retain(|&(p, f), _| keep(p, f));
    }
}

/// What the first pass saw.
#[derive(Default)]
pub(in crate::callgrind) struct Noted {
    /// Inclusive cost of the folded calls into `f`'s middle.
    continuations: HashMap<Resumption, Vec<u64>>,
    /// The arcs from JIT code by call site.
    sites: Sites,
    /// The folded calls from JIT code by call site, per (part, callee,
    /// address): arcs after all where the address proves an entry point
    /// (`plan`), as for the oracle, whose call sites are those of every
    /// call that stays one.
    folded: HashMap<(u64, SymbolId, u64), Sites>,
    /// Inclusive cost of the arcs from `f`'s code, per callee.
    callees: HashMap<(u64, SymbolId, Who), Vec<u64>>,
    /// Each range's names: entered, resumed, and what calls into them held.
    pub levels: Levels,
}

impl Noted {
    /// Forgets the arcs of `part` from functions no continuation of it
    /// resumes (a profile of many parts keeps only what its second pass
    /// uses).
    pub fn end_part(&mut self, part: u64) {
        let resumed: HashSet<Of> = self
            .continuations
            .keys()
            .map(|&(p, f, _, _)| (p, f))
            .collect();
        let keep = |p: u64, f: SymbolId| p != part || resumed.contains(&(p, f));
        self.sites.retain(keep);
        for folded in self.folded.values_mut() {
            folded.retain(keep);
        }
        self.callees.retain(|&(p, f, _), _| keep(p, f));
    }

    /// The arcs a continuation of `of` at `addr`, called back by `x`,
    /// comes out of (among `sites`), and their cost; `None` where no arc
    /// holds it.
    fn arcs_of<'s>(
        &'s self,
        sites: &'s Sites,
        of: Of,
        addr: u64,
        x: Who,
    ) -> Option<(Arcs<Who>, &'s Vec<u64>)> {
        if let Some(sites) = sites.all.get(&of) {
            let (&site, cost) = sites.range(..addr).next_back()?;
            return Some((Arcs::Site(site), cost));
        }
        let cost = self.callees.get(&(of.0, of.1, x))?;
        Some((Arcs::To(x), cost))
    }

    /// True where `addr` can be the return address of a call `of` made:
    /// always without instruction addresses (`instr` false).
    fn returns_to(&self, of: Of, addr: u64, instr: bool) -> bool {
        let below = self
            .sites
            .all
            .get(&of)
            .and_then(|s| s.range(..addr).next_back());
        !instr || below.is_some_and(|(&site, _)| addr - site <= LONGEST_INSTRUCTION)
    }

    /// The second pass's work; `None` where there is none. `instr`: the
    /// positions have instruction addresses.
    pub fn plan(&self, names: &Interner, instr: bool) -> Option<Plan> {
        let mut plan = Plan {
            levels: self.levels.lowered(names),
            ..Plan::default()
        };
        let entry = |&(part, f, addr, _): &Resumption| !self.returns_to((part, f), addr, instr);
        let entries = self.continuations.keys().filter(|r| entry(r));
        plan.entries = entries.map(|&(_, f, addr, _)| (f, addr)).collect();
        // The second pass writes calls to entry points as calls: their
        // sites are call sites.
        let mut sites = self.sites.clone();
        for (&(_, f, addr), calls) in &self.folded {
            if plan.entries.contains(&(f, addr)) {
                sites.merge(calls);
            }
        }
        // Per arcs: the continuations' cost summed, and the arcs' cost.
        let mut taken: HashMap<(Of, Arcs<Who>), Taken> = HashMap::new();
        for (resumption @ &(part, f, addr, x), continuation) in &self.continuations {
            if entry(resumption) {
                continue;
            }
            plan.resumed += first(continuation);
            let Some((arcs, cost)) = self.arcs_of(&sites, (part, f), addr, x) else {
                plan.unplaced += first(continuation);
                continue;
            };
            let (sum, _) = taken.entry(((part, f), arcs)).or_insert((Vec::new(), cost));
            add(sum, continuation);
        }
        // What the arcs a continuation returns from cannot hold, per `f`.
        let mut beyond: HashMap<Of, (Vec<u64>, Vec<u64>)> = HashMap::new();
        for ((of, arcs), (continuation, cost)) in taken {
            let arcs = match arcs {
                Arcs::Site(site) => {
                    let (rest, sites) = beyond.entry(of).or_default();
                    add(rest, &over(&continuation, cost));
                    sites.push(site);
                    Arcs::Site(site)
                }
                Arcs::To(x) => Arcs::To(x.owned(names)),
                Arcs::Outside => Arcs::Outside,
            };
            plan.shares
                .entry(of)
                .or_default()
                .push((arcs, Share::new(&continuation, cost)));
        }
        for (of, (rest, returned_to)) in beyond {
            if let Some(outside) = self
                .outside_of(&sites, of, &returned_to)
                .filter(|_| first(&rest) > 0)
            {
                plan.shares
                    .entry(of)
                    .or_default()
                    .push((Arcs::Outside, Share::new(&rest, &outside)));
            }
        }
        (plan.takes_out() || plan.unplaced > 0).then_some(plan)
    }

    /// The cost of `of`'s arcs made outside every JIT range, but at the
    /// sites continuations return to (`returned_to`); `None` for none.
    /// Where a continuation's own arcs hold less than it, callgrind nested
    /// it under one of these (V8's builtins, charged to the function they
    /// returned into, calling on): the rest comes out of them.
    fn outside_of(&self, sites: &Sites, of: Of, returned_to: &[u64]) -> Option<Vec<u64>> {
        let mut sum = Vec::new();
        for (site, cost) in sites.outside.get(&of)? {
            if !returned_to.contains(site) {
                add(&mut sum, cost);
            }
        }
        (first(&sum) > 0).then_some(sum)
    }
}

fn add(sum: &mut Vec<u64>, values: &[u64]) {
    if sum.len() < values.len() {
        sum.resize(values.len(), 0);
    }
    for (s, v) in sum.iter_mut().zip(values) {
        *s = s.saturating_add(*v);
    }
}

fn first(costs: &[u64]) -> u64 {
    costs.first().copied().unwrap_or(0)
}

/// What of `continuation` arcs costing `arcs` cannot hold, per event.
fn over(continuation: &[u64], arcs: &[u64]) -> Vec<u64> {
    let held = |e: usize| arcs.get(e).copied().unwrap_or(0);
    continuation
        .iter()
        .enumerate()
        .map(|(e, &c)| c.saturating_sub(held(e)))
        .collect()
}

impl Rewriter<'_> {
    /// `jit` as the second pass takes it: an entry where the plan found
    /// its address to be one (see the module's doc).
    pub(super) fn as_planned(&self, mut jit: JitName) -> JitName {
        if let Some(plan) = &self.reentry.plan {
            jit.entry |= plan.entries.contains(&(jit.symbol, jit.addr));
        }
        jit
    }

    /// A folded call into `resumed`'s middle at `addr` by `caller`, with
    /// the costs of its position line.
    pub(super) fn note_continuation(
        &mut self,
        (resumed, addr): (SymbolId, u64),
        caller: Option<Who>,
        costs: &[u8],
    ) -> Res {
        let Some(caller) = caller.filter(|&c| c != Who::Jit(resumed)) else {
            return Ok(());
        };
        if self.reentry.plan.is_some() {
            return Ok(());
        }
        let key = (self.stats.parts, resumed, addr, caller);
        let sum = self.reentry.noted.continuations.entry(key).or_default();
        Ok(add_costs(sum, costs)?)
    }

    /// A folded call into `resumed`'s middle at `addr`, made from
    /// `owner`'s code at `site` with `costs`: an arc of `owner` where the
    /// plan finds the address to be an entry point (noted in the first
    /// pass only).
    pub(super) fn note_folded_call(
        &mut self,
        owner: SymbolId,
        site: u64,
        (resumed, addr): (SymbolId, u64),
        costs: &[u8],
    ) -> Res {
        if self.reentry.plan.is_some() {
            return Ok(());
        }
        let outside = self.naming.table.lookup(site).is_none();
        let part = self.stats.parts;
        let calls = self.reentry.noted.folded.entry((part, resumed, addr));
        calls.or_default().add((part, owner), site, costs, outside)
    }

    /// An arc from `owner`'s code to `callee` made at `site` (its
    /// instruction address, if known) with `costs`: noted in the first
    /// pass; in the second, the costs with its share of a continuation
    /// taken out (`None`: unchanged).
    pub(super) fn arc_costs(
        &mut self,
        owner: SymbolId,
        callee: Who,
        site: Option<u64>,
        costs: &[u8],
    ) -> Res<Option<Vec<u8>>> {
        let part = self.stats.parts;
        let table = self.naming.table;
        let outside = |site: u64| table.lookup(site).is_none();
        let Some(plan) = self.reentry.plan.as_mut() else {
            let noted = &mut self.reentry.noted;
            if let Some(site) = site {
                noted.sites.add((part, owner), site, costs, outside(site))?;
            }
            add_costs(
                noted.callees.entry((part, owner, callee)).or_default(),
                costs,
            )?;
            return Ok(None);
        };
        let Some(shares) = plan.shares.get_mut(&(part, owner)) else {
            return Ok(None);
        };
        let arcs = match site {
            Some(site) => Arcs::Site(site),
            None => Arcs::To(callee.owned(&self.naming.names)),
        };
        // An arc a continuation returns from; else, outside every range,
        // one that holds what those could not.
        let at = |arcs: &Arcs<Callee>| shares.iter().position(|(a, _)| a == arcs);
        let found = at(&arcs).or_else(|| {
            // Looked up only where a share from outside exists.
            let share = at(&Arcs::Outside)?;
            site.is_some_and(outside).then_some(share)
        });
        let Some((_, share)) = found.map(|i| &mut shares[i]) else {
            return Ok(None);
        };
        let mut arc = all_costs(costs)?;
        let take = share.next(&arc);
        self.stats.reentry.taken += first(&take);
        self.stats.reentry.held += first(&arc);
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
mod tests;
