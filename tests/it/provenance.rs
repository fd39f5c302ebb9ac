//! Provenance, on real valgrind runs of a small C JIT (tests/c/provenance.c):
//! every name comes from the right process, the right file and the right
//! writer, and a profile that ends early is not taken for a whole one.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::expand::{self, Record};
use crate::util;

/// One run of the test JIT in a folder of its own under `dir`: its pid,
/// profile and jitdump.
pub struct Run {
    pub pid: u32,
    pub profile: PathBuf,
    pub dump: PathBuf,
}

pub fn run(dir: &Path, tag: &str, args: &[&str], extra: &[&str]) -> Run {
    let dir = dir.join(tag);
    std::fs::create_dir_all(&dir).unwrap();
    let prog = util::c_program(&dir, "provenance");
    // No perf map: the jitdump is the file under test (and /tmp stays clean).
    let env = [("CALLGRIND_JIT_PERF_MAP", "0")];
    let (pid, profile) = util::callgrind(&dir, extra, &prog, args, &env);
    let dump = dir.join(format!("jit-{pid}.dump"));
    assert!(dump.exists(), "{} has no jitdump", dir.display());
    Run { pid, profile, dump }
}

/// The address of the only function of a jitdump.
pub fn code_addr(dump: &Path) -> u64 {
    let data = std::fs::read(dump).unwrap();
    let parsed = jitdump::read(&data).unwrap();
    let load = parsed.records.iter().find_map(|(_, r)| match r {
        jitdump::Record::Load(load) => Some(load.code_addr),
        _ => None,
    });
    load.expect("a CODE_LOAD")
}

pub fn copy_into(dir: &Path, file: &Path) -> PathBuf {
    let to = dir.join(file.file_name().unwrap());
    std::fs::copy(file, &to).unwrap();
    to
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The Ir of `function` at source line `line`, read from the expanded
/// profile (positions `instr line`).
pub fn line_cost(profile: &Path, function: &str, line: u64) -> u64 {
    let text = std::fs::read_to_string(profile).unwrap();
    expand::expand(&text)
        .into_iter()
        .filter_map(|r| match r {
            Record::Cost { at, pos, costs } if at[3] == function && pos[1] == line => {
                costs.split_whitespace().next()?.parse::<u64>().ok()
            }
            _ => None,
        })
        .sum()
}

/// Functions callgrind_annotate lists with their cost.
pub fn listed(profile: &Path) -> String {
    util::callgrind_annotate(profile, &["--auto=no", "--threshold=100"])
}

#[test]
fn profiles_of_two_processes_are_named_from_their_own_files() {
    let dir = util::scratch("prov-two");
    let a = run(&dir, "a", &["hot_loop", "1000"], &[]);
    let b = run(&dir, "b", &["sum_to", "1000"], &[]);
    assert_eq!(
        code_addr(&a.dump),
        code_addr(&b.dump),
        "valgrind places the JIT code at one address in both runs: the hazard"
    );
    let both = dir.join("both");
    std::fs::create_dir_all(&both).unwrap();
    for file in [&a.profile, &a.dump, &b.profile, &b.dump] {
        copy_into(&both, file);
    }
    let (pa, pb) = (
        format!("callgrind.out.{}", a.pid),
        format!("callgrind.out.{}", b.pid),
    );
    let (da, db) = (format!("jit-{}.dump", a.pid), format!("jit-{}.dump", b.pid));
    for args in [
        vec![&pa[..], &pb[..]],
        vec![&pa[..], &pb[..], &da[..], &db[..]],
    ] {
        let out = util::annotate(&both, &args);
        assert!(out.status.success(), "{}", stderr(&out));
        let named_a = listed(&both.join(format!("callgrind.jit.out.{}", a.pid)));
        let named_b = listed(&both.join(format!("callgrind.jit.out.{}", b.pid)));
        assert!(
            named_a.contains("prov.calc:hot_loop") && !named_a.contains("sum_to"),
            "{named_a}"
        );
        assert!(
            named_b.contains("prov.calc:sum_to") && !named_b.contains("hot_loop"),
            "{named_b}"
        );
        let said = stderr(&out);
        assert!(
            said.contains(&format!("symbols of pid {}: ", a.pid)),
            "{said}"
        );
        assert!(
            said.contains(&format!("symbols of pid {}: ", b.pid)),
            "{said}"
        );
    }
}

#[test]
fn a_stale_dump_of_a_reused_pid_is_set_aside_by_its_times() {
    let dir = util::scratch("prov-reuse");
    let old = run(&dir, "old", &["stale_fn", "1000"], &[]);
    let fresh = run(&dir, "fresh", &["fresh_fn", "1000"], &[]);
    // An earlier process with the same pid left its dump in the current
    // folder: same name, same header pid, written an hour ago.
    let cwd = dir.join("cwd");
    std::fs::create_dir_all(&cwd).unwrap();
    let stale = cwd.join(format!("jit-{}.dump", fresh.pid));
    let mut data = std::fs::read(&old.dump).unwrap();
    data[20..24].copy_from_slice(&fresh.pid.to_ne_bytes());
    std::fs::write(&stale, data).unwrap();
    util::run_ok(
        std::process::Command::new("touch")
            .args(["-d", "1 hour ago"])
            .arg(&stale),
    );
    let profile = fresh.profile.to_str().unwrap();
    let out = util::annotate(&cwd, &[profile, "-o", "named.out"]);
    let said = stderr(&out);
    assert!(out.status.success(), "{said}");
    let named = listed(&cwd.join("named.out"));
    assert!(
        named.contains("fresh_fn") && !named.contains("stale_fn"),
        "{named}\n{said}"
    );
    assert!(said.contains("found, the newest of 2 candidates"), "{said}");
    assert!(
        said.contains("not used: older than the file used"),
        "{said}"
    );
}

#[test]
fn a_dump_of_another_process_is_refused_unless_forced() {
    let dir = util::scratch("prov-other");
    let a = run(&dir, "a", &["mine", "100"], &[]);
    let b = run(&dir, "b", &["theirs", "100"], &[]);
    let (profile, dump) = (a.profile.to_str().unwrap(), b.dump.to_str().unwrap());
    let out = util::annotate(&dir, &[profile, dump, "-o", "out"]);
    let said = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    let want = format!(
        "was written by pid {}, but the profiles are of pid {}",
        b.pid, a.pid
    );
    assert!(said.contains(&want) && said.lines().count() == 1, "{said}");
    assert!(!dir.join("out").exists());
    let out = util::annotate(&dir, &[profile, dump, "-o", "out", "--any-pid"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(listed(&dir.join("out")).contains("theirs"));
    // Found where runtimes put it, under this pid's name, but its header
    // names the other process.
    let beside = a
        .profile
        .parent()
        .unwrap()
        .join(format!("jit-{}.dump", a.pid));
    std::fs::copy(&b.dump, &beside).unwrap();
    // A perf map another process of this pid left in /tmp hours ago (the
    // pid reused on a machine that runs the suite often) is used: plain
    // annotate does not know when the run started. Not so the dump.
    let stale_map = Path::new(&format!("/tmp/perf-{}.map", a.pid)).exists();
    let out = util::annotate(&dir, &[profile, "-o", "found"]);
    let said = stderr(&out);
    assert!(said.contains("not used: its header names pid"), "{said}");
    if !stale_map {
        assert_eq!(out.status.code(), Some(1), "{said}");
        assert!(said.contains("nothing to name"), "{said}");
    }
}

#[test]
fn jit_client_lines_keep_their_place_after_a_64_byte_prologue() {
    let dir = util::scratch("prov-bias");
    let n = 1000;
    let r = run(&dir, "r", &["prologued", &n.to_string(), "64"], &[]);
    let out = util::annotate(&dir, &[r.profile.to_str().unwrap(), "-o", "out"]);
    let said = stderr(&out);
    assert!(out.status.success(), "{said}");
    // The loop: add, dec, jnz per iteration, all on line 11.
    assert_eq!(
        line_cost(&dir.join("out"), "prologued", 11),
        3 * n,
        "{said}"
    );
    assert!(!said.contains("bias removed"), "{said}");
}

#[test]
fn a_profile_that_ends_early_is_refused_unless_allowed() {
    let dir = util::scratch("prov-cut");
    let r = run(&dir, "r", &["whole", "100"], &[]);
    let text = std::fs::read_to_string(&r.profile).unwrap();
    let totals = text
        .rfind("\ntotals:")
        .expect("callgrind ends a part with totals:");
    let cases = [
        (
            "no-totals",
            &text[..totals + 1],
            "its last part has no totals: line",
        ),
        (
            "cut-line",
            &text[..text.len() - 4],
            "its last line is cut off",
        ),
    ];
    for (name, body, why) in cases {
        let profile = dir.join(format!("{name}.{}", r.pid));
        std::fs::write(&profile, body).unwrap();
        let dump = r.dump.to_str().unwrap();
        let out = util::annotate(&dir, &[profile.to_str().unwrap(), dump, "-o", name]);
        let said = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{said}");
        assert!(said.contains("ends early") && said.contains(why), "{said}");
        assert!(!dir.join(name).exists(), "no output for a refused profile");
        let allowed = [
            profile.to_str().unwrap(),
            dump,
            "-o",
            name,
            "--allow-truncated",
        ];
        let out = util::annotate(&dir, &allowed);
        let said = stderr(&out);
        assert!(out.status.success(), "{said}");
        assert!(
            said.contains("a profile ends early (--allow-truncated)"),
            "{said}"
        );
        assert!(listed(&dir.join(name)).contains("whole"));
    }
}

#[test]
fn a_name_that_reads_as_an_id_reads_back_whole_in_both_readers() {
    let dir = util::scratch("prov-id-name");
    let name = "(7) looks_like_id";
    let r = run(&dir, "r", &[name, "100"], &["--compress-strings=no"]);
    let out = util::annotate(&dir, &[r.profile.to_str().unwrap(), "-o", "out"]);
    assert!(out.status.success(), "{}", stderr(&out));
    // callgrind_annotate (util fails on its warnings, such as
    // "uninitialized $curr_fn"), and the model of KCachegrind's rules.
    assert!(listed(&dir.join("out")).contains(&format!("prov.calc:{name}")));
    let text = std::fs::read_to_string(dir.join("out")).unwrap();
    let functions = crate::identity::functions(&text);
    assert!(
        functions.kc_defined.iter().any(|t| t.0 == name),
        "{:?}",
        functions.kc_defined
    );
    assert!(
        functions.kc_orphans().is_empty(),
        "{:?}",
        functions.kc_orphans()
    );
    assert_eq!(line_cost(&dir.join("out"), name, 11), 300);
}

#[test]
fn a_symbol_file_on_stdin_serves_every_process_it_is_given_to() {
    let dir = util::scratch("prov-stdin");
    let a = run(&dir, "a", &["shared_fn", "100"], &[]);
    let b = run(&dir, "b", &["other_fn", "100"], &[]);
    let (pa, pb) = (a.profile.to_str().unwrap(), b.profile.to_str().unwrap());
    let out = util::annotate_from(&dir, &[pa, pb, "-", "--any-pid"], &a.dump);
    assert!(out.status.success(), "{}", stderr(&out));
    for r in [&a, &b] {
        let named = r
            .profile
            .parent()
            .unwrap()
            .join(format!("callgrind.jit.out.{}", r.pid));
        assert!(
            listed(&named).contains("prov.calc:shared_fn"),
            "{}",
            stderr(&out)
        );
    }
}
