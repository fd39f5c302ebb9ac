//! The summary's lines, from counts set by hand: each line's words and
//! figures, and when a line is left out.

use std::path::PathBuf;

use super::*;
use crate::symbols::{Decision, Writer};

/// A table of a perf map holding `map`.
fn table(map: &[u8]) -> SymbolTable {
    let mut table = SymbolTable::builder();
    table.add_perf_map("/run/perf-7.map".into(), map);
    table.build()
}

/// The report of one profile of pid 7 rewritten with `stats`.
fn report(table: SymbolTable, stats: Stats) -> Report {
    Report {
        pid: Some(7),
        profiles: vec![Rewritten {
            input: "callgrind.out.7".into(),
            output: "callgrind.jit.out.7".into(),
            stats,
            code_image: None,
            epoch: Epoch::None,
        }],
        symbols: table,
        ..Report::default()
    }
}

/// Stats of `total` Ir, read once.
fn stats(total: u64) -> Stats {
    Stats {
        events: vec!["Ir".into()],
        total,
        reads: vec![Reading::First],
        ..Stats::default()
    }
}

fn lines(report: &Report) -> Vec<String> {
    report.summary().lines().map(String::from).collect()
}

/// The summary's lines that start with `start`.
fn starting(report: &Report, start: &str) -> Vec<String> {
    lines(report)
        .into_iter()
        .filter(|l| l.starts_with(start))
        .collect()
}

#[test]
fn a_profile_read_once_or_more_says_how_often_and_why() {
    let said = |reads: Vec<Reading>, read_back: ReadBack| {
        let stats = Stats {
            reads,
            read_back,
            ..stats(10)
        };
        starting(&report(table(b""), stats), "wrote")
    };
    let none = ReadBack::default();
    assert_eq!(
        said(vec![Reading::First], none),
        ["wrote 'callgrind.jit.out.7' (from 'callgrind.out.7')"]
    );
    assert_eq!(
        said(vec![Reading::First, Reading::Reentry], none),
        ["wrote 'callgrind.jit.out.7' (from 'callgrind.out.7'; read 2 times: again for continuations to take out of arcs)"]
    );
    assert_eq!(
        said(vec![Reading::Plan, Reading::Write], none),
        ["wrote 'callgrind.jit.out.7' (from 'callgrind.out.7'; read 2 times: first for planning re-entry (the program's runtime resumes JIT code by calls), again for writing)"]
    );
    let three = vec![Reading::First, Reading::CombinedEpochs, Reading::Reentry];
    assert!(said(three, none)[0].contains(
        "read 3 times: again for several epochs in one file, then continuations to take out of arcs"
    ));
    let placed = ReadBack {
        times: 1,
        bytes: 40,
    };
    assert_eq!(
        said(vec![Reading::First], placed),
        ["wrote 'callgrind.jit.out.7' (from 'callgrind.out.7'; 1 relative positions placed by reading 40 bytes again (not callgrind's layout))"]
    );
}

#[test]
fn outputs_images_and_a_merge_are_named_where_written() {
    let mut report = report(table(b""), stats(10));
    report.profiles[0].output = "-".into();
    report.profiles[0].code_image = Some(("jit-code.x.elf".into(), 3));
    report.merged = Some("-".into());
    let said = lines(&report);
    assert!(said.contains(&"wrote standard output (from 'callgrind.out.7')".to_string()));
    assert!(said.contains(&"wrote 'jit-code.x.elf' (machine code of 3 JIT functions, for KCachegrind's Machine Code tab and objdump)".to_string()));
    assert!(said.contains(
        &"wrote standard output (1 profiles joined into one part, for callgrind_annotate)"
            .to_string()
    ));
    report.merged = Some("joined.out".into());
    let joined = starting(&report, "wrote 'joined.out'");
    assert_eq!(
        joined,
        ["wrote 'joined.out' (1 profiles joined into one part, for callgrind_annotate)"]
    );
    report.empty = vec![PathBuf::from("callgrind.out.7-02")];
    assert_eq!(
        starting(&report, "skipped"),
        ["skipped empty profile 'callgrind.out.7-02' (thread runs leave one)"]
    );
}

#[test]
fn the_symbol_files_are_named_with_their_ranges_and_why() {
    let mut report = report(table(b"1000 10 f\n2000 10 g\n"), stats(10));
    let map = PathBuf::from("/run/perf-7.map");
    report.provenance = vec![
        (map.clone(), "the pid's own".into()),
        ("/run/perf-8.map".into(), "another pid's: set aside".into()),
    ];
    assert_eq!(
        starting(&report, "symbols"),
        [
            "symbols of pid 7: '/run/perf-7.map' (2 code ranges; the pid's own)",
            "symbols of pid 7: '/run/perf-8.map' (another pid's: set aside)",
        ]
    );
    report.symbols.report.map_twins = vec![(0, 1)];
    report.folder = Some("/runs/a".into());
    assert_eq!(
        starting(&report, "symbols")[0],
        "symbols of pid 7 (the run in '/runs/a'): '/run/perf-7.map' (2 code ranges, and 1 the jitdump gives too, named from it; the pid's own)"
    );
    let nothing = Report {
        symbols: SymbolTable::default(),
        ..report
    };
    assert_eq!(
        starting(&nothing, "no jitdump"),
        ["no jitdump or perf map of pid 7 (the run in '/runs/a') given or found: nothing to name"]
    );
}

#[test]
fn a_bias_is_told_where_removed_or_where_the_writer_is_v8() {
    let decision = |shift, writer| Decision {
        shift,
        writer,
        records: 4,
        reason: "why",
    };
    let mut report = report(table(b""), stats(10));
    report.symbols.report.bias = vec![
        ("a.dump".into(), decision(0x40, Writer::Other)),
        ("b.dump".into(), decision(0, Writer::V8)),
        ("c.dump".into(), decision(0, Writer::Other)),
        ("d.dump".into(), decision(0, Writer::JitClient)),
    ];
    assert_eq!(
        starting(&report, "line addresses"),
        [
            "line addresses of 'a.dump': 0x40 bias removed from 4 DEBUG_INFO records (why)",
            "line addresses of 'b.dump': 0x0 bias removed from 4 DEBUG_INFO records (why)",
        ]
    );
}

#[test]
fn jit_cost_counts_names_and_ranges_and_lists_the_costly_unnamed_addresses() {
    // f twice (two ranges, one name) and g; the total 20,000.
    let table = table(b"1000 10 f\n2000 10 f\n3000 10 g\n");
    let id = |addr| table.lookup(addr).unwrap().symbol;
    let mut stats = stats(20_000);
    stats.jit_cost = [
        (id(0x1000), 6_000),
        (id(0x2000), 3_000),
        (id(0x3000), 1_000),
    ]
    .into();
    // 2 of 20,000 is 0.01%: listed; 1 is not. Six listed at most five,
    // by cost, then address.
    stats.unnamed_cost = [
        (0x50, 1),
        (0x40, 2),
        (0x10, 700),
        (0x30, 700),
        (0x20, 900),
        (0x60, 3),
        (0x70, 50),
    ]
    .into_iter()
    .collect();
    let report = report(table, stats);
    let said = lines(&report);
    let at = said
        .iter()
        .position(|l| l.starts_with("JIT functions"))
        .unwrap();
    assert_eq!(
        said[at..at + 7],
        [
            "JIT functions named: 2 (3 code ranges), holding 50.00% of Ir (10,000 of 20,000)",
            "still address-named (under ??? or a live-mode image): 11.78% of Ir",
            "  0x0000000000000020  900 (4.50%)",
            "  0x0000000000000010  700 (3.50%)",
            "  0x0000000000000030  700 (3.50%)",
            "  0x0000000000000070  50 (0.25%)",
            "  0x0000000000000060  3 (0.01%)",
        ]
    );
    assert!(!said.iter().any(|l| l.contains("0x0000000000000040")));
    assert!(!said
        .iter()
        .any(|l| l.starts_with("hint") || l.starts_with("warning")));
}

#[test]
fn a_cut_profile_live_images_and_a_missing_instr_column_are_told() {
    let symbols = table(b"1000 10 f\n");
    let f = symbols.lookup(0x1000).unwrap().symbol;
    let mut stats = stats(100);
    stats.ending = Ending::CutLine;
    stats.live_images = ["jit-live.1.so".to_string()].into();
    stats.has_line = true;
    stats.jit_cost = [(f, 40)].into();
    let said = lines(&report(symbols, stats.clone()));
    assert!(said
        .iter()
        .any(|l| l.starts_with("warning: a profile ends early")));
    assert!(said.contains(&"named by Valgrind itself (live mode): the code in 1 live-mode images, nothing left to name there".to_string()));
    let hint = said.iter().find(|l| l.starts_with("hint")).unwrap();
    assert!(hint.contains("(40 of Ir is JIT code's)"), "{hint}");
    // With instruction addresses, or no JIT cost, or no line column: no hint.
    for change in [
        |s: &mut Stats| s.has_instr = true,
        |s: &mut Stats| s.jit_cost.clear(),
        |s: &mut Stats| s.has_line = false,
    ] {
        let mut stats = stats.clone();
        change(&mut stats);
        // A table like the first: the same symbol numbers.
        let said = lines(&report(table(b"1000 10 f\n"), stats));
        assert!(!said.iter().any(|l| l.starts_with("hint")));
    }
}

#[test]
fn each_rewrite_count_has_its_line_only_where_not_zero() {
    let mut stats = stats(1_000);
    let quiet = lines(&report(table(b""), stats.clone()));
    // Nothing counted: no line but the output's and the JIT cost's.
    assert_eq!(
        quiet,
        [
            "wrote 'callgrind.jit.out.7' (from 'callgrind.out.7')",
            "JIT functions named: 0 (0 code ranges), holding 0.00% of Ir (0 of 1,000)",
            "still address-named (under ??? or a live-mode image): 0.00% of Ir",
        ]
    );
    stats.moved_cost = 250;
    stats.folded_calls = 3;
    stats.level_calls = 4;
    stats.unknown_lines = 5;
    stats.reentry.taken = 30;
    stats.reentry.held = 120;
    stats.reentry.unplaced = 10;
    stats.reentry.resumed = 40;
    stats.reentry.entry_points = 6;
    stats.reentry.called_back = 20;
    stats.reentry.called_back_held = 80;
    stats.reentry.between_levels = 15;
    stats.reentry.between_levels_held = 60;
    let said = lines(&report(table(b""), stats));
    let added: Vec<&String> = said.iter().filter(|l| !quiet.contains(l)).collect();
    let starts = [
        "moved to the JIT function whose code it is (entered by a jump, charged by callgrind to the jumper): 250 of Ir (25.00%)",
        "calls into the middle of a JIT function (not new activations) folded into self cost: 3",
        "calls into the middle of a JIT function from another of its recursion levels kept as calls between the levels",
        "entry points inside JIT functions (no call of the function returns there, as HotSpot's verified entries): 6;",
        "re-entry: cost of continuations (a JIT function resumed by a call into its middle) taken out of the calls they return from, which counted it twice: 30 of the 120 of Ir those calls held (25.00%)",
        "re-entry: continuations called back by JIT code through builtins (as V8's functions return) also taken out of the calls into that code: 20 of the 80 of Ir those calls held (25.00%)",
        "re-entry: continuations written at another recursion level than the one they resumed also taken out of the calls between the levels: 15 of the 60 of Ir those calls held (25.00%)",
        "note: re-entry: continuations with no call of their function to return from stay where callgrind counted them: 10 of the 40 of Ir the folded calls held (25.00%)",
        "warning: 5 lines with unknown keys passed through unchanged",
    ];
    assert_eq!(added.len(), starts.len(), "{added:#?}");
    for (line, start) in added.iter().zip(starts) {
        assert!(line.starts_with(start), "{line}");
    }
    assert!(added[2].ends_with(": 4"), "{}", added[2]);
}

#[test]
fn code_loaded_over_code_without_epochs_is_a_warning_naming_both() {
    let table = table(b"1000 10 old\n1000 10 new\n");
    let new = table.lookup(0x1000).unwrap().symbol;
    let mut stats = stats(100);
    stats.ambiguous = [new].into();
    stats.jit_cost = [(new, 70)].into();
    let said = lines(&report(table, stats));
    let at = said
        .iter()
        .position(|l| l.starts_with("warning: address reuse"))
        .unwrap();
    assert!(said[at].contains(": 1 functions charged"), "{}", said[at]);
    assert_eq!(
        said[at + 1],
        "  'new' (loaded last) is charged for 'old' too: 70 of Ir at stake"
    );
}

#[test]
fn epochs_and_the_table_s_own_problems_are_told() {
    let mut report = report(table(b""), stats(10));
    let mut combined = report.profiles.remove(0);
    combined.epoch = Epoch::Combined;
    let own = Rewritten {
        epoch: Epoch::Own,
        stats: stats(10),
        input: "callgrind.out.7.1".into(),
        output: "callgrind.jit.out.7.1".into(),
        code_image: None,
    };
    report.profiles = vec![combined, own];
    let symbols = &mut report.symbols.report;
    symbols.in_program = Some(("/usr/bin/node".into(), 12));
    symbols.problems = vec![
        (
            "/run/perf-7.map".into(),
            "last line has no newline".into(),
            1,
        ),
        ("/run/perf-7.map".into(), "perf map lines skipped".into(), 3),
    ];
    symbols.orphan_debug_info = 2;
    let said = lines(&report);
    let told = |start: &str| said.iter().filter(|l| l.starts_with(start)).count();
    assert_eq!(
        told("warning: 1 profiles hold several epochs in one file"),
        1
    );
    assert_eq!(told("address reuse: 1 profile parts named each"), 1);
    assert_eq!(
        told("12 ranges of the symbol files lie in the code of '/usr/bin/node' itself"),
        1
    );
    assert_eq!(
        told("warning: '/run/perf-7.map': last line has no newline"),
        1
    );
    assert!(said.contains(&"warning: '/run/perf-7.map': last line has no newline".to_string()));
    assert!(
        said.contains(&"warning: '/run/perf-7.map': perf map lines skipped (3 times)".to_string())
    );
    assert!(said.contains(&"warning: DEBUG_INFO records matching no CODE_LOAD: 2".to_string()));
}

#[test]
fn figures_are_grouped_by_thousands_and_shares_never_divide_by_zero() {
    let cases = [
        (0, "0"),
        (999, "999"),
        (1_000, "1,000"),
        (123_456, "123,456"),
        (1_234_567, "1,234,567"),
    ];
    for (n, want) in cases {
        assert_eq!(group(n), want);
    }
    assert_eq!(percent(5, 0), "0.00%");
    assert_eq!(percent(1, 3), "33.33%");
}
