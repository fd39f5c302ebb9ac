//! `callgrind-jit clean`: remove live-mode folders of dead processes.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Removes `callgrind-jit-PID` folders under `dir` whose process is gone;
/// returns the removed paths.
pub fn clean(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut removed = Vec::new();
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot list '{}'", dir.display()))?;
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("callgrind-jit-"))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if is_dir && !Path::new(&format!("/proc/{pid}")).exists() {
            let path = entry.path();
            std::fs::remove_dir_all(&path)
                .with_context(|| format!("cannot remove '{}'", path.display()))?;
            removed.push(path);
        }
    }
    removed.sort();
    Ok(removed)
}
