//! perf compatibility: `perf record -k 1` + `perf inject --jit` + `perf
//! report` name jit-client's functions from the jitdump alone (no perf map).

use std::path::Path;
use std::process::Command;

use crate::util;

/// True when `perf record` can sample here; otherwise says why. In CI a
/// missing perf fails the test instead (scripts/setup.sh installs it).
fn perf_can_run(dir: &Path) -> bool {
    let probe = Command::new("perf")
        .args(["record", "-q", "-e", "cpu-clock", "-o"])
        .arg(dir.join("probe.data"))
        .arg("true")
        .output();
    let reason = match probe {
        Ok(out) if out.status.success() => return true,
        Ok(out) => String::from_utf8_lossy(&out.stderr).into_owned(),
        Err(e) => format!("cannot run perf: {e}"),
    };
    util::skip(
        "perf_inject_names_jit_client_functions",
        &format!("perf cannot run: {reason}"),
    );
    false
}

#[test]
fn perf_inject_names_jit_client_functions() {
    let dir = util::scratch("perf-inject");
    if !perf_can_run(&dir) {
        return;
    }
    let demo = util::c_demo(&dir);
    // sum_to runs 10 x 200M iterations: about half a second natively.
    let mut record = Command::new("perf");
    record
        .args(["record", "-q", "-k", "1", "-e", "cpu-clock", "-o"])
        .arg(dir.join("perf.data"))
        .arg(&demo)
        .arg("200000000")
        .current_dir(&dir)
        .env("CALLGRIND_JIT", "1")
        .env("CALLGRIND_JIT_PERF_MAP", "0")
        .env("JITDUMPDIR", &dir)
        .env("TMPDIR", &dir);
    let out = util::run_ok(&mut record);
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("callgrind-jit:"),
        "jit-client reported a problem: {}",
        util::describe(&record, &out)
    );
    let mut inject = Command::new("perf");
    inject
        .args(["inject", "--jit", "-i", "perf.data", "-o", "perf.jit.data"])
        .current_dir(&dir);
    util::run_ok(&mut inject);
    let mut report = Command::new("perf");
    report
        .args(["report", "--stdio", "-i", "perf.jit.data"])
        .args(["--sort", "dso,sym,srcline"])
        .current_dir(&dir);
    let text = String::from_utf8_lossy(&util::run_ok(&mut report).stdout).into_owned();
    // The hot loop is lines 4-5 of sum.calc: the top row must be sum_to in
    // an ELF perf inject made from our jitdump, with its source line.
    let top = text
        .lines()
        .find(|l| !l.starts_with('#') && !l.trim().is_empty())
        .unwrap_or_default();
    let share: f64 = top
        .split('%')
        .next()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0.0);
    assert!(
        top.contains("jitted-") && top.contains("sum_to") && top.contains("sum.calc:"),
        "top row is not sum_to from a jitted ELF:\n{text}"
    );
    assert!(share > 50.0, "sum_to holds only {share}%:\n{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
