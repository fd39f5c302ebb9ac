//! The symbols decoded so far, by number: pages of 64 slots, each page
//! made when one of its symbols is first decoded, so that a table of
//! millions of ranges of which a profile touches a few keeps a few pages.

use std::cell::OnceCell;

use super::{Symbol, SymbolId};

const PAGE: usize = 64;

type Page = Box<[OnceCell<Box<Symbol>>]>;

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

    fn slot(&self, id: SymbolId) -> Option<&OnceCell<Box<Symbol>>> {
        let (page, slot) = (id.index() / PAGE, id.index() % PAGE);
        let page = self.pages.get(page)?.get()?;
        Some(&page[slot])
    }

    /// Symbol `id`, decoded by `decode` the first time.
    pub fn get_or_init(&self, id: SymbolId, decode: impl FnOnce() -> Symbol) -> &Symbol {
        let page = &self.pages[id.index() / PAGE];
        let page = page.get_or_init(|| (0..PAGE).map(|_| OnceCell::new()).collect());
        page[id.index() % PAGE].get_or_init(|| Box::new(decode()))
    }

    /// Symbol `id`, if decoded.
    pub fn get(&self, id: SymbolId) -> Option<&Symbol> {
        self.slot(id)?.get().map(|s| &**s)
    }

    /// Forgets symbol `id` (decoded again when next asked).
    pub fn forget(&mut self, id: SymbolId) {
        let (page, slot) = (id.index() / PAGE, id.index() % PAGE);
        if let Some(page) = self.pages.get_mut(page).and_then(OnceCell::get_mut) {
            page[slot] = OnceCell::new();
        }
    }
}
