//! What the first pass notes for re-entry (`Noted`): continuations,
//! the arcs from JIT code by call site and by callee, the folded calls
//! that may prove calls into entry points; and the plan made of them.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::levels::Levels;
use super::plan::{add, first, Plan, Share};
use super::sites::{BySite, Sites};
use super::{Arcs, Entered, Of, Who};
use crate::callgrind::rewrite::ids::{FastMap, Interner, Sym};
use crate::symbols::SymbolId;

/// The longest x86-64 instruction: a call site further below an address
/// cannot return to it.
const LONGEST_INSTRUCTION: u64 = 15;

/// One folded call: part, `f`, the address resumed, the caller `x`.
pub(super) type Resumption = (u64, SymbolId, u64, Who);

/// A JIT range's name in a part: (part, range, name as interned).
pub(super) type NameOf = (u64, SymbolId, Sym);

/// What calls held, by the address called and the JIT range whose code
/// made them (`None`: other code).
pub(super) type ByCaller = HashMap<(Entered, Option<SymbolId>), Vec<u64>>;

/// Continuations' cost summed, and the cost of the arcs they come out of.
type Taken<'a> = (Vec<u64>, &'a Vec<u64>);

/// What the first pass saw.
#[derive(Default)]
pub(in crate::callgrind) struct Noted {
    /// Inclusive cost of the folded calls into `f`'s middle.
    pub(super) continuations: HashMap<Resumption, Vec<u64>>,
    /// The arcs from JIT code by call site.
    pub(super) sites: Sites,
    /// The folded calls from JIT code by call site, per (part, callee,
    /// address): arcs after all where the address proves an entry point
    /// (`plan`), as for the oracle, whose call sites are those of every
    /// call that stays one.
    pub(super) folded: HashMap<(u64, SymbolId, u64), BySite>,
    /// Inclusive cost of the arcs from `f`'s code, per callee.
    pub(super) callees: HashMap<(u64, SymbolId, Who), Vec<u64>>,
    /// Each range's names: entered, resumed, and what calls into them held.
    pub levels: Levels,
    /// Continuations called back from JIT code `x`'s own block, by the
    /// block's name and the address it was entered at.
    pub(super) called_back: HashMap<(Resumption, Sym, Entered), Vec<u64>>,
    /// What the calls into each JIT range's entry held, by the name
    /// called (part, range, name), from anything but a block written
    /// under that name, by the JIT range whose code called (`None`: other
    /// code). Those from the range's own blocks join it at the plan.
    pub(super) into: HashMap<NameOf, ByCaller>,
    /// The calls into a JIT range's entry from its own blocks, by the
    /// name called, the calling block's name (as callgrind leveled it)
    /// and where that block was entered: they join `into` where the block
    /// is written under another name than the one called (see
    /// [`Noted::settle_own_calls`]).
    pub(super) own_into: HashMap<(NameOf, Sym, Entered), ByCaller>,
    /// The call sites of `f`'s code that call a JIT range.
    pub(super) site_callees: HashSet<(Of, u64, SymbolId)>,
    /// Calls into a JIT range made from its own blocks: (part, range,
    /// where the calling block was entered, where the call entered).
    pub(super) from_own: HashSet<(u64, SymbolId, Entered, Entered)>,
    /// What each JIT block ran under its own name, first event: its cost
    /// lines and the calls it made but those folded, per (part, range,
    /// name, whether it was entered at an entry).
    pub(super) ran: FastMap<Ran, u64>,
    /// Of those calls, the arcs continuations may come out of: per block,
    /// the JIT range whose code made them (the block's, or code it jumped
    /// into), call site (if known) and callee, their first-event cost.
    pub(super) ran_arcs: FastMap<(Ran, SymbolId, Option<u64>, Who), u64>,
    /// What the current block ran so far, not yet in `ran` (a JIT block's
    /// lines come one after another: one lookup a block, not a line).
    block_ran: Option<(Ran, u64)>,
}

/// A JIT block by part, range, name and whether it is an entry's.
pub(super) type Ran = (u64, SymbolId, Sym, bool);

impl Noted {
    /// Forgets the arcs of `part` from functions no continuation of it
    /// resumes and none of whose middles code outside every JIT range
    /// (`outside`) called, and the calls into functions that neither
    /// called a continuation of it back nor were resumed (a profile of
    /// many parts keeps only what its second pass uses).
    pub fn end_part(&mut self, part: u64, outside: impl Fn(u64) -> bool) {
        self.settle_ran();
        let mut resumed: HashSet<Of> = self
            .continuations
            .keys()
            .map(|&(p, f, _, _)| (p, f))
            .collect();
        let from_outside = self.called_from_outside(&outside).map(|(of, _)| of);
        resumed.extend(from_outside.filter(|&(p, _)| p == part));
        let keep = |p: u64, f: SymbolId| p != part || resumed.contains(&(p, f));
        self.sites.retain(keep);
        for folded in self.folded.values_mut() {
            folded.retain(|&(p, f), _| keep(p, f));
        }
        self.callees.retain(|&(p, f, _), _| keep(p, f));
        self.site_callees.retain(|&((p, f), _, _)| keep(p, f));
        let calling_back: HashSet<Of> = (self.called_back.keys())
            .filter_map(|&((p, _, _, who), _, _)| match who {
                Who::Jit(x) => Some((p, x)),
                Who::Named { .. } => None,
            })
            .collect();
        // (a resumed function's for `own_levels`)
        let noted = |p: u64, x: SymbolId| {
            p != part || calling_back.contains(&(p, x)) || resumed.contains(&(p, x))
        };
        self.into.retain(|&(p, x, _), _| noted(p, x));
        self.own_into.retain(|&((p, x, _), ..), _| noted(p, x));
        self.from_own.retain(|&(p, x, _, _)| noted(p, x));
        self.ran.retain(|&(p, x, _, _), _| noted(p, x));
        self.ran_arcs.retain(|&((p, x, _, _), ..), _| noted(p, x));
    }

    /// A block begins: a JIT block (`Some`) whose cost is noted from
    /// now on, or other code.
    pub fn block_begins(&mut self, block: Option<Ran>) {
        self.settle_ran();
        self.block_ran = block.map(|block| (block, 0));
    }

    /// True while a JIT block's cost is noted (first pass).
    pub fn noting_block(&self) -> bool {
        self.block_ran.is_some()
    }

    /// `cost` (first event) that the current JIT block ran, if any.
    #[inline]
    pub fn add_ran(&mut self, cost: u64) {
        if let Some((_, sum)) = &mut self.block_ran {
            *sum += cost;
        }
    }

    /// What the current block ran, put in `ran`.
    pub fn settle_ran(&mut self) {
        if let Some((block, cost)) = self.block_ran.take() {
            *self.ran.entry(block).or_default() += cost;
        }
    }

    /// The addresses of functions `f` called from code in no JIT range
    /// that callgrind charged to `f` (`outside`: a site lies there).
    fn called_from_outside<'a>(
        &'a self,
        outside: &'a impl Fn(u64) -> bool,
    ) -> impl Iterator<Item = (Of, u64)> + 'a {
        self.folded
            .iter()
            .filter_map(move |(&(p, f, addr), calls)| {
                let from_outside = calls.get(&(p, f))?.keys().any(|&site| outside(site));
                from_outside.then_some(((p, f), addr))
            })
    }

    /// The arcs a continuation of `of` at `addr`, called back by `x`,
    /// comes out of (among `sites`), and their cost; `None` where no arc
    /// holds it.
    pub(super) fn arcs_of<'s>(
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

    /// True where a folded call enters its function (no call of the
    /// function returns where it resumed it).
    fn enters(&self, instr: bool) -> impl Fn(&Resumption) -> bool + '_ {
        move |&(part, f, addr, _)| !self.returns_to((part, f), addr, instr)
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
    /// positions have instruction addresses; `outside`: a site lies in no
    /// JIT range (asked only of calls into entry points).
    pub fn plan(
        &mut self,
        names: &Interner,
        instr: bool,
        outside: impl Fn(u64) -> bool,
    ) -> Option<Plan> {
        let mut plan = Plan {
            levels: self.levels.lowered(names),
            ..Plan::default()
        };
        plan.entries = self.entry_points(&self.enters(instr), instr, &outside);
        self.settle_own_calls(&plan, names);
        let entry = self.enters(instr);
        let sites = self.sites_with_entries(&plan.entries, &outside);
        self.arc_shares(&mut plan, &sites, &entry, names);
        (plan.called_back, plan.own_levels) =
            self.called_back_shares(&sites, &entry, &plan, (names, &outside));
        (plan.takes_out() || plan.unplaced > 0).then_some(plan)
    }

    /// Adds to `into` the calls from a range's own blocks written under
    /// another name than the one they call (see `Plan::written_name`):
    /// the block `f'2` written as `f` calls `f'2`; `f'3` written as `f'2`
    /// calling `f'2` is no call into it.
    fn settle_own_calls(&mut self, plan: &Plan, names: &Interner) {
        for ((key @ (_, x, name), block, entered), calls) in self.own_into.drain() {
            if plan.written_name(x, names.name(block), entered) == names.name(name) {
                continue;
            }
            let into = self.into.entry(key).or_default();
            for (by, costs) in calls {
                add(into.entry(by).or_default(), &costs);
            }
        }
    }

    /// The calls into a function's middle that enter it (`entry`: no
    /// call of the function returns there), by function and address.
    fn entry_points(
        &self,
        entry: &impl Fn(&Resumption) -> bool,
        instr: bool,
        outside: &impl Fn(u64) -> bool,
    ) -> HashSet<(SymbolId, u64)> {
        let entries = self.continuations.keys().filter(|r| entry(r));
        let mut entries: HashSet<_> = entries.map(|&(_, f, addr, _)| (f, addr)).collect();
        // A call into `f`'s middle from code in no JIT range that
        // callgrind charged to `f` comes from outside `f`'s code: an
        // entry point as any other caller's.
        for (of, addr) in self.called_from_outside(outside) {
            if instr && !self.returns_to(of, addr, instr) {
                entries.insert((of.1, addr));
            }
        }
        entries
    }

    /// The arcs by call site, with the calls to `entries` among them: the
    /// second pass writes those as calls, so their sites are call sites.
    fn sites_with_entries(
        &self,
        entries: &HashSet<(SymbolId, u64)>,
        outside: &impl Fn(u64) -> bool,
    ) -> Sites {
        let mut sites = self.sites.clone();
        for (&(_, f, addr), calls) in &self.folded {
            if entries.contains(&(f, addr)) {
                sites.merge(calls, outside);
            }
        }
        sites
    }

    /// Each continuation's cost, as a share of the arcs it returns from
    /// (`plan.shares`), and what those cannot hold as a share of the
    /// function's arcs made outside every JIT range; counts what was
    /// resumed and what no arc holds.
    fn arc_shares(
        &self,
        plan: &mut Plan,
        sites: &Sites,
        entry: &impl Fn(&Resumption) -> bool,
        names: &Interner,
    ) {
        // Per arcs: the continuations' cost summed, and the arcs' cost.
        let mut taken: HashMap<(Of, Arcs<Who>), Taken> = HashMap::default();
        for (resumption @ &(part, f, addr, x), continuation) in &self.continuations {
            if entry(resumption) {
                continue;
            }
            plan.resumed += first(continuation);
            let Some((arcs, cost)) = self.arcs_of(sites, (part, f), addr, x) else {
                plan.unplaced += first(continuation);
                continue;
            };
            let (sum, _) = taken.entry(((part, f), arcs)).or_insert((Vec::new(), cost));
            add(sum, continuation);
        }
        // What the arcs a continuation returns from cannot hold, per `f`.
        let mut beyond: HashMap<Of, (Vec<u64>, Vec<u64>)> = HashMap::default();
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
                .outside_of(sites, of, &returned_to)
                .filter(|_| first(&rest) > 0)
            {
                plan.shares
                    .entry(of)
                    .or_default()
                    .push((Arcs::Outside, Share::new(&rest, &outside)));
            }
        }
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

/// What of `continuation` arcs costing `arcs` cannot hold, per event.
fn over(continuation: &[u64], arcs: &[u64]) -> Vec<u64> {
    let held = |e: usize| arcs.get(e).copied().unwrap_or(0);
    continuation
        .iter()
        .enumerate()
        .map(|(e, &c)| c.saturating_sub(held(e)))
        .collect()
}
