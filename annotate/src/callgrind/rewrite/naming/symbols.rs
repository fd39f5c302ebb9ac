//! The symbol table as one rewrite reads it: a range whose file changed
//! since the table was built is named after its address, and the first
//! such failure is kept for the rewrite to return instead of its output.

use crate::symbols::{Hit, Symbol, SymbolId, SymbolTable};

pub(in crate::callgrind) struct Symbols<'t> {
    pub table: &'t SymbolTable,
    /// Why a range could not be read again, naming its file.
    failure: Option<String>,
}

impl<'t> Symbols<'t> {
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
