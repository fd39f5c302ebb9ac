//! The Node 20 fixture: V8's jitdump and perf map name every JIT frame,
//! and the builtins inside the `node` binary keep the binary's names.

use crate::oracle;
use crate::rewrite::{annotate_fixture, gunzip};
use crate::rewriting::{rewrite_bytes, table};
use crate::util;
use annotate::callgrind::Reading;
use std::path::Path;

#[test]
fn node_v8_jitdump_and_map_name_every_jit_frame() {
    let dir = util::scratch("node-fib");
    let profile = gunzip("node-fib", "callgrind.out.13064", &dir);
    let dump = gunzip("node-fib", "jit-13064.dump", &dir);
    let sources = [dump, util::fixture("node-fib/perf-13064.map")];
    let (out, stats) = annotate_fixture(&dir, &profile, &sources);
    assert!(stats.jit_cost.len() > 200, "{}", stats.jit_cost.len());
    // V8 resumes functions by calls into their middle: the profile's
    // `cmd:` is node's, so a first reading makes the re-entry plan and
    // the second writes the output, never a third.
    assert_eq!(stats.reads, [Reading::Plan, Reading::Write]);
    let report = util::callgrind_annotate(&out, &["--threshold=100"]);
    assert!(report.contains("/tmp/nd/fib.js:fib'2 ["), "{report}");
    assert!(report.contains("/tmp/nd/fib.js:sumTo ["), "{report}");
    let table = table(&sources);
    let corrupt: usize = table
        .report
        .problems
        .iter()
        .filter(|p| p.1.contains("DEBUG_INFO"))
        .map(|p| p.2)
        .sum();
    let truth = oracle::dropped_tables(&sources[0]);
    assert_eq!(truth, 5, "the fixture README's figure");
    assert_eq!(
        corrupt, truth,
        "V8's corrupt DEBUG_INFO records are counted"
    );
    let v8 = annotate::symbols::Writer::V8;
    assert!(
        table
            .report
            .bias
            .iter()
            .any(|(_, d)| d.writer == v8 && d.shift == 0x40),
        "V8's +0x40 bias is applied: {:?}",
        table.report.bias
    );
}

/// The re-entry plan is made first for a program of any name (an
/// embedder) whose jitdump or perf map V8 wrote; a perf map whose first
/// line shows no writer leaves the program's name all there is to go by,
/// and a profile of an unknown one is written, then written again with
/// the plan.
#[test]
fn a_v8_symbol_file_plans_re_entry_first_whatever_the_program() {
    let dir = util::scratch("node-embedder");
    let profile = gunzip("node-fib", "callgrind.out.13064", &dir);
    let dump = gunzip("node-fib", "jit-13064.dump", &dir);
    let map = util::fixture("node-fib/perf-13064.map");
    let text = std::fs::read_to_string(&profile).unwrap();
    let cmd = text.lines().find(|l| l.starts_with("cmd:")).unwrap();
    let embedder = text.replacen(cmd, "cmd: /opt/app/embedder app.js", 1);
    let reads = |sources: &[std::path::PathBuf]| {
        let (_, stats) = rewrite_bytes(embedder.as_bytes(), &table(sources), 1 << 16);
        stats.reads
    };
    let planned = [Reading::Plan, Reading::Write];
    assert_eq!(reads(&[dump, map.clone()]), planned);
    assert_eq!(reads(std::slice::from_ref(&map)), planned);
    // The same map, its first name untagged (`Builtin:` taken off).
    let lines = std::fs::read_to_string(&map).unwrap();
    let (first, rest) = lines.split_once('\n').unwrap();
    assert!(first.contains(" Builtin:"), "{first}");
    let untagged = dir.join("perf-13064.map");
    std::fs::write(
        &untagged,
        format!("{}\n{rest}", first.replace(" Builtin:", " ")),
    )
    .unwrap();
    assert_eq!(reads(&[untagged]), [Reading::First, Reading::Reentry]);
}

#[test]
fn v8_builtins_inside_the_node_binary_keep_the_binarys_names() {
    let Some(program) = node_program("v8_builtins_inside_node") else {
        return;
    };
    let dir = util::scratch("node-builtins");
    gunzip("node-fib", "callgrind.out.13064", &dir);
    gunzip("node-fib", "jit-13064.dump", &dir);
    std::fs::copy(
        util::fixture("node-fib/perf-13064.map"),
        dir.join("perf-13064.map"),
    )
    .unwrap();
    let out = util::annotate(
        &dir,
        &[
            "callgrind.out.13064",
            "jit-13064.dump",
            "perf-13064.map",
            "-o",
            "out",
        ],
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    // The truth from the symbol files: every range inside node's own
    // executable segments (readelf's, held independently by the oracle).
    let inside = |path: &Path| {
        let data = std::fs::read(path).unwrap();
        let ranges: Vec<(u64, u64)> = if jitdump::is_jitdump(&data) {
            let dump = jitdump::read(&data).unwrap();
            dump.records
                .iter()
                .filter_map(|(_, r)| match r {
                    jitdump::Record::Load(l) => Some((l.code_addr, l.code_size)),
                    _ => None,
                })
                .collect()
        } else {
            String::from_utf8_lossy(&data)
                .lines()
                .filter_map(perf_map_range)
                .collect()
        };
        ranges.iter().filter(|&&(s, n)| program.holds(s, n)).count()
    };
    let want = inside(&dir.join("jit-13064.dump")) + inside(&dir.join("perf-13064.map"));
    assert!(want > 4000, "V8 lists its embedded builtins: {want}");
    assert!(
        said.contains(&format!(
            "{want} ranges of the symbol files lie in the code of '"
        )),
        "{said}"
    );
    // No instruction of node's own sits under a JIT function named after it.
    let report =
        util::callgrind_annotate(&dir.join("out"), &["--inclusive=yes", "--threshold=100"]);
    assert!(
        !report.contains("Builtin:InterpreterPushUndefinedAndArgsThenCall"),
        "{report}"
    );
    assert!(
        report.contains("Builtins_InterpreterPushUndefinedAndArgsThenCall"),
        "{report}"
    );
}

/// #28 item 5: on perf-map-only Node, no cost at an instruction of JIT
/// code (outside node's own code, V8's embedded builtins) stays under a
/// native function: all of it is its JIT function's, as much as callgrind
/// counted at those instructions (under `???`).
#[test]
fn perf_map_only_node_leaves_no_jit_code_under_native_functions() {
    let Some(program) = node_program("perf_map_only_node") else {
        return;
    };
    let dir = util::scratch("node-perf-map-only");
    gunzip("node-fib", "callgrind.out.13064", &dir);
    let map = util::fixture("node-fib/perf-13064.map");
    let ranges: Vec<(u64, u64)> = std::fs::read_to_string(&map)
        .unwrap()
        .lines()
        .filter_map(perf_map_range)
        .filter(|&(s, n)| !program.holds(s, n))
        .collect();
    let in_jit = |a: u64| ranges.iter().any(|&(s, n)| (s..s + n).contains(&a));
    let map_arg = map.to_string_lossy();
    let args = ["callgrind.out.13064", &*map_arg, "--any-pid", "-o", "out"];
    let out = util::annotate(&dir, &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Self cost at JIT instructions, per object: (input, output).
    let at_jit = |path: &Path| {
        let text = std::fs::read_to_string(path).unwrap();
        let mut by_object = std::collections::BTreeMap::<String, u64>::new();
        for record in crate::expand::expand(&text) {
            if let crate::expand::Record::Cost { at, pos, costs } = record {
                if in_jit(pos[0]) {
                    let cost: u64 = costs.split_whitespace().next().unwrap().parse().unwrap();
                    *by_object.entry(at[0].clone()).or_default() += cost;
                }
            }
        }
        by_object
    };
    let before = at_jit(&dir.join("callgrind.out.13064"));
    let after = at_jit(&dir.join("out"));
    let jit_cost = before["???"];
    assert!(jit_cost > 10_000_000, "{before:?}");
    assert_eq!(
        before.len(),
        1,
        "callgrind counts JIT code under ???: {before:?}"
    );
    assert_eq!(
        after,
        [(map_arg.into_owned(), jit_cost)].into(),
        "{after:?}"
    );
}

/// The code of the `node` on `$PATH` where it is linked at fixed
/// addresses (V8's embedded builtins inside it); else the test `tag` is
/// noted as skipped.
fn node_program(tag: &str) -> Option<annotate::symbols::mapped::MappedCode> {
    let program = annotate::symbols::mapped::MappedCode::of_command("node");
    if program.is_none() {
        util::skip(tag, "node linked at fixed addresses");
    }
    program
}

/// A perf map line's start and size (`START SIZE NAME`, hex, `0x`
/// optional), read here as the tests' own reference.
fn perf_map_range(line: &str) -> Option<(u64, u64)> {
    let mut fields = line.split_whitespace();
    let mut hex = || {
        let field = fields.next()?;
        u64::from_str_radix(field.trim_start_matches("0x"), 16).ok()
    };
    let (start, size) = (hex()?, hex()?);
    fields.next().map(|_| (start, size))
}
