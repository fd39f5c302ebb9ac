//! The address index: where ranges overlap, flattened into disjoint
//! segments, each owned by the highest-priority range covering it (a
//! jitdump beats a map, a later load an earlier one). Where none overlaps
//! (most files), the ranges themselves are the index and no segment is
//! kept: as loaded, where they lie in address order, else in the address
//! order `lanes` finds.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use std::ops::Range;

use super::names::{name_hash, Names};
use super::{Entry, Hit, SourceKind, SymbolId, SymbolTable};

/// A disjoint address range and its winning symbol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub start: u64,
    pub end: u64,
    pub symbol: SymbolId,
    pub ambiguous: bool,
}

impl Segment {
    /// The range and the lookup answer this segment gives.
    pub fn answer(&self) -> (Range<u64>, Hit) {
        let hit = Hit {
            symbol: self.symbol,
            ambiguous: self.ambiguous,
        };
        (self.start..self.end, hit)
    }
}

/// Answers "which range covers this address".
#[derive(Debug)]
pub enum Index {
    /// The entries, in load order, are in address order, disjoint and
    /// none empty; `starts` holds every [`STRIDE`]th one's start, searched
    /// first (a search of a million entries missed the caches at each of
    /// its last ten steps).
    Entries { starts: Vec<u64> },
    /// The entries, in the order `order` lists them, are in address
    /// order, disjoint and none empty (loads from a few code spaces at
    /// once: see `lanes`); `starts` holds every [`STRIDE`]th one's start.
    Ordered { order: Vec<u32>, starts: Vec<u64> },
    /// Segments, with per symbol the first one it owns (`u32::MAX` for
    /// none).
    Segments {
        segments: Vec<Segment>,
        first: Vec<u32>,
    },
}

/// Entries to a sampled start in [`Index::Entries`].
const STRIDE: usize = 64;

impl Default for Index {
    fn default() -> Self {
        Index::Entries { starts: Vec::new() }
    }
}

impl Index {
    /// Builds the index of `table`'s entries; `in_order`: whether they
    /// lie in address order, disjoint and none empty, where that is known
    /// (else they are read to find out).
    pub fn of(table: &SymbolTable, in_order: Option<bool>) -> Index {
        let entries = &table.entries;
        if in_order.unwrap_or_else(|| super::order::all_in_order(entries)) {
            let starts = entries.iter().step_by(STRIDE).map(|e| e.start).collect();
            return Index::Entries { starts };
        }
        if let Some(order) = super::lanes::address_order(&table.entries) {
            let starts = order.iter().step_by(STRIDE);
            let starts = starts.map(|&i| table.entries[i as usize].start).collect();
            return Index::Ordered { order, starts };
        }
        Index::swept(table)
    }

    /// The index as segments, whatever the entries' order: where the
    /// ranges overlap, and the slow reference the others are held to.
    pub fn swept(table: &SymbolTable) -> Index {
        let segments = build(table);
        let mut first = vec![u32::MAX; table.entries.len()];
        for (i, seg) in segments.iter().enumerate().rev() {
            first[seg.symbol.index()] = i as u32;
        }
        Index::Segments { segments, first }
    }

    /// The range covering `addr`, with the addresses the answer holds for.
    pub fn lookup(&self, entries: &[Entry], addr: u64) -> Option<(Range<u64>, Hit)> {
        match self {
            Index::Entries { starts } => {
                let i = in_strides(starts, entries.len(), |k| entries[k].start, addr)?;
                entry_answer(entries, i).filter(|(range, _)| range.contains(&addr))
            }
            Index::Ordered { order, starts } => {
                let start_at = |k: usize| entries[order[k] as usize].start;
                let k = in_strides(starts, order.len(), start_at, addr)?;
                entry_answer(entries, order[k] as usize).filter(|(range, _)| range.contains(&addr))
            }
            Index::Segments { segments, .. } => {
                let i = segments
                    .partition_point(|s| s.start <= addr)
                    .checked_sub(1)?;
                let seg = &segments[i];
                (addr < seg.end).then(|| seg.answer())
            }
        }
    }

    /// [`Index::lookup`] for an address most likely in `symbol`'s own
    /// (first) segment, tried before the search.
    pub fn lookup_near(
        &self,
        entries: &[Entry],
        addr: u64,
        symbol: SymbolId,
    ) -> Option<(Range<u64>, Hit)> {
        let near = match self {
            Index::Entries { .. } | Index::Ordered { .. } => entry_answer(entries, symbol.index()),
            Index::Segments { segments, first } => {
                let i = first.get(symbol.index()).copied().unwrap_or(u32::MAX);
                segments.get(i as usize).map(Segment::answer)
            }
        };
        match near {
            Some((range, hit)) if range.contains(&addr) => Some((range, hit)),
            _ => self.lookup(entries, addr),
        }
    }
}

/// The last of `len` places in address order (the `k`th one's start by
/// `start_at`) starting at or below `addr`: the last sampled start at or
/// below it (`starts`, every [`STRIDE`]th place's), then in the stride it
/// begins.
fn in_strides(
    starts: &[u64],
    len: usize,
    start_at: impl Fn(usize) -> u64,
    addr: u64,
) -> Option<usize> {
    let from = starts.partition_point(|&s| s <= addr).checked_sub(1)? * STRIDE;
    // `from` starts at or below `addr`; `past` is the stride's end.
    let (mut last, mut past) = (from, (from + STRIDE).min(len));
    while past - last > 1 {
        let mid = last + (past - last) / 2;
        match start_at(mid) <= addr {
            true => last = mid,
            false => past = mid,
        }
    }
    Some(last)
}

fn entry_answer(entries: &[Entry], i: usize) -> Option<(Range<u64>, Hit)> {
    let e = entries.get(i)?;
    let hit = Hit {
        symbol: SymbolId(i as u32),
        ambiguous: false,
    };
    Some((e.start..e.end(), hit))
}

/// A range's priority: `(rank, index)`, larger wins.
type Priority = (u8, SymbolId);

/// Sweeps over the ranges in address order, keeping those that cover the
/// sweep's address by priority. Most ranges overlap none, so the set is
/// small and the pass is linear after the sort (already sorted input, as
/// JITs mostly write, sorts in one pass). Names are decoded only where
/// ranges overlap, to tell whether they disagree.
fn build(table: &SymbolTable) -> Vec<Segment> {
    let entries = &table.entries;
    let rank = |i: usize| match table.sources[entries[i].source as usize].kind {
        SourceKind::PerfMap => 0u8,
        SourceKind::Jitdump => 1,
    };
    let end_of = |i: usize| entries[i].end();
    let order = by_start(entries);
    let names = overlapping_names(table, &order);
    let mut active: Vec<Priority> = Vec::new();
    let mut ends: BinaryHeap<Reverse<(u64, u32)>> = BinaryHeap::new();
    let mut segments: Vec<Segment> = Vec::with_capacity(order.len());
    let mut next = 0;
    while next < order.len() || !ends.is_empty() {
        let next_start = order.get(next).map(|&(start, _)| start);
        let next_end = ends.peek().map(|Reverse((end, _))| *end);
        let addr = next_start.into_iter().chain(next_end).min().unwrap_or(0);
        while let Some(&Reverse((_, i))) = ends.peek().filter(|r| r.0 .0 == addr) {
            ends.pop();
            let p = (rank(i as usize), SymbolId(i));
            active.retain(|&a| a != p);
        }
        while let Some(&(_, i)) = order.get(next).filter(|&&(start, _)| start == addr) {
            next += 1;
            let p = (rank(i as usize), SymbolId(i));
            let at = active.partition_point(|&a| a < p);
            active.insert(at, p);
            ends.push(Reverse((end_of(i as usize), i)));
        }
        let boundary = order
            .get(next)
            .map(|&(start, _)| start)
            .into_iter()
            .chain(ends.peek().map(|Reverse((end, _))| *end))
            .min();
        let (Some(&(_, top)), Some(end)) = (active.last(), boundary) else {
            continue;
        };
        let ambiguous = active.len() > 1 && disagree(&names, &active);
        push(
            &mut segments,
            Segment {
                start: addr,
                end,
                symbol: top,
                ambiguous,
            },
        );
    }
    segments
}

/// The non-empty ranges' starts and numbers, by start and, for one
/// start, in load order (as a stable sort by start gives them: the pairs
/// sort directly, with no lookup of each entry at each comparison).
fn by_start(entries: &[Entry]) -> Vec<(u64, u32)> {
    let mut order: Vec<(u64, u32)> = (entries.iter().enumerate())
        .filter(|(_, e)| e.size > 0)
        .map(|(i, e)| (e.start, i as u32))
        .collect();
    order.sort_unstable();
    order
}

/// True when a range below the top one (of up to eight) has another name.
fn disagree(names: &[u128], active: &[Priority]) -> bool {
    let (_, top) = active[active.len() - 1];
    let name = names[top.index()];
    active
        .iter()
        .rev()
        .skip(1)
        .take(8)
        .any(|&(_, o)| names[o.index()] != name)
}

/// The names of the ranges (`order`: by start) that overlap another, as
/// 128-bit hashes ([`name_hash`]), read in file order: decoded one at a
/// time in address order, each by positioned reads, they were most of
/// indexing a large V8 map (its code moves, and addresses are used
/// again). By symbol number; 0 for a range that overlaps none.
fn overlapping_names(table: &SymbolTable, order: &[(u64, u32)]) -> Vec<u128> {
    let entries = &table.entries;
    let end_of = |i: u32| entries[i as usize].end();
    let mut overlapping = Vec::new();
    let mut reach = 0;
    for (k, &(start, i)) in order.iter().enumerate() {
        let next_start = order.get(k + 1).map(|&(next, _)| next);
        if start < reach || next_start.is_some_and(|next| next < end_of(i)) {
            overlapping.push(i);
        }
        reach = reach.max(end_of(i));
    }
    overlapping.sort_unstable();
    let mut hashes = vec![0; entries.len()];
    let mut names: Option<(u32, Names)> = None;
    for i in overlapping {
        let source = entries[i as usize].source;
        if names.as_ref().is_none_or(|(s, _)| *s != source) {
            names = Names::new(table, source as usize).ok().map(|n| (source, n));
        }
        hashes[i as usize] = match &mut names {
            Some((_, names)) => names.hashed(SymbolId(i)).0,
            None => name_hash(&table.symbol(SymbolId(i)).name),
        };
    }
    hashes
}

fn push(segments: &mut Vec<Segment>, seg: Segment) {
    if seg.start == seg.end {
        return;
    }
    if let Some(last) = segments.last_mut() {
        if last.end == seg.start && last.symbol == seg.symbol && last.ambiguous == seg.ambiguous {
            last.end = seg.end;
            return;
        }
    }
    segments.push(seg);
}
