//! What a rewrite did, for the summary on stderr.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use rustc_hash::FxHashMap;

use crate::symbols::SymbolId;

/// How a profile ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Ending {
    /// Its last part has its `totals:` line, and its last line its newline.
    #[default]
    Complete,
    /// The last part has no `totals:` line: callgrind did not finish it.
    NoTotals,
    /// The last line has no newline: the file was cut inside a line.
    CutLine,
}

/// Why a profile was read (once more).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reading {
    /// The first reading.
    First,
    /// Again to take continuations out of the arcs holding them, or to
    /// write entry points as calls (the re-entry plan).
    Reentry,
    /// Again with every epoch's symbols: the file holds several epochs
    /// (`--combine-dumps`).
    CombinedEpochs,
    /// Again with its own epoch's symbols: named like a file of several
    /// epochs, it held one.
    OneEpoch,
    /// First, to make the re-entry plan, writing nothing (the program's
    /// runtime resumes JIT code by calls).
    Plan,
    /// Again, to write the output with the plan made first.
    Write,
}

impl Reading {
    /// Why, in the summary's words.
    pub fn why(self) -> &'static str {
        match self {
            Reading::First => "first",
            Reading::Reentry => "continuations to take out of arcs",
            Reading::CombinedEpochs => "several epochs in one file",
            Reading::OneEpoch => "one epoch in a file named like several",
            Reading::Plan => "planning re-entry (the program's runtime resumes JIT code by calls)",
            Reading::Write => "writing",
        }
    }
}

/// Counts gathered while rewriting one profile.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Event names from `events:` (the first one is used for shares).
    pub events: Vec<String>,
    /// Self cost of the first event over all cost lines.
    pub total: u64,
    /// Self cost (first event) per JIT symbol now named.
    pub jit_cost: BTreeMap<SymbolId, u64>,
    /// Self cost (first event) still in address-named functions under
    /// `???`, by address: code outside every known JIT range.
    pub unnamed_cost: FxHashMap<u64, u64>,
    /// Symbols whose address was covered by ranges of different names.
    pub ambiguous: BTreeSet<SymbolId>,
    /// jit-client's live-mode images the profile names as objects: the
    /// code in them Valgrind named itself (one function an image).
    pub live_images: BTreeSet<String>,
    /// Calls into the middle of a JIT range (not new
    /// activations), folded into self cost.
    pub folded_calls: u64,
    /// Calls into a JIT function's own middle from another of its
    /// recursion levels, kept as calls between the levels.
    pub level_calls: u64,
    /// Self cost (first event) of JIT code that callgrind charged to
    /// another JIT function (entered by a jump), moved to its own.
    pub moved_cost: u64,
    /// Continuations' cost taken out of their callers' arcs (see
    /// re-entry in docs/callgrind-format.md).
    pub reentry: Reentry,
    /// Parts whose header says jit-client ended an epoch there.
    pub epoch_parts_seen: u64,
    /// Whether the profile has an instruction column.
    pub has_instr: bool,
    /// Whether the profile has a line column.
    pub has_line: bool,
    /// Parts seen.
    pub parts: u64,
    /// Lines with keys outside the spec, passed through.
    pub unknown_lines: u64,
    /// Whether the profile ends as callgrind ends one.
    pub ending: Ending,
    /// Each time the profile was read from its start, and why.
    pub reads: Vec<Reading>,
    /// Stretches read again to place relative positions that the lazy
    /// pass had copied undecoded (a layout callgrind does not write).
    pub read_back: ReadBack,
}

/// Stretches of the input read again (see [`Stats::read_back`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadBack {
    /// How many.
    pub times: u64,
    /// Their bytes, together.
    pub bytes: u64,
}

impl Stats {
    /// Self cost (first event) now in named JIT functions.
    pub fn jit_total(&self) -> u64 {
        self.jit_cost.values().sum()
    }

    /// Self cost still in address-named pseudo-functions.
    pub(crate) fn unnamed_total(&self) -> u64 {
        self.unnamed_cost.values().sum()
    }

    /// The same counts with each symbol given its id in another table
    /// (`ids`; symbols it lacks are left out).
    pub(crate) fn with_ids(mut self, ids: &HashMap<SymbolId, SymbolId>) -> Stats {
        self.jit_cost = self
            .jit_cost
            .iter()
            .filter_map(|(id, &cost)| Some((*ids.get(id)?, cost)))
            .collect();
        self.ambiguous = self
            .ambiguous
            .iter()
            .filter_map(|id| ids.get(id).copied())
            .collect();
        self
    }

    /// Adds another profile's counts (parts and thread files of one run).
    pub(crate) fn merge(&mut self, other: &Stats) {
        if self.events.is_empty() {
            self.events = other.events.clone();
        }
        self.total += other.total;
        for (&k, &v) in &other.jit_cost {
            *self.jit_cost.entry(k).or_default() += v;
        }
        for (&k, &v) in &other.unnamed_cost {
            *self.unnamed_cost.entry(k).or_default() += v;
        }
        self.ambiguous.extend(&other.ambiguous);
        self.live_images.extend(other.live_images.iter().cloned());
        self.folded_calls += other.folded_calls;
        self.level_calls += other.level_calls;
        self.moved_cost += other.moved_cost;
        self.reentry.taken += other.reentry.taken;
        self.reentry.held += other.reentry.held;
        self.reentry.called_back += other.reentry.called_back;
        self.reentry.called_back_held += other.reentry.called_back_held;
        self.reentry.between_levels += other.reentry.between_levels;
        self.reentry.between_levels_held += other.reentry.between_levels_held;
        self.epoch_parts_seen += other.epoch_parts_seen;
        self.reentry.unplaced += other.reentry.unplaced;
        self.reentry.resumed += other.reentry.resumed;
        self.reentry.entry_points += other.reentry.entry_points;
        self.has_instr |= other.has_instr;
        self.has_line |= other.has_line;
        self.parts += other.parts;
        self.unknown_lines += other.unknown_lines;
        if self.ending == Ending::Complete {
            self.ending = other.ending;
        }
        self.reads.extend(&other.reads);
        self.read_back.times += other.read_back.times;
        self.read_back.bytes += other.read_back.bytes;
    }
}

/// What re-entry did, for the summary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reentry {
    /// Continuations' inclusive cost (first event) taken out of their
    /// callers' arcs.
    pub taken: u64,
    /// What the arcs it was taken out of held (first event).
    pub held: u64,
    /// Continuations' cost (first event) taken out of the calls into the
    /// JIT functions that called them back.
    pub called_back: u64,
    /// What those calls held (first event).
    pub called_back_held: u64,
    /// Continuations' cost (first event) taken out of the calls between
    /// recursion levels of the JIT function they resumed.
    pub between_levels: u64,
    /// What those calls held (first event).
    pub between_levels_held: u64,
    /// Continuations' cost left in arcs: no arc from the resumed function
    /// to the one that called it back.
    pub unplaced: u64,
    /// Continuations' inclusive cost in all (first event).
    pub resumed: u64,
    /// Addresses inside JIT functions found to be entry points: calls
    /// there are calls, not continuations.
    pub entry_points: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stats with every count set from `n`, each field to its own value.
    fn counted(n: u64, ending: Ending) -> Stats {
        Stats {
            events: vec![format!("Ev{n}")],
            total: n,
            jit_cost: [(SymbolId(1), n + 1), (SymbolId(n as u32 + 10), n + 2)].into(),
            unnamed_cost: [(0x10, n + 3), (0x100 + n, n + 4)].into_iter().collect(),
            ambiguous: [SymbolId(n as u32)].into(),
            live_images: [format!("image{n}")].into(),
            folded_calls: n + 5,
            level_calls: n + 6,
            moved_cost: n + 7,
            reentry: Reentry {
                taken: n + 8,
                held: n + 9,
                unplaced: n + 10,
                resumed: n + 11,
                entry_points: n + 12,
                called_back: n + 18,
                called_back_held: n + 19,
                between_levels: n + 20,
                between_levels_held: n + 21,
            },
            epoch_parts_seen: n + 13,
            has_instr: n == 1,
            has_line: n == 2,
            parts: n + 14,
            unknown_lines: n + 15,
            ending,
            reads: vec![Reading::First],
            read_back: ReadBack {
                times: n + 16,
                bytes: n + 17,
            },
        }
    }

    #[test]
    fn merging_two_profiles_adds_every_count() {
        let (a, b) = (100, 1000);
        let mut all = counted(a, Ending::Complete);
        all.merge(&counted(b, Ending::NoTotals));
        assert_eq!(all.events, ["Ev100"], "the first profile's events");
        assert_eq!(all.total, a + b);
        let jit: Vec<_> = all.jit_cost.into_iter().collect();
        let ids = [SymbolId(1), SymbolId(110), SymbolId(1010)];
        assert_eq!(jit, [(ids[0], a + b + 2), (ids[1], a + 2), (ids[2], b + 2)]);
        let mut unnamed: Vec<_> = all.unnamed_cost.into_iter().collect();
        unnamed.sort();
        assert_eq!(unnamed, [(0x10, a + b + 6), (0x164, a + 4), (0x4e8, b + 4)]);
        assert_eq!(all.ambiguous, [SymbolId(100), SymbolId(1000)].into());
        assert_eq!(all.live_images.len(), 2);
        let sums = [
            all.folded_calls,
            all.level_calls,
            all.moved_cost,
            all.reentry.taken,
            all.reentry.held,
            all.reentry.unplaced,
            all.reentry.resumed,
            all.reentry.entry_points,
            all.epoch_parts_seen,
            all.parts,
            all.unknown_lines,
            all.read_back.times,
            all.read_back.bytes,
            all.reentry.called_back,
            all.reentry.called_back_held,
            all.reentry.between_levels,
            all.reentry.between_levels_held,
        ];
        let each = |k: u64| a + k + b + k;
        assert_eq!(
            sums,
            [5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21].map(each)
        );
        assert_eq!((all.has_instr, all.has_line), (false, false));
        assert_eq!(
            all.ending,
            Ending::NoTotals,
            "the first that is not complete"
        );
        assert_eq!(all.reads.len(), 2);
        let mut lined = counted(2, Ending::CutLine);
        lined.merge(&counted(1, Ending::NoTotals));
        assert_eq!((lined.has_instr, lined.has_line), (true, true));
        assert_eq!(lined.ending, Ending::CutLine);
    }

    #[test]
    fn counts_under_another_tables_ids_keep_the_rest() {
        let ids = [(SymbolId(1), SymbolId(7)), (SymbolId(100), SymbolId(8))].into();
        let moved = counted(100, Ending::Complete).with_ids(&ids);
        let jit: Vec<_> = moved.jit_cost.iter().map(|(&k, &v)| (k, v)).collect();
        assert_eq!(
            jit,
            [(SymbolId(7), 101)],
            "symbol 110 is not in the other table"
        );
        assert_eq!(moved.ambiguous, [SymbolId(8)].into());
        assert_eq!(
            (moved.total, moved.folded_calls, moved.unnamed_total()),
            (100, 105, 207)
        );
    }
}
