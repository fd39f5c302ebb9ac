//! The summary's lines on what the rewrite moved, folded, kept as calls
//! and took out of arcs that counted a continuation twice.

use std::fmt::Write as _;

use super::{group, percent, share_of};
use crate::callgrind::Stats;

/// Cost moved to the function whose code it is, and calls folded or kept.
pub(super) fn calls(s: &mut String, all: &Stats, event: &str) {
    if all.moved_cost > 0 {
        let _ = writeln!(
            s,
            "moved to the JIT function whose code it is (entered by a jump, charged by callgrind to the jumper): {} of {} ({})",
            group(all.moved_cost),
            event,
            percent(all.moved_cost, all.total)
        );
    }
    if all.folded_calls > 0 {
        let _ = writeln!(
            s,
            "calls into the middle of a JIT function (not new activations) folded into self cost: {}",
            all.folded_calls
        );
    }
    if all.level_calls > 0 {
        let _ = writeln!(
            s,
            "calls into the middle of a JIT function from another of its recursion levels kept as calls between the levels (so each level holds what its callers recorded): {}",
            all.level_calls
        );
    }
    if all.reentry.entry_points > 0 {
        let _ = writeln!(
            s,
            "entry points inside JIT functions (no call of the function returns there, as HotSpot's verified entries): {}; calls to them kept as calls",
            all.reentry.entry_points
        );
    }
}

/// Continuations' cost taken out of the arcs that counted it twice.
pub(super) fn reentry(s: &mut String, all: &Stats, event: &str) {
    if all.reentry.taken > 0 {
        let share = share_of(all.reentry.taken, all.reentry.held, event);
        let _ = writeln!(
            s,
            "re-entry: cost of continuations (a JIT function resumed by a call into its middle) taken out of the calls they return from, which counted it twice: {share} those calls held ({})",
            percent(all.reentry.taken, all.reentry.held)
        );
    }
    if all.reentry.called_back > 0 {
        let (back, held) = (all.reentry.called_back, all.reentry.called_back_held);
        let _ = writeln!(
            s,
            "re-entry: continuations called back by JIT code through builtins (as V8's functions return) also taken out of the calls into that code: {} those calls held ({})",
            share_of(back, held, event),
            percent(back, held)
        );
    }
    if all.reentry.between_levels > 0 {
        let (back, held) = (all.reentry.between_levels, all.reentry.between_levels_held);
        let _ = writeln!(
            s,
            "re-entry: continuations written at another recursion level than the one they resumed also taken out of the calls between the levels: {} those calls held ({})",
            share_of(back, held, event),
            percent(back, held)
        );
    }
    if all.reentry.unplaced > 0 {
        let share = share_of(all.reentry.unplaced, all.reentry.resumed, event);
        let _ = writeln!(
            s,
            "note: re-entry: continuations with no call of their function to return from stay where callgrind counted them: {share} the folded calls held ({})",
            percent(all.reentry.unplaced, all.reentry.resumed)
        );
    }
}
