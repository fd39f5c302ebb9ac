//! Address reuse over time: a profile part dumped where jit-client ended
//! an epoch (see `jit_client::epochs`) is named with the code live in that
//! epoch; the run's last part, with the code live at its end.

use std::path::Path;

use anyhow::Result;

use super::{load_symbols, rewrite_one, Epoch, Request, Rewritten};
use crate::callgrind::Reading;
use crate::input::{self, Input};
use crate::symbols::SymbolTable;

/// Where each profile's epoch ends in the symbol files: its own dump's
/// description, or, for a profile without one in a run with epochs (the
/// last part), the end of every file named; `None` without epochs.
pub(super) fn ends(profiles: &[Input]) -> Vec<Option<Vec<(String, u64)>>> {
    let ends: Vec<_> = profiles.iter().map(|p| input::epoch_end(&p.file)).collect();
    let files = ends.iter().flatten().flatten();
    let last: Vec<(String, u64)> = files.map(|(file, _)| (file.clone(), u64::MAX)).collect();
    let last = (!last.is_empty()).then_some(last);
    ends.into_iter()
        .map(|end| end.or_else(|| last.clone()))
        .collect()
}

/// Rewrites `profile` with the symbols of its epoch (ending at `end`),
/// its counts given the ids of `whole`, the table of every symbol. A file
/// holding several epochs (`--combine-dumps`) cannot be named by one
/// epoch's table: it is named with `whole`, and its counts say so.
pub(super) fn rewrite(
    request: &Request,
    profile: &Input,
    end: Vec<(String, u64)>,
    whole: &SymbolTable,
    sources: &[Input],
    protected: &[&Path],
) -> Result<Rewritten> {
    let cmd = input::profile_command(&profile.file);
    let epoch = load_symbols(sources, request, end, cmd.as_deref())?;
    let mut rewritten = rewrite_one(request, profile, &epoch, protected)?;
    if rewritten.stats.parts > 1 && rewritten.stats.epoch_parts_seen > 0 {
        let mut named = rewrite_one(request, profile, whole, protected)?;
        named.epoch = Epoch::Combined;
        let again = named.stats.reads.iter().map(|&r| match r {
            Reading::First => Reading::CombinedEpochs,
            r => r,
        });
        named.stats.reads = rewritten.stats.reads.iter().copied().chain(again).collect();
        return Ok(named);
    }
    let ids = whole.ids_of(&epoch, rewritten.stats.jit_cost.keys().copied());
    rewritten.stats = rewritten.stats.with_ids(&ids);
    rewritten.epoch = Epoch::Own;
    Ok(rewritten)
}
