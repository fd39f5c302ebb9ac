//! Valgrind tools other than callgrind: memcheck's and helgrind's text
//! logs, massif's and DHAT's output get their JIT frames named from the
//! jitdump, each read back by the tool's own reader, on real runs of
//! tests/c/live.c with live mode off ("plain"): `jit_read` reads freed
//! memory at its line 12; `jit_caller` calls back into native code from
//! its line 9 (Valgrind prints the return address one byte back), to
//! native code that keeps a 4,000-byte allocation.

use std::process::Command;

use crate::util;

/// The frames of `jit_read`'s invalid read and of `jit_caller` in a log.
fn assert_named(log: &str) {
    let frame = |text: &str| log.lines().any(|l| l.contains(text));
    assert!(frame(": jit_read (live.calc:12)"), "{log}");
    assert!(frame(": jit_caller (live.calc:9)"), "{log}");
}

/// `record --out-dir DIR VALGRIND_OPTIONS -- PROGRAM ARGS` (a C test
/// program built into DIR) in a scratch folder: the folder and stderr,
/// the run having succeeded.
fn record_run(
    tag: &str,
    options: &[&str],
    program: &str,
    args: &[&str],
) -> (std::path::PathBuf, String) {
    let dir = util::scratch(tag);
    let prog = util::c_program(&dir, program);
    let out = Command::new(util::cli())
        .args(["record", "--out-dir"])
        .arg(&dir)
        .args(options)
        .arg("--")
        .arg(&prog)
        .args(args)
        .current_dir(&dir)
        .env("TMPDIR", &dir)
        .env("CALLGRIND_JIT_PERF_MAP", "0")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{said}");
    (dir, said)
}

#[test]
fn record_names_memchecks_jit_frames() {
    let (dir, said) = record_run(
        "logs-memcheck",
        &["--tool=memcheck", "--leak-check=full"],
        "live",
        &["100", "plain"],
    );
    assert!(said.contains("Invalid read of size 4"), "{said}");
    assert_named(&said);
    // The leak made from JIT code: its allocation stack holds jit_caller.
    let leak = said
        .split("100 bytes in 1 blocks are definitely lost")
        .nth(1)
        .unwrap_or_default();
    let leak_stack: Vec<&str> = leak.lines().take(6).collect();
    assert!(
        leak_stack
            .iter()
            .any(|l| l.ends_with(": jit_caller (live.calc:9)")),
        "{said}"
    );
    // The log valgrind wrote is left as it was; the named copy beside it.
    let raw = util::file_starting(&dir, "memcheck.log.").unwrap();
    let raw = std::fs::read_to_string(raw).unwrap();
    assert!(!raw.contains("jit_read") && raw.contains(": ???"), "{raw}");
    let named = util::file_starting(&dir, "jit.memcheck.log.").unwrap();
    assert_named(&std::fs::read_to_string(named).unwrap());
}

#[test]
fn annotate_names_a_helgrind_log_it_is_given() {
    let dir = util::scratch("logs-helgrind");
    let prog = util::c_program(&dir, "live");
    let out = Command::new("valgrind")
        .args(["--tool=helgrind", "--log-file=hg.log"])
        .arg(&prog)
        .args(["100", "plain"])
        .current_dir(&dir)
        .env("CALLGRIND_JIT_PERF_MAP", "0")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dump = util::file_starting(&dir, "jit-").unwrap();
    let out = util::annotate(&dir, &["hg.log", dump.to_str().unwrap(), "-o", "named.log"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    let named = std::fs::read_to_string(dir.join("named.log")).unwrap();
    assert!(
        named
            .lines()
            .any(|l| l.contains(": jit_caller (live.calc:9)")),
        "{named}"
    );
    // Everything else as valgrind wrote it.
    let raw = std::fs::read_to_string(dir.join("hg.log")).unwrap();
    assert_eq!(named.lines().count(), raw.lines().count());
    let changed = raw
        .lines()
        .zip(named.lines())
        .filter(|(a, b)| a != b)
        .count();
    assert_eq!(changed, 1, "{named}");
    // Logs and profiles are annotated apart.
    std::fs::copy(
        util::fixture("c-demo/callgrind.out.9747"),
        dir.join("callgrind.out.9747"),
    )
    .unwrap();
    let out = util::annotate(&dir, &["hg.log", "callgrind.out.9747", "-o", "x"]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn record_refuses_tools_whose_output_it_cannot_name() {
    let dir = util::scratch("logs-refused");
    let out = Command::new(util::cli())
        .args(["record", "--tool=cachegrind", "--", "true"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("live mode"), "{said}");
}

/// `record --tool=TOOL -- live 100 plain` in a scratch folder; the folder.
fn record_tool(tool: &str) -> std::path::PathBuf {
    let tag = format!("logs-{tool}");
    let (dir, said) = record_run(
        &tag,
        &[&format!("--tool={tool}")],
        "live",
        &["100", "plain"],
    );
    assert!(said.contains("1 JIT frames named"), "{said}");
    dir
}

#[test]
fn massifs_tree_names_the_jit_frame_and_ms_print_reads_it() {
    let dir = record_tool("massif");
    let named = util::file_starting(&dir, "jit.massif.out.").unwrap();
    let out = util::run_ok(Command::new("ms_print").arg(&named));
    let text = String::from_utf8_lossy(&out.stdout);
    // live.c's native_alloc keeps 4,000 bytes, called from jit_caller.
    assert!(
        text.lines()
            .any(|l| l.contains("(4,000B) 0x") && l.ends_with(": jit_caller (live.calc:9)")),
        "{text}"
    );
}

#[test]
fn dhats_frame_table_names_the_jit_frame_and_stays_json() {
    let dir = record_tool("dhat");
    let named = util::file_starting(&dir, "jit.dhat.out.").unwrap();
    // Python's json module as the independent reader (DHAT's viewer
    // loads the same JSON).
    let script = "import json,sys; d=json.load(open(sys.argv[1])); \
                  print(sum(f.endswith(': jit_caller (live.calc:9)') for f in d['ftbl']))";
    let out = util::run_ok(Command::new("python3").args(["-c", script]).arg(&named));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "1");
}

#[test]
fn memchecks_xml_frames_get_their_elements_and_stay_xml() {
    let dir = util::scratch("logs-xml");
    let prog = util::c_program(&dir, "live");
    let out = Command::new("valgrind")
        .args(["--tool=memcheck", "--xml=yes", "--xml-file=mc.xml"])
        .arg(&prog)
        .args(["100", "plain"])
        .current_dir(&dir)
        .env("CALLGRIND_JIT_PERF_MAP", "0")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = util::annotate(&dir, &["mc.xml"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Python's XML parser as the independent reader: the invalid read's
    // top frame, with Valgrind's elements in protocol 4's order.
    let script = "import sys, xml.etree.ElementTree as E\n\
        for e in E.parse(sys.argv[1]).getroot().iter('error'):\n\
        \x20   f = e.find('stack').find('frame')\n\
        \x20   print(e.find('kind').text, [(c.tag, c.text) for c in f])";
    let out = util::run_ok(
        Command::new("python3")
            .args(["-c", script])
            .arg(dir.join("jit.mc.xml")),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let frame = "('fn', 'jit_read'), ('file', 'live.calc'), ('line', '12')]";
    assert!(
        text.lines()
            .any(|l| l.starts_with("InvalidRead [('ip', '0x") && l.ends_with(frame)),
        "{text}"
    );
}

#[test]
fn helgrind_and_drd_name_both_sides_of_a_race_between_jit_functions() {
    for tool in ["helgrind", "drd"] {
        let tag = format!("logs-race-{tool}");
        let (_, said) = record_run(&tag, &[&format!("--tool={tool}")], "race", &[]);
        // tests/c/race.c: bump_a at race.calc:3 and bump_b at race.calc:7
        // both write the shared int. Helgrind shows both sides; DRD the
        // stack of the thread that came second.
        let sides = [": bump_a (race.calc:3)", ": bump_b (race.calc:7)"];
        let shown = |side: &str| {
            said.lines()
                .any(|l| l.contains(" at 0x") && l.ends_with(side))
        };
        let named = sides.iter().filter(|s| shown(s)).count();
        let want = if tool == "helgrind" { 2 } else { 1 };
        assert!(named >= want, "{tool}: {said}");
    }
}

#[test]
fn cachegrind_names_live_mode_code_itself() {
    // Cachegrind keeps files and lines, not addresses: nothing can be
    // named afterwards, so live mode names the code while it runs.
    let dir = util::scratch("logs-cachegrind-live");
    let prog = util::c_program(&dir, "live");
    let out = Command::new("valgrind")
        .args([
            "--tool=cachegrind",
            "--cache-sim=no",
            "--cachegrind-out-file=cg.out",
        ])
        .arg(&prog)
        .arg("1000")
        .current_dir(&dir)
        .env("TMPDIR", &dir)
        .env("CALLGRIND_JIT_PERF_MAP", "0")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = util::run_ok(Command::new("cg_annotate").arg(dir.join("cg.out")));
    let report = String::from_utf8_lossy(&report.stdout);
    // jit_loop(1000) runs 3 * 1000 + 4 instructions (tests/c/live.c).
    let line = report
        .lines()
        .find(|l| l.ends_with("live.calc:jit_loop"))
        .unwrap_or_else(|| panic!("{report}"));
    assert!(line.trim_start().starts_with("3,004 "), "{line}");
}

#[test]
fn node_under_memcheck_gets_its_js_frames_named() {
    let node_runs = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !node_runs {
        return util::skip("node_under_memcheck", "node is not installed");
    }
    let dir = util::scratch("logs-node-memcheck");
    let fib = "function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\n\
               let t = 0; for (let i = 0; i < 20; i++) t += fib(16);\nconsole.log(t);\n";
    std::fs::write(dir.join("fib.js"), fib).unwrap();
    let out = Command::new(util::cli())
        .args(["record", "--tool=memcheck", "--", "node", "fib.js"])
        .current_dir(&dir)
        .env_remove("NODE_OPTIONS")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    // Node 20's jitdump writer reads past a string's end (the corrupt
    // DEBUG_INFO records V8 is known for): memcheck reports it from
    // inside the JIT-compiled fib, whose frames are named with their line.
    let frame = |l: &&str| l.contains(": fib (") && l.ends_with("fib.js:1)");
    assert!(said.lines().any(|l| frame(&l)), "{said}");
    assert!(
        !said.lines().any(|l| l.trim_end().ends_with(": ???")),
        "{said}"
    );
}

#[test]
fn a_log_of_several_processes_names_each_from_its_own_files() {
    let dir = util::scratch("logs-children");
    let prog = util::c_program(&dir, "live");
    let script = format!("{0} 100 plain; {0} 100 plain", prog.display());
    // A saved stderr: every process of the run writes to it.
    let out = Command::new("valgrind")
        .args(["--trace-children=yes", "sh", "-c", &script])
        .current_dir(&dir)
        .env("CALLGRIND_JIT_PERF_MAP", "0")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The program's own lines may come first in a saved stderr.
    let saved = [&b"a line of the program's own\n"[..], &out.stderr].concat();
    std::fs::write(dir.join("all.log"), saved).unwrap();
    let out = util::annotate(&dir, &["all.log"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    let named = std::fs::read_to_string(dir.join("jit.all.log")).unwrap();
    // Each run's jit_read, under its own pid, named from its own jitdump
    // (valgrind places the code at one address in both: the hazard).
    let pids: std::collections::BTreeSet<&str> = named
        .lines()
        .filter(|l| l.ends_with(": jit_read (live.calc:12)"))
        .filter_map(|l| l.split("==").nth(1))
        .collect();
    assert_eq!(pids.len(), 2, "{named}\n{said}");
    for pid in &pids {
        assert!(said.contains(&format!("symbols of pid {pid}: ")), "{said}");
    }
}
