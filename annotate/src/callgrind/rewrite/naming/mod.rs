//! Naming: what a function name of a profile stands for, and the names
//! JIT code is written under. Lookups in the symbol table only, with
//! their caches: no reader or output state (the rewriter's reader tables
//! and its writer ask it).
//!
//! - here: a name's kind ([`Naming::kind`]; a JIT function's with the
//!   object and file it is written under, [`Naming::jit_ident`], and the
//!   line of the address it was named after);
//! - `addresses`: callgrind's names for code without symbols
//!   (`0x000000000483c000'2`), and their JIT names;
//! - `lines`: the source file and line of an address in JIT code;
//! - `symbols`: the table as this rewrite reads it, keeping the first
//!   range whose file changed since the table was built (the rewrite
//!   returns it as its error).

mod addresses;
mod lines;
mod symbols;

pub(in crate::callgrind) use addresses::{is_live_image, JitName};

use super::ids::{FastMap, Interner, Sym};
use crate::symbols::{FileId, SymbolId, SymbolTable};
pub(in crate::callgrind) use symbols::Symbols;

/// What a function id stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::callgrind) enum FnKind {
    Native,
    /// A native function whose caller context names JIT code.
    Renamed(Sym),
    Unnamed(u64),
    Jit {
        symbol: SymbolId,
        name: Sym,
        entry: bool,
        /// The address the pseudo-function was named after.
        addr: u64,
        /// The source line at `addr` (calls mostly target it).
        line: u32,
        /// The object and file it is written under.
        ident: Ident,
    },
}

/// A function name's kind as [`Naming::kind`] finds it: final, or JIT
/// code (whose name the re-entry plan may still change).
pub(in crate::callgrind) enum Named {
    Kind(FnKind),
    Jit(JitName),
}

/// The object and file a JIT symbol is written under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::callgrind) struct Ident {
    pub object: Sym,
    pub file: Sym,
}

/// The symbols, the names met, and what was learnt of both so far.
pub(in crate::callgrind) struct Naming<'t> {
    /// The symbol table, as this rewrite reads it.
    pub symbols: Symbols<'t>,
    /// Every name met, numbered (lives across parts).
    pub names: Interner,
    /// The code image's object name, where one is written beside the
    /// output: a jitdump's functions are under it.
    image: Option<&'t str>,
    /// `???`, callgrind's object of code without symbols.
    unknown: Sym,
    /// Per symbol, once asked (a map: of millions of ranges a profile
    /// touches a few).
    idents: FastMap<SymbolId, Ident>,
    /// The interned name of each file of the table, once asked.
    file_syms: Vec<Option<Sym>>,
    /// The last answer of [`Naming::lookup`].
    last_found: Option<lines::Located>,
}

impl<'t> Naming<'t> {
    /// Naming with the symbols of `table`; the empty name is numbered
    /// first.
    pub fn new(table: &'t SymbolTable, image: Option<&'t str>) -> Self {
        let mut names = Interner::default();
        names.intern(b"");
        let unknown = names.intern(b"???");
        Naming {
            symbols: Symbols::new(table),
            names,
            image,
            unknown,
            idents: FastMap::default(),
            file_syms: Vec::new(),
            last_found: None,
        }
    }

    /// What function name `name` under object `object` stands for.
    pub fn kind(&mut self, name: &[u8], object: Sym) -> Named {
        if object != self.unknown {
            if let Some(new) = addresses::rename_callers(name, &mut self.symbols) {
                return Named::Kind(FnKind::Renamed(self.names.intern(&new)));
            }
            // Code on a live-mode page that no symbol of the image covers
            // is still address-named: counted as such, left as it is.
            return Named::Kind(match addresses::address(name) {
                Some((addr, _)) if is_live_image(self.names.name(object)) => FnKind::Unnamed(addr),
                _ => FnKind::Native,
            });
        }
        if let Some(jit) = addresses::rename(name, &mut self.symbols) {
            return Named::Jit(jit);
        }
        Named::Kind(match addresses::address(name) {
            Some((addr, _)) => FnKind::Unnamed(addr),
            None => FnKind::Native,
        })
    }

    /// A renamed JIT function's kind, under the (interned) `name` it is
    /// written with.
    pub fn jit_kind(&mut self, jit: &JitName, name: Sym) -> FnKind {
        let ident = self.jit_ident(jit.symbol);
        let s = self.symbols.get(jit.symbol);
        FnKind::Jit {
            symbol: jit.symbol,
            name,
            entry: jit.entry,
            addr: jit.addr,
            line: s.row_at(jit.addr).map_or(s.line, |row| row.line),
            ident,
        }
    }

    /// Appends the suffix of address name `stub` (`'2`, callers, JIT
    /// callers renamed) to `name`.
    pub fn append_address_suffix(&mut self, name: &mut Vec<u8>, stub: Sym) {
        addresses::append_suffix(name, self.names.name(stub), &mut self.symbols);
    }

    /// (object, file) names of a JIT symbol.
    #[inline]
    pub fn jit_ident(&mut self, symbol: SymbolId) -> Ident {
        match self.idents.get(&symbol) {
            Some(&ids) => ids,
            None => self.first_jit_ident(symbol),
        }
    }

    #[cold]
    fn first_jit_ident(&mut self, symbol: SymbolId) -> Ident {
        let s = self.symbols.get(symbol);
        let object = self.symbols.object_of(s.source, self.image);
        let object = self.names.intern(object.as_bytes());
        let file = match s.file {
            Some(f) => self.file_sym(f),
            None => self.names.intern(b"<jit>"),
        };
        let ident = Ident { object, file };
        self.idents.insert(symbol, ident);
        ident
    }

    #[inline]
    pub fn file_sym(&mut self, file: FileId) -> Sym {
        match self.file_syms.get(file.index()) {
            Some(&Some(sym)) => sym,
            _ => self.first_file_sym(file),
        }
    }

    #[cold]
    fn first_file_sym(&mut self, file: FileId) -> Sym {
        let i = file.index();
        if self.file_syms.len() <= i {
            self.file_syms.resize(i + 1, None);
        }
        *self.file_syms[i]
            .get_or_insert_with(|| self.names.intern(self.symbols.file(file).as_bytes()))
    }
}
