//! The `/tmp/perf-PID.map` files of the processes a test run started,
//! removed when the test binary exits.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::util::root;

/// When this test binary started (for [`clean_up_at_exit`]).
static STARTED: OnceLock<std::time::SystemTime> = OnceLock::new();

/// Removes, when the test binary exits, the `/tmp/perf-PID.map` files of
/// the processes this run started: their pids are in the names of the
/// jitdumps and profiles they left in this run's scratch folders, and only
/// maps written since the run started are taken.
pub fn clean_up_at_exit() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        STARTED.get_or_init(std::time::SystemTime::now);
        // SAFETY: registers a plain extern "C" function without captures.
        unsafe { libc::atexit(remove_perf_maps) };
    });
}

extern "C" fn remove_perf_maps() {
    let Some(&started) = STARTED.get() else {
        return;
    };
    let suffix = format!("-{}", std::process::id());
    let Ok(dirs) = std::fs::read_dir(root().join("target/it-scratch")) else {
        return;
    };
    let ours = dirs
        .filter_map(Result::ok)
        .filter(|d| d.file_name().to_string_lossy().ends_with(&suffix));
    let mut pids = std::collections::BTreeSet::new();
    for dir in ours {
        collect_pids(&dir.path(), 2, &mut pids);
    }
    for pid in pids {
        let map = PathBuf::from(format!("/tmp/perf-{pid}.map"));
        let fresh = std::fs::metadata(&map)
            .and_then(|m| m.modified())
            .is_ok_and(|t| t >= started);
        if fresh {
            let _ = std::fs::remove_file(map);
        }
    }
}

/// Pids named by `jit-PID.dump` and `callgrind.out.PID…` files under `dir`.
fn collect_pids(dir: &Path, depth: u32, pids: &mut std::collections::BTreeSet<u32>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().into_owned();
        let digits = name
            .strip_prefix("jit-")
            .and_then(|n| n.strip_suffix(".dump"))
            .or_else(|| name.strip_prefix("callgrind.out."))
            .map(|n| {
                n.chars()
                    .take_while(char::is_ascii_digit)
                    .collect::<String>()
            });
        if let Some(pid) = digits.and_then(|d| d.parse().ok()) {
            pids.insert(pid);
        }
        if depth > 0 && entry.file_type().is_ok_and(|t| t.is_dir()) {
            collect_pids(&entry.path(), depth - 1, pids);
        }
    }
}
