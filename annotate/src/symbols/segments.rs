//! Flattening overlapping ranges into disjoint segments, each owned by the
//! highest-priority range covering it.

use std::collections::BTreeSet;

use super::{Symbol, SymbolId};

/// A disjoint address range and its winning symbol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub start: u64,
    pub end: u64,
    pub symbol: SymbolId,
    pub ambiguous: bool,
}

/// Sweeps over all range boundaries, keeping the covering symbols ordered
/// by priority (`(rank, index)`: a jitdump beats a map, later beats earlier).
pub fn build(symbols: &[Symbol], priorities: &[(u8, SymbolId)]) -> Vec<Segment> {
    let mut events: Vec<(u64, bool, usize)> = Vec::with_capacity(symbols.len() * 2);
    for (i, s) in symbols.iter().enumerate().filter(|(_, s)| s.size > 0) {
        events.push((s.start, true, i));
        events.push((s.start.saturating_add(s.size), false, i));
    }
    events.sort_unstable_by_key(|&(addr, start, _)| (addr, start));
    let mut active: BTreeSet<(u8, SymbolId)> = BTreeSet::new();
    let mut segments: Vec<Segment> = Vec::new();
    let mut i = 0;
    while i < events.len() {
        let addr = events[i].0;
        while i < events.len() && events[i].0 == addr {
            let (_, start, sym) = events[i];
            if start {
                active.insert(priorities[sym]);
            } else {
                active.remove(&priorities[sym]);
            }
            i += 1;
        }
        let (Some(&(_, top)), Some(next)) = (active.last(), events.get(i)) else {
            continue;
        };
        let name = &symbols[top.index()].name;
        let ambiguous = active
            .iter()
            .rev()
            .skip(1)
            .take(8)
            .any(|&(_, o)| symbols[o.index()].name != *name);
        push(
            &mut segments,
            Segment {
                start: addr,
                end: next.0,
                symbol: top,
                ambiguous,
            },
        );
    }
    segments
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
