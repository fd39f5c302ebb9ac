//! Address reuse over time: a profile part dumped where jit-client ended
//! an epoch (see `jit_client::epochs`) is named with the code live in that
//! epoch; the run's last part, with the code live at its end.

use std::path::Path;

use anyhow::{Context, Result};

use super::{rewrite_one, table_of, Epoch, Request, Rewritten};
use crate::callgrind::Reading;
use crate::input::{self, Input};
use crate::symbols::{SymbolTable, SymbolTableBuilder};

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
///
/// Which of the two a file is shows only as it is read (its second
/// part), so it is told first from its head and name: a combined file
/// starts with a part whose epoch ended, and callgrind names a dump of
/// its own `BASE.N` (`BASE.N-TT` per thread), where a combined file is
/// `BASE` (by default `callgrind.out.PID`). A file that turns out to be
/// the other is read again with the other table.
pub(super) fn rewrite(
    request: &Request,
    profile: &Input,
    end: Vec<(String, u64)>,
    whole: &SymbolTable,
    indexed: &SymbolTableBuilder,
    protected: &[&Path],
) -> Result<Rewritten> {
    let own_epoch = || {
        let cmd = input::profile_command(&profile.file);
        let indexed = indexed.fork().context("cannot read the symbol files")?;
        let epoch = table_of(indexed, end.clone(), cmd.as_deref());
        let rewritten = rewrite_one(request, profile, &epoch, protected)?;
        anyhow::Ok((rewritten, epoch))
    };
    let pid = input::profile_pid(&profile.file);
    // Its own dump's description, read by `ends` (the last part's places
    // are all at u64::MAX).
    let starts_an_epoch = end.iter().all(|&(_, at)| at != u64::MAX);
    if starts_an_epoch && !named_as_one_dump(&profile.path, pid) {
        let named = rewrite_one(request, profile, whole, protected)?;
        if holds_epochs(&named) {
            return Ok(combined(named, Vec::new()));
        }
        let (rewritten, epoch) = own_epoch()?;
        let mut own = own(rewritten, whole, &epoch);
        let later = again(&own.stats.reads, Reading::OneEpoch);
        own.stats.reads = named.stats.reads.iter().copied().chain(later).collect();
        return Ok(own);
    }
    let (rewritten, epoch) = own_epoch()?;
    if holds_epochs(&rewritten) {
        let earlier = rewritten.stats.reads.clone();
        let named = rewrite_one(request, profile, whole, protected)?;
        return Ok(combined(named, earlier));
    }
    Ok(own(rewritten, whole, &epoch))
}

/// True where a rewrite met several parts, epochs ended among them.
fn holds_epochs(rewritten: &Rewritten) -> bool {
    rewritten.stats.parts > 1 && rewritten.stats.epoch_parts_seen > 0
}

/// A file of several epochs named with every symbol, after the readings
/// `earlier` (which took it for one epoch).
fn combined(mut named: Rewritten, earlier: Vec<Reading>) -> Rewritten {
    named.epoch = Epoch::Combined;
    let reads = match earlier.is_empty() {
        true => named.stats.reads.clone(),
        false => again(&named.stats.reads, Reading::CombinedEpochs).collect(),
    };
    named.stats.reads = earlier.into_iter().chain(reads).collect();
    named
}

/// A file of one epoch named with its symbols, its counts given the ids
/// of `whole`.
fn own(mut rewritten: Rewritten, whole: &SymbolTable, epoch: &SymbolTable) -> Rewritten {
    let ids = whole.ids_of(epoch, rewritten.stats.jit_cost.keys().copied());
    rewritten.stats = rewritten.stats.with_ids(&ids);
    rewritten.epoch = Epoch::Own;
    rewritten
}

/// `reads` of a rewrite done again, its first reading said to be for `why`.
fn again(reads: &[Reading], why: Reading) -> impl Iterator<Item = Reading> + '_ {
    let mut first = Some(why);
    reads.iter().map(move |&r| match (r, first.take()) {
        (Reading::First | Reading::Plan, Some(why)) => why,
        (r, _) => r,
    })
}

/// True for a name callgrind gives a dump written in a file of its own:
/// one ending `.N` or `.N-TT` (its number, and the thread's), where `N`
/// is not the run's `pid` (`callgrind.out.PID` holds the last dump, or
/// all of them).
fn named_as_one_dump(path: &Path, pid: Option<u32>) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let without_thread = match name.rsplit_once('-') {
        Some((head, thread)) if digits(thread) => head,
        _ => &name,
    };
    let number = without_thread.rsplit_once('.').map(|(_, n)| n);
    number.is_some_and(|n| digits(n) && n.parse().ok() != pid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dump_of_its_own_is_told_by_its_number() {
        let one = |name: &str| named_as_one_dump(Path::new(name), Some(4242));
        for name in [
            "callgrind.out.4242.1",
            "/x/callgrind.out.4242.12-02",
            "prof.out.3",
        ] {
            assert!(one(name), "{name}");
        }
        let all = [
            "callgrind.out.4242",
            "callgrind.out.4242-01",
            "prof.out",
            "a.b-c",
            "x.",
            // A thread part that is not a number is no thread part.
            "callgrind.out.4242.1-x",
        ];
        for name in all {
            assert!(!one(name), "{name}");
        }
        assert!(named_as_one_dump(Path::new("callgrind.out.4242"), None));
    }

    /// A profile of `parts` parts, `epochs` of them ending an epoch, read
    /// as `reads`.
    fn rewritten(parts: u64, epochs: u64, reads: &[Reading]) -> Rewritten {
        let mut stats = crate::callgrind::Stats {
            parts,
            epoch_parts_seen: epochs,
            ..Default::default()
        };
        stats.reads = reads.to_vec();
        Rewritten {
            input: "in".into(),
            output: "out".into(),
            stats,
            code_image: None,
            epoch: Epoch::None,
        }
    }

    #[test]
    fn a_file_holds_epochs_where_several_parts_end_one() {
        for (parts, epochs, want) in [(2, 1, true), (3, 2, true), (1, 1, false), (2, 0, false)] {
            assert_eq!(
                holds_epochs(&rewritten(parts, epochs, &[])),
                want,
                "{parts} {epochs}"
            );
        }
    }

    #[test]
    fn a_file_read_again_says_why_at_its_first_reading_there() {
        use Reading::*;
        let again = |reads: &[Reading], why| again(reads, why).collect::<Vec<_>>();
        assert_eq!(again(&[First, Reentry], OneEpoch), [OneEpoch, Reentry]);
        assert_eq!(
            again(&[Plan, Write], CombinedEpochs),
            [CombinedEpochs, Write]
        );
        assert_eq!(again(&[First], OneEpoch), [OneEpoch]);
        // Taken for one epoch, then read with every epoch's symbols.
        let named = combined(rewritten(2, 1, &[First, Reentry]), vec![First]);
        assert_eq!(named.epoch, Epoch::Combined);
        assert_eq!(named.stats.reads, [First, CombinedEpochs, Reentry]);
        // Read once, with every epoch's symbols, as its name foretold.
        let once = combined(rewritten(2, 1, &[First]), Vec::new());
        assert_eq!(
            (once.epoch, once.stats.reads),
            (Epoch::Combined, vec![First])
        );
    }

    #[test]
    fn each_profile_s_epoch_ends_where_its_dump_says_else_at_every_file_s_end() {
        let dir = tempfile::tempdir().unwrap();
        let profile = |name: &str, desc: Option<&str>| {
            let path = dir.path().join(name);
            let desc = desc.map_or(String::new(), |d| {
                format!(
                    "desc: Trigger: Client Request: {} {d}\n",
                    jit_client::epochs::DESC_PREFIX
                )
            });
            std::fs::write(
                &path,
                format!("# callgrind format\nversion: 1\n{desc}events: Ir\n"),
            )
            .unwrap();
            Input::open(&path).unwrap()
        };
        let first = profile("callgrind.out.7.1", Some("jit-7.dump@400 perf-7.map@30"));
        let second = profile("callgrind.out.7.2", Some("jit-7.dump@900"));
        let last = profile("callgrind.out.7", None);
        let at = |file: &str, at| (file.to_string(), at);
        let found = ends(&[first, second, last]);
        assert_eq!(
            found[..2],
            [
                Some(vec![at("jit-7.dump", 400), at("perf-7.map", 30)]),
                Some(vec![at("jit-7.dump", 900)]),
            ]
        );
        // The last part: every file named, to its end.
        let last: std::collections::BTreeSet<_> = found[2].iter().flatten().cloned().collect();
        let every = [at("jit-7.dump", u64::MAX), at("perf-7.map", u64::MAX)];
        assert_eq!(last, every.into());
        let plain = profile("callgrind.out.8", None);
        assert_eq!(ends(&[plain]), [None]);
    }
}
