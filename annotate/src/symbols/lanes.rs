//! Address order for ranges a JIT loaded from a few code spaces at once.
//!
//! V8 and .NET allocate code from several spaces, each filled upwards, so
//! their loads go back to a lower address at every switch from one space
//! to another (node's map: one load in eleven). Sorting a million such
//! ranges took most of indexing them. Laid out in lanes instead (each load
//! to the first lane it continues in address order; node's and .NET's
//! maps need 4 to 6), they come out in address order by merging the
//! lanes, in linear time.

use super::Entry;

/// Lanes tried before the ranges are left to the general sweep.
const MAX_LANES: usize = 16;

/// The entries' numbers in address order, where none is empty, none
/// overlaps another, and their load order interleaves at most
/// [`MAX_LANES`] runs each in address order; `None` otherwise.
pub fn address_order(entries: &[Entry]) -> Option<Vec<u32>> {
    let lanes = lanes(entries)?;
    let mut heads: Vec<Head> = lanes
        .iter()
        .enumerate()
        .filter_map(|(lane, ids)| Head::at(entries, lane, ids, 0))
        .collect();
    let mut order = Vec::with_capacity(entries.len());
    let mut end = 0;
    while let Some(next) = (0..heads.len()).min_by_key(|&h| heads[h].start) {
        let Head { start, lane, at } = heads[next];
        let id = lanes[lane][at];
        if start < end {
            return None; // overlaps the range before it
        }
        end = entries[id as usize].end();
        order.push(id);
        match Head::at(entries, lane, &lanes[lane], at + 1) {
            Some(head) => heads[next] = head,
            None => {
                heads.swap_remove(next);
            }
        }
    }
    Some(order)
}

/// Each entry's number in the first lane whose last range ends at or
/// below its start; `None` for an empty range or more than [`MAX_LANES`].
fn lanes(entries: &[Entry]) -> Option<Vec<Vec<u32>>> {
    let mut ends: Vec<u64> = Vec::new();
    let mut lanes: Vec<Vec<u32>> = Vec::new();
    for (id, e) in entries.iter().enumerate() {
        if e.size == 0 {
            return None;
        }
        let lane = match ends.iter().position(|&end| end <= e.start) {
            Some(lane) => lane,
            None if ends.len() < MAX_LANES => {
                ends.push(0);
                lanes.push(Vec::new());
                ends.len() - 1
            }
            None => return None,
        };
        ends[lane] = e.end();
        lanes[lane].push(id as u32);
    }
    Some(lanes)
}

/// A lane's next range in the merge.
#[derive(Clone, Copy)]
struct Head {
    start: u64,
    lane: usize,
    /// Its place in the lane.
    at: usize,
}

impl Head {
    fn at(entries: &[Entry], lane: usize, ids: &[u32], at: usize) -> Option<Head> {
        let id = *ids.get(at)?;
        let start = entries[id as usize].start;
        Some(Head { start, lane, at })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symbols::NO_DEBUG;

    fn entries(ranges: &[(u64, u64)]) -> Vec<Entry> {
        let entry = |&(start, size)| Entry {
            start,
            size,
            record: 0,
            debug: NO_DEBUG,
            source: 0,
        };
        ranges.iter().map(entry).collect()
    }

    /// The ranges' numbers by start, where the ranges are disjoint.
    fn sorted(ranges: &[(u64, u64)]) -> Vec<u32> {
        let mut ids: Vec<u32> = (0..ranges.len() as u32).collect();
        ids.sort_by_key(|&i| ranges[i as usize].0);
        ids
    }

    #[test]
    fn spaces_filled_by_turns_come_out_in_address_order() {
        // Three spaces, loads from each by turns of 1 to 4, each space's
        // ranges back to back.
        let mut ranges = Vec::new();
        let mut next = [0x1000u64, 0x9000, 0x5000];
        for i in 0..600u64 {
            let space = (i / (1 + i % 4)) as usize % 3;
            ranges.push((next[space], 0x10 + i % 7));
            next[space] += 0x10 + i % 7 + i % 2;
        }
        assert_eq!(address_order(&entries(&ranges)), Some(sorted(&ranges)));
    }

    #[test]
    fn a_range_that_fits_no_lane_or_overlaps_or_is_empty_leaves_it_to_the_sweep() {
        let order = |ranges: &[(u64, u64)]| address_order(&entries(ranges));
        assert_eq!(order(&[]), Some(vec![]));
        assert_eq!(order(&[(0x20, 8), (0x10, 8)]), Some(vec![1, 0]));
        // Touching is not overlapping; a byte more is.
        assert_eq!(order(&[(0x10, 0x10), (0x0, 0x10)]), Some(vec![1, 0]));
        assert_eq!(order(&[(0x10, 0x10), (0x0, 0x11)]), None);
        // Overlaps found only when the lanes are merged.
        assert_eq!(order(&[(0x100, 8), (0x10, 0x100)]), None);
        assert_eq!(order(&[(0x10, 8), (0x0, 0)]), None);
        // Descending: each range a lane of its own, up to the most lanes.
        let down = |n: u64| {
            (0..n)
                .map(|i| (0x1000 - i * 0x10, 0x10))
                .collect::<Vec<_>>()
        };
        let most = down(MAX_LANES as u64);
        assert_eq!(order(&most), Some(sorted(&most)));
        assert_eq!(order(&down(MAX_LANES as u64 + 1)), None);
    }
}
