//! Rule 8's second part (see the rule in `mod.rs`): a continuation
//! called back from the entry block of JIT function `x`, or from a
//! continuation of `x` where `x` is called under one name, comes out of
//! the calls into `x`; where `x` is called under several, out of each
//! name's calls as far as they hold more than `x` ran under that name.

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
    /// Per (range start, name its block is written under): what its
    /// blocks ran, first event (their cost records, and the calls they
    /// made that stay calls, those to code they jumped into included).
    ran: BTreeMap<Named, u64>,
    /// Of those calls, per block name, their first-event cost by the
    /// range whose code made them, call site and callee (as rule 8 takes
    /// parts of continuations out of them), with one of their keys.
    ran_calls: BTreeMap<Named, BTreeMap<CallsAt, (u64, Key)>>,
}

/// Calls made from a range's code (by its start) at a call site to a
/// callee.
pub(super) type CallsAt = (Option<u64>, Option<u64>, Who);

/// Per (`x`'s start, name called): continuations' cost to give back, and
/// the functions they resumed.
type Giving = BTreeMap<Named, (Vec<u64>, BTreeSet<u64>)>;

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

    /// `cost` (first event) that the block of record `at` ran, if a JIT
    /// range's: a cost record, or a call (`key`, made as `CallsAt` says)
    /// that stays one.
    pub(super) fn ran(
        &mut self,
        symbols: &Symbols,
        at: &[String; 5],
        cost: u64,
        call: Option<(&Key, CallsAt)>,
    ) {
        let block = symbols.function(&at[0], &at[3]);
        let Some(x) = block.range else { return };
        let named = (x.start, block.name);
        *self.ran.entry(named.clone()).or_default() += cost;
        if let Some((key, calls)) = call {
            let by = self.ran_calls.entry(named).or_default();
            by.entry(calls).or_insert((0, key.clone())).0 += cost;
        }
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

    /// The continuations each `x` called back from its entry block, by
    /// its name; and from its other blocks (folded into it), under the
    /// one name it is called under, or (the second map) where it is
    /// called under several.
    fn by_name_called(&self) -> (Continuations<Named>, Continuations<u64>) {
        let mut by_name = self.from_entry.clone();
        let mut several = BTreeMap::new();
        for (&x, continuations) in &self.from_middle {
            if self.reentered.contains(&x) {
                continue;
            }
            let names: Vec<&Named> = (self.into.keys())
                .filter(|(start, _)| *start == x)
                .collect();
            let calls = match names[..] {
                [] => continue,
                [(_, name)] => by_name.entry((x, name.clone())).or_default(),
                _ => several.entry(x).or_default(),
            };
            for (&at, cost) in continuations {
                add_to(calls.entry(at).or_default(), cost.clone());
            }
        }
        (by_name, several)
    }

    /// The continuations among `continuations` that come out of calls
    /// into `x` (not where `f` calls `x` at the site they return to, or
    /// without addresses calls `x` at all: those arcs give them back),
    /// summed, and the functions they resumed.
    fn not_direct(
        &self,
        x: u64,
        continuations: &BTreeMap<(u64, u64), Vec<u64>>,
        (by_site, by_callee): Arcs,
    ) -> (Vec<u64>, BTreeSet<u64>) {
        let (mut cost, mut resumed) = (Vec::new(), BTreeSet::new());
        for (&(f, addr), c) in continuations {
            let direct = match by_site.get(&f) {
                Some(sites) => sites.range(..addr).next_back().is_some_and(|(site, _)| {
                    let callees = self.site_callees.get(&(f, *site));
                    callees.is_some_and(|c| c.contains(&x))
                }),
                None => by_callee.contains_key(&(f, ("jit".into(), x.to_string()))),
            };
            if !direct {
                add_to(&mut cost, c.clone());
                resumed.insert(f);
            }
        }
        (cost, resumed)
    }

    /// The calls into `x` under `name` that give back, but those made by
    /// the functions resumed or by one whose arcs give back (`giving`).
    fn arcs_into(
        &self,
        named: &Named,
        resumed: &BTreeSet<u64>,
        giving: &BTreeSet<u64>,
    ) -> Vec<Key> {
        let calls = self.into.get(named).into_iter().flatten();
        let mut arcs: Vec<Key> = calls
            .filter(|(_, caller)| {
                !caller.is_some_and(|c| resumed.contains(&c) || giving.contains(&c))
            })
            .map(|(key, _)| key.clone())
            .collect();
        arcs.sort();
        arcs.dedup();
        arcs
    }

    /// The arcs each `x` gives back, and how much: its continuations but
    /// those whose `f` calls `x` at the site they return to (or, without
    /// addresses, calls `x` at all); not out of `f`'s own calls into `x`,
    /// nor out of those of a function whose arcs give back (`giving`).
    /// `first`: rule 8's first part, out of `sums`. Where `x` is called
    /// under several names, only `by_level`: where no call enters a range
    /// at an entry point in its middle.
    pub(super) fn reentries(
        &self,
        arcs: Arcs,
        (giving, own_levels): (&BTreeSet<u64>, &BTreeSet<u64>),
        (first, sums): (&[Reentry], &Sums),
        by_level: bool,
    ) -> Vec<Reentry> {
        let (by_name, several) = self.by_name_called();
        let mut give: Giving = BTreeMap::new();
        for ((x, name), continuations) in &by_name {
            let (cost, resumed) = self.not_direct(*x, continuations, arcs);
            give.insert((*x, name.clone()), (cost, resumed));
        }
        for (x, continuations) in several.iter().filter(|_| by_level) {
            let (cost, resumed) = self.not_direct(*x, continuations, arcs);
            let levels = self.levels(*x, (&cost, &resumed), &give, giving, (first, sums));
            for (name, cut) in levels {
                let (sum, from) = give.entry((*x, name)).or_default();
                add_to(sum, cut);
                from.extend(&resumed);
            }
        }
        let mut reentries = Vec::new();
        for &x in own_levels.iter().filter(|_| by_level) {
            reentries.extend(self.own_levels(x, &give, (first, sums)));
        }
        for (named, (cost, resumed)) in give {
            let arcs = self.arcs_into(&named, &resumed, giving);
            if cost.first().is_some_and(|&c| c > 0) && !arcs.is_empty() {
                reentries.push(Reentry {
                    arcs,
                    continuation: cost,
                });
            }
        }
        reentries
    }

    /// The continuations `cost` that `x`'s continuations called back
    /// (resuming `resumed`), where `x` is called under several names: per
    /// name, the cost its calls give back. A name's calls hold, over what
    /// `x` ran under it, what they give back; all of it where the
    /// continuations cost as much, else what they do not cover stays with
    /// the names in proportion to what `x` ran under each.
    fn levels(
        &self,
        x: u64,
        (cost, resumed): (&[u64], &BTreeSet<u64>),
        give: &Giving,
        giving: &BTreeSet<u64>,
        (first, sums): (&[Reentry], &Sums),
    ) -> Vec<(String, Vec<u64>)> {
        let back = cost.first().copied().unwrap_or(0);
        let mut over = Vec::new();
        for named @ (_, name) in self.into.keys().filter(|(start, _)| *start == x) {
            let arcs = self.arcs_into(named, resumed, giving);
            let held = held_by(sums, &arcs).first().copied().unwrap_or(0);
            let given = give
                .get(named)
                .and_then(|(c, _)| c.first().copied())
                .unwrap_or(0);
            let ran = self.ran_after_first_part(named, first, sums);
            over.push((
                name.clone(),
                held.saturating_sub(given).saturating_sub(ran),
                ran,
            ));
        }
        let all: u64 = over.iter().map(|o| o.1).sum();
        let short = all.saturating_sub(back);
        let ran_over: u64 = over.iter().filter(|o| o.1 > 0).map(|o| o.2).sum();
        let mut cuts = Vec::new();
        for (name, o, ran) in over.into_iter().filter(|o| o.1 > 0) {
            // (a level that ran nothing where none did: by what it holds over)
            let (part, whole) = if ran_over > 0 {
                (ran, ran_over)
            } else {
                (o, all)
            };
            let stays = (short as u128 * part as u128).div_ceil(whole as u128) as u64;
            let cut = o.saturating_sub(stays);
            if cut > 0 && back > 0 {
                let share = cost
                    .iter()
                    .map(|&c| (c as u128 * cut as u128 / back as u128) as u64);
                cuts.push((name, share.collect()));
            }
        }
        cuts
    }

    /// Rule 8's last part, for `x` whose arcs give back its own
    /// continuations (none out of arcs at sites in no range): where it is
    /// called under several names, the calls into each name made from
    /// `x`'s own code under another name lose what the calls into that
    /// name hold over what `x` ran under it (less what they give back
    /// already, `give`), at most what rule 8's first part takes out of the
    /// calls made by `x`'s blocks under that name, and at most what they
    /// hold; per event in proportion to what they hold.
    fn own_levels(
        &self,
        x: u64,
        give: &Giving,
        (first, sums): (&[Reentry], &Sums),
    ) -> Vec<Reentry> {
        let names: Vec<&Named> = (self.into.keys())
            .filter(|(start, _)| *start == x)
            .collect();
        if names.len() < 2 || self.reentered.contains(&x) {
            return Vec::new();
        }
        let first_of = |v: &[u64]| v.first().copied().unwrap_or(0);
        let mut reentries = Vec::new();
        for named in names {
            let calls = &self.into[named];
            let keys = |own: bool| {
                let mut keys: Vec<Key> = (calls.iter())
                    .filter(|(_, from)| !own || *from == Some(x))
                    .map(|(key, _)| key.clone())
                    .collect();
                keys.sort();
                keys.dedup();
                keys
            };
            let (all, own) = (keys(false), keys(true));
            let held = first_of(&held_by(sums, &all));
            let own_held = held_by(sums, &own);
            let given = give.get(named).map_or(0, |(c, _)| first_of(c));
            let ran = self.ran_after_first_part(named, first, sums);
            let taken = self.ran.get(named).copied().unwrap_or(0) - ran;
            let over = held.saturating_sub(given).saturating_sub(ran);
            let cut = over.min(taken).min(first_of(&own_held));
            if cut > 0 {
                let whole = first_of(&own_held) as u128;
                let continuation = (own_held.iter())
                    .map(|&c| (c as u128 * cut as u128 / whole) as u64)
                    .collect();
                reentries.push(Reentry {
                    arcs: own,
                    continuation,
                });
            }
        }
        reentries
    }

    /// What `x` ran under `named`'s name, less what rule 8's first part
    /// takes out of the calls its blocks made (each call its part of the
    /// arcs' loss, rounded down).
    fn ran_after_first_part(&self, named: &Named, first: &[Reentry], sums: &Sums) -> u64 {
        let mut ran = self.ran.get(named).copied().unwrap_or(0);
        for (cost, key) in self
            .ran_calls
            .get(named)
            .into_iter()
            .flatten()
            .map(|(_, c)| c)
        {
            let Some(r) = first.iter().find(|r| r.arcs.contains(key)) else {
                continue;
            };
            let held = held_by(sums, &r.arcs).first().copied().unwrap_or(0);
            let take = r.continuation.first().copied().unwrap_or(0).min(held);
            let lost = (*cost as u128 * take as u128 / held.max(1) as u128) as u64;
            ran = ran.saturating_sub(lost);
        }
        ran
    }
}

/// Continuations by (`f`'s start, address resumed), per key.
type Continuations<K> = BTreeMap<K, BTreeMap<(u64, u64), Vec<u64>>>;

/// Rule 8's arcs: by (`f`'s start, site), and by (`f`'s start, callee).
type Arcs<'a> = (
    &'a BTreeMap<u64, BTreeMap<u64, Vec<Key>>>,
    &'a BTreeMap<(u64, Who), Vec<Key>>,
);
