//! Continuations called back from a JIT function `x`'s continuations,
//! where the calls into `x` call it under several names (levels of
//! recursion, `fib'2`; see the parent module). Which level's activation
//! ran each one is not known; but the calls into a level that held one
//! hold more than `x` ran under that name. Each level's calls give back
//! that much where what was called back covers it all; else what it does
//! not cover stays with the levels in proportion to what each ran. Never
//! more, so that no level's callers are left with less than it ran.
//!
//! What `x` ran under a name is what the first pass saw its blocks of
//! that name run (`Noted::ran`: cost lines, and calls that stay calls),
//! less what the plan takes out of those calls for `x`'s own
//! continuations (`Plan::shares`). Calls `x` makes into functions that
//! called continuations back are left as they are: `x` is then taken to
//! have run more than it did, and its callers give back less than they
//! could (they stay above what `x` ran, as before), never more.
//!
//! The same holds of `x`'s own continuations where they are written under
//! another name than the level they resumed (callgrind names a
//! continuation by how often its address was re-entered): the calls
//! between `x`'s levels give back what the calls into a level hold over
//! what it ran, as far as the plan took out of that level's calls
//! (`Noted::own_levels`).
//!
//! Not where the plan found entry points in the middle of JIT functions
//! (HotSpot's, BEAM's): there calls the first pass folded are calls in
//! the second, blocks it took for continuations are entries, and what a
//! level ran is not known before it is written (on a fresh Erlang
//! recording `init:do_ensure_loaded/2`'s callers were left with 1,776 Ir
//! of the 60,194,663 it ran). There the continuations stay in the calls,
//! as before.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::noted::{ByCaller, NameOf, Noted};
use super::plan::{add, first, OwnLevels, Plan, Share};
use super::{Arcs, Callee, Entered, Of, Who};
use crate::callgrind::rewrite::ids::{Interner, Sym};
use crate::symbols::SymbolId;

/// Continuations' cost summed per key, with the functions they resumed.
pub(super) type Sums<K> = HashMap<K, (Vec<u64>, HashSet<SymbolId>)>;

/// What the plan knows when it shares continuations out by level.
pub(super) struct Known<'a, O> {
    pub names: &'a Interner,
    pub plan: &'a Plan,
    /// True for a call site in no JIT range.
    pub outside: &'a O,
    /// Functions whose arcs give back continuations of their own.
    pub giving: &'a HashSet<Of>,
}

impl Noted {
    /// The continuations `cost` that `x`'s continuations called back
    /// (resuming `resumed`), shared over the names `x` is called under:
    /// per name, the cost its calls give back. `taken`: what the calls
    /// into each name give back already.
    pub(super) fn by_level<O: Fn(u64) -> bool>(
        &self,
        (part, x): Of,
        (cost, resumed): (&[u64], &HashSet<SymbolId>),
        taken: &Sums<NameOf>,
        known: &Known<O>,
        is_entry: impl Fn(SymbolId, Entered) -> bool + Copy,
    ) -> Vec<(Sym, Vec<u64>)> {
        let ran = self.ran_by_name((part, x), known);
        let ran = |name: Sym| ran.get(known.names.name(name)).map_or(0, |r| r.ran);
        let mut levels: Vec<Level> = Vec::new();
        for (&(p, callee, name), by_caller) in &self.into {
            let entered = by_caller.keys().any(|&(at, _)| is_entry(x, at));
            if (p, callee) != (part, x) || !entered {
                continue;
            }
            let into = self.calls_into((part, x, name), resumed, known.giving, is_entry);
            let given = taken.get(&(part, x, name)).map_or(0, |(sum, _)| first(sum));
            levels.push(Level {
                name,
                held: first(&into).saturating_sub(given),
                ran: ran(name),
            });
        }
        let cuts = (levels.iter().zip(cuts(&levels, first(cost))))
            .filter(|&(_, cut)| cut > 0)
            .map(|(level, cut)| {
                let share = cost.iter().map(|&c| part_of(c, cut, first(cost)));
                (level.name, share.collect())
            });
        cuts.collect()
    }

    /// What `x` ran in `part` under each name it is written at (first
    /// event; a continuation's block under its lowered name), less what
    /// the plan takes out of its calls; and that.
    fn ran_by_name<O: Fn(u64) -> bool>(
        &self,
        (part, x): Of,
        known: &Known<O>,
    ) -> HashMap<Vec<u8>, Ran> {
        let written = |name: Sym, entry: bool| {
            let name = known.names.name(name);
            let lowered = (!entry).then(|| known.plan.levels.get(&(x, name.to_vec())));
            lowered.flatten().map_or(name, Vec::as_slice).to_vec()
        };
        let mut ran: HashMap<Vec<u8>, Ran> = HashMap::default();
        for (&(p, range, name, entry), &cost) in &self.ran {
            if (p, range) == (part, x) {
                ran.entry(written(name, entry)).or_default().ran += cost;
            }
        }
        for (&((p, range, name, entry), owner, site, callee), &cost) in &self.ran_arcs {
            if (p, range) != (part, x) {
                continue;
            }
            let shares = known.plan.shares.get(&(part, owner));
            let Some(share) = shares.and_then(|s| share_of(s, site, callee, known)) else {
                continue;
            };
            let taken = part_of(first(&share.take), cost, first(&share.arcs)).min(cost);
            let ran = ran.entry(written(name, entry)).or_default();
            let taken = taken.min(ran.ran);
            ran.ran -= taken;
            ran.taken += taken;
        }
        ran
    }

    /// Where `x` is called under several names and its own arcs give back
    /// its continuations (`plan.shares`): per name, what the calls into it
    /// made by `x`'s own code under another name give back. A continuation
    /// is written under the name callgrind gave its address, which need
    /// not be the level of the activation it resumed: its cost is that
    /// name's, while the calls into the level it resumed hold it too (V8's
    /// `sumTo` calls `sumTo'2`, whose out-of-line prologue returns into a
    /// continuation callgrind named at level 1). Those calls give back
    /// what the calls into the name hold over what `x` ran under it, as
    /// far as the plan takes out of the arcs of its blocks, and no more
    /// than they hold. Not where `x` gives back out of its arcs outside
    /// every JIT range (a call between levels may be among those), nor
    /// where the plan found entry points (see the module's doc).
    /// `given`: what the calls into each name give back already.
    pub(super) fn own_levels<O: Fn(u64) -> bool>(
        &self,
        several: &HashSet<Of>,
        given: &Sums<NameOf>,
        known: &Known<O>,
        is_entry: impl Fn(SymbolId, Entered) -> bool,
    ) -> OwnLevels {
        let mut shares: OwnLevels = HashMap::default();
        for &(part, x) in several
            .iter()
            .filter(|of| self.gives_own_by_level(of, known))
        {
            let ran = self.ran_by_name((part, x), known);
            for (&(p, callee, name), by_caller) in &self.into {
                if (p, callee) != (part, x) {
                    continue;
                }
                let (all, own) = split_own(by_caller, x, &is_entry);
                let bytes = known.names.name(name);
                let ran = ran.get(bytes).copied().unwrap_or_default();
                let given = given.get(&(part, x, name)).map_or(0, |(sum, _)| first(sum));
                let over = first(&all).saturating_sub(given).saturating_sub(ran.ran);
                let cut = over.min(ran.taken).min(first(&own));
                if cut > 0 {
                    let take: Vec<u64> =
                        own.iter().map(|&c| part_of(c, cut, first(&own))).collect();
                    let by_name = shares.entry((part, x)).or_default();
                    by_name.insert(bytes.to_vec(), Share::new(&take, &own));
                }
            }
        }
        shares
    }

    /// True where `x`'s own arcs give back its continuations, none out of
    /// its arcs outside every JIT range, and the plan found no entry
    /// points.
    fn gives_own_by_level<O>(&self, of: &Of, known: &Known<O>) -> bool {
        let shares = known.plan.shares.get(of);
        let outside = |s: &Vec<(Arcs<Callee>, Share)>| s.iter().any(|(a, _)| *a == Arcs::Outside);
        known.plan.entries.is_empty() && shares.is_some_and(|s| !outside(s))
    }
}

/// What the calls into `x`'s entries held (`by_caller`): from anyone, and
/// from `x`'s own code.
fn split_own(
    by_caller: &ByCaller,
    x: SymbolId,
    is_entry: impl Fn(SymbolId, Entered) -> bool,
) -> (Vec<u64>, Vec<u64>) {
    let (mut all, mut own) = (Vec::new(), Vec::new());
    for (&(_, caller), calls) in by_caller.iter().filter(|(k, _)| is_entry(x, k.0)) {
        add(&mut all, calls);
        if caller == Some(x) {
            add(&mut own, calls);
        }
    }
    (all, own)
}

/// What `x` ran under a name (first event), and what the plan takes out
/// of the calls its blocks of that name made.
#[derive(Clone, Copy, Default)]
struct Ran {
    ran: u64,
    taken: u64,
}

/// One name `x` is called under.
struct Level {
    name: Sym,
    /// What the calls into it hold (first event), less what they give
    /// back already.
    held: u64,
    /// What `x` ran under it.
    ran: u64,
}

/// What the calls into each level give back of `back` (first event). Each
/// gives what it holds over what ran where `back` covers all of that;
/// else what `back` does not cover stays with the levels in proportion to
/// what each ran (rounded up: they never give more than `back`), so that
/// each is left at one ratio of what it ran (a share in proportion to
/// what each holds over would leave a small level far over: on the Node
/// fixture `normalizeString'2` at 1.15 times). Levels that ran nothing
/// keep it in proportion to what they hold over.
fn cuts(levels: &[Level], back: u64) -> Vec<u64> {
    let over = |l: &Level| l.held.saturating_sub(l.ran);
    let all: u64 = levels.iter().map(over).sum();
    let short = all.saturating_sub(back);
    let ran: u64 = levels.iter().filter(|l| over(l) > 0).map(|l| l.ran).sum();
    let weight = |l: &Level| {
        if ran > 0 {
            (l.ran, ran)
        } else {
            (over(l), all)
        }
    };
    (levels.iter())
        .map(|l| match over(l) {
            0 => 0,
            o => {
                let (part, whole) = weight(l);
                o.saturating_sub(part_of_up(short, part, whole))
            }
        })
        .collect()
}

/// The share among `shares` that an arc made at `site` to `callee` gives
/// back in the second pass (as `Rewriter::arc_costs` finds it).
fn share_of<'s, O: Fn(u64) -> bool>(
    shares: &'s [(Arcs<Callee>, Share)],
    site: Option<u64>,
    callee: Who,
    known: &Known<O>,
) -> Option<&'s Share> {
    let arcs = match site {
        Some(site) => Arcs::Site(site),
        None => Arcs::To(callee.owned(known.names)),
    };
    let at = |arcs: &Arcs<Callee>| shares.iter().position(|(a, _)| a == arcs);
    let found = at(&arcs).or_else(|| {
        let share = at(&Arcs::Outside)?;
        site.is_some_and(known.outside).then_some(share)
    });
    found.map(|i| &shares[i].1)
}

/// `value` times `part` over `whole`, rounded down (0 for a whole of 0).
fn part_of(value: u64, part: u64, whole: u64) -> u64 {
    match whole {
        0 => 0,
        _ => (u128::from(value) * u128::from(part) / u128::from(whole)) as u64,
    }
}

/// [`part_of`] rounded up.
fn part_of_up(value: u64, part: u64, whole: u64) -> u64 {
    match whole {
        0 => 0,
        _ => (u128::from(value) * u128::from(part)).div_ceil(u128::from(whole)) as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`cuts`] of levels given as (held, ran).
    fn cut(levels: &[(u64, u64)], back: u64) -> Vec<u64> {
        let name = Interner::default().intern(b"f");
        let levels: Vec<Level> = (levels.iter())
            .map(|&(held, ran)| Level { name, held, ran })
            .collect();
        cuts(&levels, back)
    }

    #[test]
    fn each_level_gives_what_it_holds_over_what_it_ran_if_covered() {
        // 2 and 2 over, 5 called back: each gives its own; none under.
        assert_eq!(cut(&[(21, 19), (6, 4), (3, 5)], 5), [2, 2, 0]);
        assert_eq!(cut(&[(21, 19), (6, 4)], 4), [2, 2]);
    }

    #[test]
    fn what_is_not_covered_stays_in_proportion_to_what_each_ran() {
        // 8 over, 5 called back: 3 stay, 2 with the level that ran 200,
        // 1 with the one that ran 100 (rounded up: 2.0 and 1.0).
        assert_eq!(cut(&[(204, 200), (104, 100)], 5), [2, 3]);
        // Rounded up, never more than called back: 1.69 and 0.31 stay.
        let given = cut(&[(24, 22), (9, 4)], 5);
        assert_eq!(given, [0, 4]);
        assert!(given.iter().sum::<u64>() <= 5);
        // A level with nothing over is not among those that keep the rest.
        assert_eq!(cut(&[(204, 200), (1000, 1000), (104, 100)], 5), [2, 0, 3]);
    }

    #[test]
    fn levels_that_ran_nothing_keep_the_rest_by_what_they_hold_over() {
        // 30 and 10 over, nothing ran, 20 called back: 15 and 5 stay.
        let given = cut(&[(30, 0), (10, 0)], 20);
        assert_eq!(given, [15, 5]);
        assert_eq!(cut(&[(30, 0), (10, 0)], 0), [0, 0]);
    }

    #[test]
    fn parts_of_nothing_are_nothing() {
        assert_eq!(part_of(7, 3, 0), 0);
        assert_eq!(part_of_up(7, 3, 0), 0);
        assert_eq!(part_of(7, 3, 4), 5);
        assert_eq!(part_of_up(7, 3, 4), 6);
    }
}
