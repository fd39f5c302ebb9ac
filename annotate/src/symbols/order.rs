//! Whether a symbol file's entries, as indexed, lie in address order:
//! noted while they are read, so that the address index need not read a
//! million entries again to find out (7 ms of the 44 ms a million-line
//! perf map took).

use super::Entry;

/// Entries in the order indexed: whether they are in address order,
/// disjoint and none empty, and the addresses they span.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Order {
    /// The first entry's start, if there is one.
    first: Option<u64>,
    /// The end of the last entry.
    end: u64,
    in_order: bool,
}

impl Default for Order {
    /// No entries: in order.
    fn default() -> Self {
        Order {
            first: None,
            end: 0,
            in_order: true,
        }
    }
}

impl Order {
    /// The entries so far, then `e`.
    #[inline]
    pub fn note(&mut self, e: &Entry) {
        self.in_order &= e.size > 0 && e.start >= self.end;
        self.first = self.first.or(Some(e.start));
        self.end = e.end();
    }

    /// These entries, then `later`'s.
    pub fn then(self, later: Order) -> Order {
        let Some(later_first) = later.first else {
            return self;
        };
        Order {
            first: self.first.or(later.first),
            end: later.end,
            in_order: self.in_order && later.in_order && later_first >= self.end,
        }
    }

    /// True where the entries lie in address order, disjoint and none
    /// empty.
    pub fn in_order(&self) -> bool {
        self.in_order
    }
}

/// True where `entries` lie in address order, disjoint and none empty
/// (read up to the first that does not).
pub fn all_in_order(entries: &[Entry]) -> bool {
    let noted = entries.iter().try_fold(Order::default(), |mut order, e| {
        order.note(e);
        order.in_order.then_some(order)
    });
    noted.is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symbols::segments::Index;
    use crate::symbols::tests::below;
    use crate::symbols::{BiasMode, SymbolTable, NO_DEBUG};

    fn entry(start: u64, size: u64) -> Entry {
        Entry {
            start,
            size,
            record: 0,
            debug: NO_DEBUG,
            source: 0,
        }
    }

    /// The meaning: every entry non-empty and starting at or past the
    /// end of the one before.
    fn in_order(entries: &[Entry]) -> bool {
        let ends = entries.iter().scan(0, |end, e| {
            let fits = e.size > 0 && e.start >= *end;
            *end = e.end();
            Some(fits)
        });
        ends.fold(true, |all, fits| all & fits)
    }

    #[test]
    fn noted_in_pieces_as_a_whole_pass_finds() {
        let mut next = below(0x5eed);
        for _ in 0..2000 {
            // Mostly ascending runs, some overlaps, gaps and empties.
            let len = next(12) as usize;
            let mut start = next(64);
            let entries: Vec<Entry> = (0..len)
                .map(|_| {
                    let size = next(5) * 8;
                    let e = entry(start, size);
                    start = (start + size + next(9)).saturating_sub(next(2) * 4);
                    e
                })
                .collect();
            let cut = next(len as u64 + 1) as usize;
            let noted = |part: &[Entry]| {
                let mut order = Order::default();
                part.iter().for_each(|e| order.note(e));
                order
            };
            let whole = noted(&entries);
            let (a, b) = entries.split_at(cut);
            assert_eq!(whole.in_order(), in_order(&entries), "{entries:?}");
            assert_eq!(all_in_order(&entries), in_order(&entries), "{entries:?}");
            assert_eq!(noted(a).then(noted(b)), whole, "{entries:?} at {cut}");
        }
    }

    #[test]
    fn an_entry_that_starts_where_the_last_ends_is_in_order() {
        let mut order = Order::default();
        order.note(&entry(0x10, 0x10));
        order.note(&entry(0x20, 0x10));
        assert!(order.in_order());
        let mut overlapping = order;
        overlapping.note(&entry(0x2f, 1));
        assert!(!overlapping.in_order());
        let mut empty = order;
        empty.note(&entry(0x40, 0));
        assert!(!empty.in_order());
        // Empty pieces change nothing, on either side.
        assert_eq!(Order::default().then(order), order);
        assert_eq!(order.then(Order::default()), order);
    }

    /// The table of the perf map `map` and a jitdump of `loads` (if
    /// any), in that order: whether its index is the entries themselves,
    /// and the name found at every eighth address from 0xff0 to 0x5010.
    fn indexed(map: &[u8], loads: &[(u64, &[u8], &str)]) -> (bool, Vec<Option<String>>) {
        let mut table = SymbolTable::builder();
        table.add_perf_map("perf-1.map".into(), map);
        if !loads.is_empty() {
            let dump = crate::symbols::test_dump::jitdump(loads, &[], b"f.c");
            table
                .add_jitdump("jit-1.dump".into(), &dump, BiasMode::None)
                .unwrap();
        }
        let table = table.build();
        let name = |a| table.lookup(a).map(|h| table.symbol(h.symbol).name.clone());
        let names = (0xff0..0x5010).step_by(8).map(name).collect();
        (matches!(table.index, Index::Entries { .. }), names)
    }

    /// The names [`indexed`] should find, for ranges of 0x10 bytes.
    fn names(ranges: &[(u64, &str)]) -> Vec<Option<String>> {
        let name = |a: u64| ranges.iter().find(|&&(s, _)| (s..s + 0x10).contains(&a));
        let name = |a| name(a).map(|&(_, n)| n.to_string());
        (0xff0..0x5010).step_by(8).map(name).collect()
    }

    #[test]
    fn the_order_noted_while_indexing_chooses_the_index() {
        let (a, b, c, d) = ((0x1000, "a"), (0x2000, "b"), (0x3000, "c"), (0x4000, "d"));
        let code = &[0x90; 0x10][..];
        let in_order = indexed(b"1000 10 a\n2000 10 b\n", &[(0x3000, code, "c")]);
        assert_eq!(in_order, (true, names(&[a, b, c])));
        let shuffled = indexed(b"1000 10 a\n3000 10 c\n2000 10 b\n", &[]);
        assert_eq!(shuffled, (false, names(&[a, b, c])));
        // The jitdump's loads step back.
        let loads = [(0x3000, code, "c"), (0x2000, code, "b")];
        assert_eq!(indexed(b"1000 10 a\n", &loads), (false, names(&[a, b, c])));
        // The map's only step back is after its twin of the jitdump's
        // range, which is dropped: what is left is in order.
        let twin = indexed(b"1000 10 a\n4000 10 d\n2000 10 b\n", &[(0x4000, code, "d")]);
        assert_eq!(twin, (true, names(&[a, b, d])));
    }
}
