//! The symbol table as one rewrite reads it: a range whose file changed
//! since the table was built is named after its address, and the first
//! such failure is kept for the rewrite to return instead of its output.
//! The rewrite reaches the table through here alone, so no symbol is read
//! past that check.

use std::ops::Range;
use std::sync::Arc;

use crate::symbols::{FileId, Hit, Symbol, SymbolId, SymbolTable};

/// The table, and the first failure this rewrite met in it.
pub(in crate::callgrind) struct Symbols<'t> {
    table: &'t SymbolTable,
    /// Why a range could not be read again, naming its file.
    failure: Option<String>,
}

impl<'t> Symbols<'t> {
    /// `table` as a new rewrite reads it: no failure met yet.
    pub fn new(table: &'t SymbolTable) -> Self {
        Symbols {
            table,
            failure: None,
        }
    }

    /// Symbol `id`, decoded the first time it is asked for.
    #[inline]
    pub fn get(&mut self, id: SymbolId) -> &'t Symbol {
        match self.table.try_symbol(id) {
            Ok(symbol) => symbol,
            Err(why) => self.failed(id, why),
        }
    }

    #[cold]
    fn failed(&mut self, id: SymbolId, why: &str) -> &'t Symbol {
        self.failure.get_or_insert_with(|| why.to_string());
        self.table.symbol(id)
    }

    /// The range covering `addr`.
    pub fn lookup(&self, addr: u64) -> Option<Hit> {
        self.table.lookup(addr)
    }

    /// The range covering `addr`, with the addresses the answer holds for,
    /// looked up first in `near`'s first segment where given (see
    /// [`SymbolTable::lookup_range_near`]).
    pub fn lookup_range(&self, addr: u64, near: Option<SymbolId>) -> Option<(Range<u64>, Hit)> {
        match near {
            Some(near) => self.table.lookup_range_near(addr, near),
            None => self.table.lookup_range(addr),
        }
    }

    /// True for an address outside every range, as a function that holds
    /// only the table (for the re-entry notes, beside a borrowed rewriter).
    pub fn outside(&self) -> impl Fn(u64) -> bool + 't {
        let table = self.table;
        move |addr| table.lookup(addr).is_none()
    }

    /// The object a source's functions are written under (see
    /// [`SymbolTable::object_of`]).
    pub fn object_of(&self, source: usize, image: Option<&'t str>) -> &'t str {
        self.table.object_of(source, image)
    }

    /// The source file name numbered `id`.
    pub fn file(&self, id: FileId) -> Arc<str> {
        self.table.file(id)
    }

    /// The first range that could not be read, if one could not.
    pub fn take_failure(&mut self) -> Option<String> {
        self.failure.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_whose_file_changed_is_address_named_and_its_failure_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("perf-1.map");
        std::fs::write(&path, b"1000 10 a\n2000 10 b\n").unwrap();
        let mut builder = SymbolTable::builder();
        let file = std::fs::File::open(&path).unwrap();
        builder.add_perf_map_file(path.clone(), file).unwrap();
        let table = builder.build();
        let (a, b) = [0x1000, 0x2000]
            .map(|addr| table.lookup(addr).unwrap().symbol)
            .into();
        let mut symbols = Symbols::new(&table);
        assert_eq!(symbols.get(a).name, "a");
        std::fs::write(&path, b"").unwrap();
        assert_eq!(symbols.get(b).name, "0x0000000000002000");
        assert_eq!(symbols.get(a).name, "a", "decoded before the change");
        let why = symbols.take_failure().expect("the failure is kept");
        assert!(why.contains("perf-1.map"), "{why}");
        assert_eq!(symbols.take_failure(), None, "given once");
        // Each rewrite with the table meets it where it reads the range.
        let mut touching = Symbols::new(&table);
        touching.get(b);
        assert!(touching.take_failure().is_some());
        let mut elsewhere = Symbols::new(&table);
        elsewhere.get(a);
        assert_eq!(elsewhere.take_failure(), None);
    }
}
