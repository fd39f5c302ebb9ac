//! Which symbol files name which profile. A profile is named only from
//! the symbol files of its own process: its `pid:` line against the
//! jitdump header's pid and the perf map's file name. Where several files
//! could be a process's (pids are reused: containers, CI), the evidence
//! the files carry decides, and the choice is reported with its reason.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::{bail, Result};

use super::{discover, Run};
use crate::input::{Input, Kind};

/// How much later than its profile a symbol file may have been written
/// (clocks of file times are coarse).
const SLACK: Duration = Duration::from_secs(2);

/// The symbol files one process is named from, and why.
#[derive(Debug, Default)]
pub struct Provenance {
    /// The files used.
    pub used: Vec<Input>,
    /// Each file considered, and why it was used or set aside.
    pub notes: Vec<(PathBuf, String)>,
    /// Every place looked at where nothing was given.
    pub looked: Vec<PathBuf>,
}

/// Who may have written a symbol file that annotate finds by itself.
#[derive(Clone, Copy, Debug, Default)]
pub struct Trust {
    /// The owner of the profiles (their process wrote its files as them).
    pub profile_owner: Option<u32>,
    /// `--any-owner`: use files of any owner, writable by anyone.
    pub any_owner: bool,
}

impl Trust {
    /// Why a found file cannot be trusted to be the run's, if it cannot:
    /// another user (not the caller, root or the profile's owner) owns
    /// it, or anyone may write it. In a shared folder such as /tmp, any
    /// user can plant a file under a pid's name.
    fn refuses(&self, owner: u32, mode: u32) -> Option<String> {
        if self.any_owner {
            return None;
        }
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        if owner != me && owner != 0 && Some(owner) != self.profile_owner {
            return Some(format!(
                "owned by {}, not by you or the profile's owner (--any-owner uses it)",
                user_name(owner)
            ));
        }
        (mode & 0o002 != 0).then(|| "anyone may write it (--any-owner uses it anyway)".to_string())
    }
}

/// The login name of `uid`, else the number.
pub fn user_name(uid: u32) -> String {
    // SAFETY: passwd is plain C data (integers and pointers), for which
    // all zero bytes is a valid value.
    let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 4096];
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: getpwuid_r writes only into `entry` and `buf`, whose sizes
    // it is told, and sets `found` to `&entry` or null.
    let rc = unsafe { libc::getpwuid_r(uid, &mut entry, buf.as_mut_ptr(), buf.len(), &mut found) };
    if rc != 0 || found.is_null() || entry.pw_name.is_null() {
        return format!("uid {uid}");
    }
    // SAFETY: on success pw_name points to a NUL-terminated string in `buf`.
    let name = unsafe { std::ffi::CStr::from_ptr(entry.pw_name) };
    name.to_string_lossy().into_owned()
}

/// Whose a file is, for its note (a spooled copy of a pipe is nobody's).
fn owner_note(input: &Input) -> String {
    use std::os::unix::fs::MetadataExt;
    match input.file.metadata() {
        Ok(meta) if !input.is_spooled() => format!(", owned by {}", user_name(meta.uid())),
        _ => String::new(),
    }
}

/// What a file's own content and name say about the process that wrote it.
#[derive(Clone, Copy, Debug)]
struct Evidence {
    /// The pid it names: the jitdump header's, or the perf map's file name's.
    pid: Option<u32>,
    /// When it was created (the jitdump header's time, when it is
    /// CLOCK_MONOTONIC as perf requires), else when it was last written.
    created: Option<SystemTime>,
    /// When it was last written.
    modified: Option<SystemTime>,
}

impl Evidence {
    fn of(input: &Input) -> Evidence {
        let modified = input.file.metadata().and_then(|m| m.modified()).ok();
        let (pid, created) = match input.kind {
            Kind::Jitdump => jitdump_evidence(input),
            _ => (perf_map_pid(&input.path), None),
        };
        // A file cannot have been written before it was created: where the
        // two disagree (a copied or touched file), the earlier counts.
        let created = match (created, modified) {
            (Some(c), Some(m)) => Some(c.min(m)),
            (c, m) => c.or(m),
        };
        Evidence {
            pid,
            created,
            modified,
        }
    }
}

/// The header's pid and creation time of a jitdump.
fn jitdump_evidence(input: &Input) -> (Option<u32>, Option<SystemTime>) {
    let mut head = vec![0; 4096];
    let n = std::os::unix::fs::FileExt::read_at(&input.file, &mut head, 0).unwrap_or(0);
    let Ok(header) = jitdump::read_header(&head[..n]) else {
        return (None, None);
    };
    let monotonic = header.flags & jitdump::format::FLAG_ARCH_TIMESTAMP == 0;
    let created = monotonic
        .then(|| wall_time_of_monotonic(header.timestamp))
        .flatten();
    (Some(header.pid), created)
}

/// A CLOCK_MONOTONIC time in nanoseconds as wall-clock time (this boot).
fn wall_time_of_monotonic(nanos: u64) -> Option<SystemTime> {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given.
    if unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) } != 0 {
        return None;
    }
    let now_mono = Duration::new(now.tv_sec as u64, now.tv_nsec as u32);
    let ago = now_mono.checked_sub(Duration::from_nanos(nanos))?;
    SystemTime::now().checked_sub(ago)
}

/// The pid in a perf map's name (`perf-PID.map`).
fn perf_map_pid(path: &Path) -> Option<u32> {
    let name = path.file_name()?.to_str()?;
    name.strip_prefix("perf-")?
        .strip_suffix(".map")?
        .parse()
        .ok()
}

fn show(path: &Path) -> String {
    format!("'{}'", path.display())
}

/// Assigns the symbol files the user gave to the runs `runs`. A file
/// naming another process is refused unless `any_pid`; where two runs
/// share its pid, it goes to the run whose folder it is in.
pub fn given(runs: &[Run], sources: Vec<Input>, any_pid: bool) -> Result<Vec<Provenance>> {
    let pids: Vec<Option<u32>> = runs.iter().map(|r| r.pid).collect();
    let pids = &pids[..];
    let mut result: Vec<Provenance> = pids.iter().map(|_| Provenance::default()).collect();
    for source in sources {
        let evidence = Evidence::of(&source);
        let targets = targets(pids, &source.path, evidence.pid, any_pid)?;
        let targets = same_folder(runs, &source, targets)?;
        for &i in &targets {
            let why = match (evidence.pid, pids[i]) {
                (Some(a), Some(b)) if a == b => format!("written by pid {a}"),
                (Some(a), Some(b)) => format!("written by pid {a}, used for pid {b} (--any-pid)"),
                (None, _) => "names no pid; the only process".to_string(),
                (Some(a), None) => format!("written by pid {a}; the profile names no pid"),
            };
            let owner = owner_note(&source);
            result[i]
                .notes
                .push((source.path.clone(), format!("given, {why}{owner}")));
        }
        if let Some((&last, rest)) = targets.split_last() {
            for &i in rest {
                result[i].used.push(source.try_clone()?);
            }
            result[last].used.push(source);
        }
    }
    Ok(result)
}

/// The processes a given file is for (indices into `pids`).
fn targets(
    pids: &[Option<u32>],
    path: &Path,
    pid: Option<u32>,
    any_pid: bool,
) -> Result<Vec<usize>> {
    let all: Vec<usize> = (0..pids.len()).collect();
    if any_pid {
        return Ok(all);
    }
    let matching: Vec<usize> = all
        .iter()
        .copied()
        .filter(|&i| pids[i].is_none() || pids[i] == pid)
        .collect();
    let named: Vec<u32> = pids.iter().flatten().copied().collect();
    match pid {
        Some(pid) if matching.is_empty() => bail!(
            "{} was written by pid {pid}, but the profiles are of pid {}: \
             it would give them another process's names (--any-pid uses it anyway)",
            show(path),
            join(&named)
        ),
        None if pids.len() > 1 => bail!(
            "{} names no pid (not perf-PID.map), and the profiles are of pids {}: \
             annotate one process at a time, or give --any-pid",
            show(path),
            join(&named)
        ),
        None => Ok(all),
        Some(_) => Ok(matching),
    }
}

/// Of `targets`, the runs that share a pid: only the one whose folder
/// holds the file (two runs are never named from one file).
fn same_folder(runs: &[Run], source: &Input, targets: Vec<usize>) -> Result<Vec<usize>> {
    let shared = |i: usize| {
        targets
            .iter()
            .filter(|&&j| runs[j].pid == runs[i].pid)
            .count()
            > 1
    };
    if !targets.iter().any(|&i| shared(i)) {
        return Ok(targets);
    }
    let folder = super::folder_of(&source.path);
    let beside = |i: usize| folder.is_some() && runs[i].folder == folder;
    let kept: Vec<usize> = targets
        .iter()
        .copied()
        .filter(|&i| !shared(i) || beside(i))
        .collect();
    if kept.iter().any(|&i| shared(i)) {
        return Ok(kept);
    }
    let pid = runs[targets[0]]
        .pid
        .map_or("none".to_string(), |p| p.to_string());
    bail!(
        "{} could be either of the runs of pid {pid} given: put each run's symbol files \
         beside its profiles, or annotate one run at a time",
        show(&source.path)
    )
}

fn join(pids: &[u32]) -> String {
    let pids: Vec<String> = pids.iter().map(u32::to_string).collect();
    pids.join(", ")
}

/// Finds the symbol files of process `pid` where runtimes put them, and
/// chooses among candidates: files written after the profile (`ended`)
/// or before the run (`started`) are set aside, as are jitdumps whose
/// header names another pid; of the rest, the newest jitdump and the
/// newest perf map are used.
pub fn discovered(
    pid: u32,
    beside: &Path,
    ended: Option<SystemTime>,
    started: Option<SystemTime>,
    trust: Trust,
) -> Provenance {
    let discovery = discover::sources_for(pid, beside);
    let mut provenance = Provenance {
        looked: discovery.looked,
        ..Provenance::default()
    };
    let mut candidates: Vec<(Input, Evidence)> = Vec::new();
    for path in discovery.found {
        let input = match Input::open(&path) {
            Ok(input) if matches!(input.kind, Kind::Jitdump | Kind::PerfMap) => input,
            found => {
                let why = unusable(found.ok().map(|i| i.kind));
                provenance.notes.push((path, format!("not used: {why}")));
                continue;
            }
        };
        let evidence = Evidence::of(&input);
        let refused = input.file.metadata().ok().and_then(|m| {
            use std::os::unix::fs::MetadataExt;
            trust.refuses(m.uid(), m.mode())
        });
        match refused.or_else(|| set_aside(pid, &evidence, ended, started)) {
            Some(why) => provenance.notes.push((path, format!("not used: {why}"))),
            None => candidates.push((input, evidence)),
        }
    }
    for kind in [Kind::Jitdump, Kind::PerfMap] {
        let (mut of_kind, rest): (Vec<_>, Vec<_>) =
            candidates.into_iter().partition(|c| c.0.kind == kind);
        candidates = rest;
        // The newest first; among equals, the first place looked.
        of_kind.sort_by_key(|c| std::cmp::Reverse(c.1.created));
        let count = of_kind.len();
        let mut files = of_kind.into_iter();
        if let Some((input, _)) = files.next() {
            let why = match count {
                1 => "the only candidate".to_string(),
                n => format!("the newest of {n} candidates"),
            };
            let owner = owner_note(&input);
            provenance
                .notes
                .push((input.path.clone(), format!("found, {why}{owner}")));
            provenance.used.push(input);
        }
        for (input, _) in files {
            let note = "not used: older than the file used".to_string();
            provenance.notes.push((input.path, note));
        }
    }
    provenance
}

/// Why a file found under a symbol file's name cannot be read as one
/// (`None`: it could not be opened or told apart).
fn unusable(kind: Option<Kind>) -> &'static str {
    match kind {
        Some(Kind::Empty) => "empty",
        Some(_) => "neither a jitdump nor a perf map",
        None => "not readable as a jitdump or perf map",
    }
}

/// Why a candidate cannot be process `pid`'s file of this run, if it cannot.
fn set_aside(
    pid: u32,
    evidence: &Evidence,
    ended: Option<SystemTime>,
    started: Option<SystemTime>,
) -> Option<String> {
    if let Some(other) = evidence.pid.filter(|&p| p != pid) {
        return Some(format!("its header names pid {other}"));
    }
    let modified = evidence.modified?;
    if let Some(ended) = ended.filter(|&e| modified > e + SLACK) {
        let after = modified.duration_since(ended).unwrap_or_default();
        return Some(format!("written {} after the profile", span(after)));
    }
    if let Some(started) = started.filter(|&s| modified < s) {
        let before = started.duration_since(modified).unwrap_or_default();
        return Some(format!(
            "last written {} before the run started",
            span(before)
        ));
    }
    None
}

/// A duration in the largest whole unit.
fn span(d: Duration) -> String {
    match d.as_secs() {
        s if s >= 86_400 => format!("{} d", s / 86_400),
        s if s >= 3_600 => format!("{} h", s / 3_600),
        s if s >= 60 => format!("{} min", s / 60),
        s => format!("{s} s"),
    }
}

#[cfg(test)]
mod tests;
