//! `callgrind-jit clean`: only the caller's folders, only live mode's
//! files, never through a link, a held lock means a running process, and
//! every folder is reported.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::util;

fn clean(dir: &Path) -> (bool, String) {
    let out = Command::new(util::cli())
        .args(["clean", "--dir"])
        .arg(dir)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A folder as live mode leaves it: a lock file and one ELF image.
fn live_folder(dir: &Path, pid: u32) -> std::path::PathBuf {
    let folder = dir.join(format!("callgrind-jit-{pid}"));
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join("live.lock"), b"").unwrap();
    std::fs::write(folder.join("jit-1-4856000.so"), b"\x7fELF").unwrap();
    folder
}

#[test]
fn a_real_live_mode_folder_is_locked_while_running_and_removed_after() {
    let dir = util::scratch("clean-real");
    let exe = util::c_program(&dir, "live");
    let mut run = Command::new("valgrind");
    run.args(["--tool=none"])
        .arg(&exe)
        .arg("10")
        .current_dir(&dir)
        .env("TMPDIR", &dir);
    util::run_ok(&mut run);
    let folder = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("callgrind-jit-")
        })
        .expect("live mode made its folder");
    assert!(
        folder.join("live.lock").is_file(),
        "live mode made no lock file"
    );
    let (ok, said) = clean(&dir);
    assert!(
        ok && said.contains("removed '") && !folder.exists(),
        "{said}"
    );
}

#[test]
fn a_held_lock_keeps_the_folder_whatever_its_pid_says() {
    let dir = util::scratch("clean-held");
    // A pid no process has here, as a folder made in another pid namespace
    // looks: its lock, held by a running process, is what counts.
    let folder = live_folder(&dir, 999_999_999);
    let mut holder = Command::new("flock")
        .arg(folder.join("live.lock"))
        .args(["-c", "echo locked; sleep 60"])
        .stdout(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(holder.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line, "locked\n");
    let (ok, said) = clean(&dir);
    // The lock goes with the last process holding its descriptor: all of them.
    // SAFETY: kill with the process group we created.
    unsafe { libc::kill(-(holder.id() as i32), libc::SIGKILL) };
    let _ = holder.wait();
    assert!(ok && said.contains("its process is running"), "{said}");
    assert!(folder.join("jit-1-4856000.so").exists());
    // Released (once the killed `sleep` has exited too): now it goes.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let (ok, said) = clean(&dir);
        assert!(ok, "{said}");
        if !folder.exists() {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "still kept: {said}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn only_live_modes_own_files_are_removed() {
    let dir = util::scratch("clean-others");
    let folder = live_folder(&dir, 999_999_998);
    std::fs::create_dir(folder.join("src")).unwrap();
    std::fs::write(folder.join("src/main.rs"), b"fn main() {}").unwrap();
    std::fs::write(folder.join("notes.txt"), b"mine").unwrap();
    // A link named like an image: the link may go, its target never.
    std::fs::write(dir.join("precious.so"), b"keep").unwrap();
    std::os::unix::fs::symlink(dir.join("precious.so"), folder.join("jit-2-1000.so")).unwrap();
    let (ok, said) = clean(&dir);
    assert!(ok, "{said}");
    assert!(
        said.contains("also holds jit-2-1000.so, notes.txt, src"),
        "{said}"
    );
    assert_eq!(
        std::fs::read(folder.join("src/main.rs")).unwrap(),
        b"fn main() {}"
    );
    assert_eq!(std::fs::read(dir.join("precious.so")).unwrap(), b"keep");
    assert!(!folder.join("jit-1-4856000.so").exists() && !folder.join("live.lock").exists());
}

#[test]
fn another_users_folders_and_links_are_left_alone_and_every_folder_is_reported() {
    let dir = util::scratch("clean-owners");
    let theirs = live_folder(&dir, 999_999_997);
    let chowned = Command::new("chown")
        .args(["-R", "54321"])
        .arg(&theirs)
        .status()
        .unwrap();
    let mine = live_folder(&dir, 999_999_996);
    std::os::unix::fs::symlink(&mine, dir.join("callgrind-jit-999999995")).unwrap();
    let (ok, said) = clean(&dir);
    assert!(ok, "{said}");
    assert!(
        said.contains("callgrind-jit-999999995' alone: not a folder"),
        "{said}"
    );
    assert!(!mine.exists(), "{said}");
    if chowned.success() && std::fs::metadata(&theirs).unwrap().uid() == 54321 {
        assert!(
            said.contains("callgrind-jit-999999997' alone: owned by uid 54321"),
            "{said}"
        );
        assert!(theirs.join("jit-1-4856000.so").exists());
    } else {
        util::skip("clean_other_owner_case", "chown needs root");
    }
    assert_eq!(said.lines().count(), 3, "{said}");
}

#[test]
fn a_folder_without_a_lock_file_is_judged_by_its_pid() {
    // Folders of versions before the lock file: kept while a process of
    // their pid runs (this test's own), removed once none does.
    let dir = util::scratch("clean-no-lock");
    let running = live_folder(&dir, std::process::id());
    let gone = live_folder(&dir, 999_999_994);
    for folder in [&running, &gone] {
        std::fs::remove_file(folder.join("live.lock")).unwrap();
    }
    let (ok, said) = clean(&dir);
    assert!(ok, "{said}");
    assert!(running.join("jit-1-4856000.so").exists(), "{said}");
    assert!(!gone.exists(), "{said}");
}

#[test]
fn a_lock_file_that_is_a_link_is_not_followed() {
    // A planted link in place of the lock: neither it nor its target is
    // taken for live mode's lock, and the folder stays.
    let dir = util::scratch("clean-lock-link");
    let folder = live_folder(&dir, 999_999_993);
    std::fs::remove_file(folder.join("live.lock")).unwrap();
    std::fs::write(dir.join("elsewhere.lock"), b"keep").unwrap();
    std::os::unix::fs::symlink(dir.join("elsewhere.lock"), folder.join("live.lock")).unwrap();
    let (_, said) = clean(&dir);
    assert!(folder.join("jit-1-4856000.so").exists(), "{said}");
    assert_eq!(std::fs::read(dir.join("elsewhere.lock")).unwrap(), b"keep");
    assert!(said.contains("callgrind-jit-999999993"), "{said}");
}
