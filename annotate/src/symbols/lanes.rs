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
    let mut next = vec![0; lanes.len()];
    let mut order = Vec::with_capacity(entries.len());
    let mut end = 0;
    while let Some((lane, below)) = lowest(entries, &lanes, &next) {
        // The lane's next range, then those after it that start below
        // every other lane's next one: a run of loads from one code space.
        let (ids, first) = (&lanes[lane], next[lane]);
        let starts_below = |id: &&u32| below.is_none_or(|b| entries[**id as usize].start < b);
        let run = 1 + ids[first + 1..].iter().take_while(starts_below).count();
        for &id in &ids[first..first + run] {
            let e = &entries[id as usize];
            if e.start < end {
                return None; // overlaps the range before it
            }
            end = e.end();
            order.push(id);
        }
        next[lane] += run;
    }
    Some(order)
}

/// The lane whose next range starts lowest (the first such), and the
/// lowest start of the other lanes' next ranges (`None`: no other lane
/// has one); `None` once every lane is taken.
fn lowest(entries: &[Entry], lanes: &[Vec<u32>], next: &[usize]) -> Option<(usize, Option<u64>)> {
    let mut heads = (lanes.iter().zip(next).enumerate())
        .filter_map(|(lane, (ids, &at))| Some((entries[*ids.get(at)? as usize].start, lane)));
    let (mut low, mut lane) = heads.next()?;
    let mut below = None;
    for (start, l) in heads {
        let other = match start < low {
            true => {
                let higher = low;
                (low, lane) = (start, l);
                higher
            }
            false => start,
        };
        below = Some(below.map_or(other, |b: u64| b.min(other)));
    }
    Some((lane, below))
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
    fn the_merge_agrees_with_a_sort_on_random_spaces() {
        let mut next = crate::symbols::tests::below(0x2545_f491_4f6c_dd1du64);
        for round in 0..300 {
            // Up to four spaces filled upwards by runs of loads; every
            // tenth round a range put back over an earlier one.
            let mut tops: Vec<u64> = (0..1 + next(4)).map(|s| s << 20).collect();
            let mut ranges = Vec::new();
            while ranges.len() < 60 {
                let space = next(tops.len() as u64) as usize;
                for _ in 0..1 + next(5) {
                    let size = 1 + next(0x40);
                    ranges.push((tops[space] + next(3), size));
                    tops[space] = ranges.last().map_or(0, |&(s, z)| s + z);
                }
            }
            if round % 10 == 0 {
                let (start, size) = ranges[next(ranges.len() as u64) as usize];
                ranges.push((start + next(size), 1 + next(8)));
            }
            let by_start = sorted(&ranges);
            let disjoint = by_start.windows(2).all(|w| {
                let (a, b) = (ranges[w[0] as usize], ranges[w[1] as usize]);
                a.0 + a.1 <= b.0
            });
            let want = disjoint.then_some(by_start);
            assert_eq!(address_order(&entries(&ranges)), want, "round {round}");
        }
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
        // Two lanes whose next ranges start at one address.
        assert_eq!(order(&[(0x10, 8), (0x10, 8)]), None);
        assert_eq!(order(&[(0x10, 8), (0x8, 8), (0x10, 8)]), None);
        // A lane alone, up to the last address.
        let top = u64::MAX - 0x10;
        assert_eq!(order(&[(top, 0x10), (0x10, 0x10)]), Some(vec![1, 0]));
        assert_eq!(order(&[(0x10, 0x10), (top, 0x10)]), Some(vec![0, 1]));
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
