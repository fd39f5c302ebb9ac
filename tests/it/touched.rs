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
