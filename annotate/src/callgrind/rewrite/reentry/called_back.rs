//! What the calls into a JIT function give back (see the parent module):
//! the continuations it called back, from its entry block or from its
//! own continuations, out of the calls into it (`Plan::called_back`).

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::by_level::{Known, Sums};
use super::noted::{NameOf, Noted, Resumption};
use super::plan::{add, first, CalledBack, CalledBackShares, OwnLevels, Plan, Share};
use super::sites::Sites;
use super::{Arcs, Entered, Of, Who};
use crate::callgrind::rewrite::ids::{Interner, Sym};
use crate::symbols::SymbolId;

impl Noted {
    /// Per JIT range and name `x` that called continuations back: their
    /// cost out of the calls into `x`, whose activations held them (a
    /// chain `f -> builtins -> x -> middle of f`), but for `f`'s own: `f`'s
    /// arcs give its continuations back at the sites they return to. The
    /// continuations called from `x`'s block at an entry come out of the
    /// calls into that block; those called from a continuation of `x`
    /// (folded into it), out of the calls into `x` where they all call it
    /// under one name (see [`Noted::names_called`]); where they call it
    /// under several, out of each name's calls as far as they hold more
    /// than `x` ran under that name (see [`Noted::by_level`]). Calls made
    /// by a function whose arcs give back continuations of its own
    /// (`plan.shares`) are left out, so that no arc gives twice; but where
    /// that function is `x` at another level (see [`Noted::own_levels`],
    /// the second map). `outside`: a call site lies in no JIT range.
    pub(super) fn called_back_shares<O: Fn(u64) -> bool>(
        &self,
        sites: &Sites,
        entry: &impl Fn(&Resumption) -> bool,
        plan: &Plan,
        (names, outside): (&Interner, &O),
    ) -> (CalledBackShares, OwnLevels) {
        let giving: HashSet<Of> = plan.shares.keys().copied().collect();
        let known = &Known {
            names,
            plan,
            outside,
            giving: &giving,
        };
        let entries = &plan.entries;
        let is_entry = |x: SymbolId, (at, start): Entered| start || entries.contains(&(x, at));
        let (one_name, several) = self.names_called(is_entry);
        let mut sums: Sums<NameOf> = HashMap::default();
        let mut by_levels: Sums<Of> = HashMap::default();
        for (&(resumption, name, entered), cost) in &self.called_back {
            let (part, f, _, who) = resumption;
            let Who::Jit(x) = who else { continue };
            if self.returns_from_a_call_into(sites, &resumption, x) || entry(&resumption) {
                continue;
            }
            let name = match is_entry(x, entered) {
                true => name,
                // called back from a continuation of `x`
                false => match one_name.get(&(part, x)) {
                    Some(&name) => name,
                    None => {
                        if several.contains(&(part, x)) {
                            let (sum, resumed) = by_levels.entry((part, x)).or_default();
                            add(sum, cost);
                            resumed.insert(f);
                        }
                        continue;
                    }
                },
            };
            let (sum, resumed) = sums.entry((part, x, name)).or_default();
            add(sum, cost);
            resumed.insert(f);
        }
        // (see `by_level` for why not where the plan found entry points)
        let by_levels = by_levels
            .into_iter()
            .filter(|_| known.plan.entries.is_empty());
        for (of, (cost, resumed)) in by_levels {
            let cuts = self.by_level(of, (&cost, &resumed), &sums, known, is_entry);
            for (name, cut) in cuts {
                let (sum, from) = sums.entry((of.0, of.1, name)).or_default();
                add(sum, &cut);
                from.extend(&resumed);
            }
        }
        let own = self.own_levels(&several, &sums, known, is_entry);
        let mut shares: HashMap<_, HashMap<_, _>> = HashMap::default();
        for (key @ (part, x, name), (cost, resumed)) in sums {
            let into = self.calls_into(key, &resumed, known.giving, is_entry);
            if first(&into) > 0 {
                let share = Share::new(&cost, &into);
                let by_name = shares.entry((part, x)).or_default();
                let name = known.names.name(name).to_vec();
                by_name.insert(name, CalledBack { share, resumed });
            }
        }
        (shares, own)
    }

    /// True where `x` is the callee of the call the continuation of
    /// `resumption` returns from: that arc gives it back already.
    fn returns_from_a_call_into(
        &self,
        sites: &Sites,
        resumption: &Resumption,
        x: SymbolId,
    ) -> bool {
        let &(part, f, addr, who) = resumption;
        match self.arcs_of(sites, (part, f), addr, who) {
            Some((Arcs::Site(site), _)) => self.site_callees.contains(&((part, f), site, x)),
            Some((Arcs::To(_), _)) => true,
            _ => false,
        }
    }

    /// What the calls into `x`'s entries under the name of `key` held,
    /// but for those made by the functions `x` resumed (their own arcs
    /// give back their continuations) or by one whose arcs give back
    /// continuations of its own (`giving`).
    pub(super) fn calls_into(
        &self,
        key @ (part, x, _): NameOf,
        resumed: &HashSet<SymbolId>,
        giving: &HashSet<Of>,
        is_entry: impl Fn(SymbolId, Entered) -> bool,
    ) -> Vec<u64> {
        let mut into = Vec::new();
        for ((entered, caller), calls) in self.into.get(&key).into_iter().flatten() {
            let gives_own = |c: SymbolId| giving.contains(&(part, c));
            if is_entry(x, *entered) && gives_back(*caller, resumed, gives_own) {
                add(&mut into, calls);
            }
        }
        into
    }

    /// Per (part, JIT range), the one name the calls into its entries
    /// call it under, where they call it under one; and the ranges they
    /// call under several (levels of recursion, `fib'2`). There a
    /// continuation of it ran in one of those activations, and which one
    /// is not known: taking it out of the wrong level's calls leaves those
    /// short of what that level ran (V8's `resolve'2` read 1.41 times its
    /// calls). Neither for a range a continuation of which calls its entry
    /// (BEAM's shared stubs): those calls are inside its activations too,
    /// and the calls into it would give back more than they held.
    fn names_called(
        &self,
        is_entry: impl Fn(SymbolId, Entered) -> bool,
    ) -> (HashMap<Of, Sym>, HashSet<Of>) {
        let reentered: HashSet<Of> = (self.from_own.iter())
            .filter(|&&(_, x, block, call)| !is_entry(x, block) && is_entry(x, call))
            .map(|&(part, x, _, _)| (part, x))
            .collect();
        let mut names: HashMap<Of, HashSet<Sym>> = HashMap::default();
        for (&(part, x, name), by_caller) in &self.into {
            if by_caller.keys().any(|&(entered, _)| is_entry(x, entered)) {
                names.entry((part, x)).or_default().insert(name);
            }
        }
        names.retain(|of, _| !reentered.contains(of));
        let several = (names.iter())
            .filter(|(_, names)| names.len() > 1)
            .map(|(&of, _)| of)
            .collect();
        let one = |names: &HashSet<Sym>| names.iter().next().copied().filter(|_| names.len() == 1);
        let one_name = (names.iter())
            .filter_map(|(&of, names)| Some((of, one(names)?)))
            .collect();
        (one_name, several)
    }
}

/// True where a call into a function that called continuations back,
/// made from `caller`'s code, gives them back: the plan sums such calls
/// (`Noted::calls_into`) and the write takes from the same ones
/// (`Rewriter::called_back_costs`). Not a call by a function resumed
/// (`resumed`: its own arcs give its continuations back) nor by one
/// whose arcs give back continuations of its own (`gives_own`).
pub(super) fn gives_back(
    caller: Option<SymbolId>,
    resumed: &HashSet<SymbolId>,
    gives_own: impl Fn(SymbolId) -> bool,
) -> bool {
    caller.is_none_or(|c| !resumed.contains(&c) && !gives_own(c))
}
