//! Address reuse over time. Callgrind adds up costs per address over the
//! whole run, so code loaded where other code was before would inherit
//! that code's cost. Before code is registered over a range that still
//! holds registered code, the session asks callgrind to write what it has
//! so far (a dump, `CALLGRIND_DUMP_STATS_AT`): each part of the profile
//! then covers one epoch, in which every address holds one function. The
//! dump's description names the places in the symbol files where the
//! epoch ends, so that annotate names each part with the code it ran.
//! Unloading alone never dumps; code unloaded before a dump is forgotten
//! by it (its cost went into the part that ended), so code loaded over it
//! later begins no further epoch.

use std::collections::BTreeMap;

/// What callgrind writes before a description given to a dump.
pub const DESC_PREFIX: &str = "callgrind-jit epoch ends at";

/// The registered ranges that hold cost in the current epoch, by start
/// (disjoint).
#[derive(Debug, Default)]
pub struct Epochs {
    live: BTreeMap<u64, u64>,
    /// Ranges unloaded in this epoch: dropped from `live` at its end.
    unloaded: Vec<(u64, u64)>,
}

impl Epochs {
    /// Registers `[start, end)`; true where it covers code registered
    /// before (a new epoch begins). Ranges it covers are forgotten.
    pub fn load(&mut self, start: u64, end: u64) -> bool {
        let covered: Vec<u64> = self
            .live
            .range(..end)
            .rev()
            .take_while(|(_, &e)| e > start)
            .map(|(&s, _)| s)
            .collect();
        for s in &covered {
            self.live.remove(s);
        }
        let ends = !covered.is_empty();
        if ends {
            self.forget_unloaded();
        }
        self.live.insert(start, end);
        ends
    }

    /// `[start, end)` no longer holds code; its cost stays in this epoch.
    pub fn unload(&mut self, start: u64, end: u64) {
        self.unloaded.push((start, end));
    }

    /// The epoch ended: ranges unloaded in it hold no cost in the next.
    fn forget_unloaded(&mut self) {
        for (start, end) in std::mem::take(&mut self.unloaded) {
            self.live.retain(|&s, &mut e| s < start || e > end);
        }
    }
}

/// The dump's description: where the epoch ends in each symbol file
/// (`jit-PID.dump@BYTES perf-PID.map@BYTES`, the files' lengths before
/// the load that ends it).
pub fn description(files: &[(&str, u64)]) -> String {
    let places: Vec<String> = files.iter().map(|(f, at)| format!("{f}@{at}")).collect();
    format!("{DESC_PREFIX} {}", places.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_load_over_live_code_begins_an_epoch() {
        let mut e = Epochs::default();
        assert!(!e.load(100, 200));
        assert!(!e.load(200, 300), "adjacent is not reuse");
        assert!(!e.load(50, 100));
        assert!(e.load(150, 160), "inside a live range");
        assert!(e.load(90, 210), "over several");
        assert_eq!(e.live.into_iter().collect::<Vec<_>>(), [(90, 210)]);
        let mut e = Epochs::default();
        e.load(0, 10);
        assert!(e.load(9, 20), "over the end of one");
        assert!(e.load(10, 11), "inside it");
        assert!(!e.load(20, 21));
    }

    #[test]
    fn code_unloaded_before_an_epoch_ends_begins_no_later_one() {
        let mut e = Epochs::default();
        e.load(0, 10);
        e.load(10, 20);
        e.unload(0, 10);
        e.unload(10, 20);
        assert!(e.load(0, 10), "its cost is still in this epoch");
        assert!(!e.load(10, 20), "unloaded before the dump, so gone");
        // Unloaded after the dump: still holds cost in the new epoch.
        e.unload(0, 10);
        assert!(e.load(5, 6));
        // Code still loaded is kept across a dump.
        let mut e = Epochs::default();
        e.load(0, 10);
        e.load(10, 20);
        e.unload(0, 10);
        assert!(e.load(0, 10));
        assert!(e.load(10, 20), "never unloaded");
    }

    #[test]
    fn an_epoch_forgets_only_the_code_inside_what_was_unloaded() {
        let mut e = Epochs::default();
        for (start, end) in [(0, 5), (10, 20), (30, 40), (45, 50)] {
            e.load(start, end);
        }
        e.unload(10, 40);
        assert!(e.load(45, 50), "ends the epoch");
        assert!(!e.load(10, 20), "inside what was unloaded");
        assert!(!e.load(30, 40), "inside what was unloaded");
        assert!(e.load(0, 5), "before it: still holds cost");
    }

    #[test]
    fn the_description_names_each_file_and_place() {
        let d = description(&[("jit-7.dump", 40), ("perf-7.map", 0)]);
        assert_eq!(d, "callgrind-jit epoch ends at jit-7.dump@40 perf-7.map@0");
    }
}
