//! Cost goes where the code is, on real valgrind runs: JIT code entered by
//! a jump is charged to its own function, not to the one that jumped.

use crate::util;

/// Builds tests/c/PROGRAM.c, runs it with `args` under the real callgrind
/// (jitdump only) and annotates its profile into `named`: the folder and
/// what annotate said.
fn run_and_annotate(program: &str, args: &[&str]) -> (std::path::PathBuf, String) {
    let dir = util::scratch(&format!("attr-{program}-{}", args.join("-")));
    let prog = util::c_program(&dir, program);
    let env = [("CALLGRIND_JIT_PERF_MAP", "0")];
    let (pid, _) = util::callgrind(&dir, &[], &prog, args, &env);
    let out = util::annotate(&dir, &[&format!("callgrind.out.{pid}"), "-o", "named"]);
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{said}");
    (dir, said)
}

#[test]
fn a_jit_tail_jump_leaves_the_callee_its_own_cost() {
    let n: u64 = 1000;
    let (dir, said) = run_and_annotate("tail_jump", &[&n.to_string()]);
    // The truth from the program: the loop and its entry and exit are
    // sum_to's; mov, movabs and jmp are tramp's, and tramp's inclusive
    // cost is all of it (its jump is now a call to sum_to).
    let got = self_and_inclusive(
        &dir.join("named"),
        &[" jump.calc:sum_to ", " jump.calc:tramp "],
    );
    assert_eq!(got, [(3 * n + 4, 3 * n + 4), (3, 3 * n + 7)], "{said}");
    assert!(
        said.contains("moved to the JIT function whose code it is"),
        "{said}"
    );
}

#[test]
fn code_an_unlisted_stub_jumps_into_gets_its_own_cost() {
    let n: u64 = 1000;
    let (dir, said) = run_and_annotate("tail_jump", &[&n.to_string(), "unnamed"]);
    // As above, with tramp in no symbol file (QEMU's TCG prologue is in
    // none): it stays address-named, and what it jumped into is sum_to's.
    let named = std::fs::read_to_string(dir.join("named")).unwrap();
    let sum_to = named
        .split_once("\nfn=sum_to\n")
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .and_then(|a| u64::from_str_radix(a.trim_start_matches("0x"), 16).ok())
        .expect("sum_to's first cost line");
    check_oracle(&dir, "tail_jump unnamed");
    let tramp = format!("???:{:#018x} ", sum_to + 2048);
    let got = self_and_inclusive(&dir.join("named"), &[" jump.calc:sum_to ", &tramp]);
    assert_eq!(got, [(3 * n + 4, 3 * n + 4), (3, 3 * n + 7)], "{said}");
    assert!(
        said.contains("moved to the JIT function whose code it is"),
        "{said}"
    );
}

#[test]
fn a_call_to_any_entry_of_a_precode_table_stays_a_call() {
    let (n, m): (u64, u64) = (1000, 10);
    let (dir, said) = run_and_annotate("precode", &[&n.to_string(), &m.to_string()]);
    // The truth from the program: walk's five instructions, one jmp in
    // each entry, and the two loops, all inside walk. Calls to the table's
    // second entry were folded as calls into the middle of one function,
    // and walk lost sum_b's cost.
    let got = self_and_inclusive(
        &dir.join("named"),
        &[
            " precode.calc:walk ",
            "AllocateTemporaryEntryPoints",
            " precode.calc:sum_b ",
        ],
    );
    let (a, b) = (3 * m + 4, 3 * n + 4);
    assert_eq!(got, [(5, 5 + 2 + a + b), (2, 2 + a + b), (b, b)], "{said}");
    assert!(!said.contains("calls into the middle"), "{said}");
    check_oracle(&dir, "precode");
}

#[test]
fn a_call_to_a_second_entry_point_is_a_call() {
    let n: u64 = 1000;
    let (dir, said) = run_and_annotate("entries", &[&n.to_string()]);
    // The truth from the program: walk's three instructions, and g's
    // loop from its second entry, inside walk. The call used to be folded
    // as a return into g's middle, and walk lost g's cost.
    let got = self_and_inclusive(
        &dir.join("named"),
        &[" entries.calc:walk ", " entries.calc:g "],
    );
    let g = 3 * n + 4;
    assert_eq!(got, [(3, 3 + g), (g, g)], "{said}");
    assert!(!said.contains("calls into the middle"), "{said}");
    assert!(said.contains("entry points inside JIT functions (no call of the function returns there, as HotSpot's verified entries): 1;"), "{said}");
    check_oracle(&dir, "entries");
}

#[test]
fn beam_calling_itself_at_a_label_under_another_level_gives_back() {
    // A real BEAM run (tests/fixtures/erlang-fib): `init:get_arguments/1'2`
    // calls `init:get_arguments/1` at a label in its middle (an entry
    // point), and the function called back a continuation from its entry
    // block. The plan summed that call among those the continuation comes
    // out of; the write skipped it as the function's own, and the calls
    // into each level were left holding 50,097,146 and 50,095,834 Ir
    // (first event) of continuations that rule 8 takes out.
    let dir = util::scratch("attr-beam-levels");
    let profile = crate::rewrite::gunzip("erlang-fib", "callgrind.out.11724", &dir);
    crate::rewrite::gunzip("erlang-fib", "jit-11724.dump", &dir);
    let out = util::annotate(
        &dir,
        &[profile.to_str().unwrap(), "jit-11724.dump", "-o", "named"],
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("entry points inside JIT functions (no call of the function returns there, as HotSpot's verified entries): 1604;"),
        "{said}"
    );
    check_oracle(&dir, "erlang-fib");
}

/// Holds the oracle to the output `named` of a run in `dir`.
fn check_oracle(dir: &std::path::Path, what: &str) {
    let profile = util::file_starting(dir, "callgrind.out.").unwrap();
    let pid = profile.extension().unwrap().to_string_lossy();
    crate::oracle::check(
        what,
        &std::fs::read_to_string(&profile).unwrap(),
        &std::fs::read_to_string(dir.join("named")).unwrap(),
        &crate::oracle::Symbols::read(&[dir.join(format!("jit-{pid}.dump"))])
            .for_output(&dir.join("named")),
    );
}

/// Self and inclusive cost of the functions whose callgrind_annotate line
/// contains each needle.
fn self_and_inclusive(profile: &std::path::Path, needles: &[&str]) -> Vec<(u64, u64)> {
    let flat = util::callgrind_annotate(profile, &["--auto=no", "--threshold=100"]);
    let incl = util::callgrind_annotate(
        profile,
        &["--auto=no", "--threshold=100", "--inclusive=yes"],
    );
    needles
        .iter()
        .map(|n| {
            (
                util::costs_where(&flat, |l| l.contains(n)),
                util::costs_where(&incl, |l| l.contains(n)),
            )
        })
        .collect()
}

#[test]
fn native_code_jumping_into_jit_code_leaves_it_its_own_cost() {
    let n: u64 = 1000;
    let (dir, _) = run_and_annotate("native_tail", &[&n.to_string()]);
    // The truth from the program: tail_into is one jmp; sum_to runs the
    // loop, entered by that jump (callgrind takes a jump into another
    // object for a call, so nothing needs moving).
    let got = self_and_inclusive(&dir.join("named"), &[" tail.calc:sum_to ", ":tail_into "]);
    assert_eq!(got, [(3 * n + 4, 3 * n + 4), (1, 3 * n + 5)]);
}

#[test]
fn a_helper_resuming_its_caller_counts_the_continuation_once() {
    let n: u64 = 1000;
    let (dir, said) = run_and_annotate("reentry", &[&n.to_string()]);
    // The truth from the program: f's seven instructions and its
    // continuation's loop (3N + 4) are f's; the helper's five are its own.
    // The continuation runs once: f's inclusive cost is all of it, and the
    // helper's arc no longer holds it (callgrind counted it in both).
    let got = self_and_inclusive(&dir.join("named"), &[" reentry.calc:f ", ":helper "]);
    assert_eq!(got, [(3 * n + 11, 3 * n + 16), (5, 5)], "{said}");
    assert!(said.contains("re-entry: cost of continuations"), "{said}");
    // KCachegrind's view: f's self cost plus its calls is its inclusive
    // cost (one activation, nothing counted twice).
    let text = std::fs::read_to_string(dir.join("named")).unwrap();
    let arcs: Vec<(String, String)> = crate::expand::expand(&text)
        .into_iter()
        .filter_map(|r| match r {
            crate::expand::Record::Transfer {
                at, target, costs, ..
            } if target[2] == "helper" => Some((at[3].clone(), costs)),
            _ => None,
        })
        .collect();
    assert_eq!(arcs, [("f".to_string(), "5".to_string())]);
}

#[test]
fn a_continuation_reached_through_a_chain_comes_out_of_the_call_it_returns_from() {
    let n: u64 = 1000;
    let (dir, said) = run_and_annotate("reentry", &[&n.to_string(), "chain"]);
    // The truth from the program: f calls outer (4 instructions), outer
    // calls helper (5), helper calls f's continuation (3N + 4, f's own).
    // f's inclusive cost is everything once; its arc to outer holds
    // outer's and helper's instructions only.
    let got = self_and_inclusive(&dir.join("named"), &[" reentry.calc:f "]);
    assert_eq!(got, [(3 * n + 11, 3 * n + 20)], "{said}");
    let text = std::fs::read_to_string(dir.join("named")).unwrap();
    let arcs: Vec<(String, String, String)> = crate::expand::expand(&text)
        .into_iter()
        .filter_map(|r| match r {
            crate::expand::Record::Transfer {
                at, target, costs, ..
            } => Some((at[3].clone(), target[2].clone(), costs)),
            _ => None,
        })
        .filter(|(from, _, _)| from == "f")
        .collect();
    assert_eq!(arcs, [("f".into(), "outer".into(), "9".into())], "{said}");
    assert!(
        !said.contains("stay where callgrind counted them"),
        "{said}"
    );
}

#[test]
fn a_jit_function_calling_a_continuation_back_keeps_only_its_own_cost() {
    let n: u64 = 1000;
    let (dir, said) = run_and_annotate("reentry", &[&n.to_string(), "jit-chain"]);
    // The truth from the program: f calls outer_to (4 instructions),
    // which calls the JIT helper (5), which calls f's continuation
    // (3N + 4, f's own). callgrind_annotate takes the helper's inclusive
    // cost from the calls into it: its 5, not the continuation too.
    let got = self_and_inclusive(
        &dir.join("named"),
        &[" reentry.calc:f ", "reentry.calc:helper ", ":outer_to "],
    );
    assert_eq!(got, [(3 * n + 11, 3 * n + 20), (5, 5), (4, 9)], "{said}");
    // The summary: the continuation's 3N + 4 out of the helper's one
    // call, which held it and the helper's 5.
    assert_eq!(n, 1000, "the figures below are 3N + 4 and 3N + 9");
    let back =
        "also taken out of the calls into that code: 3,004 of the 3,009 of Ir those calls held";
    assert!(said.contains(back), "{said}");
}

#[test]
fn without_instruction_addresses_the_summary_says_what_stays_where() {
    let dir = util::scratch("attr-no-instr");
    let prog = util::c_program(&dir, "tail_jump");
    let env = [("CALLGRIND_JIT_PERF_MAP", "0")];
    let (pid, _) = util::callgrind(&dir, &["--dump-instr=no"], &prog, &["100"], &env);
    let out = util::annotate(&dir, &[&format!("callgrind.out.{pid}"), "-o", "named"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    // Nothing can be moved: the jumper keeps sum_to's loop (3 + 304).
    assert!(
        said.contains("JIT code entered by a jump stays with the function that jumped (307 of Ir is JIT code's)"),
        "{said}"
    );
    assert!(!said.contains("moved to the JIT function"), "{said}");
}

#[test]
fn a_merge_that_cannot_be_written_is_refused_before_anything_is() {
    let dir = util::scratch("attr-merge-refused");
    for f in ["callgrind.out.9747", "jit-9747.dump"] {
        std::fs::copy(util::fixture(&format!("c-demo/{f}")), dir.join(f)).unwrap();
    }
    std::fs::create_dir(dir.join("folder")).unwrap();
    let out = util::annotate(
        &dir,
        &[
            "--merge",
            "-o",
            "folder",
            "callgrind.out.9747",
            "jit-9747.dump",
        ],
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("refusing to replace 'folder': it is a folder"),
        "{said}"
    );
    assert!(
        !dir.join("callgrind.jit.out.9747").exists(),
        "a part was written: {said}"
    );
    // From stdin there is no file to join.
    let profile = dir.join("callgrind.out.9747");
    let out = util::annotate_from(&dir, &["--merge", "-", "jit-9747.dump"], &profile);
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("cannot take a profile read from a pipe or standard input"),
        "{said}"
    );
    assert!(out.stdout.is_empty());
    // `-o -`: the parts as files, their join on stdout.
    let out = util::annotate(
        &dir,
        &["--merge", "-o", "-", "callgrind.out.9747", "jit-9747.dump"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let joined = String::from_utf8(out.stdout).unwrap();
    assert!(
        joined.starts_with("# callgrind format") && joined.contains("\ntotals: "),
        "{joined:.300}"
    );
    assert!(dir.join("callgrind.jit.out.9747").exists());
}
