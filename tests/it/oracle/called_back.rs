//! Rule 8's second part (see the rule in `mod.rs`): a continuation
//! called back from the entry block of JIT function `x`, or from a
//! continuation of `x` where `x` is called under one name, comes out of
//! the calls into `x`.

use std::collections::{BTreeMap, BTreeSet};

use super::*;

/// A range's name: its start, and the name (with its level).
type Named = (u64, String);

/// What rule 8's second part needs of the input.
#[derive(Default)]
pub(super) struct CalledBack {
    /// Per (`x`'s start, `x`'s name): continuations called back from its
    /// entry block, by (`f`'s start, address resumed).
    from_entry: BTreeMap<Named, BTreeMap<(u64, u64), Vec<u64>>>,
    /// Per `x`'s start: those called back from its other blocks (its
    /// continuations, folded into it).
    from_middle: BTreeMap<u64, BTreeMap<(u64, u64), Vec<u64>>>,
    /// The ranges whose continuations call their entry.
    reentered: BTreeSet<u64>,
    /// Per (range start, name called): the calls into its entry from
    /// code other than its own under that name, and the range whose code
    /// made each.
    into: BTreeMap<Named, Vec<(Key, Option<u64>)>>,
    /// Per (`f`'s start, call site): the ranges called there.
    site_callees: BTreeMap<(u64, u64), BTreeSet<u64>>,
}

impl CalledBack {
    /// A folded call into `f`'s middle at `addr`, from the record `at`
    /// whose site lies in `from`'s code, named `name` there.
    pub(super) fn continuation(
        &mut self,
        symbols: &Symbols,
        (at, from, name): (&[String; 5], Option<&Range>, &str),
        (f, addr): (u64, u64),
        cost: Vec<u64>,
    ) {
        let block = symbols.function(&at[0], &at[3]);
        let (Some(x), Some(b)) = (from, block.range) else {
            return;
        };
        if !std::ptr::eq(x, b) {
            return;
        }
        let called_back = match symbols.enters_middle(&block) {
            false => self
                .from_entry
                .entry((x.start, name.to_string()))
                .or_default(),
            true => self.from_middle.entry(x.start).or_default(),
        };
        add_to(called_back.entry((f, addr)).or_default(), cost);
    }

    /// A call (kept as one) from the record `at`, whose site lies in
    /// `from`'s code, to `callee`, summed under `key`; made at `site` of
    /// `from`'s code where positions have addresses.
    pub(super) fn call(
        &mut self,
        symbols: &Symbols,
        (at, from, site): (&[String; 5], Option<&Range>, Option<u64>),
        callee: &Mapped,
        key: &Key,
    ) {
        let Some(to) = callee.range else { return };
        if let (Some(f), Some(site)) = (from, site) {
            let callees = self.site_callees.entry((f.start, site)).or_default();
            callees.insert(to.start);
        }
        let block = symbols.function(&at[0], &at[3]);
        let own = block.range.is_some_and(|b| std::ptr::eq(b, to));
        if own && symbols.enters_middle(&block) {
            self.reentered.insert(to.start);
        }
        if own && block.name == callee.name {
            return;
        }
        let calls = self
            .into
            .entry((to.start, callee.name.clone()))
            .or_default();
        calls.push((key.clone(), from.map(|r| r.start)));
    }

    /// The continuations each `x` called back, by the name its calls
    /// give back under: its entry block's, and for those called back from
    /// its other blocks, the one name it is called under (none where it
    /// is called under several: which calls held them is not known).
    fn by_name_called(&self) -> BTreeMap<Named, BTreeMap<(u64, u64), Vec<u64>>> {
        let mut by_name = self.from_entry.clone();
        for (&x, continuations) in &self.from_middle {
            if self.reentered.contains(&x) {
                continue;
            }
            let mut names = (self.into.keys()).filter(|(start, _)| *start == x);
            let (Some((_, name)), None) = (names.next(), names.next()) else {
                continue;
            };
            let calls = by_name.entry((x, name.clone())).or_default();
            for (&at, cost) in continuations {
                add_to(calls.entry(at).or_default(), cost.clone());
            }
        }
        by_name
    }

    /// The arcs each `x` gives back, and how much: its continuations but
    /// those whose `f` calls `x` at the site they return to (or, without
    /// addresses, calls `x` at all); not out of `f`'s own calls into `x`,
    /// nor out of those of a function whose arcs give back (`giving`).
    pub(super) fn reentries(
        &self,
        by_site: &BTreeMap<u64, BTreeMap<u64, Vec<Key>>>,
        by_callee: &BTreeMap<(u64, Who), Vec<Key>>,
        giving: &BTreeSet<u64>,
    ) -> Vec<Reentry> {
        let mut reentries = Vec::new();
        for ((x, name), continuations) in &self.by_name_called() {
            let (mut cost, mut resumed) = (Vec::new(), BTreeSet::new());
            for (&(f, addr), c) in continuations {
                let direct = match by_site.get(&f) {
                    Some(sites) => sites.range(..addr).next_back().is_some_and(|(site, _)| {
                        let callees = self.site_callees.get(&(f, *site));
                        callees.is_some_and(|c| c.contains(x))
                    }),
                    None => by_callee.contains_key(&(f, ("jit".into(), x.to_string()))),
                };
                if !direct {
                    add_to(&mut cost, c.clone());
                    resumed.insert(f);
                }
            }
            let calls = self.into.get(&(*x, name.clone())).into_iter().flatten();
            let mut arcs: Vec<Key> = calls
                .filter(|(_, caller)| {
                    !caller.is_some_and(|c| resumed.contains(&c) || giving.contains(&c))
                })
                .map(|(key, _)| key.clone())
                .collect();
            arcs.sort();
            arcs.dedup();
            if cost.first().is_some_and(|&c| c > 0) && !arcs.is_empty() {
                reentries.push(Reentry {
                    arcs,
                    continuation: cost,
                });
            }
        }
        reentries
    }
}
