//! `record` and the processes of a run: children traced into, each named
//! from its own files, runtimes' switches, threads, live mode, processes
//! that outlive the program or cannot be annotated. Every test runs the
//! real valgrind.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::record_run::{record_with, stderr};
use crate::util;

#[test]
fn with_trace_children_each_process_is_named_from_its_own_files() {
    let dir = util::scratch("record-children");
    let demo = util::c_demo(&dir);
    let script = format!("{0} 10 >/dev/null; {0} 2000 >/dev/null", demo.display());
    let out = record_with(&dir, &["--trace-children=yes", "--", "sh", "-c", &script]);
    assert!(out.status.success(), "{}", stderr(&out));
    let annotated: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("callgrind.jit.out.")
        })
        .collect();
    assert_eq!(annotated.len(), 2, "{}", stderr(&out));
    crate::oracle::check_recording(&dir);
    for profile in annotated {
        let pid = profile.extension().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&profile).unwrap();
        // JIT code objects name this profile's own code image, no other
        // (the oracle above held the names to this pid's own jitdump).
        let own = format!("jit-code.callgrind.jit.out.{pid}.elf");
        assert!(text.contains(&own), "{} lacks {own}", profile.display());
        assert_eq!(
            text.matches(".elf\n").count(),
            text.matches(&format!("{own}\n")).count()
        );
        let report = util::callgrind_annotate(&profile, &["--auto=no"]);
        assert!(report.contains("sum.calc:sum_to ["), "{report}");
    }
}

/// A launcher script that execs the JIT: without being told, record
/// traces into the program the script starts, names its JIT code, and
/// lists the script's own process (a shell, no symbols) in one line.
#[test]
fn a_script_that_starts_the_jit_is_traced_into_it() {
    let dir = util::scratch("record-script");
    let demo = util::c_demo(&dir);
    let script = dir.join("launch");
    let text = format!("#!/bin/sh\ntrue\nexec {} 2000 >/dev/null\n", demo.display());
    std::fs::write(&script, text).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = record_with(&dir, &["--", "./launch"]);
    let said = stderr(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("'./launch' is a script: --trace-children=yes added"),
        "{said}"
    );
    assert!(said.contains("hottest JIT functions"), "{said}");
    crate::oracle::check_recording(&dir);
    // Told otherwise, the shell alone is profiled, and callgrind leaves
    // its file empty at the exec: said so, and how to go on.
    let out = record_with(&dir, &["--trace-children=no", "--", "./launch"]);
    let said = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(!said.contains("is a script"), "{said}");
    assert!(
        said.contains("is empty: the program replaced itself (exec)"),
        "{said}"
    );
    assert!(said.contains("record with --trace-children=yes"), "{said}");
}

#[test]
fn moarvm_spesh_blocking_is_set_unless_the_user_sets_it() {
    let dir = util::scratch("record-env");
    let echo = [
        "--",
        "sh",
        "-c",
        "echo $MVM_SPESH_BLOCKING $CALLGRIND_JIT $MVM_JIT_PERF_MAP",
    ];
    let out = record_with(&dir, &echo);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "1 1 1\n",
        "{}",
        stderr(&out)
    );
    let out = Command::new(util::cli())
        .args(["record", "--out-dir"])
        .arg(&dir)
        .args(echo)
        .env("MVM_SPESH_BLOCKING", "0")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "0 1 1\n",
        "{}",
        stderr(&out)
    );
}

#[test]
fn separate_threads_skips_the_empty_file_valgrind_leaves() {
    let dir = util::scratch("record-threads");
    let prog = util::c_program(&dir, "threads");
    let out = record_with(
        &dir,
        &["--separate-threads=yes", "--", prog.to_str().unwrap()],
    );
    let said = stderr(&out);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("skipped empty profile"), "{said}");
    let threads: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("callgrind.jit.out.") && n.contains('-'))
        .collect();
    assert!(threads.len() >= 5, "a file per thread: {threads:?}\n{said}");
}

#[test]
fn in_live_mode_record_says_valgrind_named_the_code_itself() {
    let dir = util::scratch("record-live");
    let prog = util::c_program(&dir, "live");
    let out = Command::new(util::cli())
        .args(["record", "--out-dir"])
        .arg(&dir)
        .args(["--", prog.to_str().unwrap(), "100"])
        .current_dir(&dir)
        .env("CALLGRIND_JIT_LIVE", "1")
        .output()
        .unwrap();
    let said = stderr(&out);
    assert!(out.status.success(), "{said}");
    assert!(!said.contains("no JIT function"), "{said}");
    assert!(
        said.contains("named by Valgrind itself (live mode): the code in 3 live-mode images"),
        "{said}"
    );
    assert!(
        said.contains("Valgrind named the JIT functions itself (live mode)"),
        "{said}"
    );
}

#[test]
fn a_process_that_outlives_the_program_is_waited_for_and_named() {
    let dir = util::scratch("record-outlive");
    let prog = util::c_program(&dir, "outlive");
    let out = record_with(&dir, &["--", prog.to_str().unwrap()]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    // The child wrote its profile seconds after the program ended.
    assert!(err.contains("  late_fn  ("), "{err}");
    assert!(err.contains("  parent_fn  ("), "{err}");
    assert!(err.contains("waiting for what it started to end"), "{err}");
}

#[test]
fn one_process_that_cannot_be_annotated_stops_no_other() {
    let dir = util::scratch("record-one-fails");
    let prog = util::c_program(&dir, "outlive");
    let out = record_with(&dir, &["--", prog.to_str().unwrap(), "spoil"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("  parent_fn  (") && err.contains("  late_fn  ("),
        "{err}"
    );
    let failed = err
        .lines()
        .find(|l| l.starts_with("callgrind-jit: error: pid "))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(failed.contains("callgrind.out.999999999"), "{failed}");
}

/// `2> >(tee LOG >&2)` in a shell makes tee a child of record (bash forks
/// it before exec-ing record), and tee waits for record's stderr to close:
/// record must not wait for it.
#[test]
fn a_child_record_did_not_start_is_not_waited_for() {
    let dir = util::scratch("record-tee");
    let demo = util::c_demo(&dir);
    let script = format!(
        "exec {} record --out-dir {} -- {} 10 2> >(tee {}/record.log >&2)",
        util::cli().display(),
        dir.display(),
        demo.display(),
        dir.display()
    );
    let mut child = Command::new("bash")
        .args(["-c", &script])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // A guard against a hang, not a measurement: the run takes seconds.
    let deadline = Instant::now() + Duration::from_secs(300);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("record waited for tee, which waits for record");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(status.success());
}
