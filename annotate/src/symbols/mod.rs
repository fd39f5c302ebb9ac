//! The symbol table: JIT address ranges with names, files and lines.
//!
//! Built from jitdumps and perf maps. Where ranges overlap (address reuse,
//! or a jitdump and a map covering the same code) a jitdump beats a map and
//! a later load beats an earlier one; such addresses are marked ambiguous
//! when the losing range had another name.
//!
//! A symbol file can hold millions of functions of which a profile touches
//! a few thousand. Building the table reads each file once and keeps an
//! `Entry` per range (address, size, where its records are); a range's
//! name, file and line table are decoded from the file the first time
//! [`SymbolTable::symbol`] is asked for it (`decode.rs`). Memory grows with
//! the number of ranges, never with the files' size.

mod bias;
mod builder;
mod decode;
mod decoded;
mod demangle;
pub(crate) mod guest;
mod index_jitdump;
mod index_perfmap;
mod lanes;
pub mod mapped;
mod modules;
mod names;
mod order;
mod reads;
mod room;
pub mod runtime_names;
mod segments;
mod symbol;
#[cfg(test)]
pub(crate) mod test_dump;
mod touched;
mod twins;

use std::cell::RefCell;
use std::fs::File;
use std::path::PathBuf;
use std::sync::Arc;

use indexmap::IndexSet;

pub use bias::{BiasMode, Decision, Writer};
pub use builder::{ReadError, SymbolTableBuilder};
use segments::Index;
pub use symbol::{FileId, Hit, Row, Symbol, SymbolId};
pub use touched::Touched;

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
    /// Written by a runtime that compiles a function at a time (V8,
    /// HotSpot): its loads are never a module's block (see `modules`).
    by_function: bool,
    /// Ranges left out as no profile names them (see [`Touched`]).
    untouched: usize,
}

impl Source {
    fn try_clone(&self) -> std::io::Result<Source> {
        Ok(Source {
            path: self.path.clone(),
            kind: self.kind,
            object: self.object.clone(),
            file: self.file.try_clone()?,
            header: self.header.clone(),
            shift: self.shift,
            by_function: self.by_function,
            untouched: self.untouched,
        })
    }
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
}

impl Entry {
    /// The first address past the range.
    fn end(&self) -> u64 {
        self.start.saturating_add(self.size)
    }
}

/// [`Entry::debug`] of a range without DEBUG_INFO.
const NO_DEBUG: u64 = u64::MAX;

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
    /// Per perf map: the runtime that wrote it, as its first line shows.
    pub map_writers: Vec<(PathBuf, crate::perfmap::MapWriter)>,
}

/// Symbols from all sources, ready for address lookups.
#[derive(Debug, Default)]
pub struct SymbolTable {
    sources: Vec<Source>,
    entries: Vec<Entry>,
    /// Each entry's symbol, once decoded.
    decoded: decoded::Decoded,
    /// The code objects of modules' functions, once needed.
    modules: modules::Modules,
    /// Source file names, numbered in the order first met.
    files: RefCell<IndexSet<Arc<str>>>,
    index: Index,
    /// What was skipped while reading the sources.
    pub report: BuildReport,
    /// Names are written as the symbol files give them, not demangled.
    raw_names: bool,
    /// The guest program's symbols, where the run is QEMU's user mode.
    guest: Option<guest::GuestSymbols>,
}

/// The name a file has as an object in the profile: its absolute path.
pub fn object_name(path: &std::path::Path) -> String {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    absolute.display().to_string()
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
            by_function: false,
            untouched: 0,
        });
        self.sources.len() - 1
    }

    /// The symbol files and their entries as indexed, with nothing
    /// decoded or looked up yet (see [`SymbolTableBuilder::fork`]).
    fn indexed_copy(&self) -> std::io::Result<SymbolTable> {
        let sources = self.sources.iter().map(Source::try_clone);
        Ok(SymbolTable {
            sources: sources.collect::<std::io::Result<_>>()?,
            entries: self.entries.clone(),
            report: self.report.clone(),
            raw_names: self.raw_names,
            ..SymbolTable::default()
        })
    }

    /// True where a symbol file was written by a runtime that resumes its
    /// compiled code by calls into its middle: a jitdump with V8's mark, a
    /// perf map in V8's, HotSpot's or BEAM's way (see `crate::runtimes`).
    pub fn by_runtime_resuming_by_calls(&self) -> bool {
        use crate::perfmap::MapWriter;
        let v8_dump = self.report.bias.iter().any(|(_, d)| d.writer == Writer::V8);
        let maps = self.report.map_writers.iter();
        v8_dump || maps.map(|(_, w)| w).any(|&w| w != MapWriter::Other)
    }

    /// Room for `more` entries. From 2 MiB on, the room is asked for in
    /// huge pages: a million entries filled 4 KiB at a time took 10,000
    /// page faults, a third of indexing a perf map of a million functions.
    fn reserve(&mut self, more: usize) {
        self.entries.reserve(more);
        let spare = self.entries.spare_capacity_mut();
        crate::memory::advise_huge_pages(spare.as_mut_ptr().cast(), std::mem::size_of_val(spare));
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

    /// Builds the lookup index, once every source is in; `in_order`:
    /// whether the entries are in address order, where known.
    fn index(&mut self, in_order: Option<bool>) {
        self.index = Index::of(self, in_order);
    }

    /// The symbol covering `addr`.
    pub fn lookup(&self, addr: u64) -> Option<Hit> {
        self.lookup_range(addr).map(|(_, hit)| hit)
    }

    /// Like [`SymbolTable::lookup`], with the address range the answer
    /// holds for (to look up neighbouring addresses without searching).
    pub(crate) fn lookup_range(&self, addr: u64) -> Option<(std::ops::Range<u64>, Hit)> {
        self.index.lookup(&self.entries, addr)
    }

    /// [`SymbolTable::lookup_range`] for an address most likely in the
    /// first segment of `symbol` (a JIT block's own code): checked there
    /// before searching all segments, whose search misses the caches.
    pub(crate) fn lookup_range_near(
        &self,
        addr: u64,
        symbol: SymbolId,
    ) -> Option<(std::ops::Range<u64>, Hit)> {
        self.index.lookup_near(&self.entries, addr, symbol)
    }

    /// The symbol numbered `id`, decoded from its source the first time;
    /// named after its address where its file changed since the table was
    /// built (see `SymbolTable::try_symbol`).
    pub fn symbol(&self, id: SymbolId) -> &Symbol {
        &self.decoding(id).symbol
    }

    /// The symbol numbered `id`, or why its file could not give it (it
    /// changed since the table was built): what a rewrite names with.
    #[inline]
    pub(crate) fn try_symbol(&self, id: SymbolId) -> Result<&Symbol, &str> {
        match self.decoding(id) {
            decoded::Decoding {
                failure: Some(why), ..
            } => Err(why),
            decoded::Decoding { symbol, .. } => Ok(symbol),
        }
    }

    #[inline]
    fn decoding(&self, id: SymbolId) -> &decoded::Decoding {
        self.decoded.get_or_init(id, || decode::symbol(self, id))
    }

    /// The ids this table gives the ranges `other` (a table of the same
    /// files, built for one epoch) holds as `ids`: the same record of the
    /// same file.
    pub(crate) fn ids_of(
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
    pub(crate) fn code(&self, id: SymbolId) -> std::io::Result<Option<Vec<u8>>> {
        decode::code(self, id)
    }

    /// The object the functions of source number `source` are under in
    /// an output: `image` (the code image written beside it, by its
    /// [`object_name`]) for a jitdump's where one was written, else the
    /// symbol file itself.
    pub(crate) fn object_of<'a>(&'a self, source: usize, image: Option<&'a str>) -> &'a str {
        let source = &self.sources[source];
        match (source.kind, image) {
            (SourceKind::Jitdump, Some(image)) => image,
            _ => &source.object,
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
    pub(crate) fn sharing_addresses(&self, id: SymbolId) -> Vec<SymbolId> {
        let own = &self.entries[id.index()];
        let end = own.end();
        let name = &self.symbol(id).name;
        let mut others: Vec<SymbolId> = self
            .ids()
            .filter(|&o| {
                let e = &self.entries[o.index()];
                o != id && e.start < end && own.start < e.end()
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

    /// How many code ranges came from source number `source` (those no
    /// profile names among them, though the table did not keep them).
    pub fn ranges_of(&self, source: usize) -> usize {
        let kept = self.entries.iter().filter(|e| e.source as usize == source);
        kept.count() + self.sources[source].untouched
    }

    /// How many code ranges of source number `source` the table left out
    /// as no profile names them (see [`Touched`]).
    pub fn left_out_unnamed(&self, source: usize) -> usize {
        self.sources[source].untouched
    }

    /// The file name numbered `id`.
    pub fn file(&self, id: FileId) -> Arc<str> {
        self.files.borrow()[id.index()].clone()
    }

    /// The sources read.
    pub fn sources(&self) -> &[Source] {
        &self.sources
    }

    /// True when no source gave any symbol.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests;
