//! The profiles grouped by the run of the program that wrote them, and
//! each run's symbol files found where runtimes put them.

use std::path::{Path, PathBuf};

use super::provenance::{self, Provenance};
use super::Request;
use crate::input::{self, Input};

/// One run of a program: the pid of its profiles' `pid:` line and the
/// folder they are in. Containers and CI jobs give a program the same pid
/// on every run, so profiles of one pid in two folders are two runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    /// The `pid:` line's pid.
    pub pid: Option<u32>,
    /// The profiles' folder (`None`: read from a pipe).
    pub folder: Option<PathBuf>,
}

impl Run {
    fn of(profile: &Input) -> Run {
        let folder = (!profile.is_spooled())
            .then(|| folder_of(&profile.path))
            .flatten();
        Run {
            pid: input::profile_pid(&profile.file),
            folder,
        }
    }
}

/// The real folder holding `path`.
pub(super) fn folder_of(path: &Path) -> Option<PathBuf> {
    let absolute = std::path::absolute(path).ok()?;
    absolute.parent()?.canonicalize().ok()
}

/// One run's profiles.
pub(super) struct Group {
    pub run: Run,
    pub profiles: Vec<Input>,
}

/// The profiles grouped by run, in the order given.
pub(super) fn by_run(profiles: Vec<Input>) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    for profile in profiles {
        let run = Run::of(&profile);
        match groups.iter_mut().find(|g| g.run == run) {
            Some(group) => group.profiles.push(profile),
            None => groups.push(Group {
                run,
                profiles: vec![profile],
            }),
        }
    }
    groups
}

/// The symbol files found for one run's profiles.
pub(super) fn discover_for(group: &Group, request: &Request) -> Provenance {
    match group.run.pid {
        Some(pid) => discover(pid, &group.profiles, request),
        None => Provenance::default(),
    }
}

/// The symbol files of process `pid` found where runtimes put them, for
/// `files` (its profiles, or a log): beside the first, written before the
/// last was.
pub(super) fn discover(pid: u32, profiles: &[Input], request: &Request) -> Provenance {
    let first = &profiles[0];
    let beside = if first.is_spooled() {
        Path::new("-")
    } else {
        &first.path
    };
    let ended = profiles
        .iter()
        .filter_map(|p| p.file.metadata().and_then(|m| m.modified()).ok())
        .max();
    let trust = provenance::Trust {
        profile_owner: (!first.is_spooled())
            .then(|| first.file.metadata().ok())
            .flatten()
            .map(|m| std::os::unix::fs::MetadataExt::uid(&m)),
        any_owner: request.any_owner,
    };
    provenance::discovered(pid, beside, ended, request.started, trust)
}
