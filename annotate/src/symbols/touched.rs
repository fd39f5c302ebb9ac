//! The code a run's profiles name, for indexing a symbol file much larger
//! than they are: a range whose pages hold no address the profiles name
//! can never be the answer to a lookup, so it need not be kept (a
//! million-line perf map of which a profile touches a thousand functions
//! was 40 MB of entries for a few kilobytes used).
//!
//! The pages are kept as bits of a table indexed by the page number's low
//! bits: two pages may share a bit, which only keeps a range more. Ranges
//! that lie in the program's own code are kept too: the table counts them
//! as it leaves them out (see `mapped`).

use std::ops::Range;

/// Bytes a bit stands for: 4 KiB pages.
const PAGE_BITS: u32 = 12;

/// Bits in the table (128 KiB of them).
const TABLE_BITS: usize = 1 << 20;

/// A range over more pages than this is kept without looking.
const MOST_PAGES: u64 = 64;

/// The pages a run's profiles name code in (see the module's comment).
#[derive(Clone, Debug)]
pub struct Touched {
    bits: Vec<u64>,
    /// Ranges kept whatever the profiles name (the program's own code).
    kept: Vec<Range<u64>>,
}

impl Default for Touched {
    fn default() -> Self {
        Touched {
            bits: vec![0; TABLE_BITS / 64],
            kept: Vec::new(),
        }
    }
}

impl Touched {
    /// Notes that a profile names `addr`.
    pub fn insert(&mut self, addr: u64) {
        let bit = Self::bit(addr >> PAGE_BITS);
        self.bits[bit / 64] |= 1 << (bit % 64);
    }

    /// Keeps every range that starts inside `range` too.
    pub fn keep_within(&mut self, range: Range<u64>) {
        self.kept.push(range);
    }

    /// Whether `[start, start+size)` is kept: it reaches a page that holds
    /// an address named (or a page sharing its bit), spans more pages than
    /// are looked at, or starts in a range kept whatever is named. False
    /// only where no address named can lie in it.
    #[inline]
    pub fn keeps(&self, start: u64, size: u64) -> bool {
        let last = start.saturating_add(size.saturating_sub(1)) >> PAGE_BITS;
        let first = start >> PAGE_BITS;
        if last - first >= MOST_PAGES {
            return true;
        }
        let named = (first..=last).any(|page| {
            let bit = Self::bit(page);
            self.bits[bit / 64] & (1 << (bit % 64)) != 0
        });
        named || self.kept.iter().any(|k| k.start <= start && start < k.end)
    }

    fn bit(page: u64) -> usize {
        page as usize % TABLE_BITS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_ranges_whose_pages_hold_a_named_address() {
        let mut touched = Touched::default();
        touched.insert(0x7f00_0000_1234);
        assert!(touched.keeps(0x7f00_0000_1234, 1));
        // The same page, before and after the address: kept.
        assert!(touched.keeps(0x7f00_0000_1000, 0x10));
        assert!(touched.keeps(0x7f00_0000_1ff0, 0x10));
        // A range ending just before the page, or starting on the next.
        assert!(!touched.keeps(0x7f00_0000_0f00, 0x100));
        assert!(!touched.keeps(0x7f00_0000_2000, 0x10));
        // Reaching into the page from the one before, or over it.
        assert!(touched.keeps(0x7f00_0000_0f00, 0x101));
        assert!(touched.keeps(0x7f00_0000_0000, 0x3000));
        // A range over more pages than are looked at is kept.
        assert!(touched.keeps(0x1000_0000, (MOST_PAGES + 1) << PAGE_BITS));
        assert!(!touched.keeps(0x1000_0000, MOST_PAGES << PAGE_BITS));
        // Size 0 and the top of the address space.
        assert!(!touched.keeps(u64::MAX - 4, 10));
        assert!(touched.keeps(0x7f00_0000_1234, 0));
    }

    #[test]
    fn keeps_what_starts_in_a_range_kept_whatever_is_named() {
        let mut touched = Touched::default();
        touched.keep_within(0x40_0000..0x50_0000);
        assert!(touched.keeps(0x40_0000, 0x10));
        assert!(touched.keeps(0x4f_fff0, 0x10));
        assert!(!touched.keeps(0x3f_fff0, 0x10));
        assert!(!touched.keeps(0x50_0000, 0x10));
    }
}
