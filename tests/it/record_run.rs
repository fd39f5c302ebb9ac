//! `record` behaves like valgrind: signals, exit status, where profiles go,
//! children, what goes to stdout, usage errors, the program's environment.
//! Every test runs the real valgrind.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::util;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `record --out-dir DIR ARGS` (ARGS with their own `--`), in DIR.
fn record_with(dir: &Path, args: &[&str]) -> Output {
    Command::new(util::cli())
        .arg("record")
        .arg("--out-dir")
        .arg(dir)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

/// Starts `record -- demo 50000000` (a minute or more under callgrind) in
/// its own process group, and waits until the JIT has registered its code.
fn start_long_run(dir: &Path) -> std::process::Child {
    let demo = util::c_demo(dir);
    let child = Command::new(util::cli())
        .args(["record", "--out-dir"])
        .arg(dir)
        .arg("--")
        .arg(&demo)
        .arg("50000000")
        .current_dir(dir)
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while util::file_starting(dir, "jit-").is_none() {
        assert!(Instant::now() < deadline, "the demo never registered code");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Let the hot loop run a little under callgrind.
    std::thread::sleep(Duration::from_millis(500));
    child
}

/// The annotated profile names sum_to, read by callgrind_annotate.
fn assert_sum_to_named(dir: &Path) {
    let report = util::callgrind_annotate(&util::annotated_in(dir), &["--auto=no"]);
    assert!(report.contains("sum.calc:sum_to ["), "{report}");
}

#[test]
fn ctrl_c_stops_the_program_and_what_valgrind_wrote_is_annotated() {
    let dir = util::scratch("record-sigint");
    let child = start_long_run(&dir);
    // A terminal's Ctrl-C goes to the whole foreground process group.
    // SAFETY: kill with a process group id we created.
    unsafe { libc::kill(-(child.id() as i32), libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("stopped by SIGINT; annotating what valgrind wrote"),
        "{}",
        stderr(&out)
    );
    assert_sum_to_named(&dir);
}

#[test]
fn sigterm_sent_to_record_alone_is_passed_to_valgrind() {
    let dir = util::scratch("record-sigterm");
    let child = start_long_run(&dir);
    // As `timeout` does: to callgrind-jit only.
    // SAFETY: kill with our child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(143), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("stopped by SIGTERM"),
        "{}",
        stderr(&out)
    );
    assert_sum_to_named(&dir);
}

#[test]
fn a_program_killed_by_a_signal_gives_128_plus_the_signal() {
    let dir = util::scratch("record-segv");
    let out = record_with(&dir, &["--", "sh", "-c", "kill -SEGV $$"]);
    assert_eq!(out.status.code(), Some(128 + 11), "{}", stderr(&out));
    // sh registers no code: said, with where it looked, not an error.
    assert!(
        stderr(&out).contains("no jitdump or perf map"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn callgrind_out_file_is_honoured_with_p_and_q() {
    let dir = util::scratch("record-outfile");
    let demo = util::c_demo(&dir);
    std::fs::create_dir(dir.join("runs")).unwrap();
    let out = Command::new(util::cli())
        .args(["record", "--callgrind-out-file=runs/%q{TAG}.%p.cg", "--"])
        .arg(&demo)
        .arg("10")
        .current_dir(&dir)
        .env("TAG", "nightly")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let written = util::file_starting(&dir.join("runs"), "nightly.").expect("valgrind's profile");
    let pid = written.file_name().unwrap().to_string_lossy()["nightly.".len()..]
        .trim_end_matches(".cg")
        .to_string();
    let annotated = dir.join(format!("runs/jit.nightly.{pid}.cg"));
    assert!(annotated.is_file(), "{}", stderr(&out));
    let report = util::callgrind_annotate(&annotated, &["--auto=no"]);
    assert!(report.contains("sum.calc:sum_to ["), "{report}");
}

#[test]
fn a_stale_profile_of_the_same_name_is_not_taken() {
    let dir = util::scratch("record-stale");
    let old = record_with(&dir, &["--callgrind-out-file=fixed.out", "--", "true"]);
    assert!(old.status.success(), "{}", stderr(&old));
    // The second run writes no profile (valgrind cannot start the program):
    // the first run's fixed.out must not be annotated as if it were its own.
    let missing = dir.join("no-such-program");
    let out = record_with(
        &dir,
        &[
            "--callgrind-out-file=fixed.out",
            "--",
            missing.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("valgrind wrote no profile"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn another_run_writing_in_the_same_folder_is_left_alone() {
    side_by_side(
        "record-side-by-side",
        &[],
        "callgrind.jit.out.",
        "nothing to name",
    );
    let memcheck = ["--tool=memcheck"];
    side_by_side(
        "record-side-by-side-memcheck",
        &memcheck,
        "jit.memcheck.log.",
        "wrote",
    );
}

/// A record with `tool` that lasts until told to end, and one of the C
/// demo that ends within it, in one folder (the demo's output file starts
/// with `named`): the first must take nothing of the second's, and say
/// `own` of its own output.
fn side_by_side(tag: &str, tool: &[&str], named: &str, own: &str) {
    let dir = util::scratch(tag);
    let demo = util::c_demo(&dir);
    let long = Command::new(util::cli())
        .args(["record", "--out-dir"])
        .arg(&dir)
        .args(tool)
        .args(["--", "sh", "-c", "while [ ! -e done ]; do sleep 0.1; done"])
        .current_dir(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut long = Killed(long);
    let mut args = tool.to_vec();
    args.extend(["--", demo.to_str().unwrap(), "50"]);
    let short = record_with(&dir, &args);
    assert!(short.status.success(), "{}", stderr(&short));
    let output = util::file_starting(&dir, named).expect("the short run's output");
    let pid = output.file_name().unwrap().to_string_lossy()[named.len()..].to_string();
    std::fs::write(dir.join("done"), "").unwrap();
    let out = long.take_output();
    let said = stderr(&out);
    assert!(out.status.success(), "{said}");
    for taken in [
        format!(".{pid}'"),
        format!("pid {pid}:"),
        format!("of pid {pid} "),
    ] {
        assert!(!said.contains(&taken), "{pid}'s output was taken:\n{said}");
    }
    assert!(said.contains(own), "{said}");
}

/// A child killed when the test ends early.
struct Killed(std::process::Child);

impl Killed {
    fn take_output(&mut self) -> Output {
        let mut stderr = String::new();
        std::io::Read::read_to_string(self.0.stderr.as_mut().unwrap(), &mut stderr).unwrap();
        let status = self.0.wait().unwrap();
        Output {
            status,
            stdout: Vec::new(),
            stderr: stderr.into_bytes(),
        }
    }
}

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn stdout_is_the_programs_alone() {
    let dir = util::scratch("record-stdout");
    let demo = util::c_demo(&dir);
    let out = record_with(&dir, &["--", demo.to_str().unwrap(), "50"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "sum = 1275\n".repeat(10)
    );
    assert!(
        stderr(&out).contains("hottest JIT functions"),
        "{}",
        stderr(&out)
    );
    // A call tree that nests: no share above 100%, and no note of it.
    assert!(!stderr(&out).contains("inclusive shares above"));
}

#[test]
fn usage_errors_exit_2() {
    let dir = util::scratch("record-usage");
    for args in [
        &["not-an-option", "--", "true"][..],
        &["--"][..],
        &["--callgrind-out-file=x.%z", "--", "true"][..],
        // Callgrind would write the profile over the JIT's own files.
        &["--callgrind-out-file=jit-%p.dump", "--", "true"][..],
        &["--callgrind-out-file=/tmp/perf-%p.map", "--", "true"][..],
    ] {
        let out = record_with(&dir, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert_eq!(
            stderr(&out)
                .lines()
                .next()
                .map(|l| l.starts_with("callgrind-jit: ") || l.starts_with("error:")),
            Some(true)
        );
    }
}

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
