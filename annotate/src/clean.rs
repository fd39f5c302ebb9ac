//! `callgrind-jit clean`: remove the live-mode folders of processes that
//! have ended. Only folders the caller owns, only the files live mode
//! makes there, never through a symbolic link; a folder whose lock is
//! still held belongs to a running process, whatever its pid says.

use std::fs::File;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use jit_client::live_folder;

/// What `clean` did with one folder.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Removed with everything in it.
    Removed,
    /// Its process is still running: left alone.
    InUse,
    /// Not the caller's, or not a folder: left alone (the reason).
    NotOurs(String),
    /// Live mode's files were removed; the folder holds others and stays.
    KeptOthers(Vec<String>),
    /// Removing failed (the error); the run goes on.
    Failed(String),
}

/// Cleans every `callgrind-jit-PID` entry under `dir`, in name order.
pub fn clean(dir: &Path) -> Result<Vec<(PathBuf, Outcome)>> {
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot list '{}'", dir.display()))?;
    let mut folders: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_str()
                .and_then(live_folder::pid_of_folder)
                .is_some()
        })
        .map(|e| e.path())
        .collect();
    folders.sort();
    Ok(folders
        .into_iter()
        .map(|path| {
            let outcome = clean_one(&path);
            (path, outcome)
        })
        .collect())
}

fn clean_one(folder: &Path) -> Outcome {
    let meta = match std::fs::symlink_metadata(folder) {
        Ok(m) => m,
        Err(e) => return Outcome::Failed(e.to_string()),
    };
    if !meta.file_type().is_dir() {
        return Outcome::NotOurs("not a folder".into());
    }
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me {
        return Outcome::NotOurs(format!("owned by uid {}", meta.uid()));
    }
    let lock = match take_lock(folder) {
        Ok(Some(lock)) => lock,
        Ok(None) => return Outcome::InUse,
        Err(e) => return Outcome::Failed(e.to_string()),
    };
    let outcome = remove_ours(folder);
    drop(lock);
    outcome
}

/// The folder's lock if no process holds it (None: in use). A folder
/// without a lock file is judged by its pid (folders of older versions).
fn take_lock(folder: &Path) -> std::io::Result<Option<Option<File>>> {
    let path = folder.join(live_folder::LOCK_FILE);
    let lock = match File::options()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let name = folder.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let pid = live_folder::pid_of_folder(name).unwrap_or(0);
            let running = Path::new(&format!("/proc/{pid}")).exists();
            return Ok((!running).then_some(None));
        }
        Err(e) => return Err(e),
    };
    // An exclusive flock, as jit-client takes it.
    match lock.try_lock() {
        Ok(()) => Ok(Some(Some(lock))),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}

/// Removes the files live mode makes (regular files only), then the
/// folder if nothing else is in it.
fn remove_ours(folder: &Path) -> Outcome {
    let entries = match std::fs::read_dir(folder) {
        Ok(e) => e,
        Err(e) => return Outcome::Failed(e.to_string()),
    };
    let mut others = Vec::new();
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().into_owned();
        let is_file = entry.file_type().is_ok_and(|t| t.is_file());
        if !(is_file && live_folder::is_ours(&name)) {
            others.push(name);
            continue;
        }
        if let Err(e) = std::fs::remove_file(entry.path()) {
            return Outcome::Failed(format!("cannot remove '{name}': {e}"));
        }
    }
    if !others.is_empty() {
        others.sort();
        return Outcome::KeptOthers(others);
    }
    match std::fs::remove_dir(folder) {
        Ok(()) => Outcome::Removed,
        Err(e) => Outcome::Failed(e.to_string()),
    }
}
