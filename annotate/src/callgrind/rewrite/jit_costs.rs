//! Self cost (first event) per JIT symbol, for every symbol of the table.
//!
//! A table can hold millions of ranges of which a profile charges a few
//! thousand: the costs are kept in pages of 64 symbols, each made when one
//! of its symbols is first charged. One slot per symbol in zeroed memory
//! cost a page fault per charged symbol, and reading the costs back
//! touched every page of it (3,000 of the 13,600 page faults of
//! annotating a million-function perf map).

use crate::symbols::SymbolId;

const PAGE: usize = 64;

/// Each symbol's cost plus one: 0 is a symbol never charged, 1 one
/// charged with 0.
pub(super) struct JitCosts {
    pages: Vec<Option<Box<[u64; PAGE]>>>,
}

impl JitCosts {
    /// Room for symbols numbered below `symbols`.
    pub(super) fn new(symbols: usize) -> Self {
        JitCosts {
            pages: std::iter::repeat_with(|| None)
                .take(symbols.div_ceil(PAGE))
                .collect(),
        }
    }

    #[inline]
    pub(super) fn add(&mut self, symbol: SymbolId, cost: u64) {
        let (page, slot) = (symbol.index() / PAGE, symbol.index() % PAGE);
        let page = self.pages[page].get_or_insert_with(|| Box::new([0; PAGE]));
        let slot = &mut page[slot];
        *slot = slot.saturating_add(cost).max(cost.saturating_add(1));
    }

    /// The symbols charged, with their cost, by number.
    pub(super) fn charged(&self) -> impl Iterator<Item = (SymbolId, u64)> + '_ {
        let pages = self.pages.iter().enumerate();
        let pages = pages.filter_map(|(p, page)| page.as_ref().map(|page| (p, page)));
        pages.flat_map(|(p, page)| {
            let slots = page.iter().enumerate().filter(|(_, &c)| c != 0);
            slots.map(move |(i, &c)| (SymbolId((p * PAGE + i) as u32), c - 1))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_add_up_per_symbol_across_pages_as_a_plain_vector_does() {
        let symbols = 5 * PAGE + 7;
        let mut costs = JitCosts::new(symbols);
        let mut reference = vec![None::<u64>; symbols];
        let charges = [
            (0, 5),
            (PAGE - 1, 0),
            (PAGE, 3),
            (0, 7),
            (3 * PAGE + 2, u64::MAX - 1),
            (3 * PAGE + 2, 9),
            (symbols - 1, 1),
        ];
        for (i, cost) in charges {
            costs.add(SymbolId(i as u32), cost);
            let slot = &mut reference[i];
            *slot = Some(slot.map_or(cost, |c| c.saturating_add(cost)));
        }
        let want: Vec<_> = (reference.iter().enumerate())
            .filter_map(|(i, c)| c.map(|c| (SymbolId(i as u32), c.min(u64::MAX - 1))))
            .collect();
        assert_eq!(costs.charged().collect::<Vec<_>>(), want);
    }
}
