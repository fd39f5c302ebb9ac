//! Finding the jitdump and perf map of a profile from its `pid:` line.

use std::path::{Path, PathBuf};

/// The symbol files found for one pid, and every place looked at.
#[derive(Debug, Default)]
pub struct Discovery {
    /// Existing files, in the order below.
    pub found: Vec<PathBuf>,
    /// Every candidate path tried, found or not (for messages).
    pub looked: Vec<PathBuf>,
}

/// Candidate symbol files for `pid`, in the order runtimes put them: next
/// to the profile, the current directory, `$JITDUMPDIR`, `/tmp`,
/// `~/.debug/jit/*/` (and under `$JITDUMPDIR`), also as `jit-TID-PID.dump`
/// (JavaScriptCore, Bun); then `perf-PID.map` next to
/// the profile, in the current directory (where a profile is kept with its
/// files) and in `/tmp` (where runtimes write it).
pub fn sources_for(pid: u32, profile: &Path) -> Discovery {
    let dump = format!("jit-{pid}.dump");
    let beside = profile.parent().filter(|p| !p.as_os_str().is_empty());
    let beside = beside.map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let mut dirs: Vec<PathBuf> = vec![beside.clone(), PathBuf::from(".")];
    let jitdumpdir = std::env::var_os("JITDUMPDIR").map(PathBuf::from);
    dirs.extend(jitdumpdir.clone());
    dirs.push(PathBuf::from("/tmp"));
    for base in jitdumpdir
        .into_iter()
        .chain(std::env::var_os("HOME").map(PathBuf::from))
    {
        dirs.extend(debug_jit_dirs(&base));
    }
    let mut result = Discovery::default();
    let map = format!("perf-{pid}.map");
    let map_dirs = [beside, PathBuf::from("."), PathBuf::from("/tmp")];
    let per_thread: Vec<PathBuf> = dirs.iter().flat_map(|d| per_thread_dumps(d, pid)).collect();
    let candidates = dirs
        .iter()
        .map(|d| d.join(&dump))
        .chain(per_thread)
        .chain(map_dirs.iter().map(|d| d.join(&map)));
    for candidate in candidates {
        if !result.looked.contains(&candidate) {
            result.looked.push(candidate.clone());
        }
        let Ok(real) = candidate.canonicalize() else {
            continue;
        };
        if real.is_file() && !result.found.contains(&real) {
            result.found.push(real);
        }
    }
    result
}

/// JavaScriptCore's (Bun's) jitdumps in `dir`: `jit-TID-PID.dump`.
fn per_thread_dumps(dir: &Path, pid: u32) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let tail = format!("-{pid}.dump");
    let mut found: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            let tid = name
                .strip_prefix("jit-")
                .and_then(|r| r.strip_suffix(&tail));
            tid.is_some_and(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
        })
        .collect();
    found.sort();
    found
}

fn debug_jit_dirs(base: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(base.join(".debug/jit")) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbol_files_are_found_beside_the_profile_in_the_runtimes_order() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path().canonicalize().unwrap();
        let pid = 4_000_000_021u32;
        let touch = |name: String| {
            std::fs::write(dir.join(&name), b"").unwrap();
            dir.join(name)
        };
        let map = touch(format!("perf-{pid}.map"));
        let threads = [
            touch(format!("jit-12-{pid}.dump")),
            touch(format!("jit-3-{pid}.dump")),
        ];
        let dump = touch(format!("jit-{pid}.dump"));
        // Not this pid's, nor a thread's: left alone.
        touch(format!("jit-x-{pid}.dump"));
        touch(format!("jit--{pid}.dump"));
        touch(format!("jit-3-{pid}1.dump"));
        std::fs::create_dir(dir.join(format!("jit-4-{pid}.dump"))).unwrap();
        let found = sources_for(pid, &dir.join(format!("callgrind.out.{pid}")));
        assert_eq!(
            found.found,
            [dump.clone(), threads[0].clone(), threads[1].clone(), map]
        );
        let looked = |path: String| found.looked.contains(&PathBuf::from(path));
        assert!(looked(format!("/tmp/jit-{pid}.dump")));
        assert!(looked(format!("/tmp/perf-{pid}.map")));
        assert!(looked(format!("./perf-{pid}.map")));
        // A profile named without a folder is beside the current one.
        let bare = sources_for(pid, Path::new("callgrind.out.1"));
        assert_eq!(
            bare.looked[0],
            Path::new(".").join(format!("jit-{pid}.dump"))
        );
        assert!(bare.found.is_empty());
    }

    #[test]
    fn jitdumps_are_looked_for_in_each_folder_of_debug_jit() {
        let base = tempfile::tempdir().unwrap();
        assert!(debug_jit_dirs(base.path()).is_empty());
        let jit = base.path().join(".debug/jit");
        for d in ["java-jit-2", "java-jit-1"] {
            std::fs::create_dir_all(jit.join(d)).unwrap();
        }
        std::fs::write(jit.join("a-file"), b"").unwrap();
        assert_eq!(
            debug_jit_dirs(base.path()),
            [jit.join("java-jit-1"), jit.join("java-jit-2")]
        );
    }
}
