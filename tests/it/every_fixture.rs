//! Every fixture at once: the fast pass against the reference, and the
//! oracle on every output.

use std::path::{Path, PathBuf};

use crate::expand::{self, Record};
use crate::oracle;
use crate::rewrite::{annotate_fixture, files, gunzip};
use crate::rewriting::{rewrite_bytes, rewrite_pass, table, Pass};
use crate::util;
use annotate::callgrind::{Output, Reading, Rewrite};

/// Every fixture profile with its symbol sources, and a generated one
/// (`dir` receives the decompressed and generated files).
pub fn all_fixtures(dir: &Path) -> Vec<(PathBuf, Vec<PathBuf>)> {
    let variants = util::fixture("c-demo-variants");
    let mut cases = vec![
        (
            util::fixture("moarvm-words/callgrind.out.2422"),
            files("moarvm-words", &["perf-2422.map"]),
        ),
        (
            util::fixture("rakudo-fib/callgrind.out.9687"),
            files("rakudo-fib", &["perf-9687.map"]),
        ),
        (
            util::fixture("c-demo/callgrind.out.9747"),
            files("c-demo", &["jit-9747.dump"]),
        ),
        (
            util::fixture("c-demo-parts/combined.out.9775"),
            files("c-demo-parts", &["jit-9775.dump"]),
        ),
        (
            gunzip("java-hot", "callgrind.out.12436", dir),
            files("java-hot", &["perf-12436.map"]),
        ),
        (
            gunzip("dotnet-fib", "callgrind.out.25773", dir),
            files("dotnet-fib", &["perf-25773.map"]),
        ),
        (
            gunzip("node-fib", "callgrind.out.13064", dir),
            vec![
                gunzip("node-fib", "jit-13064.dump", dir),
                util::fixture("node-fib/perf-13064.map"),
            ],
        ),
    ];
    for (variant, pid) in [
        ("nocompress", 18156),
        ("lineonly", 18164),
        ("callers", 18172),
        ("instronly", 18180),
    ] {
        cases.push((
            variants.join(format!("{variant}.callgrind.out.{pid}")),
            vec![variants.join(format!("jit-{pid}.dump"))],
        ));
    }
    for call_jit_percent in [15, 73] {
        let dir = dir.join(format!("generated-{call_jit_percent}"));
        let (profile, dump) = util::generated_profile(&dir, 2, call_jit_percent);
        cases.push((profile, vec![dump]));
    }
    cases
}

#[test]
fn fast_and_exact_mode_outputs_mean_the_same() {
    let dir = util::scratch("modes");
    for (profile, sources) in all_fixtures(&dir) {
        let table = table(&sources);
        let input = std::fs::read(&profile).unwrap();
        // The lazy pass itself: a real profile reads nothing back.
        let (fast, _) = rewrite_pass(&input, &table, 1 << 16, Pass::Lazy);
        let (exact, _) = rewrite_pass(&input, &table, 1 << 16, Pass::Exact);
        let name = profile.display().to_string();
        same_records(&name, &meaningful(fast), &meaningful(exact));
    }
}

/// An output that counts how often the rewriter emptied it.
#[derive(Default)]
struct Counted {
    bytes: Vec<u8>,
    restarts: usize,
}

impl std::io::Write for Counted {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.bytes.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Output for Counted {
    fn restart(&mut self) -> std::io::Result<()> {
        self.restarts += 1;
        self.bytes.clear();
        Ok(())
    }
}

/// The re-entry plan made first (a reading that writes nothing) gives
/// the bytes that writing, then emptying the output and writing again
/// gives, and writes the output once. By default it is made first
/// exactly where a profile needs it: the fixtures whose program is V8's
/// or HotSpot's (by their `cmd:`), and no other.
#[test]
fn re_entry_planned_first_writes_the_same_bytes_once() {
    let dir = util::scratch("plan-first");
    let (mut needed, mut planned_first) = (Vec::new(), Vec::new());
    for (profile, sources) in all_fixtures(&dir) {
        let table = table(&sources);
        let input = std::fs::read(&profile).unwrap();
        let name = profile.display().to_string();
        let run = |how: Rewrite| {
            let mut out = Counted::default();
            let stats = how.run(std::io::Cursor::new(&input), &mut out).unwrap();
            (out, stats)
        };
        let (late, late_stats) = run(Rewrite::new(&table).plan_reentry_first(false));
        let (planned, stats) = run(Rewrite::new(&table).plan_reentry_first(true));
        assert_eq!(planned.bytes, late.bytes, "{name}");
        assert_eq!(stats.jit_cost, late_stats.jit_cost, "{name}");
        assert_eq!(stats.reentry, late_stats.reentry, "{name}");
        assert_eq!(
            (planned.restarts, &stats.reads[..]),
            (0, &[Reading::Plan, Reading::Write][..]),
            "{name}"
        );
        assert_eq!(late.restarts, late_stats.reads.len() - 1, "{name}");
        let (_, default) = run(Rewrite::new(&table));
        // The generated profiles are told apart by their folder.
        let short = match name.rsplit('/').take(2).collect::<Vec<_>>()[..] {
            [file, folder] if folder.starts_with("generated") => format!("{folder}/{file}"),
            [file, ..] => file.to_string(),
            _ => unreachable!(),
        };
        if late_stats.reads == [Reading::First, Reading::Reentry] {
            needed.push(short.clone());
        }
        if default.reads == stats.reads {
            planned_first.push(short);
        }
    }
    // The generated profiles name no runtime: written, then written
    // again with the plan.
    let recorded = ["callgrind.out.12436", "callgrind.out.13064"];
    let generated = [
        "generated-15/callgrind.out.4242",
        "generated-73/callgrind.out.4242",
    ];
    assert_eq!(needed, [&recorded[..], &generated[..]].concat());
    assert_eq!(planned_first, recorded);
}

/// HotSpot's perf map plans re-entry first under a launcher of any name:
/// the map's first line shows HotSpot wrote it.
#[test]
fn a_hotspot_perf_map_plans_re_entry_first_whatever_the_program() {
    let dir = util::scratch("java-launcher");
    let profile = gunzip("java-hot", "callgrind.out.12436", &dir);
    let map = util::fixture("java-hot/perf-12436.map");
    let text = std::fs::read_to_string(&profile).unwrap();
    let cmd = text.lines().find(|l| l.starts_with("cmd:")).unwrap();
    let launcher = text.replacen(cmd, "cmd: /opt/ide/bin/launcher -jar app.jar", 1);
    let (_, stats) = rewrite_bytes(launcher.as_bytes(), &table(&[map]), 1 << 16);
    assert_eq!(stats.reads, [Reading::Plan, Reading::Write]);
}

/// Every fixture written as callgrind does not write it: every position
/// relative, each function's first too (the lazy pass reads back what it
/// copied undecoded, and reads the profile no more often than callgrind's
/// layout needs), CRLF line ends, names written out instead of ids. Each
/// output means what the profile as callgrind wrote it gives.
#[test]
fn other_encodings_of_a_profile_mean_the_same() {
    let dir = util::scratch("encodings");
    for (profile, sources) in all_fixtures(&dir) {
        let table = table(&sources);
        let input = std::fs::read_to_string(&profile).unwrap();
        let name = |how: &str| format!("{} ({how})", profile.display());
        let (want, as_written) = rewrite_bytes(input.as_bytes(), &table, 1 << 16);
        let want = meaningful(want);
        assert_eq!(as_written.read_back.times, 0, "{}", name("as written"));

        let relative = expand::all_relative(&input);
        let (got, stats) = rewrite_bytes(relative.as_bytes(), &table, 1 << 16);
        assert!(stats.read_back.times > 0, "{}", name("nothing read back"));
        assert!(stats.read_back.bytes < relative.len() as u64);
        assert_eq!(stats.reads, as_written.reads, "{}", name("relative"));
        same_records(&name("relative"), &meaningful(got), &want);
        let (got, _) = rewrite_pass(relative.as_bytes(), &table, 1 << 16, Pass::Exact);
        same_records(
            &name("relative, every position decoded"),
            &meaningful(got),
            &want,
        );

        let variants = [
            ("CRLF", input.replace('\n', "\r\n")),
            ("names written out", expand::names_spelled_out(&input)),
        ];
        for (how, variant) in variants {
            let (got, _) = rewrite_bytes(variant.as_bytes(), &table, 1 << 16);
            same_records(&name(how), &meaningful(got), &want);
        }
    }
}

/// The records of an output but cost lines of zeros, which mean nothing
/// (the lazy pass keeps a folded call's position that way where it copies
/// positions undecoded).
fn meaningful(out: Vec<u8>) -> Vec<Record> {
    let records = expand::expand(&String::from_utf8(out).unwrap()).into_iter();
    records.filter(|r| !r.is_zero_cost()).collect()
}

fn same_records(name: &str, got: &[Record], want: &[Record]) {
    if let Some(i) = (0..got.len().min(want.len())).find(|&i| got[i] != want[i]) {
        panic!(
            "{name}: record {i} differs:\ngot:  {:?}\nwant: {:?}",
            got[i], want[i]
        );
    }
    assert_eq!(got.len(), want.len(), "{name}");
}

#[test]
fn the_oracle_holds_on_every_fixture() {
    let dir = util::scratch("oracle-fixtures");
    for (profile, sources) in all_fixtures(&dir) {
        let input = std::fs::read(&profile).unwrap();
        let table = crate::rewriting::table_for(Some(&profile), &sources);
        let (output, _) = rewrite_bytes(&input, &table, 1 << 16);
        let symbols = oracle::Symbols::read(&sources);
        oracle::check(
            &profile.display().to_string(),
            &String::from_utf8(input).unwrap(),
            &String::from_utf8(output).unwrap(),
            &symbols,
        );
    }
}

#[test]
fn option_variants_keep_every_invariant() {
    let dir = util::scratch("variants");
    let folder = util::fixture("c-demo-variants");
    for (variant, pid) in [
        ("nocompress", 18156),
        ("lineonly", 18164),
        ("callers", 18172),
        ("instronly", 18180),
    ] {
        let profile = folder.join(format!("{variant}.callgrind.out.{pid}"));
        let (out, stats) =
            annotate_fixture(&dir, &profile, &[folder.join(format!("jit-{pid}.dump"))]);
        assert!(!stats.jit_cost.is_empty(), "{variant}: nothing named");
        // --auto=no: callgrind_annotate itself warns on line-less profiles.
        let report = util::callgrind_annotate(&out, &["--threshold=100", "--auto=no"]);
        // The truth from the program (examples/c/demo.c, `demo 1000`):
        // sum_to runs 3 + 3n + 1 instructions per call, report 7, 10 calls
        // each; with --separate-callers each is split over caller chains.
        let n = 1000;
        let sum_to = util::costs_where(&report, |l| l.contains("sum.calc:sum_to"));
        let report_fn = util::costs_where(&report, |l| l.contains("sum.calc:report"));
        assert_eq!(sum_to, 10 * (3 * n + 4), "{variant}: {report}");
        assert_eq!(report_fn, 10 * 7, "{variant}: {report}");
        if variant == "callers" {
            assert!(
                report.contains("sum.calc:report'main'(below main)"),
                "{variant}: {report}"
            );
            assert!(
                report.contains(":_dl_runtime_resolve_xsave'print_result'report"),
                "{variant}: {report}"
            );
        }
    }
}
