//! annotate's rewriter on real profiles: costs conserved, one identity per
//! JIT function in both readers' rules, untouched input when nothing is
//! known, and callgrind_annotate (the real one) reading the result.

use annotate::callgrind::Reading;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use annotate::callgrind::Stats;
use annotate::symbols::SymbolTable;

use crate::expand;
use crate::identity::{self, Functions};
use crate::rewriting::{rewrite_bytes, rewrite_pass, table, Pass};
use crate::util;

fn lines_with<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
    text.lines().filter(|l| l.starts_with(prefix)).collect()
}

/// Every invariant a rewritten profile must keep.
pub fn check(input: &str, output: &str, table: &SymbolTable) {
    assert_eq!(
        identity::self_costs(input),
        identity::self_costs(output),
        "self cost per event changed"
    );
    for key in [
        "totals:",
        "summary:",
        "events:",
        "positions:",
        "cmd:",
        "pid:",
        "part:",
        "desc:",
    ] {
        assert_eq!(
            lines_with(input, key),
            lines_with(output, key),
            "'{key}' lines changed"
        );
    }
    let before = identity::functions(input);
    let after = identity::functions(output);
    let jit_objects: Vec<String> = table
        .sources()
        .iter()
        .map(|s| basename(&s.object))
        .collect();
    // No new orphan, not even one in place of an old one.
    let was_orphan = before.kc_orphans();
    let new_kc: Vec<_> = after
        .kc_orphans()
        .into_iter()
        .filter(|t| !was_orphan.contains(t))
        .collect();
    assert!(new_kc.is_empty(), "new KCachegrind orphans: {new_kc:?}");
    assert!(
        after
            .kc_orphans()
            .iter()
            .all(|t| !jit_objects.contains(&t.2)),
        "JIT callee never defined: {:?}",
        after.kc_orphans()
    );
    let was_orphan = before.ca_orphans();
    let new_ca: Vec<_> = after
        .ca_orphans()
        .into_iter()
        .filter(|n| !was_orphan.contains(n))
        .collect();
    assert!(
        new_ca.is_empty(),
        "new callgrind_annotate orphans: {new_ca:?}"
    );
    let (kc_expected, ca_expected) = expected_identities(table);
    assert_eq!(
        after.kc_split(&kc_expected, &jit_objects),
        Vec::new(),
        "JIT function split (KCachegrind)"
    );
    assert_eq!(
        after.ca_split(&ca_expected),
        Vec::<String>::new(),
        "JIT function split (callgrind_annotate)"
    );
    assert_eq!(
        unnamed_jit(&after, table),
        Vec::<String>::new(),
        "address-named functions left inside JIT ranges"
    );
}

/// What each JIT symbol must look like: (name, file, object) basenames
/// for KCachegrind, (file, name) for callgrind_annotate.
fn expected_identities(
    table: &SymbolTable,
) -> (BTreeSet<identity::Triple>, BTreeSet<(String, String)>) {
    let mut kc = BTreeSet::new();
    let mut ca = BTreeSet::new();
    for s in table.ids().map(|id| table.symbol(id)) {
        let file = s.file.map_or("<jit>".into(), |f| table.file(f).to_string());
        let object = &table.sources()[s.source].object;
        kc.insert((s.name.clone(), basename(&file), basename(object)));
        ca.insert((file, s.name.clone()));
    }
    (kc, ca)
}

/// Functions under `???` still named by an address inside a JIT range.
fn unnamed_jit(f: &Functions, table: &SymbolTable) -> Vec<String> {
    f.kc_defined
        .iter()
        .chain(&f.kc_called)
        .filter(|t| t.2 == "???")
        .filter(|t| {
            let addr = crate::oracle::address(t.0.split('\'').next().unwrap_or_default());
            addr.is_some_and(|a| table.lookup(a).is_some())
        })
        .map(|t| t.0.clone())
        .collect()
}

fn basename(s: &str) -> String {
    s.rsplit('/').next().unwrap_or(s).to_string()
}

/// Rewrites a fixture profile with its sources, checks it, writes it to a
/// scratch folder and returns (output path, stats).
pub fn annotate_fixture(scratch: &Path, profile: &Path, sources: &[PathBuf]) -> (PathBuf, Stats) {
    let table = table(sources);
    let input = std::fs::read(profile).unwrap();
    let (output, stats) = rewrite_bytes(&input, &table, 1 << 16);
    check(
        &String::from_utf8_lossy(&input),
        &String::from_utf8_lossy(&output),
        &table,
    );
    let out = scratch.join(format!(
        "callgrind.jit.out.{}",
        profile.extension().unwrap().to_string_lossy()
    ));
    std::fs::write(&out, &output).unwrap();
    (out, stats)
}

pub fn files(dir: &str, names: &[&str]) -> Vec<PathBuf> {
    names.iter().map(|n| util::fixture(dir).join(n)).collect()
}

#[test]
fn moarvm_words_names_every_jit_frame() {
    let dir = util::scratch("moarvm-words");
    let profile = util::fixture("moarvm-words/callgrind.out.2422");
    let (out, stats) = annotate_fixture(&dir, &profile, &files("moarvm-words", &["perf-2422.map"]));
    assert_eq!(stats.total, 3_447_052_639);
    // 7.3% of all Ir sits in the map's ranges (fixture README).
    assert!(
        (252_000_000..254_000_000).contains(&stats.jit_total()),
        "{}",
        stats.jit_total()
    );
    let report = util::callgrind_annotate(&out, &["--threshold=100"]);
    // The truth, from the input read by callgrind_annotate: every range the
    // map names `(-e:1)` (MoarVM compiled that frame twice: one function)
    // holds the pseudo-functions callgrind named by an address in it.
    let map = std::fs::read_to_string(util::fixture("moarvm-words/perf-2422.map")).unwrap();
    let ranges: Vec<(u64, u64)> = map
        .lines()
        .filter(|l| l.ends_with(" (-e:1)"))
        .map(|l| {
            let mut f = l
                .split(' ')
                .map(|h| u64::from_str_radix(h, 16).unwrap_or(0));
            let (start, size) = (f.next().unwrap(), f.next().unwrap());
            (start, start + size)
        })
        .collect();
    assert_eq!(ranges.len(), 2);
    let input = util::callgrind_annotate(&profile, &["--threshold=100"]);
    let in_range = |l: &str| {
        let Some(at) = l.find("???:0x") else {
            return false;
        };
        let addr = u64::from_str_radix(&l[at + 6..at + 22], 16).unwrap_or(0);
        ranges.iter().any(|&(s, e)| (s..e).contains(&addr))
    };
    let truth = util::costs_where(&input, in_range);
    assert_eq!(truth, 206_497_683, "the fixture README's figure");
    let named = util::costs_where(&report, |l| l.contains("-e:<anon -e:1>"));
    assert_eq!(named, truth, "{report}");
    assert!(!report.contains("0x000000000960e000"), "{report}");
    assert!(
        report.contains("SETTING::src/core.c/Str.pm6:pull-one"),
        "{report}"
    );
}

#[test]
fn rakudo_fib_names_the_programs_own_subs() {
    let dir = util::scratch("rakudo-fib");
    let profile = util::fixture("rakudo-fib/callgrind.out.9687");
    let (out, _) = annotate_fixture(&dir, &profile, &files("rakudo-fib", &["perf-9687.map"]));
    let report = util::callgrind_annotate(&out, &["--inclusive=yes", "--threshold=100"]);
    assert!(report.contains("fib.raku:fib ["), "{report}");
    assert!(report.contains("fib.raku:tally ["), "{report}");
}

#[test]
fn c_demo_gets_names_and_per_line_costs_from_the_jitdump() {
    let dir = util::scratch("c-demo");
    let profile = util::fixture("c-demo/callgrind.out.9747");
    let (out, stats) = annotate_fixture(&dir, &profile, &files("c-demo", &["jit-9747.dump"]));
    assert_eq!(stats.jit_cost.len(), 2);
    let include = util::root().join("examples/c");
    let report = util::callgrind_annotate(
        &out,
        &["--auto=yes", &format!("--include={}", include.display())],
    );
    assert!(report.contains("sum.calc:sum_to ["), "{report}");
    assert!(report.contains("sum.calc:report ["), "{report}");
    // The loop body (lines 4 and 5) ran 10 x 1000 times: 1 and 2 instructions.
    let line = |text: &str| {
        report
            .lines()
            .find(|l| l.contains(text))
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        line("while n > 0 {").trim_start().starts_with("10,000"),
        "{}",
        line("while n > 0 {")
    );
    assert!(
        line("acc = acc + n; n = n - 1")
            .trim_start()
            .starts_with("20,000"),
        "{report}"
    );
}

#[test]
fn c_demo_parts_and_threads_share_one_symbol_table() {
    let dir = util::scratch("c-demo-parts");
    let sources = files("c-demo-parts", &["jit-9754.dump"]);
    let mut named = 0;
    for part in ["callgrind.out.9754-01", "callgrind.out.9754.1-01"] {
        let (_, stats) =
            annotate_fixture(&dir, &util::fixture("c-demo-parts").join(part), &sources);
        named += stats.jit_cost.len();
    }
    assert!(named >= 2, "the JIT functions are named in some part");
    let (_, stats) = annotate_fixture(
        &dir,
        &util::fixture("c-demo-parts/combined.out.9775"),
        &files("c-demo-parts", &["jit-9775.dump"]),
    );
    assert_eq!((stats.parts, stats.jit_cost.len()), (2, 2));
}

#[test]
fn without_symbols_the_output_is_the_input_byte_for_byte() {
    let empty = table(&[]);
    for profile in [
        "moarvm-words/callgrind.out.2422",
        "rakudo-fib/callgrind.out.9687",
        "c-demo/callgrind.out.9747",
        "c-demo-parts/combined.out.9775",
    ] {
        let input = std::fs::read(util::fixture(profile)).unwrap();
        let (output, _) = rewrite_bytes(&input, &empty, 1 << 16);
        assert!(output == input, "{profile} changed");
    }
}

#[test]
fn lines_longer_than_the_room_between_chunks_are_kept_whole() {
    // The reader's chunks are 1 MiB with 64 KiB of room in front for the
    // unfinished line of the one before; these names do not fit there.
    let table = table(&files("moarvm-words", &["perf-2422.map"]));
    let profile = std::fs::read(util::fixture("moarvm-words/callgrind.out.2422")).unwrap();
    let (plain, _) = rewrite_bytes(&profile, &table, 1 << 16);
    let mut input = profile.clone();
    let mut want = plain.clone();
    for (i, len) in [70_000usize, 300_000, 1_000_000].into_iter().enumerate() {
        let name = "n".repeat(len);
        let block = format!("fl=(9{i}) long.c\nfn=(9{i}) {name}\n0x10 3 7\n+2 * 5\n\n");
        input.extend_from_slice(block.as_bytes());
        want.extend_from_slice(block.as_bytes());
    }
    input.extend_from_slice(&profile[profile.len() / 2..]);
    let (output, _) = rewrite_bytes(&input, &table, 1 << 16);
    assert!(output.len() > want.len(), "the tail was rewritten too");
    assert!(output.starts_with(&want), "long lines changed the output");
}

#[test]
fn read_chunk_size_does_not_change_the_output() {
    let table = table(&files("moarvm-words", &["perf-2422.map"]));
    let input = std::fs::read(util::fixture("moarvm-words/callgrind.out.2422")).unwrap();
    let (reference, _) = rewrite_bytes(&input, &table, 1 << 16);
    for chunk in [1, 7] {
        assert!(
            rewrite_bytes(&input, &table, chunk).0 == reference,
            "chunk {chunk} differs"
        );
    }
}

#[test]
fn crlf_input_is_read_and_written_as_lf() {
    let table = table(&files("c-demo", &["jit-9747.dump"]));
    let input = std::fs::read(util::fixture("c-demo/callgrind.out.9747")).unwrap();
    let crlf: Vec<u8> = String::from_utf8(input.clone())
        .unwrap()
        .replace('\n', "\r\n")
        .into_bytes();
    assert!(rewrite_bytes(&crlf, &table, 1 << 16).0 == rewrite_bytes(&input, &table, 1 << 16).0);
}

#[test]
fn the_checker_catches_the_split_in_half_defect() {
    // The MoarVM developer's hand patch: rename the address, keep ob/fl/cob/cfi.
    let table = table(&files("c-demo", &["jit-9747.dump"]));
    let input = std::fs::read_to_string(util::fixture("c-demo/callgrind.out.9747")).unwrap();
    let naive = input
        .replace("0x000000000483c000", "sum_to")
        .replace("0x000000000483c040", "report");
    let (kc, ca) = expected_identities(&table);
    let jit_objects: Vec<String> = table
        .sources()
        .iter()
        .map(|s| basename(&s.object))
        .collect();
    let f = identity::functions(&naive);
    assert!(!f.kc_split(&kc, &jit_objects).is_empty());
    assert!(!f.ca_split(&ca).is_empty());
}

/// Decompresses `name.gz` from a fixture folder into `dir`.
pub fn gunzip(fixture: &str, name: &str, dir: &Path) -> PathBuf {
    let out = dir.join(name);
    let data = util::run_ok(
        std::process::Command::new("gzip")
            .arg("-dc")
            .arg(util::fixture(fixture).join(format!("{name}.gz"))),
    )
    .stdout;
    std::fs::write(&out, data).unwrap();
    out
}

#[test]
fn a_profile_is_read_once_unless_re_entry_or_its_layout_asks_again() {
    let reads = |profile: &Path, sources: &[PathBuf]| {
        let input = std::fs::read(profile).unwrap();
        rewrite_bytes(&input, &table(sources), 1 << 16).1.reads
    };
    // Nothing to name: one reading.
    let demo = util::fixture("c-demo/callgrind.out.9747");
    assert_eq!(reads(&demo, &[]), [Reading::First]);
    // MoarVM's JIT resumes nothing: one reading with its symbols too.
    let moar = util::fixture("moarvm-words/callgrind.out.2422");
    let moar_map = files("moarvm-words", &["perf-2422.map"]);
    assert_eq!(reads(&moar, &moar_map), [Reading::First]);
    // A JIT function starting with a relative position after native
    // lines (not callgrind's own layout): the lazy reading copied those
    // lines undecoded, so it reads back from the first of them to the
    // JIT function's line, and goes on.
    let case = util::root().join("tests/data/relative-after-jit");
    let dump = case.join("jit-9747.dump");
    let head = "positions: instr line\nevents: Ir\nob=(1) /tmp/demo\nfl=(1) demo.c\nfn=(1) main\n";
    let undecoded = "0x401000 60 3\n+1 +1 1\nob=(2) ???\nfl=(2) ???\nfn=(3) 0x000000000483c000\n";
    let input = format!("{head}{undecoded}+71544831 -60 1\ntotals: 5\n");
    let (out, stats) = rewrite_bytes(
        input.as_bytes(),
        &table(std::slice::from_ref(&dump)),
        1 << 16,
    );
    assert_eq!(stats.reads, [Reading::First]);
    assert_eq!(stats.read_back.times, 1);
    assert_eq!(stats.read_back.bytes, undecoded.len() as u64);
    // Placed where the exact reading places it: 0x401001 + 71544831 is
    // 0x483c000, the JIT function's first instruction.
    let (exact, _) = rewrite_pass(input.as_bytes(), &table(&[dump]), 1 << 16, Pass::Exact);
    let text = |b: &[u8]| String::from_utf8(b.to_vec()).unwrap();
    let records = expand::expand(&text(&out));
    assert_eq!(records, expand::expand(&text(&exact)));
    let at_jit =
        |r: &expand::Record| matches!(r, expand::Record::Cost { pos, .. } if pos[0] == 0x483c000);
    assert!(records.iter().any(at_jit), "{}", text(&out));
}
