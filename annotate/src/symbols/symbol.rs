//! One JIT code range as decoded ([`Symbol`]), its line rows, and the
//! numbers the table gives symbols and file names.

/// A source line for instructions from `offset` up to the next row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    /// Offset from the symbol's start.
    pub offset: u64,
    /// Source line; 0 means no location (a sentinel).
    pub line: u32,
    /// Index of the file in the table's file list.
    pub file: FileId,
}

/// One JIT code range.
#[derive(Clone, Debug)]
pub struct Symbol {
    /// Function name (split from the runtime's convention).
    pub name: String,
    /// File index of the function's source file, if known.
    pub file: Option<FileId>,
    /// Declaration line (from the name or the first row), 0 if unknown.
    pub line: u32,
    /// Start address.
    pub start: u64,
    /// Size in bytes.
    pub size: u64,
    /// Line rows by offset (empty without DEBUG_INFO).
    pub rows: Vec<Row>,
    /// Index of the source this came from.
    pub source: usize,
}

impl Symbol {
    /// The source row covering `addr`, if it carries a line.
    pub fn row_at(&self, addr: u64) -> Option<Row> {
        self.row_span(addr).1
    }

    /// [`Symbol::row_at`], with the addresses that share its answer.
    pub(crate) fn row_span(&self, addr: u64) -> (std::ops::Range<u64>, Option<Row>) {
        let (span, row, _) = self.row_span_near(addr, 0);
        (span, row)
    }

    /// [`Symbol::row_span`], looking first at the rows from index `hint`
    /// on (addresses mostly grow within a function); also returns the
    /// index to pass as the next hint.
    pub(crate) fn row_span_near(
        &self,
        addr: u64,
        hint: usize,
    ) -> (std::ops::Range<u64>, Option<Row>, usize) {
        let offset = addr.saturating_sub(self.start);
        let i = self.rows_up_to(offset, hint);
        let from = match i {
            0 => 0,
            _ => self.rows[i - 1].offset,
        };
        let to = self.rows.get(i).map_or(u64::MAX - self.start, |r| r.offset);
        let row = i.checked_sub(1).map(|i| self.rows[i]);
        let span = self.start.saturating_add(from)..self.start.saturating_add(to);
        match addr < self.start {
            true => (0..self.start, None, i),
            false => (span, row.filter(|r| r.line != 0), i),
        }
    }

    /// How many rows start at or before `offset`, trying a few steps
    /// from `hint` before a binary search.
    fn rows_up_to(&self, offset: u64, hint: usize) -> usize {
        let rows = &self.rows;
        let mut i = hint.min(rows.len());
        if i == 0 || rows[i - 1].offset <= offset {
            for _ in 0..4 {
                match rows.get(i) {
                    Some(r) if r.offset <= offset => i += 1,
                    _ => return i,
                }
            }
        }
        rows.partition_point(|r| r.offset <= offset)
    }
}

/// A symbol's number in its table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SymbolId(pub u32);

impl SymbolId {
    /// The symbol's index in its table.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A source file name's number in its table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FileId(pub u32);

impl FileId {
    /// The name's index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// An address lookup result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hit {
    /// Index of the winning symbol.
    pub symbol: SymbolId,
    /// Another range with a different name also covered the address.
    pub ambiguous: bool,
}
