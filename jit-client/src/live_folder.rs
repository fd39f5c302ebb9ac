//! What live mode keeps in `$TMPDIR/callgrind-jit-PID/`: the names both
//! live mode (which writes them) and `callgrind-jit clean` (which removes
//! them) go by.

use std::path::PathBuf;

/// The folder of process `pid`.
pub fn dir_for(pid: u32) -> PathBuf {
    std::env::temp_dir().join(folder_name(pid))
}

/// `callgrind-jit-PID`.
pub fn folder_name(pid: u32) -> String {
    crate::names::numbered("callgrind-jit-", u64::from(pid), "")
}

/// The pid in a folder name made by [`folder_name`].
pub fn pid_of_folder(name: &str) -> Option<u32> {
    let digits = name.strip_prefix("callgrind-jit-")?;
    digits
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| digits.parse().ok())?
}

/// The lock file. Its process holds an exclusive `flock` on it until it
/// exits; `clean` removes a folder only when it can take the lock, so a
/// running process keeps its files even where its pid means nothing to
/// the cleaner (another pid namespace).
pub const LOCK_FILE: &str = "live.lock";

/// The ELF image of the `n`-th function mapped, at `addr`.
pub fn image_name(n: u64, addr: usize) -> String {
    let mut name = String::with_capacity(48);
    name.push_str("jit-");
    crate::names::push_digits(&mut name, n, 10);
    name.push('-');
    crate::names::push_digits(&mut name, addr as u64, 16);
    name.push_str(".so");
    name
}

/// True for the names live mode gives its files.
pub fn is_ours(name: &str) -> bool {
    if name == LOCK_FILE {
        return true;
    }
    let Some(rest) = name
        .strip_prefix("jit-")
        .and_then(|r| r.strip_suffix(".so"))
    else {
        return false;
    };
    let Some((n, addr)) = rest.split_once('-') else {
        return false;
    };
    !n.is_empty()
        && n.bytes().all(|b| b.is_ascii_digit())
        && !addr.is_empty()
        && addr.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        assert_eq!(pid_of_folder(&folder_name(42)), Some(42));
        assert_eq!(dir_for(42), std::env::temp_dir().join("callgrind-jit-42"));
        assert!(is_ours(&image_name(3, 0x4856000)) && is_ours(LOCK_FILE));
        // As format! spells them.
        for (n, addr) in [
            (0, 0),
            (7, 0xf),
            (1234567, 0x7fff_dead_b000),
            (u64::MAX, usize::MAX),
        ] {
            assert_eq!(image_name(n, addr), format!("jit-{n}-{addr:x}.so"));
        }
        for not in [
            "main.rs",
            "jit-.so",
            "jit-1-.so",
            "jit-1-xyz.so",
            "jit-1-10.so.bak",
        ] {
            assert!(!is_ours(not), "{not}");
        }
        for not in ["callgrind-jit-", "callgrind-jit-1x", "callgrind-jit--1"] {
            assert_eq!(pid_of_folder(not), None, "{not}");
        }
    }
}
