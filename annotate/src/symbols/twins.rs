//! Ranges a process's perf map and jitdump both give: one function.

use super::{decoded, Entry, SourceKind, SymbolTable};

/// A range a perf map gives exactly as a jitdump of the same process
/// does is the same code, written twice by a runtime that writes both
/// (Erlang spells its names differently in each): the jitdump's entry,
/// with code and lines, is kept; the map's would be taken for code
/// loaded over code.
pub(super) fn drop_map_twins(table: &mut SymbolTable) {
    let kind = |e: &Entry| table.sources[e.source as usize].kind;
    let has = |k| table.sources.iter().any(|s| s.kind == k);
    // Without both kinds there are no twins, and no set to build (a set
    // of every range of a large jitdump was a third of indexing it).
    if !has(SourceKind::Jitdump) || !has(SourceKind::PerfMap) {
        return;
    }
    let in_jitdumps: rustc_hash::FxHashSet<(u64, u64)> = table
        .entries
        .iter()
        .filter(|e| kind(e) == SourceKind::Jitdump)
        .map(|e| (e.start, e.size))
        .collect();
    if in_jitdumps.is_empty() {
        return;
    }
    let before = table.entries.len();
    let twins: Vec<bool> = table
        .entries
        .iter()
        .map(|e| kind(e) == SourceKind::PerfMap && in_jitdumps.contains(&(e.start, e.size)))
        .collect();
    let mut counts: std::collections::BTreeMap<usize, usize> = Default::default();
    for (e, _) in table.entries.iter().zip(&twins).filter(|(_, &t)| t) {
        *counts.entry(e.source as usize).or_default() += 1;
    }
    table.report.map_twins = counts.into_iter().collect();
    let mut twin = twins.into_iter();
    table.entries.retain(|_| !twin.next().unwrap_or(false));
    if table.entries.len() != before {
        // Numbers changed: nothing decoded under the old ones is kept.
        table.decoded = decoded::Decoded::default();
        table.decoded.grow(table.entries.len());
    }
}
