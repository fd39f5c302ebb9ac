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

/// What the re-entry lines say, before the share.
const TAKEN: &str = "re-entry: cost of continuations (a JIT function resumed by a call into its middle) taken out of the calls they return from, which counted it twice";
const CALLED_BACK: &str = "re-entry: continuations called back by JIT code through builtins (as V8's functions return) also taken out of the calls into that code";
const BETWEEN_LEVELS: &str = "re-entry: continuations written at another recursion level than the one they resumed also taken out of the calls between the levels";
const UNPLACED: &str = "note: re-entry: continuations with no call of their function to return from stay where callgrind counted them";

/// Continuations' cost taken out of the arcs that counted it twice, and
/// what no arc could give back.
pub(super) fn reentry(s: &mut String, all: &Stats, event: &str) {
    let r = &all.reentry;
    let held = "those calls held";
    share_line(s, event, TAKEN, (r.taken, r.held), held);
    share_line(
        s,
        event,
        CALLED_BACK,
        (r.called_back, r.called_back_held),
        held,
    );
    share_line(
        s,
        event,
        BETWEEN_LEVELS,
        (r.between_levels, r.between_levels_held),
        held,
    );
    share_line(
        s,
        event,
        UNPLACED,
        (r.unplaced, r.resumed),
        "the folded calls held",
    );
}

/// `what: 20 of the 80 of Ir those calls held (25.00%)`, where `part`
/// is more than nothing.
fn share_line(s: &mut String, event: &str, what: &str, (part, whole): (u64, u64), of: &str) {
    if part > 0 {
        let share = share_of(part, whole, event);
        let _ = writeln!(s, "{what}: {share} {of} ({})", percent(part, whole));
    }
}
