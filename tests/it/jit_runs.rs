//! A JIT block's cost lines in runs (`rewrite/jit_run.rs`) against the
//! same lines rewritten one by one (`Rewrite::line_by_line`).

use std::path::{Path, PathBuf};

use crate::every_fixture::all_fixtures;
use crate::rewriting::table;
use crate::util;
use annotate::callgrind::Rewrite;

/// A JIT block's cost lines rewritten in runs at one place, and an
/// address-named block's copied in runs, give the bytes, JIT costs and
/// address-named costs that rewriting each line on its own gives, in both
/// passes.
#[test]
fn a_jit_run_writes_what_cost_line_writes() {
    let dir = util::scratch("jit-runs");
    let mut cases = all_fixtures(&dir);
    cases.push(odd_jit_lines(&dir));
    // A map that names none of the code: every JIT block is named by its
    // address, and its lines are copied in runs.
    let nothing = dir.join("perf-1.map");
    std::fs::write(&nothing, "10 10 nothing\n").unwrap();
    let unnamed: Vec<_> = cases
        .iter()
        .map(|(profile, _)| (profile.clone(), vec![nothing.clone()]))
        .collect();
    let mut address_named = 0;
    for (profile, sources) in cases.into_iter().chain(unnamed) {
        let table = table(&sources);
        let input = std::fs::read(&profile).unwrap();
        let name = format!("{} with {sources:?}", profile.display());
        for how in [Rewrite::new(&table), Rewrite::new(&table).every_position()] {
            let run = |how: Rewrite| {
                let mut out = Vec::new();
                let stats = how.run(std::io::Cursor::new(&input), &mut out).unwrap();
                let mut unnamed: Vec<_> = stats.unnamed_cost.into_iter().collect();
                unnamed.sort();
                (out, stats.jit_cost, unnamed)
            };
            let (runs, runs_cost, runs_unnamed) = run(how);
            let (lines, lines_cost, lines_unnamed) = run(how.line_by_line());
            assert!(runs == lines, "{name}: the outputs differ");
            assert_eq!(runs_cost, lines_cost, "{name}");
            assert_eq!(runs_unnamed, lines_unnamed, "{name}");
            address_named += runs_unnamed.iter().filter(|(_, c)| *c > 0).count();
        }
    }
    assert!(address_named > 1000, "{address_named} address-named blocks");
}

/// A JIT block's cost lines in the forms a run must give up on or write
/// as `cost_line` does: a trailing blank and no costs, no costs, steps
/// of 100 and more, `*`, a jump into another function's code and back, a
/// call into the block's own function before a jump out, and a function
/// met again after native code, its line in another file than its own;
/// and code outside every range that runs into a function's and back.
fn odd_jit_lines(dir: &Path) -> (PathBuf, Vec<PathBuf>) {
    let map = dir.join("perf-77.map");
    std::fs::write(&map, "1000 100 alpha\n1100 100 beta\n").unwrap();
    let dump = dir.join("jit-77.dump");
    std::fs::write(&dump, files_by_row()).unwrap();
    let alpha = [
        "0x1000 0 5",
        "+1 0 6",
        "+1 0 ",
        "+1 0",
        "* 0 7",
        "+150 0 3",
        "-140 0 2",
        "+300 0 4",
        "+1 0 1",
        "-300 0 2",
        "+2 0 3 4",
        "cfn=0x0000000000001000",
        "calls=1 0x1000 0",
        "+1 0 9",
        "+300 0 4",
        "-290 0 1",
    ];
    let gamma = ["0x2010 0 2", "+1 0 3", "+1 0 4"];
    // Code outside every range that runs into alpha's and comes back; its
    // first line relative to gamma's last (0x2012, line 0), which the
    // output wrote at another line and file: no run may copy it.
    let stub = [
        "+4078 +2 1",
        "+1 0 2",
        "+1 1 3",
        "0x1010 0 4",
        "+1 0 5",
        "0x3004 0 6",
        "+1 0 7",
        "* * 8",
        "+1 2",
    ];
    // The same in a block of the file the map's functions are written
    // under (`<jit>`): only what its lines are charged to tells them apart.
    let same_file = ["0x3100 0 1", "0x1010 0 2", "0x3104 0 3", "+1 0 4"];
    let text = format!(
        "# callgrind format\nversion: 1\npid: 77\ncmd: toy\npart: 1\n\n\
         positions: instr line\nevents: Ir\n\nob=???\nfl=???\n\
         fn=0x0000000000001000\n{}\n\nfn=0x0000000000002000\n{}\n\n\
         ob=/bin/toy\nfl=toy.c\nfn=main\n0x400 3 1\n\n\
         ob=???\nfl=???\nfn=0x0000000000002000\n{}\n\n\
         fn=0x0000000000003000\n{}\n\nfl=<jit>\nfn=0x0000000000003100\n{}\n\n\
         totals: 116\n",
        alpha.join("\n"),
        gamma.join("\n"),
        gamma.join("\n"),
        stub.join("\n"),
        same_file.join("\n")
    );
    let profile = dir.join("callgrind.out.77");
    std::fs::write(&profile, text).unwrap();
    (profile, vec![map, dump])
}

/// A jitdump of `gamma` at 0x2000, whose line at 0x2010 is in `b.toy`,
/// between lines in `a.toy`.
fn files_by_row() -> Vec<u8> {
    let mut dump = Vec::new();
    jitdump::write::header(&mut dump, 62, 77, 0);
    let rows = [
        (0x2000, 3, &b"a.toy"[..]),
        (0x2010, 5, b"b.toy"),
        (0x2030, 6, b"a.toy"),
    ];
    let entries = rows.map(|(addr, line, file)| jitdump::DebugEntry {
        addr,
        line,
        discrim: 0,
        file,
    });
    jitdump::write::debug_info(&mut dump, 0, 0x2000, entries.into_iter());
    let load = jitdump::CodeLoad {
        pid: 77,
        tid: 77,
        code_addr: 0x2000,
        code_size: 0x40,
        code_index: 0,
        name: b"gamma",
        code: None,
    };
    jitdump::write::code_load_head(&mut dump, 0, &load);
    dump.resize(dump.len() + 0x40, 0x90);
    dump
}
