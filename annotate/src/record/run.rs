//! Running valgrind for `record`: the command started (with the GDB JIT
//! preload where there is one), its processes watched and signals
//! forwarded until it and what it started are done, and the outputs it
//! wrote found.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::time::SystemTime;

use anyhow::{Context, Result};

use super::{descendants, gdb_jit, signals, OutFile, Writes, OUT_FILE};

/// What a valgrind run left.
pub(super) struct Ran {
    /// The program's exit status, or 128 + the signal that ended valgrind.
    pub exit_code: i32,
    /// The signal that stopped the run, if one did.
    pub stopped_by: Option<String>,
    /// When it started, by the clock of the outputs' file system.
    pub started: SystemTime,
    /// The outputs of the template written by this run's processes.
    pub profiles: Vec<PathBuf>,
}

/// Runs `cmd` (valgrind) to its end and its processes' ends; `preload`:
/// the GDB JIT library put in (`Some(None)`: looked for and not found).
/// Fails where valgrind cannot start, or wrote no output.
pub(super) fn valgrind(
    mut cmd: Command,
    preload: Option<Option<PathBuf>>,
    template: &OutFile,
    writes: &Writes,
) -> Result<Ran> {
    if let Some(Some(library)) = &preload {
        gdb_jit::preload(&mut cmd, library);
    }
    let started = file_clock_now(&template.dir);
    descendants::adopt_orphans();
    let before = descendants::children()
        .into_iter()
        .map(|(pid, _)| pid)
        .collect::<Vec<_>>();
    let mut child = cmd.spawn().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            anyhow::anyhow!("valgrind not found: install it (Debian: apt-get install valgrind)")
        }
        _ => anyhow::anyhow!("cannot start valgrind: {e}"),
    })?;
    if let Some(None) = preload {
        // Said once valgrind has started: without it, that is the one line.
        eprintln!("callgrind-jit: {}", gdb_jit::missing());
    }
    let watch = descendants::Watch::start(child.id(), before.clone());
    let forwarding = signals::Forwarding::start(child.id());
    let status = child.wait().context("waiting for valgrind")?;
    descendants::wait_for_rest(&forwarding, &before);
    let ours = watch.finish();
    let stopped_by = forwarding.received().or(status.signal()).map(signals::name);
    drop(forwarding);
    let exit_code = exit_code(status);
    let mut profiles = written_since(template, started)?;
    if let Some(ours) = &ours {
        // A profile's name ends with a pid or a part number: not read.
        let by_name = writes.option != OUT_FILE;
        profiles.retain(|p| output_pid(p, by_name).is_none_or(|pid| ours.contains(&pid)));
    }
    if profiles.is_empty() {
        anyhow::bail!(
            "valgrind wrote no profile or log {} (exit status {exit_code})",
            template.display()
        );
    }
    Ok(Ran {
        exit_code,
        stopped_by,
        started,
        profiles,
    })
}

/// 128 + signal for a valgrind ended by a signal (it re-raises the
/// program's fatal signal), else its exit code.
pub(super) fn exit_code(status: ExitStatus) -> i32 {
    status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}

/// The time a file written now in `dir` gets. File times come from the
/// kernel's coarse clock (milliseconds behind the real one) at the file
/// system's granularity, so the time is read off a file made there.
pub(super) fn file_clock_now(dir: &Path) -> SystemTime {
    let marker = dir.join(format!(".callgrind-jit-record.{}", std::process::id()));
    let stamped = std::fs::File::options()
        .write(true)
        .create_new(true)
        .open(&marker)
        .and_then(|f| f.metadata()?.modified());
    let _ = std::fs::remove_file(&marker);
    // Without a marker (a folder we cannot write to), the clock itself.
    stamped.unwrap_or_else(|_| SystemTime::now())
}

/// The template's profiles written since `started`: a file of the same
/// name left by an earlier run (an earlier process with the same pid, or
/// a fixed `--callgrind-out-file`) is not this run's.
pub(super) fn written_since(template: &OutFile, started: SystemTime) -> Result<Vec<PathBuf>> {
    let all = template
        .existing()
        .with_context(|| format!("cannot list '{}'", template.dir.display()))?;
    Ok(all
        .into_iter()
        .filter(|p| {
            std::fs::metadata(p)
                .and_then(|m| m.modified())
                .is_ok_and(|t| t >= started)
        })
        .collect())
}

/// The process an output is of, to leave another run's alone: a
/// profile's `pid:`, a log's first `==PID==`, else (`by_name`) the number
/// ending the file name (massif's and DHAT's `.PID`). One that names none
/// is taken by its time alone.
pub(super) fn output_pid(path: &Path, by_name: bool) -> Option<u32> {
    let file = std::fs::File::open(path).ok()?;
    let first_line = || {
        // A log's first line is short: a file of no lines is not read whole.
        let mut line = String::new();
        let head = std::io::Read::take(&file, 4096);
        std::io::BufRead::read_line(&mut std::io::BufReader::new(head), &mut line).ok()?;
        crate::input::log_pid(&line).map(|(pid, _)| pid)
    };
    let named = || {
        let name = path.file_name()?.to_str().filter(|_| by_name)?;
        name.rsplit_once('.')?.1.parse().ok()
    };
    crate::input::profile_pid(&file)
        .or_else(first_line)
        .or_else(named)
}
