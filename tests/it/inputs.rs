//! What `annotate` says about inputs it cannot use: each is one line that
//! names the file, says what it is and what to do, exits 1, and writes
//! nothing. Also the generated completions and man pages.

use std::path::Path;
use std::process::{Command, Output};

use crate::util;

fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(util::cli())
        .args(args)
        .current_dir(dir)
        .env("JITDUMPDIR", dir)
        .env("HOME", dir)
        .output()
        .unwrap()
}

/// Runs `annotate ARGS`, requires exit 1 and a one-line error containing
/// every one of `says`, and that no file appeared in `dir`.
fn refused(dir: &Path, args: &[&str], says: &[&str]) {
    let before = std::fs::read_dir(dir).unwrap().count();
    let mut full = vec!["annotate"];
    full.extend(args);
    let out = run(dir, &full);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    for s in says {
        assert!(stderr.contains(s), "{args:?}: {s:?} not in {stderr}");
    }
    assert_eq!(
        std::fs::read_dir(dir).unwrap().count(),
        before,
        "{args:?} wrote a file"
    );
}

fn fixture_profile(dir: &Path) -> std::path::PathBuf {
    let profile = dir.join("callgrind.out.9747");
    std::fs::copy(util::fixture("c-demo/callgrind.out.9747"), &profile).unwrap();
    profile
}

/// The fixture profile and its jitdump, beside each other in `dir`.
fn fixture_run(dir: &Path) {
    fixture_profile(dir);
    std::fs::copy(
        util::fixture("c-demo/jit-9747.dump"),
        dir.join("jit-9747.dump"),
    )
    .unwrap();
}

#[test]
fn compressed_profiles_are_named_with_how_to_decompress() {
    let dir = util::scratch("inputs-compressed");
    fixture_profile(&dir);
    util::run_ok(
        Command::new("gzip")
            .arg("callgrind.out.9747")
            .current_dir(&dir),
    );
    refused(
        &dir,
        &["callgrind.out.9747.gz"],
        &["'callgrind.out.9747.gz' is gzip-compressed", "gunzip -k"],
    );
    // xz and zstd by their magic bytes (the tools may not be installed).
    std::fs::write(dir.join("p.xz"), b"\xfd7zXZ\x00\x00\x04rest").unwrap();
    refused(&dir, &["p.xz"], &["'p.xz' is xz-compressed", "unxz -k"]);
    std::fs::write(dir.join("p.zst"), b"\x28\xb5\x2f\xfd\x00rest").unwrap();
    refused(&dir, &["p.zst"], &["'p.zst' is zstd-compressed", "unzstd"]);
}

#[test]
fn a_cachegrind_profile_is_named_as_such() {
    let dir = util::scratch("inputs-cachegrind");
    let mut cg = Command::new("valgrind");
    cg.args([
        "--tool=cachegrind",
        "--cachegrind-out-file=cachegrind.out",
        "true",
    ])
    .current_dir(&dir);
    util::run_ok(&mut cg);
    refused(
        &dir,
        &["cachegrind.out"],
        &[
            "'cachegrind.out' is a cachegrind profile",
            "--tool=callgrind",
        ],
    );
}

#[test]
fn an_empty_file_is_named_as_empty() {
    let dir = util::scratch("inputs-empty");
    std::fs::write(dir.join("callgrind.out.1"), b"").unwrap();
    refused(&dir, &["callgrind.out.1"], &["'callgrind.out.1' is empty"]);
}

#[test]
fn an_annotated_output_is_not_annotated_again() {
    let dir = util::scratch("inputs-ours");
    fixture_run(&dir);
    let out = run(&dir, &["annotate", "callgrind.out.9747"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    refused(
        &dir,
        &["callgrind.jit.out.9747", "jit-9747.dump"],
        &[
            "'callgrind.jit.out.9747' is already annotated",
            "callgrind.out.PID",
        ],
    );
    // The mark is a comment: callgrind_annotate reads the output without a word.
    let report = util::callgrind_annotate(&dir.join("callgrind.jit.out.9747"), &["--auto=no"]);
    assert!(report.contains("sum.calc:sum_to ["), "{report}");
}

#[test]
fn no_symbol_file_found_says_where_it_looked_and_writes_nothing() {
    let dir = util::scratch("inputs-nothing");
    // A pid no process can have, so no stray /tmp/perf-PID.map is found.
    let text = std::fs::read_to_string(util::fixture("c-demo/callgrind.out.9747")).unwrap();
    let text = text.replacen("\npid: 9747\n", "\npid: 3999999999\n", 1);
    assert!(text.contains("pid: 3999999999"));
    std::fs::write(dir.join("callgrind.out.3999999999"), text).unwrap();
    let here = format!("{}/jit-3999999999.dump", dir.display());
    refused(
        &dir,
        &["callgrind.out.3999999999"],
        &[
            "nothing to name",
            &here,
            "/tmp/perf-3999999999.map",
            "give them after the profile",
        ],
    );
}

#[test]
fn symbol_files_with_nothing_in_them_are_named_as_such() {
    let dir = util::scratch("inputs-empty-symbols");
    fixture_profile(&dir);
    std::fs::write(dir.join("perf-9747.map"), b"").unwrap();
    refused(
        &dir,
        &["callgrind.out.9747", "perf-9747.map"],
        &["'perf-9747.map' is empty: its JIT wrote no functions there"],
    );
    // Found under the process's names: each said, not passed over.
    let text = std::fs::read_to_string(util::fixture("c-demo/callgrind.out.9747")).unwrap();
    let text = text.replacen("\npid: 9747\n", "\npid: 3999999999\n", 1);
    std::fs::write(dir.join("callgrind.out.3999999999"), text).unwrap();
    std::fs::write(dir.join("perf-3999999999.map"), b"").unwrap();
    std::fs::write(dir.join("jit-3999999999.dump"), b"not a dump\n").unwrap();
    let at = |name: &str| format!("'{}/{name}' not used: ", dir.display());
    refused(
        &dir,
        &["callgrind.out.3999999999"],
        &[
            "nothing to name",
            &(at("perf-3999999999.map") + "empty"),
            &(at("jit-3999999999.dump") + "not readable as a jitdump or perf map"),
        ],
    );
}

#[test]
fn an_output_in_a_folder_that_cannot_take_it_is_named_with_why() {
    let dir = util::scratch("inputs-no-folder");
    fixture_run(&dir);
    refused(
        &dir,
        &["callgrind.out.9747", "-o", "missing/named.out"],
        &["cannot write 'missing/named.out' in 'missing': it does not exist; give -o"],
    );
}

#[test]
fn completions_and_man_pages_come_from_the_cli_definition() {
    let dir = util::scratch("inputs-completions");
    let bash = run(&dir, &["completions", "bash"]);
    assert!(bash.status.success());
    let bash = String::from_utf8_lossy(&bash.stdout);
    for word in [
        "annotate",
        "record",
        "clean",
        "completions",
        "--out-dir",
        "--bias",
    ] {
        assert!(bash.contains(word), "bash completion lacks {word}");
    }
    assert_eq!(run(&dir, &["completions", "tcsh"]).status.code(), Some(2));
    let man = run(&dir, &["man"]);
    let page = String::from_utf8_lossy(&man.stdout);
    assert!(
        page.starts_with(".ie") || page.contains(".TH callgrind-jit "),
        "{page}"
    );
    let record = run(&dir, &["man", "record"]);
    let page = String::from_utf8_lossy(&record.stdout);
    assert!(page.contains(".TH callgrind-jit-record "), "{page}");
    assert!(page.contains("MVM_SPESH_BLOCKING"), "{page}");
    assert_eq!(run(&dir, &["man", "nope"]).status.code(), Some(2));
}

#[test]
fn control_characters_in_names_read_alike_from_both_files_and_never_reach_the_terminal() {
    let dir = util::scratch("inputs-control-names");
    let fixture = util::fixture("c-demo");
    std::fs::copy(
        fixture.join("callgrind.out.9747"),
        dir.join("callgrind.out.9747"),
    )
    .unwrap();
    // A JIT may register any bytes; jit-client keeps tabs and escapes in
    // both files. Same length as "sum_to", patched into the jitdump.
    let hostile = b"s\t\x1b[2K";
    let mut dump = std::fs::read(fixture.join("jit-9747.dump")).unwrap();
    let at = dump.windows(7).position(|w| w == b"sum_to\0").unwrap();
    dump[at..at + 6].copy_from_slice(hostile);
    std::fs::write(dir.join("jit-9747.dump"), &dump).unwrap();
    let parsed = jitdump::read(&dump).unwrap();
    let mut map = Vec::new();
    for (_, record) in &parsed.records {
        if let jitdump::Record::Load(l) = record {
            map.extend(format!("{:x} {:x} ", l.code_addr, l.code_size).bytes());
            map.extend_from_slice(l.name);
            map.push(b'\n');
        }
    }
    assert!(map.windows(6).any(|w| w == hostile));
    std::fs::write(dir.join("perf-9747.map"), &map).unwrap();
    let out = util::annotate(
        &dir,
        &[
            "callgrind.out.9747",
            "jit-9747.dump",
            "perf-9747.map",
            "-o",
            "out",
        ],
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(!said.contains("address reuse"), "{said}");
    assert!(
        !out.stderr.contains(&0x1b) && !out.stdout.contains(&0x1b),
        "{said}"
    );
    let report = util::callgrind_annotate(&dir.join("out"), &["--auto=no"]);
    assert!(report.contains("sum.calc:s__[2K "), "{report}");
}
