//! jit-client never misleads the JIT: every load it cannot write gets a
//! status, a record never wraps the format's 32-bit size, and a file
//! planted by another user is never written to.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::process::Command;

use jit_client::{ErrorKind, LineEntry};
use jitdump::{self, Record};

use crate::util::{self, session_in};

/// Names of the CODE_LOADs in this process's jitdump under `dir`.
fn loads(dir: &std::path::Path) -> Vec<String> {
    let data = std::fs::read(dir.join(format!("jit-{}.dump", std::process::id()))).unwrap();
    let dump = jitdump::read(&data).unwrap();
    assert!(dump.problems.is_empty(), "{:?}", dump.problems);
    dump.records
        .iter()
        .filter_map(|(_, r)| match r {
            Record::Load(l) => Some(String::from_utf8_lossy(l.name).into_owned()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_load_whose_records_exceed_4_gib_is_refused_and_later_loads_survive() {
    let dir = util::scratch("client-4gib");
    let session = session_in(&dir);
    let code = vec![0xc3u8; 16];
    // 4.2 million entries naming one 1 KiB file: a 4.3 GB DEBUG_INFO.
    let file = vec![b'f'; 1024];
    let lines = vec![LineEntry::new(0, 1, 0, &file[..]); 4_200_000];
    let err = session.code_loaded(&code, b"huge", &lines).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    session
        .code_loaded(&code, b"after", &[LineEntry::new(0, 2, 0, "a.toy")])
        .unwrap();
    session.close().unwrap();
    assert_eq!(loads(&dir), ["after"]);
}

#[test]
fn empty_code_and_loads_after_close_get_a_status() {
    let dir = util::scratch("client-status");
    let session = session_in(&dir);
    let code = [0xc3u8; 4];
    let err = session.code_loaded(&code[..0], b"empty", &[]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    session.code_loaded(&code, b"kept", &[]).unwrap();
    session.close().unwrap();
    let err = session.code_loaded(&code, b"late", &[]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Closed, "{err}");
    assert_eq!(loads(&dir), ["kept"]);
}

/// The C test program `statuses` run in `dir` with `args` and the
/// session's variables (`JITDUMPDIR` set to `jitdump_dir`): its standard
/// output and error.
fn statuses(
    dir: &std::path::Path,
    jitdump_dir: &std::path::Path,
    args: &[&str],
) -> (String, String) {
    let exe = util::c_program(dir, "statuses");
    let mut run = Command::new(&exe);
    run.args(args)
        .current_dir(dir)
        .env("CALLGRIND_JIT", "1")
        .env("JITDUMPDIR", jitdump_dir)
        .env("TMPDIR", dir);
    let out = util::run_ok(&mut run);
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (text(&out.stdout), text(&out.stderr))
}

#[test]
fn the_c_abi_returns_each_documented_status() {
    let dir = util::scratch("client-c-status");
    let (stdout, stderr) = statuses(&dir, &dir, &[]);
    assert_eq!(
        stdout,
        "normal: 0\nenabled: 1\nunload: 0\nunload zero size: -1\nzero size: -1\n\
         null code: -1\nwraps: -1\nnull lines: -1\n\
         after exit-time close: -4\nopen after close: -4\n"
    );
    let late = |e: &str| e.matches("after the session was closed").count();
    assert_eq!(late(&stderr), 1, "{stderr}");
    let _ = std::fs::remove_file(format!("/tmp/perf-{}.map", out_pid(&dir)));
    // Closed by cgjit_close: every later call says so, the notice once.
    let dir = util::scratch("client-c-close");
    let (stdout, stderr) = statuses(&dir, &dir, &["close"]);
    assert_eq!(
        stdout,
        "normal: 0\nenabled: 1\nclose: 0\nload after close: -4\nunload after close: -4\n\
         enabled after close: 0\nclose again: 0\n\
         after exit-time close: -4\nopen after close: -4\n"
    );
    assert_eq!(late(&stderr), 1, "{stderr}");
    let (names, problems) = util::dump_names(&util::file_starting(&dir, "jit-").unwrap());
    assert_eq!((names, problems), (vec!["normal".to_string()], vec![]));
    let _ = std::fs::remove_file(format!("/tmp/perf-{}.map", out_pid(&dir)));
}

#[test]
fn a_jitdump_folder_that_is_not_there_costs_one_line_and_loads_go_on() {
    let dir = util::scratch("client-c-no-folder");
    let (stdout, stderr) = statuses(&dir, &dir.join("gone"), &[]);
    assert!(stdout.starts_with("normal: 0\nenabled: 1\n"), "{stdout}");
    let ours: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("callgrind-jit:"))
        .collect();
    assert_eq!(ours.len(), 2, "{stderr}");
    assert!(
        ours[0].contains("cannot create") && ours[0].contains("/gone/jit-"),
        "{stderr}"
    );
    assert!(ours[1].contains("after the session was closed"), "{stderr}");
    let pid = stderr
        .split("/gone/jit-")
        .nth(1)
        .and_then(|r| r.split('.').next());
    let _ = std::fs::remove_file(format!("/tmp/perf-{}.map", pid.unwrap_or("0")));
}

/// The pid in the one jitdump a C test left in `dir`.
fn out_pid(dir: &std::path::Path) -> String {
    let dump = util::file_starting(dir, "jit-").unwrap();
    let name = dump.file_name().unwrap().to_string_lossy().into_owned();
    name.trim_start_matches("jit-")
        .trim_end_matches(".dump")
        .to_string()
}

#[test]
fn a_perf_map_planted_by_another_user_is_left_alone() {
    let dir = util::scratch("client-planted");
    let map = dir.join(format!("perf-{}.map", std::process::id()));
    std::fs::write(&map, b"planted\n").unwrap();
    std::fs::set_permissions(&map, std::fs::Permissions::from_mode(0o666)).unwrap();
    let chowned = Command::new("chown")
        .arg("54321")
        .arg(&map)
        .status()
        .unwrap();
    if !chowned.success() || std::fs::metadata(&map).unwrap().uid() != 54321 {
        util::skip(
            "a_perf_map_planted_by_another_user_is_left_alone",
            "chown needs root",
        );
        return;
    }
    let session = session_in(&dir);
    let code = [0xc3u8; 4];
    session.code_loaded(&code, b"f", &[]).unwrap();
    session.close().unwrap();
    assert_eq!(std::fs::read(&map).unwrap(), b"planted\n");
    assert_eq!(loads(&dir), ["f"], "the jitdump goes on");
}

#[test]
fn a_load_racing_close_is_written_or_told_it_was_not() {
    let dir = util::scratch("client-close-race");
    let session = std::sync::Arc::new(session_in(&dir));
    let code = [0xc3u8; 4];
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let session = session.clone();
            std::thread::spawn(move || {
                let mut written = 0;
                for i in 0..20_000 {
                    let name = format!("t{t}_{i}");
                    match session.code_loaded(&code, name.as_bytes(), &[]) {
                        Ok(()) => written += 1,
                        Err(e) => assert_eq!(e.kind(), ErrorKind::Closed, "{e}"),
                    }
                }
                written
            })
        })
        .collect();
    // Close while the threads load.
    while std::fs::metadata(dir.join(format!("jit-{}.dump", std::process::id())))
        .map_or(true, |m| m.len() < 200_000)
    {
        std::thread::yield_now();
    }
    session.close().unwrap();
    let said_written: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
    let loads = loads(&dir).len();
    assert!(
        loads < 8 * 20_000,
        "close came after every load: no race tested"
    );
    assert_eq!(
        said_written, loads,
        "loads that returned Ok but are not in the jitdump"
    );
}
