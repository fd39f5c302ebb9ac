//! JITs that tell only gdb (the GDB JIT interface), named through the
//! preload library gdb-jit/ that `record` puts in front of them: a C JIT
//! that implements the interface by hand, and numba.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util;

/// Builds tests/c/gdb_jit.c, the object it loads, and the same object
/// linked normally (tests/c/gdb_jit_native.c); returns (jit, object, native).
pub fn c_jit(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    c_jit_with(dir, "-g")
}

/// The same, the object's debug information built with `debug` (`-gz`:
/// compressed sections).
fn c_jit_with(dir: &Path, debug: &str) -> (PathBuf, PathBuf, PathBuf) {
    let c = util::root().join("tests/c");
    let object = dir.join("code.o");
    // No position-independent code and no unwind tables: .text runs
    // anywhere once copied, with no relocations to apply.
    let gcc = |args: &[&std::ffi::OsStr]| {
        util::run_ok(Command::new("gcc").args(["-O1", "-g"]).args(args))
    };
    let flags =
        ["-fno-pic", "-fno-asynchronous-unwind-tables", debug, "-c"].map(std::ffi::OsStr::new);
    let code = c.join("gdb_jit_code.c");
    gcc(&[
        &flags[..],
        &[code.as_os_str(), "-o".as_ref(), object.as_os_str()],
    ]
    .concat());
    let jit = dir.join("gdb_jit");
    let native = dir.join("native");
    gcc(&[
        c.join("gdb_jit.c").as_os_str(),
        "-lpthread".as_ref(),
        "-o".as_ref(),
        jit.as_os_str(),
    ]);
    gcc(&[
        c.join("gdb_jit_native.c").as_os_str(),
        object.as_os_str(),
        "-o".as_ref(),
        native.as_os_str(),
    ]);
    (jit, object, native)
}

/// Inclusive cost of `function` (callgrind_annotate's `file:name`) on
/// its own line of an `--inclusive=yes` listing.
fn inclusive(listing: &str, function: &str) -> u64 {
    util::costs_where(listing, |line| line.contains(&format!(":{function} [")))
}

fn record_env() -> Vec<(&'static str, String)> {
    vec![(
        "CALLGRIND_JIT_GDB_LIB",
        util::gdb_preload().display().to_string(),
    )]
}

fn record(dir: &Path, args: &[&std::ffi::OsStr], env: &[(&str, String)]) -> std::process::Output {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let out = util::record(dir, args, &env);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn a_jit_that_tells_only_gdb_is_named_with_lines_and_the_native_costs() {
    for debug in ["-g", "-gz=zlib"] {
        let dir = util::scratch(&format!("gdb-jit-c{debug}"));
        named_with_lines_and_the_native_costs(&dir, debug);
    }
}

fn named_with_lines_and_the_native_costs(dir: &Path, debug: &str) {
    let dir = dir.to_path_buf();
    let (jit, object, native) = c_jit_with(&dir, debug);
    let out = record(&dir, &[jit.as_os_str(), object.as_os_str()], &record_env());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "546536250");
    // The two bad entries are reported, each once, with where they are.
    assert!(
        stderr.contains("(18 bytes, entry 0x") && stderr.contains("not an object file"),
        "{stderr}"
    );
    assert!(stderr.contains("(536870912 bytes, entry 0x"), "{stderr}");

    // One load at a freed address, one new epoch: code unloaded before
    // the dump begins no second one when the rest of its object returns.
    let parts = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("callgrind.out.")
        })
        .count();
    assert_eq!(parts, 2, "{stderr}");
    crate::oracle::check_recording(&dir);
    // The truth: the same object linked in, under callgrind.
    let truth_dir = dir.join("truth");
    std::fs::create_dir(&truth_dir).unwrap();
    let (_, truth) = util::callgrind(&truth_dir, &[], &native, &[], &[]);
    let truth = util::callgrind_annotate(&truth, &["--inclusive=yes", "--threshold=100"]);
    let merged = util::file_starting(&dir, "callgrind.jit.merged.").expect("a merged profile");
    let named = util::callgrind_annotate(&merged, &["--inclusive=yes", "--threshold=100"]);
    for function in ["triangle", "squares"] {
        let (got, want) = (inclusive(&named, function), inclusive(&truth, function));
        assert!(
            want > 10_000,
            "{function} ran in the native program:\n{truth}"
        );
        assert_eq!(got, want, "{function}:\n{named}");
    }
    // Every JIT instruction is named, with its file: what stays under
    // `???` is a few stub instructions of the program and loader (a
    // triangle call left unnamed would be 7,019).
    let own = util::callgrind_annotate(&merged, &["--threshold=100"]);
    let unnamed = util::costs_where(&own, |l| l.contains("[???]"));
    assert!(unnamed < 200, "{unnamed} Ir unnamed:\n{own}");
    assert!(
        named.contains("gdb_jit_code.c:triangle [") && named.contains("gdb_jit_code.c:squares [")
    );
    // The loop's line carries the loop: 1000 iterations per call, 13 calls.
    let source = util::root().join("tests/c/gdb_jit_code.c");
    let lines = util::callgrind_annotate_files(&merged, &["--auto=no"], &[&source]);
    let cost = util::cost_of(&lines, "s += i;");
    assert!(cost >= 13 * 1000, "triangle's loop line: {cost}\n{lines}");
}

#[test]
fn without_the_preload_the_same_jit_stays_unnamed() {
    let dir = util::scratch("gdb-jit-off");
    let (jit, object, _) = c_jit(&dir);
    let args = [
        "--no-gdb-jit".as_ref(),
        "--".as_ref(),
        jit.as_os_str(),
        object.as_os_str(),
    ];
    let out = Command::new(util::cli())
        .args(["record", "--out-dir"])
        .arg(&dir)
        .args(args)
        .envs(record_env())
        .current_dir(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("named nothing") || stderr.contains("no jitdump"),
        "{stderr}"
    );
    assert!(!stderr.contains("callgrind-jit-gdb:"), "{stderr}");
}

/// The real python3 (not a version manager's shim), if numba imports in it.
fn python_with_numba() -> Option<PathBuf> {
    let out = Command::new("python3")
        .args(["-c", "import sys, numba; print(sys.executable)"])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

#[test]
fn numba_functions_are_named_with_their_python_lines() {
    let Some(python) = python_with_numba() else {
        return util::skip(
            "numba",
            "numba does not import in python3 (scripts/setup.sh installs it)",
        );
    };
    let dir = util::scratch("gdb-jit-numba");
    let script = util::root().join("tests/gdb/numba_loop.py");
    let mut env = record_env();
    env.push(("NUMBA_DEBUGINFO", "1".into()));
    let out = record(&dir, &[python.as_os_str(), script.as_os_str()], &env);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "1199992");
    let profile = util::annotated_in(&dir);
    let listing = util::callgrind_annotate(&profile, &[]);
    // Demangled as Valgrind prints C++ names, with the script as its file.
    let hot = util::costs_where(&listing, |l| l.contains("numba_loop.py:__main__::hot["));
    assert!(hot >= 200_000 * 5, "{listing}");
    let lines = util::callgrind_annotate_files(&profile, &["--auto=no"], &[&script]);
    let cost = util::cost_of(&lines, "total += (i * 7) % 13");
    assert!(
        cost >= 200_000,
        "one instruction or more per iteration: {cost}\n{lines}"
    );
    // --demangle=no keeps the name the JIT registered.
    let raw = dir.join("raw.out");
    let raw_input = util::file_starting(&dir, "callgrind.out.").unwrap();
    let out = util::annotate(
        &dir,
        &[
            raw_input.to_str().unwrap(),
            "--demangle=no",
            "-o",
            raw.to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let raw = util::callgrind_annotate(&raw, &[]);
    assert!(raw.contains(":_ZN8__main__3hot"), "{raw}");
    // The oracle reads names as the files give them: it checks a raw run.
    let held = dir.join("held");
    std::fs::create_dir(&held).unwrap();
    let name = raw_input
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let pid = name.trim_start_matches("callgrind.out.");
    std::fs::copy(&raw_input, held.join(&name)).unwrap();
    std::fs::copy(
        dir.join(format!("jit-{pid}.dump")),
        held.join(format!("jit-{pid}.dump")),
    )
    .unwrap();
    let out = util::annotate(&held, &[&name, "--demangle=no"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    crate::oracle::check_recording(&held);
}

#[test]
fn memcheck_names_a_frame_in_code_told_only_to_gdb() {
    for live in ["0", "1"] {
        let dir = util::scratch(&format!("gdb-jit-memcheck-{live}"));
        let (jit, object, _) = c_jit(&dir);
        let mut env = record_env();
        env.push(("CALLGRIND_JIT_LIVE", live.into()));
        let args = [
            "--tool=memcheck".as_ref(),
            "--".as_ref(),
            jit.as_os_str(),
            object.as_os_str(),
        ];
        record(&dir, &args, &env);
        // Live mode: Valgrind itself names the frame in its own log.
        // Otherwise record names it in the log it writes beside.
        let log = util::file_starting(
            &dir,
            if live == "1" {
                "memcheck.log."
            } else {
                "jit.memcheck.log."
            },
        )
        .unwrap();
        let log = std::fs::read_to_string(log).unwrap();
        let at = log
            .find("Conditional jump")
            .unwrap_or_else(|| panic!("{log}"));
        let frame = log[at..].lines().nth(1).unwrap();
        assert!(
            frame.contains(": peek (") && frame.contains("gdb_jit_code.c:"),
            "live={live}: {frame}"
        );
    }
}

/// PostgreSQL's server with its LLVM JIT, where installed (Debian's
/// postgresql package), run by its own user in single-user mode.
fn postgres() -> Option<PathBuf> {
    let dir = std::fs::read_dir("/usr/lib/postgresql").ok()?;
    let mut found: Vec<PathBuf> = dir
        .filter_map(|e| Some(e.ok()?.path().join("bin/postgres")))
        .filter(|p| p.is_file() && p.parent().unwrap().join("initdb").is_file())
        .collect();
    found.sort();
    let has_user = Command::new("id")
        .arg("postgres")
        .output()
        .ok()?
        .status
        .success();
    // SAFETY: geteuid has no preconditions and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    (has_user && root).then(|| found.pop()).flatten()
}

#[test]
fn postgres_jit_compiled_expressions_are_named() {
    let Some(postgres) = postgres() else {
        return util::skip(
            "postgres",
            "PostgreSQL's server, its user and root to run it as that user",
        );
    };
    // The server runs as postgres, which must reach every file it uses.
    let dir = std::env::temp_dir().join(format!("cgjit-postgres-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let lib = dir.join("libcallgrind_jit_gdb.so");
    std::fs::copy(util::gdb_preload(), &lib).unwrap();
    let as_postgres = |program: &Path| {
        let mut cmd = Command::new("runuser");
        cmd.args(["-u", "postgres", "--"])
            .arg(program)
            .current_dir(&dir);
        cmd
    };
    util::run_ok(Command::new("chown").arg("postgres").arg(&dir));
    let data = dir.join("data");
    util::run_ok(
        as_postgres(&postgres.with_file_name("initdb"))
            .arg("-D")
            .arg(&data),
    );
    let query = "select sum(i*i) from generate_series(1,20000) i;\n";
    let mut cmd = as_postgres(Path::new("valgrind"));
    cmd.args(["--tool=callgrind", "--dump-instr=yes"])
        .arg(format!(
            "--callgrind-out-file={}/callgrind.out.%p",
            dir.display()
        ))
        .arg(&postgres)
        .args(["--single", "-D"])
        .arg(&data)
        .args([
            "-c",
            "jit=on",
            "-c",
            "jit_above_cost=0",
            "-c",
            "jit_debugging_support=on",
        ])
        .arg("postgres")
        .env("LD_PRELOAD", &lib)
        .env("JITDUMPDIR", &dir)
        .stdin(std::process::Stdio::piped());
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(query.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", util::describe(&cmd, &out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("sum = \"2666866670000\""), "{stdout}");
    let profile = util::file_starting(&dir, "callgrind.out.").unwrap();
    let named = dir.join("named");
    let out = util::annotate(
        &dir,
        &[profile.to_str().unwrap(), "-o", named.to_str().unwrap()],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listing = util::callgrind_annotate(&named, &["--auto=no", "--threshold=100"]);
    // The expression i*i, compiled, runs once per row: 20,000 rows.
    let evalexpr = util::costs_where(&listing, |l| l.contains(":evalexpr_"));
    assert!(evalexpr >= 20_000 * 10, "{listing}");
    let pid = profile.extension().unwrap().to_string_lossy().into_owned();
    let _ = std::fs::remove_file(format!("/tmp/perf-{pid}.map"));
    let _ = std::fs::remove_dir_all(&dir);
}
