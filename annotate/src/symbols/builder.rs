//! Building a [`SymbolTable`]: each symbol file indexed in one pass, the
//! epoch's code kept, the program's own code and a jitdump's perf map
//! twins left out, then the lookup index built.

use std::fs::File;
use std::io;
use std::ops::Range;
use std::path::PathBuf;

use super::{
    decoded, guest, index_jitdump, index_perfmap, mapped, modules, order::Order, twins, BiasMode,
    SourceKind, SymbolTable, Touched,
};

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
    /// Each symbol file's entries as indexed, in the order added, and
    /// whether they are in address order (`None`: not known, the file
    /// could not be read to its end): the epoch and the modules are
    /// settled at [`build`](Self::build).
    indexed: Vec<(usize, Range<usize>, Option<Order>)>,
    /// What the profiles name, where perf maps keep only that.
    touched: Option<Touched>,
}

/// Whether the table's entries are in address order, where that is known
/// from the `order` noted while they were indexed: each step of
/// [`SymbolTableBuilder::build`] drops entries and keeps the others'
/// order, so what was in order still is, and what was not still is not
/// unless some were `dropped`.
fn in_order(order: Option<Order>, dropped: bool) -> Option<bool> {
    match order.map(|o| o.in_order()) {
        Some(true) => Some(true),
        Some(false) if !dropped => Some(false),
        _ => None,
    }
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
    pub(crate) fn epoch_ending_at(mut self, places: Vec<(String, u64)>) -> Self {
        self.epoch_end = places;
        self
    }

    /// [`epoch_ending_at`](Self::epoch_ending_at) for the entries `range`
    /// of `source`: those kept are moved to the range's front; how many.
    fn end_epoch(&mut self, source: usize, range: Range<usize>) -> usize {
        let name = self.table.sources[source].path.file_name();
        let Some(&(_, end)) = self
            .epoch_end
            .iter()
            .find(|(file, _)| name.is_some_and(|n| n.to_str() == Some(file)))
        else {
            return range.len();
        };
        let entries = &mut self.table.entries;
        let mut live: Vec<usize> = range.clone().filter(|&i| entries[i].record < end).collect();
        live.sort_by_key(|&i| (entries[i].start, entries[i].record));
        let mut replaced = std::collections::HashSet::new();
        let mut current: Option<usize> = None;
        for &i in &live {
            let e = &entries[i];
            match current {
                Some(c) if e.start < entries[c].end() => {
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
        let mut at = range.start;
        for i in range.clone() {
            if entries[i].record < end && !replaced.contains(&i) {
                entries.swap(at, i);
                at += 1;
            }
        }
        at - range.start
    }

    /// Each file's entries as the table keeps them, in the order added:
    /// the epoch's code only, two modules' functions of one name apart.
    fn settle(&mut self) {
        let mut kept = 0;
        for (source, range, _) in std::mem::take(&mut self.indexed) {
            let len = range.len();
            if range.start != kept {
                self.table.entries.copy_within(range, kept);
            }
            let live = self.end_epoch(source, kept..kept + len);
            self.table.decoded.grow(kept + live);
            kept += live;
        }
        self.table.entries.truncate(kept);
    }

    /// A builder of the same symbol files, indexed already: another table
    /// of them (another epoch's) without reading them again. Its settings
    /// are the defaults but for raw names.
    pub(crate) fn fork(&self) -> io::Result<Self> {
        Ok(SymbolTableBuilder {
            table: self.table.indexed_copy()?,
            epoch_end: Vec::new(),
            program: None,
            indexed: self.indexed.clone(),
            touched: None,
        })
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
        let indexed = index_jitdump::add(&mut self.table, source, bias);
        let order = indexed.as_ref().ok().copied();
        self.indexed
            .push((source, first..self.table.entries.len(), order));
        indexed.map(|_| ())
    }

    /// Indexes an open perf map.
    pub fn add_perf_map_file(&mut self, path: PathBuf, file: File) -> std::io::Result<()> {
        let source = self.table.add_source(path, SourceKind::PerfMap, file);
        let first = self.table.entries.len();
        let indexed = index_perfmap::add(&mut self.table, source, self.touched.as_ref());
        let order = indexed.as_ref().ok().copied();
        self.indexed
            .push((source, first..self.table.entries.len(), order));
        indexed.map(|_| ())
    }

    /// Indexes a jitdump held in memory (tests, tools).
    pub fn add_jitdump(
        &mut self,
        path: PathBuf,
        data: &[u8],
        bias: BiasMode,
    ) -> Result<(), jitdump::ReadError> {
        let file = crate::output::file_holding(data).map_err(|_| jitdump::ReadError {
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
        let added =
            crate::output::file_holding(data).and_then(|file| self.add_perf_map_file(path, file));
        added.expect("a temporary file holds a perf map's bytes");
    }

    /// Perf maps added from now on, where written a function at a time,
    /// keep only the ranges `touched` keeps: those a lookup could answer
    /// with for the profiles it was made of.
    pub fn touched(mut self, touched: Option<Touched>) -> Self {
        self.touched = touched;
        self
    }

    /// Keeps mangled names as the symbol files give them (Valgrind's
    /// `--demangle=no`); by default they are demangled.
    pub fn raw_names(mut self, raw: bool) -> Self {
        self.table.raw_names = raw;
        self
    }

    /// Names QEMU's blocks by `guest`'s symbols (see [`guest`]).
    pub(crate) fn guest(mut self, guest: Option<guest::GuestSymbols>) -> Self {
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
        let indexed: usize = self.indexed.iter().map(|(_, r, _)| r.len()).sum();
        let order =
            (self.indexed.iter()).try_fold(Order::default(), |a, &(.., b)| Some(a.then(b?)));
        self.settle();
        if let Some(program) = self.program.take() {
            self.leave_out(program);
        }
        twins::drop_map_twins(&mut self.table);
        // Before any symbol is decoded: one decoded earlier would keep
        // the file it had without its module.
        self.table.modules = modules::Modules::of_sources(&self.table);
        let dropped = self.table.entries.len() < indexed;
        self.table.index(in_order(order, dropped));
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
