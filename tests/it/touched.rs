//! Perf maps indexed for only the code a profile names
//! (`annotate::symbols::Touched`): the same outputs as the whole maps.

use std::path::PathBuf;

use crate::every_fixture::all_fixtures;
use crate::rewrite::gunzip;
use crate::rewriting::{rewrite_bytes, table_for, table_keeping};
use crate::util;
use annotate::symbols::mapped::MappedCode;
use annotate::symbols::{SymbolTable, Touched};

/// A table whose perf maps keep only the ranges on pages the profile
/// names rewrites every fixture as the whole table does, and counts the
/// maps' ranges as it does; V8's and HotSpot's maps keep fewer ranges
/// (other writers' maps are kept whole: their modules are told from
/// neighbouring ranges).
#[test]
fn a_table_of_what_the_profile_names_rewrites_as_the_whole_one() {
    let dir = util::scratch("touched");
    let mut cases = all_fixtures(&dir);
    let node_map = util::fixture("node-fib/perf-13064.map");
    cases.push((
        gunzip("node-fib", "callgrind.out.13064", &dir),
        vec![node_map],
    ));
    let maps_only = |sources: &[PathBuf]| {
        sources
            .iter()
            .all(|s| s.extension().is_some_and(|e| e == "map"))
    };
    let mut smaller = Vec::new();
    for (profile, sources) in cases.into_iter().filter(|(_, s)| maps_only(s)) {
        let file = std::fs::File::open(&profile).unwrap();
        let mut touched = Touched::default();
        let program = MappedCode::of_profile(&file).map_or(vec![], |p| p.segments);
        program.into_iter().for_each(|s| touched.keep_within(s));
        let touched = annotate::callgrind::touched::add(&[&file], touched);
        assert!(touched.is_some(), "every fixture reads");
        let whole = table_for(Some(&profile), &sources);
        let kept = table_keeping(Some(&profile), &sources, touched);
        let input = std::fs::read(&profile).unwrap();
        let name = profile.display().to_string();
        let (out, stats) = rewrite_bytes(&input, &kept, 1 << 16);
        let (want, want_stats) = rewrite_bytes(&input, &whole, 1 << 16);
        assert!(out == want, "{name}: the outputs differ");
        let named = |table: &SymbolTable, stats: &annotate::callgrind::Stats| {
            let costs = stats.jit_cost.iter();
            let mut costs: Vec<_> = costs
                .map(|(id, c)| (table.symbol(*id).name.clone(), *c))
                .collect();
            costs.sort();
            costs
        };
        assert_eq!(named(&kept, &stats), named(&whole, &want_stats), "{name}");
        assert_eq!(stats.reads, want_stats.reads, "{name}");
        for source in 0..sources.len() {
            assert_eq!(kept.ranges_of(source), whole.ranges_of(source), "{name}");
        }
        if kept.len() < whole.len() {
            smaller.push(profile.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    assert_eq!(smaller, ["callgrind.out.12436", "callgrind.out.13064"]);
}

/// A V8-style perf map of 120,000 functions (5 MiB) and a profile of
/// three of them: `annotate` keeps only those on the pages the profile
/// names, says so, and names the functions as it does when the profile is
/// too large to read ahead (padded with comments past 1/16 of the map).
#[test]
fn annotate_keeps_only_what_the_profile_names_of_a_large_v8_map() {
    let dir = util::scratch("touched-cli");
    let base = 0x7f00_0000_0000u64;
    let map: String = (0..120_000u64)
        .map(|i| {
            format!(
                "{:x} 40 JS:*fn_{i} /app/m.js:{}:1\n",
                base + i * 0x100,
                i + 1
            )
        })
        .collect();
    std::fs::write(dir.join("perf-4242.map"), &map).unwrap();
    let head = "# callgrind format\nversion: 1\npid: 4242\ncmd: ./service\n\
                part: 1\n\npositions: instr line\nevents: Ir\n\n";
    let mut body = String::new();
    for (i, n) in [(7u64, 10), (60_000, 20), (119_999, 30)] {
        let addr = base + i * 0x100;
        body += &format!("ob=???\nfl=???\nfn=0x{addr:016x}\n0x{addr:x} 0 {n}\n+4 0 1\n\n");
    }
    body += "totals: 63\n";
    let quick = dir.join("callgrind.out.4242");
    std::fs::write(&quick, format!("{head}{body}")).unwrap();
    let padding = "# padding\n".repeat(map.len() / 16 / 10 + 1);
    let padded = dir.join("padded.callgrind.out.4242");
    std::fs::write(&padded, format!("{head}{padding}{body}")).unwrap();
    let mut reports = Vec::new();
    for (profile, kept) in [(&quick, true), (&padded, false)] {
        let name = profile.file_name().unwrap().to_str().unwrap();
        let out = format!("{name}.jit");
        let run = util::annotate(&dir, &[name, "perf-4242.map", "-o", &out]);
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let summary = String::from_utf8_lossy(&run.stderr);
        let note = summary.lines().find(|l| l.contains("120000 code ranges"));
        let note = note.unwrap_or_else(|| panic!("{summary}"));
        // Three functions, and the others on their 4 KiB pages: 16 each.
        let says_kept = note.contains("120000 code ranges, 48 of them kept: those on pages");
        assert_eq!(says_kept, kept, "{note}");
        reports.push(util::callgrind_annotate(&dir.join(&out), &[]));
    }
    for (name, cost) in [("fn_7 ", 11), ("fn_60000 ", 21), ("fn_119999 ", 31)] {
        assert_eq!(util::cost_of(&reports[0], name), cost, "{}", reports[0]);
        assert_eq!(util::cost_of(&reports[1], name), cost, "{}", reports[1]);
    }
}
