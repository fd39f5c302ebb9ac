//! The symbols decoded so far, by number: pages of 64 slots, each page
//! made when one of its symbols is first decoded, so that a table of
//! millions of ranges of which a profile touches a few keeps a few pages.

use std::cell::OnceCell;

use super::{Symbol, SymbolId};

const PAGE: usize = 64;

type Page = Box<[OnceCell<Box<Decoding>>]>;

/// One range as decoded: its symbol, and why its file could not give it
/// (the symbol is then named after its address).
#[derive(Debug)]
pub struct Decoding {
    pub symbol: Symbol,
    pub failure: Option<String>,
}

/// Decoded symbols; each is set once and then read in place.
#[derive(Debug, Default)]
pub struct Decoded {
    pages: Vec<OnceCell<Page>>,
}

impl Decoded {
    /// Room for symbols numbered below `len`.
    pub fn grow(&mut self, len: usize) {
        self.pages.resize_with(len.div_ceil(PAGE), OnceCell::new);
    }

    fn slot(&self, id: SymbolId) -> Option<&OnceCell<Box<Decoding>>> {
        let (page, slot) = (id.index() / PAGE, id.index() % PAGE);
        let page = self.pages.get(page)?.get()?;
        Some(&page[slot])
    }

    /// Symbol `id`, decoded by `decode` the first time.
    pub fn get_or_init(&self, id: SymbolId, decode: impl FnOnce() -> Decoding) -> &Decoding {
        let page = &self.pages[id.index() / PAGE];
        let page = page.get_or_init(|| (0..PAGE).map(|_| OnceCell::new()).collect());
        page[id.index() % PAGE].get_or_init(|| Box::new(decode()))
    }

    /// Symbol `id`, if decoded.
    pub fn get(&self, id: SymbolId) -> Option<&Symbol> {
        self.slot(id)?.get().map(|d| &d.symbol)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn symbol(start: u64) -> Decoding {
        let symbol = Symbol {
            name: format!("f{start}"),
            file: None,
            line: 0,
            start,
            size: 1,
            rows: Vec::new(),
            source: 0,
        };
        Decoding {
            symbol,
            failure: None,
        }
    }

    #[test]
    fn each_symbol_has_its_own_slot_across_pages() {
        let mut decoded = Decoded::default();
        decoded.grow(3 * PAGE + 5);
        let ids = [0, 1, PAGE - 1, PAGE, 2 * PAGE + 3, 3 * PAGE + 4].map(|i| SymbolId(i as u32));
        for id in ids {
            assert!(decoded.get(id).is_none());
            let made = decoded.get_or_init(id, || symbol(id.0.into())).symbol.start;
            assert_eq!(made, u64::from(id.0));
            // Decoded once: a second decoder is never called.
            let again = decoded.get_or_init(id, || unreachable!()).symbol.start;
            assert_eq!(again, made);
        }
        for id in ids {
            assert_eq!(decoded.get(id).map(|s| s.start), Some(u64::from(id.0)));
        }
        assert!(decoded.get(SymbolId(2)).is_none());
    }
}
