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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_of_one_pid_in_two_folders_are_two_runs() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        let profile = |folder: &str, name: &str, pid: u32| {
            let dir = root.join(folder);
            std::fs::create_dir_all(&dir).unwrap();
            let path = dir.join(name);
            std::fs::write(
                &path,
                format!("# callgrind format\npid: {pid}\nevents: Ir\n"),
            )
            .unwrap();
            Input::open(&path).unwrap()
        };
        let groups = by_run(vec![
            profile("a", "callgrind.out.7", 7),
            profile("b", "callgrind.out.7", 7),
            profile("a", "callgrind.out.8", 8),
            profile("a", "callgrind.out.7.1", 7),
        ]);
        let runs: Vec<(Option<u32>, PathBuf, Vec<String>)> = groups
            .iter()
            .map(|g| {
                let names = g
                    .profiles
                    .iter()
                    .map(|p| p.path.file_name().unwrap().to_string_lossy().into_owned());
                (g.run.pid, g.run.folder.clone().unwrap(), names.collect())
            })
            .collect();
        let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            runs,
            [
                (
                    Some(7),
                    root.join("a"),
                    names(&["callgrind.out.7", "callgrind.out.7.1"])
                ),
                (Some(7), root.join("b"), names(&["callgrind.out.7"])),
                (Some(8), root.join("a"), names(&["callgrind.out.8"])),
            ]
        );
        // The real folder, however the path was spelled.
        let spelled = root.join("a/../b/callgrind.out.7");
        assert_eq!(folder_of(&spelled), Some(root.join("b")));
        assert_eq!(folder_of(&root.join("none/x")), None);
    }
}
