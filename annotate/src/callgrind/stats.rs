//! What a rewrite did, for the summary on stderr.

use std::collections::{BTreeMap, BTreeSet, HashMap};

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
    pub unnamed_cost: HashMap<u64, u64>,
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
    /// Continuations' cost left in arcs: no arc from the resumed function
    /// to the one that called it back.
    pub unplaced: u64,
    /// Continuations' inclusive cost in all (first event).
    pub resumed: u64,
    /// Addresses inside JIT functions found to be entry points: calls
    /// there are calls, not continuations.
    pub entry_points: u64,
}
