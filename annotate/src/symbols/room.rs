//! Room for the entries of one symbol file read as two halves at once:
//! each half writes straight into the table's reserved memory, so that
//! no entry is copied into fresh pages afterwards (zeroing those pages
//! was a third of indexing a perf map of a million lines).

use std::mem::MaybeUninit;

use super::Entry;

/// Slots of reserved memory filled in order; entries past the last slot
/// go to a vector of their own.
pub struct Room<'a> {
    slots: &'a mut [MaybeUninit<Entry>],
    used: usize,
    spill: Vec<Entry>,
}

/// What a [`Room`] was given: its first `used` slots, then `spill`.
pub struct Filled {
    used: usize,
    spill: Vec<Entry>,
}

impl<'a> Room<'a> {
    pub fn push(&mut self, entry: Entry) {
        match self.slots.get_mut(self.used) {
            Some(slot) => {
                slot.write(entry);
                self.used += 1;
            }
            None => self.spill.push(entry),
        }
    }

    pub fn filled(self) -> Filled {
        Filled {
            used: self.used,
            spill: self.spill,
        }
    }
}

/// The spare capacity of `entries` as two rooms, the first of `front`
/// slots (fewer where the capacity is smaller).
pub fn split(entries: &mut Vec<Entry>, front: usize) -> (Room<'_>, Room<'_>) {
    let spare = entries.spare_capacity_mut();
    let (a, b) = spare.split_at_mut(front.min(spare.len()));
    let room = |slots| Room {
        slots,
        used: 0,
        spill: Vec::new(),
    };
    (room(a), room(b))
}

/// Appends to `entries` what the rooms [`split`] from it at `front` were
/// given, the front's before the back's.
pub fn join(entries: &mut Vec<Entry>, front: usize, a: Filled, b: Filled) {
    let start = entries.len();
    let front = front.min(entries.capacity() - start);
    let spare = entries.spare_capacity_mut();
    // The back's entries moved down to follow the front's, or (where the
    // front spilled) copied out, to come after the spill (rare: the
    // front's room is sized with a margin).
    let (moved, back): (usize, Vec<Entry>) = match a.spill.is_empty() {
        true => {
            spare.copy_within(front..front + b.used, a.used);
            (b.used, Vec::new())
        }
        false => {
            let slots = spare[front..front + b.used].iter();
            // SAFETY: the back room wrote each of its first `b.used` slots.
            (0, slots.map(|slot| unsafe { slot.assume_init() }).collect())
        }
    };
    // SAFETY: the `a.used` slots after `start` were written by the front
    // room; the `moved` after those hold copies of the slots the back
    // room wrote. `Entry` is `Copy`.
    unsafe { entries.set_len(start + a.used + moved) };
    entries.extend(a.spill);
    entries.extend(back);
    entries.extend(b.spill);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(start: u64) -> Entry {
        Entry {
            start,
            size: 1,
            record: start,
            debug: 0,
            source: 0,
        }
    }

    /// Starts of what `join` leaves, for rooms of `cap` slots split at
    /// `front` given `a` and `b` entries.
    fn joined(cap: usize, front: usize, a: u64, b: u64) -> Vec<u64> {
        let mut entries = vec![entry(0)];
        entries.reserve_exact(cap);
        let (mut ra, mut rb) = split(&mut entries, front);
        (1..=a).for_each(|s| ra.push(entry(s)));
        (100..100 + b).for_each(|s| rb.push(entry(s)));
        let (fa, fb) = (ra.filled(), rb.filled());
        join(&mut entries, front, fa, fb);
        entries.iter().map(|e| e.start).collect()
    }

    #[test]
    fn halves_join_in_order_whether_or_not_they_spill() {
        let want = |a: u64, b: u64| {
            let mut v = vec![0];
            v.extend(1..=a);
            v.extend(100..100 + b);
            v
        };
        for (cap, front, a, b) in [
            (10, 5, 3, 4),  // both fit, a gap between
            (10, 5, 5, 5),  // both fill their rooms exactly
            (10, 5, 7, 2),  // the front spills
            (10, 5, 2, 9),  // the back spills
            (10, 5, 8, 9),  // both spill
            (10, 20, 3, 4), // no room for the back
            (0, 0, 3, 4),   // no room at all
            (10, 5, 0, 0),  // nothing given
        ] {
            assert_eq!(
                joined(cap, front, a, b),
                want(a, b),
                "{cap} {front} {a} {b}"
            );
        }
    }
}
