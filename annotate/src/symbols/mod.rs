//! The symbol table: JIT address ranges with names, files and lines.
//!
//! Built from jitdumps and perf maps. Where ranges overlap (address reuse,
//! or a jitdump and a map covering the same code) a jitdump beats a map and
//! a later load beats an earlier one; such addresses are marked ambiguous
//! when the losing range had another name.
//!
//! A symbol file can hold millions of functions of which a profile touches
//! a few thousand. Building the table reads each file once and keeps an
//! [`Entry`] per range (address, size, where its records are); a range's
//! name, file and line table are decoded from the file the first time
//! [`SymbolTable::symbol`] is asked for it (`decode.rs`). Memory grows with
//! the number of ranges, never with the files' size.

mod bias;
mod decode;
mod decoded;
mod demangle;
pub mod guest;
mod index_jitdump;
mod index_perfmap;
pub mod mapped;
mod modules;
pub mod runtime_names;
mod segments;
mod twins;

use std::cell::RefCell;
use std::fs::File;
use std::path::PathBuf;
use std::sync::Arc;

use indexmap::IndexSet;

pub use bias::{BiasMode, Decision, Writer};
use segments::Index;

/// Where symbols came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceKind {
    /// A jitdump file.
    Jitdump,
    /// A perf map file.
    PerfMap,
}

/// One input file of symbols.
#[derive(Debug)]
pub struct Source {
    /// The file as given.
    pub path: PathBuf,
    /// Its kind.
    pub kind: SourceKind,
    /// The object name JIT functions from it get in the profile.
    pub object: String,
    /// The open file, read again for the ranges a profile touches.
    file: File,
    /// A jitdump's header (its byte order).
    header: Option<jitdump::Header>,
    /// The +0x40 bias decided for a jitdump.
    shift: u64,
}

/// One code range as indexed: where it is, and where its records are in
/// its source (40 bytes; the rest is decoded when asked for).
#[derive(Clone, Copy, Debug)]
struct Entry {
    start: u64,
    size: u64,
    /// Offset of the CODE_LOAD record, or of the perf map line.
    record: u64,
    /// Offset of the DEBUG_INFO record matched to the load, or [`NO_DEBUG`].
    debug: u64,
    source: u32,
    /// The code object (`<jit module N>`) of a name two modules share; 0
    /// for none.
    module: u32,
}

/// [`Entry::debug`] of a range without DEBUG_INFO.
const NO_DEBUG: u64 = u64::MAX;

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
    pub fn row_span(&self, addr: u64) -> (std::ops::Range<u64>, Option<Row>) {
        let (span, row, _) = self.row_span_near(addr, 0);
        (span, row)
    }

    /// [`Symbol::row_span`], looking first at the rows from index `hint`
    /// on (addresses mostly grow within a function); also returns the
    /// index to pass as the next hint.
    pub fn row_span_near(
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

/// Counts of what building the table skipped, for the summary.
#[derive(Clone, Debug, Default)]
pub struct BuildReport {
    /// Per source: (problem description, count).
    pub problems: Vec<(PathBuf, String, usize)>,
    /// Per jitdump: the +0x40 bias decided for it, and why.
    pub bias: Vec<(PathBuf, Decision)>,
    /// DEBUG_INFO records matched to no CODE_LOAD.
    pub orphan_debug_info: usize,
    /// Ranges left out because they lie in the program's own code (see
    /// [`mapped`]): the program, and how many.
    pub in_program: Option<(PathBuf, usize)>,
    /// Per perf map (by source number): its ranges a jitdump of the same
    /// process gives too, left to the jitdump.
    pub map_twins: Vec<(usize, usize)>,
}

/// Symbols from all sources, ready for address lookups.
#[derive(Debug, Default)]
pub struct SymbolTable {
    sources: Vec<Source>,
    entries: Vec<Entry>,
    /// Each entry's symbol, once decoded.
    decoded: decoded::Decoded,
    /// Source file names, numbered in the order first met.
    files: RefCell<IndexSet<Arc<str>>>,
    index: Index,
    /// The first symbol file that could not be read again when a range of
    /// it was decoded (it changed since the table was built).
    failure: RefCell<Option<String>>,
    /// What was skipped while reading the sources.
    pub report: BuildReport,
    /// Names are written as the symbol files give them, not demangled.
    raw_names: bool,
    /// The guest program's symbols, where the run is QEMU's user mode.
    guest: Option<guest::GuestSymbols>,
}

/// Builds a [`SymbolTable`] from symbol files; [`build`](Self::build)
/// yields it ready for lookups.
#[derive(Debug, Default)]
pub struct SymbolTableBuilder {
    table: SymbolTable,
    /// Where the epoch a profile part covers ends in each symbol file,
    /// by file name (see [`epoch_ending_at`](Self::epoch_ending_at)).
    epoch_end: Vec<(String, u64)>,
    /// The run's program, whose own code no range names.
    program: Option<mapped::MappedCode>,
}

/// A symbol file that could not be read.
pub type ReadError = jitdump::scan::ScanError;

impl SymbolTableBuilder {
    /// Keeps only the code live in one epoch: per symbol file name, the
    /// byte offset where the epoch ended (jit-client asked callgrind for a
    /// dump there, before loading code over code; see
    /// `jit_client::epochs`), `u64::MAX` for the last epoch. In a file
    /// named, code loaded after the end is left out, and code that later
    /// code replaced is gone (the replacing load began a later epoch than
    /// the code it replaced ran in). Files not named keep everything.
    pub fn epoch_ending_at(mut self, places: Vec<(String, u64)>) -> Self {
        self.epoch_end = places;
        self
    }

    /// [`epoch_ending_at`](Self::epoch_ending_at) for the ranges of
    /// `source` indexed from `first` on.
    fn end_epoch(&mut self, source: usize, first: usize) {
        let name = self.table.sources[source].path.file_name();
        let Some(&(_, end)) = self
            .epoch_end
            .iter()
            .find(|(file, _)| name.is_some_and(|n| n.to_str() == Some(file)))
        else {
            return;
        };
        let entries = &mut self.table.entries;
        let mut live: Vec<usize> = (first..entries.len())
            .filter(|&i| entries[i].record < end)
            .collect();
        live.sort_by_key(|&i| (entries[i].start, entries[i].record));
        let mut replaced = std::collections::HashSet::new();
        let mut current: Option<usize> = None;
        for &i in &live {
            let e = &entries[i];
            match current {
                Some(c) if e.start < entries[c].start.saturating_add(entries[c].size) => {
                    let (loser, winner) = if e.record > entries[c].record {
                        (c, i)
                    } else {
                        (i, c)
                    };
                    replaced.insert(loser);
                    current = Some(winner);
                }
                _ => current = Some(i),
            }
        }
        let mut at = first;
        for i in first..entries.len() {
            if entries[i].record < end && !replaced.contains(&i) {
                entries.swap(at, i);
                at += 1;
            }
        }
        entries.truncate(at);
    }

    /// Indexes an open jitdump.
    pub fn add_jitdump_file(
        &mut self,
        path: PathBuf,
        file: File,
        bias: BiasMode,
    ) -> Result<(), ReadError> {
        let source = self.table.add_source(path, SourceKind::Jitdump, file);
        let first = self.table.entries.len();
        index_jitdump::add(&mut self.table, source, bias)?;
        self.end_epoch(source, first);
        self.table.decoded.grow(self.table.entries.len());
        let end = self.table.entries.len();
        modules::separate(&mut self.table, first..end);
        Ok(())
    }

    /// Indexes an open perf map.
    pub fn add_perf_map_file(&mut self, path: PathBuf, file: File) -> std::io::Result<()> {
        let source = self.table.add_source(path, SourceKind::PerfMap, file);
        let first = self.table.entries.len();
        index_perfmap::add(&mut self.table, source)?;
        self.end_epoch(source, first);
        self.table.decoded.grow(self.table.entries.len());
        let end = self.table.entries.len();
        modules::separate(&mut self.table, first..end);
        Ok(())
    }

    /// Indexes a jitdump held in memory (tests, tools).
    pub fn add_jitdump(
        &mut self,
        path: PathBuf,
        data: &[u8],
        bias: BiasMode,
    ) -> Result<(), jitdump::ReadError> {
        let file = file_holding(data).map_err(|_| jitdump::ReadError {
            offset: 0,
            message: "cannot hold the bytes in a temporary file",
        })?;
        self.add_jitdump_file(path, file, bias)
            .map_err(|e| match e {
                ReadError::Format(e) => e,
                ReadError::Io(_) => jitdump::ReadError {
                    offset: 0,
                    message: "cannot read the temporary file",
                },
            })
    }

    /// Indexes a perf map held in memory (tests, tools).
    pub fn add_perf_map(&mut self, path: PathBuf, data: &[u8]) {
        let added = file_holding(data).and_then(|file| self.add_perf_map_file(path, file));
        added.expect("a temporary file holds a perf map's bytes");
    }

    /// Keeps mangled names as the symbol files give them (Valgrind's
    /// `--demangle=no`); by default they are demangled.
    pub fn raw_names(mut self, raw: bool) -> Self {
        self.table.raw_names = raw;
        self
    }

    /// Names QEMU's blocks by `guest`'s symbols (see [`guest`]).
    pub fn guest(mut self, guest: Option<guest::GuestSymbols>) -> Self {
        self.table.guest = guest;
        self
    }

    /// Leaves out the ranges that lie in `program`'s own code (see
    /// [`mapped`]).
    pub fn outside(mut self, program: Option<mapped::MappedCode>) -> Self {
        self.program = program;
        self
    }

    /// The table, with its lookup index built.
    pub fn build(mut self) -> SymbolTable {
        if let Some(program) = self.program.take() {
            self.leave_out(program);
        }
        twins::drop_map_twins(&mut self.table);
        self.table.index();
        self.table
    }

    /// Drops the ranges inside `program`'s code, and says how many.
    fn leave_out(&mut self, program: mapped::MappedCode) {
        let before = self.table.entries.len();
        self.table
            .entries
            .retain(|e| !program.holds(e.start, e.size));
        let left_out = before - self.table.entries.len();
        if left_out > 0 {
            // Numbers changed: nothing decoded under the old ones is kept.
            self.table.decoded = decoded::Decoded::default();
            self.table.decoded.grow(self.table.entries.len());
            self.table.report.in_program = Some((program.file, left_out));
        }
    }
}

/// The name a file has as an object in the profile: its absolute path.
fn object_name(path: &std::path::Path) -> String {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    absolute.display().to_string()
}

/// An unlinked temporary file holding `data`.
fn file_holding(data: &[u8]) -> std::io::Result<File> {
    use std::io::Write;
    let mut file = crate::output::unlinked_temp_file()?;
    file.write_all(data)?;
    Ok(file)
}

impl SymbolTable {
    /// A symbol file's name as written out: demangled unless raw names
    /// were asked for.
    fn readable<'a>(&self, raw: &'a str) -> std::borrow::Cow<'a, str> {
        if let Some(name) = self.guest.as_ref().and_then(|g| g.name(raw)) {
            return std::borrow::Cow::Owned(name);
        }
        match self.raw_names {
            true => std::borrow::Cow::Borrowed(raw),
            false => demangle::demangle(raw),
        }
    }

    /// A builder to add symbol files to.
    pub fn builder() -> SymbolTableBuilder {
        SymbolTableBuilder::default()
    }

    fn add_source(&mut self, path: PathBuf, kind: SourceKind, file: File) -> usize {
        let object = object_name(&path);
        self.sources.push(Source {
            path,
            kind,
            object,
            file,
            header: None,
            shift: 0,
        });
        self.sources.len() - 1
    }

    fn reserve(&mut self, more: usize) {
        self.entries.reserve(more);
    }

    fn push(&mut self, entry: Entry) {
        self.entries.push(entry);
    }

    fn intern_file(&self, name: &str) -> FileId {
        let mut files = self.files.borrow_mut();
        match files.get_index_of(name) {
            Some(id) => FileId(id as u32),
            None => FileId(files.insert_full(Arc::from(name)).0 as u32),
        }
    }

    /// Builds the lookup index, once every source is in.
    fn index(&mut self) {
        self.index = Index::of(self);
    }

    /// The symbol covering `addr`.
    pub fn lookup(&self, addr: u64) -> Option<Hit> {
        self.lookup_range(addr).map(|(_, hit)| hit)
    }

    /// Like [`SymbolTable::lookup`], with the address range the answer
    /// holds for (to look up neighbouring addresses without searching).
    pub fn lookup_range(&self, addr: u64) -> Option<(std::ops::Range<u64>, Hit)> {
        self.index.lookup(&self.entries, addr)
    }

    /// [`SymbolTable::lookup_range`] for an address most likely in the
    /// first segment of `symbol` (a JIT block's own code): checked there
    /// before searching all segments, whose search misses the caches.
    pub fn lookup_range_near(
        &self,
        addr: u64,
        symbol: SymbolId,
    ) -> Option<(std::ops::Range<u64>, Hit)> {
        self.index.lookup_near(&self.entries, addr, symbol)
    }

    /// The symbol numbered `id`, decoded from its source the first time.
    pub fn symbol(&self, id: SymbolId) -> &Symbol {
        self.decoded.get_or_init(id, || decode::symbol(self, id))
    }

    /// The ids this table gives the ranges `other` (a table of the same
    /// files, built for one epoch) holds as `ids`: the same record of the
    /// same file.
    pub fn ids_of(
        &self,
        other: &SymbolTable,
        ids: impl Iterator<Item = SymbolId>,
    ) -> std::collections::HashMap<SymbolId, SymbolId> {
        let place = |t: &SymbolTable, id: SymbolId| {
            let e = &t.entries[id.index()];
            (e.source, e.record)
        };
        let wanted: std::collections::HashMap<(u32, u64), SymbolId> =
            ids.map(|id| (place(other, id), id)).collect();
        let mut found = std::collections::HashMap::new();
        for (i, e) in self.entries.iter().enumerate() {
            if let Some(&theirs) = wanted.get(&(e.source, e.record)) {
                found.insert(theirs, SymbolId(i as u32));
            }
        }
        found
    }

    /// The code bytes of symbol `id`, read again from its jitdump (`None`
    /// for a perf map's, or a load written without them).
    pub fn code(&self, id: SymbolId) -> std::io::Result<Option<Vec<u8>>> {
        decode::code(self, id)
    }

    /// Names the object of every jitdump's functions: `image`, the code
    /// image written beside the output, or else the jitdump itself.
    pub fn name_objects(&mut self, image: Option<&std::path::Path>) {
        for source in &mut self.sources {
            if source.kind == SourceKind::Jitdump {
                let path = image.unwrap_or(&source.path);
                source.object = object_name(path);
            }
        }
    }

    /// The symbols decoded so far (those the profiles touched, and those
    /// building the table needed the names of), by number.
    pub fn decoded(&self) -> impl Iterator<Item = (SymbolId, &Symbol)> {
        self.ids()
            .filter_map(|id| self.decoded.get(id).map(|s| (id, s)))
    }

    /// Every symbol's number, in load order.
    pub fn ids(&self) -> impl Iterator<Item = SymbolId> {
        (0..self.entries.len() as u32).map(SymbolId)
    }

    /// The functions of other names whose code lay where `id`'s lies
    /// (loaded earlier or later at the same addresses).
    pub fn sharing_addresses(&self, id: SymbolId) -> Vec<SymbolId> {
        let own = &self.entries[id.index()];
        let end = own.start.saturating_add(own.size);
        let name = &self.symbol(id).name;
        let mut others: Vec<SymbolId> = self
            .ids()
            .filter(|&o| {
                let e = &self.entries[o.index()];
                o != id && e.start < end && own.start < e.start.saturating_add(e.size)
            })
            .filter(|&o| self.symbol(o).name != *name)
            .collect();
        others.dedup_by_key(|&mut o| self.symbol(o).name.clone());
        others
    }

    /// How many code ranges the table holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// How many code ranges came from source number `source`.
    pub fn ranges_of(&self, source: usize) -> usize {
        self.entries
            .iter()
            .filter(|e| e.source as usize == source)
            .count()
    }

    /// The file name numbered `id`.
    pub fn file(&self, id: FileId) -> Arc<str> {
        self.files.borrow()[id.index()].clone()
    }

    /// The sources read.
    pub fn sources(&self) -> &[Source] {
        &self.sources
    }

    /// Why a range could not be decoded, if one could not: its symbol file
    /// changed after the table was built.
    pub fn failure(&self) -> Option<String> {
        self.failure.borrow().clone()
    }

    /// Number of address ranges where overlapping symbols disagree.
    pub fn ambiguous_ranges(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.index.ambiguous()
    }

    /// True when no source gave any symbol.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests;
