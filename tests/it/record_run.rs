//! `record` behaves like valgrind: signals, exit status, where profiles go,
//! children, what goes to stdout, usage errors, the program's environment.
//! Every test runs the real valgrind.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::util;

pub(crate) fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `record --out-dir DIR ARGS` (ARGS with their own `--`), in DIR.
pub(crate) fn record_with(dir: &Path, args: &[&str]) -> Output {
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
fn valgrind_s_demangle_switch_keeps_jit_names_as_registered() {
    for (switch, want) in [
        (None, ":app::sum(int)"),
        (Some("--demangle=no"), ":_ZN3app3sumEi"),
    ] {
        let dir = util::scratch(&format!("record-demangle-{}", switch.is_some()));
        let prog = util::c_program(&dir, "mangled");
        let mut args: Vec<&str> = switch.into_iter().collect();
        args.extend(["--", prog.to_str().unwrap()]);
        let out = record_with(&dir, &args);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "50050000");
        let listing = util::callgrind_annotate(&util::annotated_in(&dir), &[]);
        // 100 calls of 3 * 1000 + 4 instructions.
        let line = listing
            .lines()
            .find(|l| l.contains(want))
            .unwrap_or_default();
        assert!(
            line.trim_start().starts_with("300,400 "),
            "{want}: {listing}"
        );
    }
}
