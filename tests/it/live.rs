//! Live mode under the real Valgrind: no annotate step, every tool names
//! the JIT functions with their source lines.

use std::process::Command;

use crate::util;

fn valgrind(dir: &std::path::Path, args: &[&str], exe: &std::path::Path) -> (String, bool) {
    let out = Command::new("valgrind")
        .args(args)
        .arg(exe)
        .arg("1000")
        .current_dir(dir)
        .env("TMPDIR", dir)
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.success(),
    )
}

#[test]
fn callgrinds_own_output_names_live_functions_with_lines() {
    let dir = util::scratch("live-callgrind");
    let exe = util::c_program(&dir, "live");
    let (stderr, ok) = valgrind(
        &dir,
        &[
            "--tool=callgrind",
            "--dump-instr=yes",
            "--callgrind-out-file=callgrind.out.%p",
        ],
        &exe,
    );
    assert!(ok, "{stderr}");
    let profile = util::file_starting(&dir, "callgrind.out.").unwrap();
    let report = util::callgrind_annotate(&profile, &["--threshold=100", "--auto=no"]);
    for f in ["jit_loop", "jit_caller", "jit_read"] {
        assert!(
            report.contains(&format!("live.calc:{f} [")),
            "{f}:\n{report}"
        );
    }
    let calc = dir.join("live.calc");
    std::fs::write(
        &calc,
        (1..=13)
            .map(|i| format!("source line {i}\n"))
            .collect::<String>(),
    )
    .unwrap();
    let lines = util::callgrind_annotate_files(
        &profile,
        &["--auto=no"],
        &[std::path::Path::new("./live.calc")],
    );
    let line = |n: u32| {
        lines
            .lines()
            .find(|l| l.ends_with(&format!("source line {n}")))
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        line(4).trim_start().starts_with("3,000"),
        "loop body, 3 instructions x 1000:\n{lines}"
    );
}

#[test]
fn a_backtrace_from_native_code_shows_the_jit_frame() {
    let dir = util::scratch("live-backtrace");
    let exe = util::c_program(&dir, "live");
    let (stderr, _) = valgrind(&dir, &["--tool=memcheck"], &exe);
    let trace = stderr
        .split("backtrace from native code")
        .nth(1)
        .unwrap_or_default();
    assert!(trace.contains(": jit_caller (live.calc:9)"), "{stderr}");
}

#[test]
fn memcheck_names_an_invalid_read_inside_jit_code() {
    let dir = util::scratch("live-memcheck");
    let exe = util::c_program(&dir, "live");
    let (stderr, _) = valgrind(&dir, &["--tool=memcheck"], &exe);
    let error = stderr
        .split("Invalid read of size 4")
        .nth(1)
        .unwrap_or_default();
    assert!(
        error
            .lines()
            .nth(1)
            .is_some_and(|l| l.contains(": jit_read (live.calc:12)")),
        "{stderr}"
    );
}
