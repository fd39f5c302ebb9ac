//! The error where a run has no symbol file: what was looked for, and
//! what was found but set aside.

use std::path::PathBuf;

use super::provenance::Provenance;

/// No symbol file was given, and none was found where runtimes put them.
#[derive(Debug)]
pub struct NoSymbols {
    /// The profiles' pids (empty: no profile has a `pid:` line).
    pub pids: Vec<u32>,
    /// Every place looked at.
    pub looked: Vec<PathBuf>,
    /// Files found there but set aside, and why.
    pub set_aside: Vec<(PathBuf, String)>,
}

impl std::fmt::Display for NoSymbols {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.pids.is_empty() {
            return f.write_str(
                "nothing to name: the profile has no pid: line to find its jitdump or perf map by; \
                 give them after the profile",
            );
        }
        let pids: Vec<String> = self.pids.iter().map(u32::to_string).collect();
        let looked: Vec<String> = self
            .looked
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        write!(
            f,
            "nothing to name: no jitdump or perf map of pid {} (looked for {}",
            pids.join(", "),
            looked.join(", ")
        )?;
        for (path, why) in &self.set_aside {
            write!(f, "; '{}' {why}", path.display())?;
        }
        f.write_str("); give them after the profile")
    }
}

impl std::error::Error for NoSymbols {}

/// The error for processes where nothing was found to name them by.
pub(super) fn no_symbols(pids: &[Option<u32>], found: &[Provenance]) -> NoSymbols {
    NoSymbols {
        pids: pids.iter().flatten().copied().collect(),
        looked: found
            .iter()
            .flat_map(|p| p.looked.iter().cloned())
            .collect(),
        set_aside: found.iter().flat_map(|p| p.notes.iter().cloned()).collect(),
    }
}
