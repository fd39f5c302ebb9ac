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
//! calls, so their inclusive cost stays within their callers'. Where `x`
//! is JIT code, the calls into `x` held it too, while `x`'s own call of
//! the continuation is folded away: those calls give it back, `x`'s own
//! code under another name among them (BEAM calls a label of its own
//! function at another level; `Plan::called_back`; not `f`'s own calls
//! into `x`, nor where `x` is the callee at the site it returns to), so
//! that `x`'s callers hold what `x` ran, as its self cost and calls say
//! (V8: `f -> Call builtins -> noop -> middle of f`, where `noop` read
//! 14% of a run). Also where `x` called it back from a continuation of
//! its own (`x` resumed after a call, then returning to `f`), if the
//! calls into `x` all call it under one name (under several, levels of
//! recursion, which of them held it is not known) and no continuation of
//! `x` calls `x` (BEAM's shared stubs: such calls are inside an
//! activation of `x` too). Without
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

use super::ids::{Interner, Sym};
use super::naming::FnKind;
use super::{FnRef, Res, Rewriter};
use crate::callgrind::format::position::{add_costs, first_cost};
use crate::callgrind::rewrite::naming::JitName;
use crate::symbols::SymbolId;

mod by_level;
mod called_back;
mod calls;
mod levels;
mod noted;
mod plan;
mod sites;
pub(in crate::callgrind) use noted::Noted;
pub(in crate::callgrind) use plan::Plan;

/// An address a JIT range was entered at, and whether it is an entry
/// as far as known (its start, or an entry point the plan found).
pub(in crate::callgrind) type Entered = (u64, bool);

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

impl Rewriter<'_> {
    /// `jit` as the second pass takes it: an entry where the plan found
    /// its address to be one (see the module's doc).
    pub(super) fn as_planned(&self, mut jit: JitName) -> JitName {
        if let Some(plan) = &self.reentry.plan {
            jit.entry |= plan.entries.contains(&(jit.symbol, jit.addr));
        }
        jit
    }

    /// A folded call into `resumed`'s middle at `addr` by `caller` (from
    /// its own block, if so: the block's name and the address it was
    /// entered at), with the costs of its position line.
    pub(super) fn note_continuation(
        &mut self,
        (resumed, addr): (SymbolId, u64),
        (caller, block): (Option<Who>, Option<(Sym, Entered)>),
        costs: &[u8],
    ) -> Res {
        let Some(caller) = caller.filter(|&c| c != Who::Jit(resumed)) else {
            return Ok(());
        };
        if self.reentry.plan.is_some() {
            return Ok(());
        }
        let key = (self.stats.parts, resumed, addr, caller);
        let noted = &mut self.reentry.noted;
        add_costs(noted.continuations.entry(key).or_default(), costs)?;
        if let Some((name, at)) = block {
            add_costs(noted.called_back.entry((key, name, at)).or_default(), costs)?;
        }
        Ok(())
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
        let part = self.stats.parts;
        let calls = self.reentry.noted.folded.entry((part, resumed, addr));
        let sites = calls.or_default().entry((part, owner)).or_default();
        Ok(add_costs(sites.entry(site).or_default(), costs)?)
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
        let outside = self.naming.symbols.outside();
        let Some(plan) = self.reentry.plan.as_mut() else {
            let noted = &mut self.reentry.noted;
            if let Some(site) = site {
                noted.sites.add((part, owner), site, costs, outside(site))?;
                if let Who::Jit(callee) = callee {
                    noted.site_callees.insert(((part, owner), site, callee));
                }
            }
            add_costs(
                noted.callees.entry((part, owner, callee)).or_default(),
                costs,
            )?;
            if let Some((block, name, (_, entry))) = self.part.jit_block_at() {
                let arc = ((part, block, name, entry), owner, site, callee);
                *noted.ran_arcs.entry(arc).or_default() += first_cost(costs)?;
            }
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
        let (out, taken, held) = share.take_out(costs)?;
        self.stats.reentry.taken += taken;
        self.stats.reentry.held += held;
        Ok(Some(out))
    }
}

/// A part and the function resumed (or calling).
type Of = (u64, SymbolId);

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
