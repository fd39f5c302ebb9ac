//! Flattening overlapping ranges into disjoint segments, each owned by the
//! highest-priority range covering it: a jitdump beats a map, a later load
//! an earlier one.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{SourceKind, SymbolId, SymbolTable};

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
    pub fn answer(&self) -> (std::ops::Range<u64>, super::Hit) {
        let hit = super::Hit {
            symbol: self.symbol,
            ambiguous: self.ambiguous,
        };
        (self.start..self.end, hit)
    }
}

/// A range's priority: `(rank, index)`, larger wins.
type Priority = (u8, SymbolId);

/// Sweeps over the ranges in address order, keeping those that cover the
/// sweep's address by priority. Most ranges overlap none, so the set is
/// small and the pass is linear after the sort (already sorted input, as
/// JITs mostly write, sorts in one pass). Names are decoded only where
/// ranges overlap, to tell whether they disagree.
pub fn build(table: &SymbolTable) -> Vec<Segment> {
    let entries = &table.entries;
    let rank = |i: usize| match table.sources[entries[i].source as usize].kind {
        SourceKind::PerfMap => 0u8,
        SourceKind::Jitdump => 1,
    };
    let mut order: Vec<u32> = (0..entries.len() as u32)
        .filter(|&i| entries[i as usize].size > 0)
        .collect();
    order.sort_by_key(|&i| entries[i as usize].start);
    let end_of = |i: usize| entries[i].start.saturating_add(entries[i].size);
    let mut active: Vec<Priority> = Vec::new();
    let mut ends: BinaryHeap<Reverse<(u64, u32)>> = BinaryHeap::new();
    let mut segments: Vec<Segment> = Vec::with_capacity(order.len());
    let mut next = 0;
    while next < order.len() || !ends.is_empty() {
        let next_start = order.get(next).map(|&i| entries[i as usize].start);
        let next_end = ends.peek().map(|Reverse((end, _))| *end);
        let addr = next_start.into_iter().chain(next_end).min().unwrap_or(0);
        while let Some(&Reverse((end, i))) = ends.peek().filter(|r| r.0 .0 == addr) {
            ends.pop();
            let _ = end;
            let p = (rank(i as usize), SymbolId(i));
            active.retain(|&a| a != p);
        }
        while let Some(&i) = order
            .get(next)
            .filter(|&&i| entries[i as usize].start == addr)
        {
            next += 1;
            let p = (rank(i as usize), SymbolId(i));
            let at = active.partition_point(|&a| a < p);
            active.insert(at, p);
            ends.push(Reverse((end_of(i as usize), i)));
        }
        let boundary = order
            .get(next)
            .map(|&i| entries[i as usize].start)
            .into_iter()
            .chain(ends.peek().map(|Reverse((end, _))| *end))
            .min();
        let (Some(&(_, top)), Some(end)) = (active.last(), boundary) else {
            continue;
        };
        let ambiguous = active.len() > 1 && disagree(table, &active);
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

/// True when a range below the top one (of up to eight) has another name.
fn disagree(table: &SymbolTable, active: &[Priority]) -> bool {
    let (_, top) = active[active.len() - 1];
    let name = &table.symbol(top).name;
    active
        .iter()
        .rev()
        .skip(1)
        .take(8)
        .any(|&(_, o)| table.symbol(o).name != *name)
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
