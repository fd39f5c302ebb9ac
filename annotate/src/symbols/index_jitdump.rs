//! Indexing a jitdump in one pass (`jitdump::scan`): each
//! CODE_LOAD becomes an entry holding the offsets of its record and of its
//! DEBUG_INFO (matched by address, else the record just before, as perf
//! and samply do); each CODE_MOVE a copy of the moved load's entry at its
//! new address. The +0x40 bias is decided from what every DEBUG_INFO's
//! entries span (`bias`), gathered on the way.

use std::collections::{BTreeMap, HashMap};

use super::bias::Evidence;
use super::order::Order;
use super::{BiasMode, Entry, ReadError, SymbolTable, NO_DEBUG};
use jitdump::scan::{self, EntrySpan, Item};

/// A DEBUG_INFO's offset and span.
type Debug = (u64, Option<EntrySpan>);

/// DEBUG_INFO records read but not yet matched to a load. Most writers put
/// each one right before its load: that one waits in `last`, and the map
/// (hashed) holds only those a load did not take at once.
#[derive(Default)]
struct Pending {
    /// The DEBUG_INFO just before the current record, with its address.
    last: Option<(u64, Debug)>,
    by_addr: HashMap<u64, Debug>,
}

impl Pending {
    fn debug_info(&mut self, offset: u64, code_addr: u64, span: Option<EntrySpan>) {
        if let Some((addr, debug)) = self.last.replace((code_addr, (offset, span))) {
            self.by_addr.insert(addr, debug);
        }
        if !self.by_addr.is_empty() {
            // A later DEBUG_INFO for an address replaces an earlier one.
            self.by_addr.remove(&code_addr);
        }
    }

    /// The DEBUG_INFO of the load at `code_addr`: the one for its address,
    /// else the one just before it.
    fn take(&mut self, code_addr: u64) -> Option<Debug> {
        let by_addr = |map: &mut HashMap<u64, Debug>| match map.is_empty() {
            true => None,
            false => map.remove(&code_addr),
        };
        match self.last.take() {
            Some((addr, debug)) if addr == code_addr => Some(debug),
            Some((addr, debug)) => match by_addr(&mut self.by_addr) {
                Some(found) => {
                    self.by_addr.insert(addr, debug);
                    Some(found)
                }
                None => Some(debug),
            },
            None => by_addr(&mut self.by_addr),
        }
    }

    /// How many no load took.
    fn orphans(&self) -> usize {
        self.by_addr.len() + usize::from(self.last.is_some())
    }
}

/// Each load's `code_index`, in entry order, to find the load a CODE_MOVE
/// names (dropped once the file is read). Held as runs: most writers
/// number their loads one after another, each load the next entry, so a
/// million loads are a few runs, not 16 MB of fresh memory.
#[derive(Default)]
struct Loads {
    runs: Vec<Run>,
    /// Every `code_index` above the one before.
    sorted: bool,
}

/// Loads numbered `code_index`, `code_index + 1`... in entries `entry`,
/// `entry + 1`...
#[derive(Clone, Copy)]
struct Run {
    code_index: u64,
    entry: u32,
    len: u32,
}

impl Run {
    /// The entry of the load numbered `code_index`, if in this run.
    fn entry_of(&self, code_index: u64) -> Option<usize> {
        let at = code_index.checked_sub(self.code_index)?;
        (at < u64::from(self.len)).then(|| self.entry as usize + at as usize)
    }

    /// The number of its last load (a run holds at least one).
    fn last(&self) -> u64 {
        self.code_index + u64::from(self.len - 1)
    }

    /// True where the load numbered `code_index` in entry `entry` comes
    /// next in this run.
    fn goes_on(&self, code_index: u64, entry: u32) -> bool {
        let next = u64::from(self.len);
        self.len < u32::MAX
            && self.code_index.checked_add(next) == Some(code_index)
            && u64::from(self.entry) + next == u64::from(entry)
    }
}

impl Loads {
    fn push(&mut self, code_index: u64, entry: usize) {
        let entry = entry as u32;
        let ascending = (self.runs.last()).is_none_or(|r| r.last() < code_index);
        self.sorted = ascending && (self.sorted || self.runs.is_empty());
        match self.runs.last_mut() {
            Some(run) if run.goes_on(code_index, entry) => run.len += 1,
            _ => self.runs.push(Run {
                code_index,
                entry,
                len: 1,
            }),
        }
    }

    /// The entry of the latest load with `code_index`.
    fn find(&self, code_index: u64) -> Option<usize> {
        match self.sorted {
            true => {
                let i = self.runs.partition_point(|r| r.code_index <= code_index);
                self.runs[..i].last()?.entry_of(code_index)
            }
            false => self.runs.iter().rev().find_map(|r| r.entry_of(code_index)),
        }
    }
}

/// What the index takes of a record (names and code stay in the file).
enum Taken {
    Debug(u64, u64, Option<EntrySpan>),
    Load(u64, u64, u64, u64),
    Move(u64, u64),
}

/// Records handed from the scanning thread to the indexing one at a time.
const BATCH: usize = 4096;

/// Indexes source `source`: one thread reads the file (framing, checking,
/// summing DEBUG_INFO entries), this one builds the entries, batch by batch.
fn taken(offset: u64, item: Item) -> Option<Taken> {
    match item {
        Item::DebugInfo { code_addr, span } => Some(Taken::Debug(offset, code_addr, span)),
        Item::Load(l) => Some(Taken::Load(offset, l.code_addr, l.code_size, l.code_index)),
        Item::Move(m) => Some(Taken::Move(m.code_index, m.new_code_addr)),
        Item::Close | Item::Other => None,
    }
}

/// The entries of one source, built as its records come.
struct Index<'t> {
    table: &'t mut SymbolTable,
    source: u32,
    pending: Pending,
    loads: Loads,
    evidence: Evidence,
    order: Order,
}

impl<'t> Index<'t> {
    fn new(table: &'t mut SymbolTable, source: usize) -> Self {
        Index {
            table,
            source: source as u32,
            pending: Pending::default(),
            loads: Loads::default(),
            evidence: Evidence::new(),
            order: Order::default(),
        }
    }

    fn take(&mut self, taken: Taken) {
        match taken {
            Taken::Debug(offset, code_addr, span) => {
                self.pending.debug_info(offset, code_addr, span)
            }
            Taken::Load(offset, code_addr, code_size, code_index) => {
                let debug = self.pending.take(code_addr);
                self.evidence
                    .add(code_addr, code_size, debug.and_then(|d| d.1));
                self.loads.push(code_index, self.table.entries.len());
                self.push(Entry {
                    start: code_addr,
                    size: code_size,
                    record: offset,
                    debug: debug.map_or(NO_DEBUG, |d| d.0),
                    source: self.source,
                });
            }
            Taken::Move(code_index, new_code_addr) => {
                if let Some(i) = self.loads.find(code_index) {
                    let moved = Entry {
                        start: new_code_addr,
                        ..self.table.entries[i]
                    };
                    self.push(moved);
                }
            }
        }
    }

    fn push(&mut self, entry: Entry) {
        self.order.note(&entry);
        self.table.push(entry);
    }
}

/// Indexes jitdump `source`; says whether its entries are in address
/// order.
pub fn add(table: &mut SymbolTable, source: usize, bias: BiasMode) -> Result<Order, ReadError> {
    let file = table.sources[source].file.try_clone()?;
    // About one load per 512 bytes: grown once or twice, never copied often.
    let guess = file.metadata()?.len() / 512;
    table.reserve(usize::try_from(guess).unwrap_or(0));
    let mut index = Index::new(table, source);
    let scanned = std::thread::scope(|scope| {
        let (batches, received) = std::sync::mpsc::sync_channel::<Vec<Taken>>(8);
        let reader = crate::memory::helper_thread().spawn_scoped(scope, move || {
            let mut batch = Vec::with_capacity(BATCH);
            let scanned = scan::scan(&file, |offset, item| {
                batch.extend(taken(offset, item));
                if batch.len() == BATCH {
                    let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                    let _ = batches.send(full);
                }
            });
            let _ = batches.send(batch);
            scanned
        });
        let reader = match reader {
            Ok(reader) => reader,
            Err(e) => return Err(e.into()),
        };
        for batch in received {
            batch.into_iter().for_each(|t| index.take(t));
        }
        reader
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })?;
    let Index {
        pending,
        evidence,
        order,
        ..
    } = index;
    let decision = super::bias::decide(&scanned.header, &evidence, bias);
    let path = table.sources[source].path.clone();
    table.sources[source].shift = decision.shift;
    table.sources[source].by_function = decision.writer == super::Writer::V8;
    table.sources[source].header = Some(scanned.header);
    table.report.orphan_debug_info += pending.orphans();
    table.report.bias.push((path.clone(), decision));
    let mut counts: BTreeMap<_, usize> = BTreeMap::new();
    for p in &scanned.problems {
        *counts.entry(p.kind).or_default() += 1;
    }
    for (kind, n) in counts {
        let problem = (path.clone(), kind.to_string(), n);
        table.report.problems.push(problem);
    }
    Ok(order)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The matching rule as a plain map: a DEBUG_INFO for the load's
    /// address, else the one just before it; a later one for an address
    /// replaces an earlier.
    #[derive(Default)]
    struct Reference {
        map: HashMap<u64, u64>,
        previous: Option<u64>,
    }

    impl Reference {
        fn debug_info(&mut self, offset: u64, addr: u64) {
            self.map.insert(addr, offset);
            self.previous = Some(addr);
        }

        fn take(&mut self, addr: u64) -> Option<u64> {
            let previous = self.previous.take();
            self.map
                .remove(&addr)
                .or_else(|| previous.and_then(|a| self.map.remove(&a)))
        }
    }

    #[test]
    fn pending_debug_info_matches_as_the_plain_map_does() {
        let mut next = crate::symbols::tests::below(0x9e37_79b9_7f4a_7c15u64);
        for _ in 0..200 {
            let (mut fast, mut plain) = (Pending::default(), Reference::default());
            for offset in 0..40 {
                let addr = next(6);
                if next(3) == 0 {
                    let got = fast.take(addr).map(|d| d.0);
                    assert_eq!(got, plain.take(addr), "load at {addr}");
                } else {
                    fast.debug_info(offset, addr, None);
                    plain.debug_info(offset, addr);
                }
            }
            assert_eq!(fast.orphans(), plain.map.len());
        }
    }

    /// `Loads` as a plain list of every load: the meaning the runs keep.
    fn latest(loads: &[(u64, usize)], code_index: u64) -> Option<usize> {
        loads.iter().rev().find(|l| l.0 == code_index).map(|l| l.1)
    }

    #[test]
    fn loads_in_runs_find_what_the_plain_list_finds() {
        let mut next = crate::symbols::tests::below(0x2545_f491_4f6c_dd1du64);
        for round in 0..300 {
            let (mut runs, mut plain) = (Loads::default(), Vec::new());
            let mut index = next(4);
            for entry in 0..60 {
                // Mostly the next number in the next entry (one run), now
                // and then a gap, a number again, or an entry skipped (a
                // move's copy between loads).
                match next(8) {
                    0 => index += 1 + next(3),
                    1 => index = next(20),
                    _ => index += 1,
                }
                if round % 2 == 0 && next(10) == 0 {
                    continue;
                }
                runs.push(index, entry);
                plain.push((index, entry));
            }
            for code_index in 0..100 {
                assert_eq!(runs.find(code_index), latest(&plain, code_index));
            }
        }
        let mut loads = Loads::default();
        for entry in 0..1_000_000 {
            loads.push(entry as u64 + 7, entry);
        }
        assert_eq!(loads.runs.len(), 1);
        assert_eq!(loads.find(500_006), Some(499_999));
        // In order while each number is above the last one of the run
        // before; a number again is not (searched from the end then).
        let mut loads = Loads::default();
        for (entry, index) in [1u64, 2, 3, 4, 5, 6].into_iter().enumerate() {
            loads.push(index, entry);
        }
        assert!(loads.sorted);
        loads.push(6, 7);
        assert!(!loads.sorted);
        // The highest number a file can give: no overflow (a debug build
        // would panic on `start + len - 1`).
        let mut loads = Loads::default();
        loads.push(u64::MAX, 0);
        loads.push(u64::MAX, 1);
        assert_eq!(loads.find(u64::MAX), Some(1));
    }

    #[test]
    fn a_move_finds_the_latest_load_of_its_index_in_either_order() {
        for order in [[1u64, 2, 3, 2], [3, 2, 1, 2]] {
            let mut loads = Loads::default();
            for (entry, index) in order.into_iter().enumerate() {
                loads.push(index, entry);
            }
            assert_eq!(loads.find(2), Some(3));
            assert_eq!(loads.find(7), None);
        }
        let mut loads = Loads::default();
        for (entry, index) in [5u64, 9, 12].into_iter().enumerate() {
            loads.push(index, entry);
        }
        assert!(loads.sorted);
        assert_eq!(
            (loads.find(9), loads.find(10), loads.find(4)),
            (Some(1), None, None)
        );
    }
}
