//! JIT code's names and lines: the object and file a JIT symbol is
//! written under, and the source file and line of an address inside it
//! (with the last answer remembered: cost lines of one function hit it
//! again and again).

use super::ids::{FastMap, Sym};
use super::Rewriter;
use crate::callgrind::format::position::{Column, Pos};
use crate::symbols::{FileId, Row, SymbolId};

/// The object and file a JIT symbol is written under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Ident {
    pub object: Sym,
    pub file: Sym,
}

/// What the rewriter learnt of the symbol table so far.
pub(super) struct JitNames {
    /// Per symbol, once asked (a map: of millions of ranges a profile
    /// touches a few).
    idents: FastMap<SymbolId, Ident>,
    /// The interned name of each file of the table, once asked.
    file_syms: Vec<Option<Sym>>,
    /// The last answer of [`Rewriter::lookup`].
    last_found: Option<Located>,
}

impl JitNames {
    pub fn new() -> Self {
        JitNames {
            idents: FastMap::default(),
            file_syms: Vec::new(),
            last_found: None,
        }
    }
}

/// The symbol table's answer for a range of addresses.
#[derive(Debug)]
struct Located {
    range: std::ops::Range<u64>,
    /// The symbol's segment, which holds the range.
    segment: std::ops::Range<u64>,
    /// Where the row search ended (a hint for the next one).
    row_index: usize,
    symbol: SymbolId,
    row: Option<Row>,
}

impl Rewriter<'_> {
    /// Where a position inside JIT block `symbol` goes: the JIT function
    /// whose code holds it (the block's own where the address is in no
    /// range or the profile has no addresses; see `owner`), the output file
    /// of its line (`None`: no line column, the file stays), and the
    /// position with the line table's line, else the function's declared
    /// line.
    pub(super) fn locate(&mut self, symbol: SymbolId, pos: Pos) -> (SymbolId, Option<Sym>, Pos) {
        let instr = self.cols.index(Column::Instr).map(|i| pos[i]);
        let found = instr.and_then(|addr| self.lookup(addr, Some(symbol)));
        let owner = found.map_or(symbol, |(owner, _)| owner);
        let Some(li) = self.cols.index(Column::Line) else {
            return (owner, None, pos);
        };
        let mut out = pos;
        match found {
            _ if instr.is_none() => {
                out[li] = u64::from(self.table.symbol(symbol).line);
                (owner, Some(self.jit_ident(symbol).file), out)
            }
            None => (owner, Some(self.jit_ident(symbol).file), pos),
            Some((_, Some(row))) => {
                out[li] = u64::from(row.line);
                (owner, Some(self.file_sym(row.file)), out)
            }
            Some((found, None)) => {
                out[li] = u64::from(self.table.symbol(found).line);
                (owner, Some(self.jit_ident(found).file), out)
            }
        }
    }

    /// The symbol and row covering `addr`, remembering the addresses that
    /// share the answer: cost lines of one function hit it in a row, or
    /// at least stay in its segment (then only its rows are searched).
    /// `near` is the symbol the address most likely belongs to, if any
    /// (none in an address-named block).
    #[inline]
    pub(super) fn lookup(
        &mut self,
        addr: u64,
        near: Option<SymbolId>,
    ) -> Option<(SymbolId, Option<Row>)> {
        match &self.jit.last_found {
            Some(found) if found.range.contains(&addr) => Some((found.symbol, found.row)),
            _ => self.lookup_again(addr, near),
        }
    }

    /// [`lookup`](Self::lookup) outside the last answer's range.
    fn lookup_again(
        &mut self,
        addr: u64,
        near: Option<SymbolId>,
    ) -> Option<(SymbolId, Option<Row>)> {
        let (segment, symbol, hint) = match &self.jit.last_found {
            Some(found) if found.segment.contains(&addr) => {
                (found.segment.clone(), found.symbol, found.row_index)
            }
            _ => {
                let (segment, hit) = match near {
                    Some(near) => self.table.lookup_range_near(addr, near)?,
                    None => self.table.lookup_range(addr)?,
                };
                (segment, hit.symbol, 0)
            }
        };
        let (span, row, row_index) = self.table.symbol(symbol).row_span_near(addr, hint);
        let range = segment.start.max(span.start)..segment.end.min(span.end);
        let found = Located {
            range,
            segment,
            row_index,
            symbol,
            row,
        };
        self.jit.last_found = Some(found);
        Some((symbol, row))
    }

    /// (object, file) names of a JIT symbol.
    #[inline]
    pub(super) fn jit_ident(&mut self, symbol: SymbolId) -> Ident {
        match self.jit.idents.get(&symbol) {
            Some(&ids) => ids,
            None => self.first_jit_ident(symbol),
        }
    }

    #[cold]
    fn first_jit_ident(&mut self, symbol: SymbolId) -> Ident {
        let s = self.table.symbol(symbol);
        let object = self
            .names
            .intern(self.table.object_of(s.source, self.image).as_bytes());
        let file = match s.file {
            Some(f) => self.file_sym(f),
            None => self.names.intern(b"<jit>"),
        };
        let ident = Ident { object, file };
        self.jit.idents.insert(symbol, ident);
        ident
    }

    #[inline]
    pub(super) fn file_sym(&mut self, file: FileId) -> Sym {
        match self.jit.file_syms.get(file.index()) {
            Some(&Some(sym)) => sym,
            _ => self.first_file_sym(file),
        }
    }

    #[cold]
    fn first_file_sym(&mut self, file: FileId) -> Sym {
        let i = file.index();
        if self.jit.file_syms.len() <= i {
            self.jit.file_syms.resize(i + 1, None);
        }
        *self.jit.file_syms[i]
            .get_or_insert_with(|| self.names.intern(self.table.file(file).as_bytes()))
    }
}
