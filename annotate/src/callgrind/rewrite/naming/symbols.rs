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
