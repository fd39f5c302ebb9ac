//! The source file and line of an address in JIT code, with the last
//! answer remembered: cost lines of one function hit it again and again.

use super::Naming;
use crate::callgrind::format::position::{Column, Columns, Pos};
use crate::callgrind::rewrite::ids::Sym;
use crate::symbols::{FileId, SymbolId};

/// The symbol table's answer for a range of addresses.
#[derive(Debug)]
pub(super) struct Located {
    range: std::ops::Range<u64>,
    /// The symbol's segment, which holds the range.
    segment: std::ops::Range<u64>,
    /// Where the row search ended (a hint for the next one).
    row_index: usize,
    place: Place,
}

/// The JIT function an address lies in, and its source line there: the
/// line table's, with its file, else the function's declared line.
#[derive(Clone, Copy, Debug)]
pub(in crate::callgrind::rewrite) struct Place {
    pub symbol: SymbolId,
    pub line: u32,
    /// The line table's file; `None`: the function's own.
    pub file: Option<FileId>,
}

impl Naming<'_> {
    /// Where a position inside JIT block `symbol` goes: the JIT function
    /// whose code holds it (the block's own where the address is in no
    /// range or the profile has no addresses; see `owner`), the output file
    /// of its line (`None`: no line column, the file stays), and the
    /// position with the line table's line, else the function's declared
    /// line.
    pub(in crate::callgrind::rewrite) fn locate(
        &mut self,
        cols: &Columns,
        symbol: SymbolId,
        pos: Pos,
    ) -> (SymbolId, Option<Sym>, Pos) {
        let instr = cols.index(Column::Instr).map(|i| pos[i]);
        let found = instr.and_then(|addr| self.lookup(addr, Some(symbol)));
        let owner = found.map_or(symbol, |place| place.symbol);
        let Some(li) = cols.index(Column::Line) else {
            return (owner, None, pos);
        };
        let mut out = pos;
        match found {
            _ if instr.is_none() => {
                out[li] = u64::from(self.symbols.get(symbol).line);
                (owner, Some(self.jit_ident(symbol).file), out)
            }
            None => (owner, Some(self.jit_ident(symbol).file), pos),
            Some(place) => {
                out[li] = u64::from(place.line);
                (owner, Some(self.place_file(place)), out)
            }
        }
    }

    /// The output file of `place`'s line: the line table's, else its
    /// function's own.
    fn place_file(&mut self, place: Place) -> Sym {
        match place.file {
            Some(file) => self.file_sym(file),
            None => self.jit_ident(place.symbol).file,
        }
    }

    /// The last lookup's answer, the addresses that share it, and the
    /// output file of its line (as [`locate`](Self::locate) gives them).
    pub(in crate::callgrind::rewrite) fn last_place(
        &mut self,
    ) -> Option<(std::ops::Range<u64>, Place, Sym)> {
        let found = self.last_found.as_ref()?;
        let (range, place) = (found.range.clone(), found.place);
        Some((range, place, self.place_file(place)))
    }

    /// The function and line at `addr`, remembering the addresses that
    /// share the answer: cost lines of one function hit it in a row, or
    /// at least stay in its segment (then only its rows are searched).
    /// `near` is the symbol the address most likely belongs to, if any
    /// (none in an address-named block).
    #[inline]
    pub(in crate::callgrind::rewrite) fn lookup(
        &mut self,
        addr: u64,
        near: Option<SymbolId>,
    ) -> Option<Place> {
        match &self.last_found {
            Some(found) if found.range.contains(&addr) => Some(found.place),
            _ => self.lookup_again(addr, near),
        }
    }

    /// [`lookup`](Self::lookup) outside the last answer's range.
    fn lookup_again(&mut self, addr: u64, near: Option<SymbolId>) -> Option<Place> {
        let (segment, symbol, hint) = match &self.last_found {
            Some(found) if found.segment.contains(&addr) => {
                (found.segment.clone(), found.place.symbol, found.row_index)
            }
            _ => {
                let (segment, hit) = self.symbols.lookup_range(addr, near)?;
                (segment, hit.symbol, 0)
            }
        };
        let decoded = self.symbols.get(symbol);
        let (span, row, row_index) = decoded.row_span_near(addr, hint);
        let place = Place {
            symbol,
            line: row.map_or(decoded.line, |r| r.line),
            file: row.map(|r| r.file),
        };
        let range = segment.start.max(span.start)..segment.end.min(span.end);
        self.last_found = Some(Located {
            range,
            segment,
            row_index,
            place,
        });
        Some(place)
    }

    /// The JIT function whose code holds `pos` in an address-named block,
    /// its output file and the position with its line (see
    /// [`locate`](Self::locate)); `None` outside every JIT range.
    pub(in crate::callgrind::rewrite) fn jit_at(
        &mut self,
        cols: &Columns,
        pos: Pos,
    ) -> Option<(SymbolId, Option<Sym>, Pos)> {
        let addr = pos[cols.index(Column::Instr)?];
        let owner = self.lookup(addr, None)?.symbol;
        Some(self.locate(cols, owner, pos))
    }
}
