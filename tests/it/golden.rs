//! Small golden cases of the rewriter: `tests/data/<case>/` holds `input`
//! (a callgrind profile), its symbol files (`*.dump`, `*.map`) and
//! `expected` (the rewrite, with the data folder written `$DATA`). Each
//! case is a module of two tests: its rewrite against `expected`
//! (expect-test shows the difference; `UPDATE_EXPECT=1 cargo test golden`
//! writes the files anew: read the diff before committing it), and the
//! oracle on it, in both modes.

use std::path::{Path, PathBuf};

use crate::{oracle, rewriting};

/// The workspace root, from the integration suite or from the
/// `callgrind-jit` package (annotate/tests/fast.rs includes this file).
fn root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    match manifest.ends_with("annotate") {
        true => manifest.parent().unwrap().to_path_buf(),
        false => manifest.to_path_buf(),
    }
}

fn cases() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root().join("tests/data"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "dump" || e == "map"))
        .collect();
    files.sort();
    files
}

/// A case's input and rewrite, as text, and the rewriter's stats.
fn rewrite_case(dir: &Path) -> (String, String, annotate::callgrind::Stats) {
    let input = std::fs::read(dir.join("input")).unwrap();
    let table = rewriting::table(&sources(dir));
    let (output, stats) = rewriting::rewrite_bytes(&input, &table, 1 << 16);
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
    (text(input), text(output), stats)
}

/// The rewrite in exact mode (every line decoded): the second path.
fn exact_rewrite(input: &str, sources: &[PathBuf]) -> String {
    let table = rewriting::table(sources);
    let pass = rewriting::Pass::Exact;
    let (output, _) = rewriting::rewrite_pass(input.as_bytes(), &table, 1 << 16, pass);
    String::from_utf8(output).unwrap()
}

/// The oracle on one case, in both modes; gives the calls it folds.
fn oracle_holds(dir: &Path) -> u64 {
    let (input, output, stats) = rewrite_case(dir);
    let name = dir.display().to_string();
    oracle_holds_on(&name, &input, &output, &stats, &sources(dir))
}

/// The oracle on `output`, the rewrite of `input` with `sources`, and on
/// the exact mode's rewrite; the summary's counts against the oracle's.
/// Gives the calls the oracle folds.
fn oracle_holds_on(
    name: &str,
    input: &str,
    output: &str,
    stats: &annotate::callgrind::Stats,
    sources: &[PathBuf],
) -> u64 {
    let symbols = oracle::Symbols::read(sources);
    oracle::check(name, input, output, &symbols);
    let exact = exact_rewrite(input, sources);
    oracle::check(&format!("{name} (exact mode)"), input, &exact, &symbols);
    let want = oracle::folded_calls(input, &symbols);
    assert_eq!(stats.folded_calls, want, "{name}: folded calls");
    let (total, jit) = oracle::self_costs(input, &symbols);
    assert_eq!(
        (stats.total, stats.jit_total()),
        (total, jit),
        "{name}: summary"
    );
    want
}

/// One case's rewrite against its `expected` file.
fn rewrites_as_expected(dir: &Path) {
    let data = root().join("tests/data");
    let (_, output, _) = rewrite_case(dir);
    let portable = output.replace(&data.display().to_string(), "$DATA");
    expect_test::expect_file![dir.join("expected")].assert_eq(&portable);
}

/// A module of two tests for each case folder, named as the folder.
macro_rules! cases {
    ($($module:ident = $folder:literal,)*) => {
        const FOLDERS: &[&str] = &[$($folder),*];
        $(mod $module {
            use super::*;
            fn dir() -> PathBuf {
                root().join("tests/data").join($folder)
            }
            #[test]
            fn rewrites_as_expected() {
                super::rewrites_as_expected(&dir());
            }
            #[test]
            fn the_oracle_holds() {
                oracle_holds(&dir());
            }
        })*
    };
}

cases! {
    called_back = "called-back",
    called_back_each_level = "called-back-each-level",
    called_back_from_continuation = "called-back-from-continuation",
    called_back_levels_over = "called-back-levels-over",
    called_back_lines = "called-back-lines",
    called_back_lowered_calls_its_level = "called-back-lowered-calls-its-level",
    called_back_lowered_level = "called-back-lowered-level",
    called_back_lowered_onto_callee = "called-back-lowered-onto-callee",
    called_back_reentered = "called-back-reentered",
    called_back_two_levels = "called-back-two-levels",
    calls = "calls",
    continuation_levels = "continuation-levels",
    copied_call_target = "copied-call-target",
    entry_call_site = "entry-call-site",
    entry_from_outside = "entry-from-outside",
    escaped_name_parts = "escaped-name-parts",
    fold_and_suffix = "fold-and-suffix",
    held_native_group = "held-native-group",
    jump_into_inlined = "jump-into-inlined",
    jump_to_stub = "jump-to-stub",
    jumps = "jumps",
    line_only = "line-only",
    line_only_jump = "line-only-jump",
    moved_calls = "moved-calls",
    moved_jump_as_call = "moved-jump-as-call",
    name_id_two_objects = "name-id-two-objects",
    native_callee_jit_target = "native-callee-jit-target",
    no_compression = "no-compression",
    own_continuation_other_level = "own-continuation-other-level",
    own_continuation_outside = "own-continuation-outside",
    relative_after_jit = "relative-after-jit",
    relative_after_native = "relative-after-native",
    stub_back_relative = "stub-back-relative",
    stub_jump_target = "stub-jump-target",
    stub_suffix = "stub-suffix",
}

#[test]
fn every_case_folder_has_its_tests() {
    let named: Vec<PathBuf> = FOLDERS
        .iter()
        .map(|f| root().join("tests/data").join(f))
        .collect();
    assert_eq!(cases(), named, "a case folder without its line in cases!");
}

#[test]
fn some_golden_case_folds_a_call() {
    let folded: u64 = cases().iter().map(|dir| oracle_holds(dir)).sum();
    assert!(folded > 0, "no golden case folds a call");
}

#[test]
fn the_oracle_holds_on_the_small_real_fixtures() {
    let fixtures = root().join("tests/fixtures");
    let cases = [
        ("c-demo/callgrind.out.9747", "c-demo/jit-9747.dump"),
        (
            "c-demo-parts/combined.out.9775",
            "c-demo-parts/jit-9775.dump",
        ),
        (
            "c-demo-variants/nocompress.callgrind.out.18156",
            "c-demo-variants/jit-18156.dump",
        ),
        (
            "c-demo-variants/lineonly.callgrind.out.18164",
            "c-demo-variants/jit-18164.dump",
        ),
        (
            "c-demo-variants/callers.callgrind.out.18172",
            "c-demo-variants/jit-18172.dump",
        ),
        (
            "c-demo-variants/instronly.callgrind.out.18180",
            "c-demo-variants/jit-18180.dump",
        ),
    ];
    for (profile, dump) in cases {
        let input = std::fs::read(fixtures.join(profile)).unwrap();
        let sources = [fixtures.join(dump)];
        let (output, stats) =
            rewriting::rewrite_bytes(&input, &rewriting::table(&sources), 1 << 16);
        let (input, output) = (
            String::from_utf8(input).unwrap(),
            String::from_utf8(output).unwrap(),
        );
        oracle_holds_on(profile, &input, &output, &stats, &sources);
    }
}
