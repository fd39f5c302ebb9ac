//! The `callgrind-jit` binary: discovery, output naming, exit codes, and
//! bad input refused without touching anything.

use std::path::Path;

use crate::util::{self, annotate};

fn copy_fixture(name: &str, dir: &Path) {
    for entry in std::fs::read_dir(util::fixture(name)).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
    }
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into())
        .collect();
    v.sort();
    v
}

#[test]
fn finds_a_per_thread_jitdump_as_javascriptcore_names_it() {
    // Bun (JavaScriptCore) writes jit-TID-PID.dump.
    let dir = util::scratch("cli-discover-tid");
    copy_fixture("c-demo", &dir);
    std::fs::remove_file(dir.join("perf-9747.map")).unwrap();
    std::fs::rename(dir.join("jit-9747.dump"), dir.join("jit-9751-9747.dump")).unwrap();
    std::fs::write(dir.join("jit-x-9747.dump"), b"not a thread id").unwrap();
    let out = annotate(&dir, &["callgrind.out.9747"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("jit-9751-9747.dump' (2 code ranges; found, the only candidate"),
        "{stderr}"
    );
    assert!(stderr.contains("JIT functions named: 2"), "{stderr}");
}

#[test]
fn finds_the_jitdump_from_the_pid_and_names_the_output_apart() {
    let dir = util::scratch("cli-discover");
    copy_fixture("c-demo", &dir);
    std::fs::remove_file(dir.join("perf-9747.map")).unwrap();
    let out = annotate(&dir, &["callgrind.out.9747"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("jit-9747.dump' (2 code ranges; found, the only candidate, owned by "),
        "{stderr}"
    );
    assert!(stderr.contains("JIT functions named: 2"), "{stderr}");
    assert!(dir.join("callgrind.jit.out.9747").exists());
    // The code image beside it, said with its count.
    assert!(
        stderr.contains(
            "wrote 'jit-code.callgrind.jit.out.9747.elf' (machine code of 2 JIT functions,"
        ),
        "{stderr}"
    );
    assert!(dir.join("jit-code.callgrind.jit.out.9747.elf").exists());
    let input = std::fs::read(dir.join("callgrind.out.9747")).unwrap();
    assert_eq!(
        input,
        std::fs::read(util::fixture("c-demo/callgrind.out.9747")).unwrap(),
        "input untouched"
    );
}

#[test]
fn rewrites_every_part_and_thread_file_and_skips_the_empty_one() {
    let dir = util::scratch("cli-parts");
    copy_fixture("c-demo-parts", &dir);
    let out = annotate(
        &dir,
        &[
            "callgrind.out.9754",
            "callgrind.out.9754-01",
            "callgrind.out.9754.1-01",
            "jit-9754.dump",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("skipped empty profile"), "{stderr}");
    let outputs: Vec<_> = names(&dir)
        .into_iter()
        .filter(|n| n.starts_with("callgrind.jit.out"))
        .collect();
    assert_eq!(
        outputs,
        ["callgrind.jit.out.9754-01", "callgrind.jit.out.9754.1-01"]
    );
}

#[test]
fn refuses_to_overwrite_an_input() {
    let dir = util::scratch("cli-refuse");
    copy_fixture("c-demo", &dir);
    let out = annotate(
        &dir,
        &["callgrind.out.9747", "jit-9747.dump", "-o", "jit-9747.dump"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("refusing to overwrite input"));
    assert_eq!(
        std::fs::read(dir.join("jit-9747.dump")).unwrap(),
        std::fs::read(util::fixture("c-demo/jit-9747.dump")).unwrap()
    );
}

#[test]
fn a_malformed_profile_gives_one_line_naming_file_and_line_and_no_output() {
    let dir = util::scratch("cli-malformed");
    copy_fixture("c-demo", &dir);
    let good = std::fs::read_to_string(dir.join("callgrind.out.9747")).unwrap();
    let cases = [
        ("garbage", "\u{1}\u{2}binary\n"),
        ("overflow", "0x10 1 99999999999999999999\n"),
        ("undefined id", "fn=(999999)\n"),
    ];
    for (what, bad_line) in cases {
        let mut lines: Vec<&str> = good.lines().collect();
        lines.insert(100, bad_line.trim_end_matches('\n'));
        std::fs::write(dir.join("callgrind.out.9747"), lines.join("\n") + "\n").unwrap();
        let before = names(&dir);
        let out = annotate(&dir, &["callgrind.out.9747", "jit-9747.dump"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{what}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{what}: {stderr}");
        assert!(
            stderr.contains("callgrind.out.9747:101:"),
            "{what}: {stderr}"
        );
        assert_eq!(
            names(&dir),
            before,
            "{what}: output or temporary file left behind"
        );
    }
}

#[test]
fn usage_errors_exit_2_and_unreadable_files_exit_1() {
    let dir = util::scratch("cli-usage");
    assert_eq!(annotate(&dir, &[]).status.code(), Some(2));
    assert_eq!(
        annotate(&dir, &["--no-such-flag", "x"]).status.code(),
        Some(2)
    );
    let out = annotate(&dir, &["missing.out"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr)
        .starts_with("callgrind-jit: cannot read 'missing.out'"));
}

#[test]
fn a_truncated_jitdump_still_names_what_it_holds() {
    let dir = util::scratch("cli-truncated");
    copy_fixture("c-demo", &dir);
    let dump = std::fs::read(dir.join("jit-9747.dump")).unwrap();
    // Cut into the last CODE_LOAD (the CLOSE record is the last 16 bytes).
    std::fs::write(dir.join("jit-9747.dump"), &dump[..dump.len() - 16 - 5]).unwrap();
    let out = annotate(&dir, &["callgrind.out.9747", "jit-9747.dump"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("jit-9747.dump': ends inside a record (its writer died"),
        "{stderr}"
    );
    assert!(stderr.contains("JIT functions named: 1"), "{stderr}");
}

#[test]
fn finds_a_perf_map_kept_beside_the_profile() {
    let dir = util::scratch("cli-map-beside");
    copy_fixture("moarvm-words", &dir);
    let out = annotate(&dir, &["callgrind.out.2422"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("perf-2422.map' (39 code ranges; found, the only candidate, owned by "),
        "{stderr}"
    );
    assert!(stderr.contains("JIT functions named: 24"), "{stderr}");
}

/// Runs annotate in `dir`, expecting it to refuse with exit status 1 and
/// `message`, leaving no file `out`.
fn refuses(dir: &Path, args: &[&str], message: &str, out: &str) {
    let before = names(dir);
    let result = annotate(dir, args);
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.trim_end(), format!("callgrind-jit: {message}"));
    assert!(!dir.join(out).exists());
    assert_eq!(names(dir), before, "nothing written");
}

#[test]
fn one_output_file_names_one_profile_or_one_run_s_parts() {
    let dir = util::scratch("cli-one-output");
    copy_fixture("c-demo-parts", &dir);
    let parts = ["callgrind.out.9754.1-01", "callgrind.out.9754-01"];
    let two = [&parts[..], &["-o", "named.out"]].concat();
    refuses(
        &dir,
        &two,
        "-o names one output, but 2 profiles were given",
        "named.out",
    );
    // One run's parts joined into one file (an empty one there is
    // replaced), each part's output beside its profile, every file as
    // private as its profile, the joined one as the most private part.
    use std::os::unix::fs::PermissionsExt;
    let mode = |name: &str| {
        std::fs::metadata(dir.join(name))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    let set_mode = |name: &str, mode| {
        std::fs::set_permissions(dir.join(name), std::fs::Permissions::from_mode(mode)).unwrap()
    };
    set_mode(parts[0], 0o640);
    set_mode(parts[1], 0o600);
    std::fs::write(dir.join("merged.out"), b"").unwrap();
    let merged = [&parts[..], &["--merge", "-o", "merged.out"]].concat();
    let out = annotate(&dir, &merged);
    // A part that names no JIT function with code gets no image, and
    // none is said.
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!said.contains("9754.1-01.elf"), "{said}");
    assert!(!dir
        .join("jit-code.callgrind.jit.out.9754.1-01.elf")
        .exists());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(mode("merged.out"), 0o600);
    assert_eq!(mode("callgrind.jit.out.9754.1-01"), 0o640);
    assert_eq!(mode("callgrind.jit.out.9754-01"), 0o600);
    assert_eq!(mode("jit-code.callgrind.jit.out.9754-01.elf"), 0o600);
    let totals = |name: &str| -> u64 {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        let line = text.lines().find_map(|l| l.strip_prefix("totals: "));
        line.unwrap().parse().unwrap()
    };
    let sum = totals("callgrind.jit.out.9754-01") + totals("callgrind.jit.out.9754.1-01");
    assert_eq!(totals("merged.out"), sum);
    // Two runs (one pid, two folders) cannot be joined into one.
    let other = dir.join("other");
    std::fs::create_dir(&other).unwrap();
    copy_fixture("c-demo-parts", &other);
    refuses(
        &dir,
        &[
            "callgrind.out.9754-01",
            "other/callgrind.out.9754-01",
            "--merge",
            "-o",
            "both.out",
        ],
        "--merge -o names one file, but the profiles are of 2 runs: \
         leave out -o to join each run's parts beside them",
        "both.out",
    );
}

#[test]
fn one_output_file_names_one_tool_log() {
    let dir = util::scratch("cli-one-log");
    for (name, pid) in [("memcheck.log.31", 31), ("memcheck.log.32", 32)] {
        let log =
            format!("=={pid}== Memcheck, a memory error detector\n=={pid}==    at 0x1000: ???\n");
        std::fs::write(dir.join(name), log).unwrap();
        std::fs::write(dir.join(format!("perf-{pid}.map")), "1000 10 f\n").unwrap();
    }
    refuses(
        &dir,
        &["memcheck.log.31", "memcheck.log.32", "-o", "named.log"],
        "-o names one output, but 2 logs were given",
        "named.log",
    );
    let out = annotate(&dir, &["memcheck.log.31", "-q", "-o", "named.log"]);
    assert!(out.status.success());
    let named = std::fs::read_to_string(dir.join("named.log")).unwrap();
    let frame = format!(
        "==31==    at 0x1000: f (in {})\n",
        dir.join("perf-31.map").display()
    );
    assert!(named.ends_with(&frame), "{named}");
    // A log from a pipe goes to standard output.
    let log = dir.join("memcheck.log.31");
    let piped = util::annotate_from(&dir, &["-q", "-", "perf-31.map"], &log);
    assert!(piped.status.success());
    let frame = frame.replace(
        &dir.join("perf-31.map").display().to_string(),
        "perf-31.map",
    );
    assert!(String::from_utf8_lossy(&piped.stdout).ends_with(&frame));
}

#[test]
fn a_symbol_file_from_a_pipe_is_used_and_said_without_an_owner() {
    let dir = util::scratch("cli-piped-symbols");
    copy_fixture("c-demo", &dir);
    let args = ["callgrind.out.9747", "-", "-o", "named.out"];
    let out = util::annotate_from(&dir, &args, &dir.join("jit-9747.dump"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // A spooled copy is nobody's file: no owner is said.
    let said = "symbols of pid 9747: '-' (2 code ranges; given, written by pid 9747)\n";
    assert!(stderr.contains(said), "{stderr}");
    assert!(stderr.contains("JIT functions named: 2"), "{stderr}");
}

#[test]
fn a_file_named_twice_is_read_once() {
    let dir = util::scratch("cli-twice");
    copy_fixture("c-demo-parts", &dir);
    let parts = ["callgrind.out.9754.1-01", "callgrind.out.9754-01"];
    let once = annotate(&dir, &[&parts[..], &["--merge", "-o", "once.out"]].concat());
    assert!(
        once.status.success(),
        "{}",
        String::from_utf8_lossy(&once.stderr)
    );
    // A glob and a name, and `./` before one: each part twice.
    let twice = [
        &parts[..],
        &[
            "./callgrind.out.9754-01",
            parts[0],
            "--merge",
            "-o",
            "twice.out",
        ],
    ]
    .concat();
    let out = annotate(&dir, &twice);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let read = |name: &str| std::fs::read(dir.join(name)).unwrap();
    assert!(
        read("once.out") == read("twice.out"),
        "the joined parts differ"
    );
    let total = |said: &[u8]| {
        let said = String::from_utf8_lossy(said).into_owned();
        let at = said.find("% of Ir (").expect("a share of Ir");
        said[at..].lines().next().unwrap().to_string()
    };
    assert_eq!(total(&once.stderr), total(&out.stderr));
}
