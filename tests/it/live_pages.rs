//! Live mode never crashes or misleads a JIT: writable and dual-mapped
//! pages are left to the jitdump (memcheck clean), and a function that
//! shares a page with a live one is named by Valgrind too.

use std::path::Path;
use std::process::{Command, Output};

use crate::util;

fn valgrind(dir: &Path, tool_args: &[&str], exe: &Path, args: &[&str]) -> Output {
    Command::new("valgrind")
        .args(tool_args)
        .arg(exe)
        .args(args)
        .current_dir(dir)
        .env("TMPDIR", dir)
        .env("JITDUMPDIR", dir)
        .env("CALLGRIND_JIT_PERF_MAP", "0")
        .output()
        .unwrap()
}

fn left_to_the_jitdump(case: &str, says: &str) {
    let dir = util::scratch(&format!("live-pages-{case}"));
    let exe = util::c_program(&dir, "live_pages");
    let out = valgrind(
        &dir,
        &["--tool=memcheck", "--error-exitcode=99"],
        &exe,
        &[case],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "7 8\n", "{stderr}");
    assert!(stderr.contains("ERROR SUMMARY: 0 errors"), "{stderr}");
    // Once from us (Valgrind's log echoes it on a line of its own).
    let ours = stderr
        .lines()
        .filter(|l| l.starts_with("callgrind-jit: ") && l.contains(says));
    assert_eq!(ours.count(), 1, "one warning expected:\n{stderr}");
    // Named by the jitdump instead: both functions are in it.
    let dump = util::file_starting(&dir, "jit-").expect("a jitdump");
    let (names, _) = util::dump_names(&dump);
    assert_eq!(names, [format!("{case}_first"), format!("{case}_second")]);
}

#[test]
fn rwx_pages_stay_writable_for_the_jit() {
    left_to_the_jitdump("rwx", "writable (RWX)");
}

#[test]
fn a_dual_mapped_jit_runs_its_new_code() {
    left_to_the_jitdump("dual", "shared or file-backed");
}

#[test]
fn a_function_sharing_a_page_with_a_live_one_is_named_too() {
    let dir = util::scratch("live-pages-neighbour");
    let exe = util::c_program(&dir, "live_pages");
    let tool = [
        "--tool=callgrind",
        "--dump-instr=yes",
        "--callgrind-out-file=callgrind.out",
    ];
    let out = valgrind(&dir, &tool, &exe, &["neighbour"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "7 8\n", "{stderr}");
    assert!(!stderr.contains("live mode skips"), "{stderr}");
    // callgrind's own output, no annotate step: Valgrind named both, with
    // their lines (1 and 5), and the page's first image was replaced.
    let profile = dir.join("callgrind.out");
    let report = util::callgrind_annotate(&profile, &["--auto=no", "--threshold=100"]);
    for f in ["neighbour_first", "neighbour_second"] {
        assert!(
            report.contains(&format!("pages.calc:{f} [")),
            "{f}:\n{report}"
        );
    }
    let text = std::fs::read_to_string(&profile).unwrap();
    // The first cost line of f's own block (its id may be defined first at
    // a call site, as `cfn=(N) f`).
    let lines_of = |f: &str| {
        let id = text
            .lines()
            .find_map(|l| {
                l.strip_suffix(&format!(" {f}"))?
                    .split_once("=(")
                    .map(|(_, id)| id)
            })
            .unwrap_or_default()
            .trim_end_matches(')')
            .to_string();
        let block = text
            .split(&format!("\nfn=({id})"))
            .nth(1)
            .unwrap_or_default();
        block.lines().nth(1).unwrap_or_default().to_string()
    };
    // `0xADDR LINE COST`: the first cost line of each function.
    assert_eq!(
        lines_of("neighbour_first").split(' ').nth(1),
        Some("1"),
        "{text}"
    );
    assert_eq!(
        lines_of("neighbour_second").split(' ').nth(1),
        Some("5"),
        "{text}"
    );
}

#[test]
fn unregistered_code_under_a_live_image_counts_as_address_named() {
    let dir = util::scratch("live-pages-unregistered");
    let exe = util::c_program(&dir, "live_pages");
    let tool = [
        "--tool=callgrind",
        "--dump-instr=yes",
        "--callgrind-out-file=callgrind.out.1",
    ];
    let out = valgrind(&dir, &tool, &exe, &["unregistered"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dump = util::file_starting(&dir, "jit-").expect("a jitdump");
    let out = Command::new(util::cli())
        .args(["annotate", "callgrind.out.1"])
        .arg(&dump)
        .current_dir(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // The unregistered function ran 1000 x 2 instructions (mov, ret).
    let line = stderr
        .lines()
        .find(|l| l.contains("still address-named"))
        .unwrap_or_default();
    let top = stderr
        .lines()
        .skip_while(|l| !l.contains("still address-named"))
        .nth(1);
    assert!(!line.contains(" 0.00%"), "{stderr}");
    assert!(top.is_some_and(|l| l.contains("2,000")), "{stderr}");
}

/// Runs a live_pages case under callgrind (children traced, a profile
/// each); returns stderr and callgrind_annotate's list of each profile.
fn callgrind_case(case: &str) -> (String, Vec<String>) {
    let dir = util::scratch(&format!("live-pages-{case}"));
    let exe = util::c_program(&dir, "live_pages");
    let tool = [
        "--tool=callgrind",
        "--trace-children=yes",
        "--callgrind-out-file=callgrind.out.%p",
    ];
    let out = valgrind(&dir, &tool, &exe, &[case]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "7 8\n", "{stderr}");
    let mut lists = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("callgrind.out.") {
            lists.push(util::callgrind_annotate(
                &path,
                &["--auto=no", "--threshold=100"],
            ));
        }
    }
    (stderr, lists)
}

#[test]
fn code_above_jit_clients_data_page_is_named_by_valgrind() {
    let (stderr, lists) = callgrind_case("arena");
    assert!(!stderr.contains("not in ascending order"), "{stderr}");
    for f in ["arena_bottom", "arena_top"] {
        assert!(
            lists[0].contains(&format!("pages.calc:{f} [")),
            "{f}:\n{}",
            lists[0]
        );
    }
}

#[test]
fn after_fork_parent_and_child_each_map_into_their_own_folder() {
    let (stderr, lists) = callgrind_case("fork");
    assert!(!stderr.contains("live mode off"), "{stderr}");
    assert_eq!(lists.len(), 2, "{stderr}");
    let named = |f: &str| {
        lists
            .iter()
            .filter(|l| l.contains(&format!("pages.calc:{f} [")))
            .count()
    };
    assert_eq!(named("fork_child"), 1, "{lists:?}");
    assert_eq!(named("fork_parent_after"), 1, "{lists:?}");
    let parent = lists
        .iter()
        .find(|l| l.contains("fork_parent_after"))
        .unwrap();
    assert!(parent.contains("pages.calc:fork_parent ["), "{parent}");
}
