//! The arcs from JIT code by call site, as the first pass notes them
//! (`Noted::sites`): where a continuation's cost comes out of the call
//! it returns from.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap as HashMap;

use super::plan::add;
use super::Of;
use crate::callgrind::format::position::add_costs;
use crate::callgrind::rewrite::Res;
use crate::symbols::SymbolId;

/// Inclusive cost per call site of `f`'s code.
pub(super) type BySite = HashMap<Of, BTreeMap<u64, Vec<u64>>>;

/// Inclusive cost of arcs from JIT code, per call site (where positions
/// have an instruction address).
#[derive(Clone, Debug, Default)]
pub(super) struct Sites {
    /// Of the arcs from `f`'s code.
    pub(super) all: BySite,
    /// Of the arcs charged to `f` made at sites in no JIT range.
    pub(super) outside: BySite,
}

impl Sites {
    /// An arc from `of`'s code at `site` (in no JIT range: `outside`).
    pub(super) fn add(&mut self, of: Of, site: u64, costs: &[u8], outside: bool) -> Res {
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

    /// `calls` added as arcs, those at sites in no JIT range (`outside`)
    /// to both maps.
    pub(super) fn merge(&mut self, calls: &BySite, outside: &impl Fn(u64) -> bool) {
        for (&of, sites) in calls {
            for (&site, cost) in sites {
                add(
                    self.all.entry(of).or_default().entry(site).or_default(),
                    cost,
                );
                if outside(site) {
                    add(
                        self.outside.entry(of).or_default().entry(site).or_default(),
                        cost,
                    );
                }
            }
        }
    }

    /// Keeps the arcs of the functions `keep` says.
    pub(super) fn retain(&mut self, keep: impl Fn(u64, SymbolId) -> bool) {
        self.all.retain(|&(p, f), _| keep(p, f));
        self.outside.retain(|&(p, f), _| keep(p, f));
    }
}
