//! Address reuse over time: code loaded over code is named per epoch, in
//! a part of its own or in one file (`--combine-dumps`).

use crate::util;

/// Self cost (first event) per function of a profile, read with the test
/// reader (callgrind_annotate 3.19 fails on a dumped part's final file).
fn self_costs(profile: &std::path::Path) -> std::collections::BTreeMap<String, u64> {
    let text = std::fs::read_to_string(profile).unwrap();
    let mut costs = std::collections::BTreeMap::new();
    for record in crate::expand::expand(&text) {
        if let crate::expand::Record::Cost { at, costs: c, .. } = record {
            let first = c
                .split_whitespace()
                .next()
                .map_or(0, |v| v.parse().unwrap());
            *costs.entry(at[3].clone()).or_insert(0) += first;
        }
    }
    costs
}

#[test]
fn code_loaded_over_code_is_named_per_epoch() {
    let dir = util::scratch("attr-reload");
    let prog = util::c_program(&dir, "reload");
    let (n, m): (u64, u64) = (1000, 500);
    let env = [("CALLGRIND_JIT_PERF_MAP", "0")];
    util::callgrind(&dir, &[], &prog, &[&n.to_string(), &m.to_string()], &env);
    // Two profiles: the pid is the jitdump's.
    let dump = util::file_starting(&dir, "jit-").expect("a jitdump");
    let pid = dump.file_stem().unwrap().to_string_lossy()["jit-".len()..].to_string();
    // jit-client asked for a dump before loading sum_v2 where sum_to was:
    // two parts, the first described with where its epoch ends.
    let (last, first) = (
        format!("callgrind.out.{pid}"),
        format!("callgrind.out.{pid}.1"),
    );
    let head = std::fs::read_to_string(dir.join(&first)).unwrap();
    let desc =
        format!("desc: Trigger: Client Request: callgrind-jit epoch ends at jit-{pid}.dump@");
    assert!(head.contains(&desc), "{head:.2000}");
    let out = util::annotate(&dir, &[&first, &last]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    // The truth from the program: each function's loop, in its own epoch.
    let part1 = self_costs(&dir.join(format!("callgrind.jit.out.{pid}.1")));
    let part2 = self_costs(&dir.join(format!("callgrind.jit.out.{pid}")));
    let jit = |costs: &std::collections::BTreeMap<String, u64>| -> Vec<(String, u64)> {
        let names = ["sum_to", "sum_v2"];
        costs
            .iter()
            .filter(|(k, _)| names.contains(&k.as_str()))
            .map(|(k, &v)| (k.clone(), v))
            .collect()
    };
    assert_eq!(jit(&part1), [("sum_to".to_string(), 3 * n + 4)], "{said}");
    assert_eq!(jit(&part2), [("sum_v2".to_string(), 3 * m + 4)], "{said}");
    assert!(
        said.contains("2 profile parts named each with the code live in its epoch"),
        "{said}"
    );
    assert!(!said.contains("without epochs"), "{said}");
    assert!(!said.contains("; read "), "each part is read once: {said}");
    // --merge: both parts in one, which callgrind_annotate reads (it
    // cannot read callgrind's own second part: a line goes below zero).
    let out = util::annotate(&dir, &["--merge", &first, &last]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listing = util::callgrind_annotate(
        &dir.join(format!("callgrind.jit.merged.{pid}")),
        &["--auto=no", "--threshold=100"],
    );
    let cost = |name: &str| util::costs_where(&listing, |l| l.contains(name));
    assert_eq!(
        (cost(":sum_to "), cost(":sum_v2 ")),
        (3 * n + 4, 3 * m + 4),
        "{listing}"
    );
    // The first part under a name callgrind gives a file of several
    // epochs: taken for one first, then read again with its own
    // epoch's symbols, and named as before.
    std::fs::copy(dir.join(&first), dir.join("epoch-one.out")).unwrap();
    let out = util::annotate(&dir, &["epoch-one.out", "-o", "renamed"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("read 2 times: again for one epoch in a file named like several"),
        "{said}"
    );
    let renamed = self_costs(&dir.join("renamed"));
    assert_eq!(jit(&renamed), [("sum_to".to_string(), 3 * n + 4)], "{said}");
    // The last part alone, without the first's description, cannot tell
    // the epochs apart: a warning names both functions and the cost.
    let out = util::annotate(&dir, &[&last, &format!("jit-{pid}.dump"), "-o", "alone"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("'sum_v2' (loaded last) is charged for 'sum_to' too: 1,504 of Ir"),
        "{said}"
    );
}

#[test]
fn epochs_combined_in_one_file_are_named_as_without_them_and_said_so() {
    let dir = util::scratch("attr-reload-combined");
    let prog = util::c_program(&dir, "reload");
    let env = [("CALLGRIND_JIT_PERF_MAP", "0")];
    let (pid, profile) =
        util::callgrind(&dir, &["--combine-dumps=yes"], &prog, &["100", "50"], &env);
    let name = profile.file_name().unwrap().to_string_lossy().into_owned();
    let out = util::annotate(&dir, &[&name, "-o", "named"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("1 profiles hold several epochs in one file (--combine-dumps=yes)"),
        "{said}"
    );
    // Told from its head and name (`callgrind.out.PID`, a first part
    // whose epoch ended): read once.
    assert!(!said.contains("; read "), "{said}");
    // Under a name callgrind gives a dump of its own: taken for one
    // epoch, then read again.
    std::fs::copy(&profile, dir.join("combined.out.7")).unwrap();
    let out = util::annotate(&dir, &["combined.out.7", "-o", "renamed"]);
    let again = String::from_utf8_lossy(&out.stderr);
    assert!(
        again.contains("; read 2 times: again for several epochs in one file)"),
        "{again}"
    );
    let (named, renamed) = (dir.join("named"), dir.join("renamed"));
    assert_eq!(self_costs(&named), self_costs(&renamed));
    // Named with every load (the last wins), and the reuse warned of.
    assert!(
        said.contains("'sum_v2' (loaded last) is charged for 'sum_to' too"),
        "{said}"
    );
    assert!(
        !said.contains("named each with the code live in its epoch"),
        "{said} {pid}"
    );
}

#[test]
fn a_dump_request_under_another_tool_is_ignored_quietly() {
    // jit-client asks for a dump whatever the tool: memcheck ignores it,
    // says nothing of it, and the program runs on.
    let dir = util::scratch("attr-reload-memcheck");
    let prog = util::c_program(&dir, "reload");
    let out = std::process::Command::new("valgrind")
        .args(["--tool=memcheck", "--error-exitcode=3"])
        .arg(&prog)
        .args(["10", "5"])
        .current_dir(&dir)
        .env("CALLGRIND_JIT_PERF_MAP", "0")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(!said.contains("client request"), "{said}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "55 15\n");
}
