//! Valgrind tools other than callgrind: memcheck's and helgrind's text
//! logs get their JIT frames named from the jitdump, on real runs of
//! tests/c/live.c with live mode off ("plain"): `jit_read` reads freed
//! memory at its line 12; `jit_caller` calls back into native code from
//! its line 9 (the return address is one instruction past the call).

use std::process::Command;

use crate::util;

/// The frames of `jit_read`'s invalid read and of `jit_caller` in a log.
fn assert_named(log: &str) {
    let frame = |text: &str| log.lines().any(|l| l.contains(text));
    assert!(frame(": jit_read (live.calc:12)"), "{log}");
    assert!(frame(": jit_caller (live.calc:9)"), "{log}");
}

#[test]
fn record_names_memchecks_jit_frames() {
    let dir = util::scratch("logs-memcheck");
    let prog = util::c_program(&dir, "live");
    let out = Command::new(util::cli())
        .args(["record", "--out-dir"])
        .arg(&dir)
        .args(["--tool=memcheck", "--"])
        .arg(&prog)
        .args(["100", "plain"])
        .current_dir(&dir)
        .env("TMPDIR", &dir)
        .env("CALLGRIND_JIT_PERF_MAP", "0")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("Invalid read of size 4"), "{said}");
    assert_named(&said);
    assert!(said.contains("2 JIT frames named"), "{said}");
    // The log valgrind wrote is left as it was; the named copy beside it.
    let raw = util::file_starting(&dir, "memcheck.log.").unwrap();
    let raw = std::fs::read_to_string(raw).unwrap();
    assert!(!raw.contains("jit_read") && raw.contains(": ???"), "{raw}");
    let named = util::file_starting(&dir, "jit.memcheck.log.").unwrap();
    assert_named(&std::fs::read_to_string(named).unwrap());
}

#[test]
fn annotate_names_a_helgrind_log_it_is_given() {
    let dir = util::scratch("logs-helgrind");
    let prog = util::c_program(&dir, "live");
    let out = Command::new("valgrind")
        .args(["--tool=helgrind", "--log-file=hg.log"])
        .arg(&prog)
        .args(["100", "plain"])
        .current_dir(&dir)
        .env("CALLGRIND_JIT_PERF_MAP", "0")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dump = util::file_starting(&dir, "jit-").unwrap();
    let out = util::annotate(&dir, &["hg.log", dump.to_str().unwrap(), "-o", "named.log"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    let named = std::fs::read_to_string(dir.join("named.log")).unwrap();
    assert!(
        named
            .lines()
            .any(|l| l.contains(": jit_caller (live.calc:9)")),
        "{named}"
    );
    // Everything else as valgrind wrote it.
    let raw = std::fs::read_to_string(dir.join("hg.log")).unwrap();
    assert_eq!(named.lines().count(), raw.lines().count());
    let changed = raw
        .lines()
        .zip(named.lines())
        .filter(|(a, b)| a != b)
        .count();
    assert_eq!(changed, 1, "{named}");
    // Logs and profiles are annotated apart.
    std::fs::copy(
        util::fixture("c-demo/callgrind.out.9747"),
        dir.join("callgrind.out.9747"),
    )
    .unwrap();
    let out = util::annotate(&dir, &["hg.log", "callgrind.out.9747", "-o", "x"]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn record_refuses_tools_whose_output_it_cannot_name() {
    let dir = util::scratch("logs-refused");
    let out = Command::new(util::cli())
        .args(["record", "--tool=cachegrind", "--", "true"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("live mode"), "{said}");
}
