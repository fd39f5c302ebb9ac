//! End to end: `callgrind-jit record` on the example JITs and on MoarVM,
//! read back by the real callgrind_annotate.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

use crate::util::{self, cost_of};

/// `record` that must succeed; returns what it printed on stderr (its
/// summary and hottest list: stdout is the program's alone).
fn record_ok(dir: &Path, args: &[&OsStr], env: &[(&str, &str)]) -> String {
    let out = util::record(dir, args, env);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn toy(name: &str) -> std::path::PathBuf {
    util::root().join("examples/toyjit").join(name)
}

#[test]
fn toyjit_functions_get_names_files_lines_and_inclusive_costs() {
    let dir = util::scratch("record-toyjit");
    let (jit, demo, math) = (util::toyjit(), toy("demo.toy"), toy("math.toy"));
    assert!(demo.exists() && math.exists());
    let stderr = record_ok(
        &dir,
        &[jit.as_os_str(), demo.as_os_str(), math.as_os_str()],
        &[],
    );
    assert!(
        stderr.contains("sum_to  (") && stderr.contains("math.toy:9)"),
        "{stderr}"
    );
    let profile = util::annotated_in(&dir);
    // callgrind_annotate drops a leading $PWD/ from file names: match the tail.
    let report = util::callgrind_annotate(
        &profile,
        &["--inclusive=yes", "--threshold=100", "--auto=no"],
    );
    crate::oracle::check_recording(&dir);
    let main = cost_of(&report, "toyjit/demo.toy:main [");
    let callees: u64 = ["fib", "sum_to", "collatz_steps"]
        .iter()
        .map(|f| cost_of(&report, &format!("toyjit/math.toy:{f} [")))
        .sum();
    assert!(
        callees > 0 && main >= callees,
        "main {main} < callees {callees}\n{report}"
    );
    // Only math.toy: callgrind_annotate warns on some of Rust's own sources.
    let lines = util::callgrind_annotate_files(&profile, &["--auto=no"], &[&math]);
    assert!(cost_of(&lines, "acc = acc + n % 7") >= 500_000, "{lines}");
    assert!(cost_of(&lines, "n = n - 1") >= 200_000, "{lines}");
    assert!(
        cost_of(&lines, "return fib(n - 1) + fib(n - 2)") > 0,
        "{lines}"
    );
}

#[test]
fn the_c_example_is_named_and_the_exit_code_is_the_programs() {
    let dir = util::scratch("record-c");
    let demo = util::c_demo(&dir);
    record_ok(&dir, &[demo.as_os_str(), OsStr::new("50")], &[]);
    crate::oracle::check_recording(&dir);
    assert_eq!(crate::inflation::inflated_in(&dir), [], "#28 on MoarVM");
    let report =
        util::callgrind_annotate(&util::annotated_in(&dir), &["--threshold=100", "--auto=no"]);
    assert!(cost_of(&report, "sum.calc:sum_to [") > 0, "{report}");
    assert!(cost_of(&report, "sum.calc:report [") > 0, "{report}");

    let failing = dir.join("fail.toy");
    std::fs::write(&failing, "fn main() { return 3 }\n").unwrap();
    let out = util::record(
        &dir,
        &[util::toyjit().as_os_str(), failing.as_os_str()],
        &[],
    );
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_missing_valgrind_is_one_line_saying_how_to_install_it() {
    let dir = util::scratch("record-novalgrind");
    let out = util::record(&dir, &[OsStr::new("true")], &[("PATH", "/nonexistent")]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.trim(),
        "callgrind-jit: valgrind not found: install it (Debian: apt-get install valgrind)"
    );
}

/// rakudo (scripts/setup.sh installs it), if it runs here.
fn raku() -> Option<&'static str> {
    let runs = Command::new("raku")
        .args(["-e", ""])
        .status()
        .is_ok_and(|s| s.success());
    runs.then_some("raku")
}

#[test]
fn moarvm_subs_are_named_with_their_raku_file() {
    let Some(raku) = raku() else {
        util::skip(
            "moarvm_subs_are_named_with_their_raku_file",
            "rakudo is not installed",
        );
        return;
    };
    let dir = util::scratch("record-raku");
    let script = dir.join("fib.raku");
    std::fs::copy(util::fixture("rakudo-fib/fib.raku"), &script).unwrap();
    // No MVM_SPESH_BLOCKING here: record sets it (without it, under
    // Valgrind, MoarVM JIT-compiles almost nothing).
    let stderr = record_ok(&dir, &[OsStr::new(raku), script.as_os_str()], &[]);
    assert!(
        stderr.contains("  fib  (") && stderr.contains("fib.raku:2)"),
        "{stderr}"
    );
    crate::oracle::check_recording(&dir);
    let report =
        util::callgrind_annotate(&util::annotated_in(&dir), &["--threshold=100", "--auto=no"]);
    assert!(cost_of(&report, "fib.raku:fib [") > 0, "{report}");
}
