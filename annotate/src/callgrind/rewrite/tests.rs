//! One rule per test, on profiles of a few lines: the whole output is
//! compared, so any other change to the lines shows too.

use crate::callgrind::passes;
use crate::symbols::SymbolTable;

const HEAD: &str = "positions: instr line\nevents: Ir\n";

/// `sum_to` at 0x1000..0x1100 (file sum.calc), from a perf map at `/m`.
fn table() -> SymbolTable {
    let mut table = SymbolTable::builder();
    table.add_perf_map("/m".into(), b"1000 100 sum_to(sum.calc:3)\n");
    table.build()
}

/// The body after [`HEAD`], rewritten by the lazy pass.
fn rewrite(body: &str) -> String {
    let mut out = Vec::new();
    passes::lazy(
        std::io::Cursor::new(format!("{HEAD}{body}").as_bytes()),
        &mut out,
        &table(),
    )
    .unwrap();
    String::from(String::from_utf8(out).unwrap().strip_prefix(HEAD).unwrap())
}

/// The same by the exact pass.
fn rewrite_exact(body: &str) -> String {
    let mut out = Vec::new();
    passes::exact(
        std::io::Cursor::new(format!("{HEAD}{body}").as_bytes()),
        &mut out,
        &table(),
    )
    .unwrap();
    String::from(String::from_utf8(out).unwrap().strip_prefix(HEAD).unwrap())
}

#[test]
fn a_jit_function_brings_its_own_object_and_file() {
    let out = rewrite("ob=(1) ???\nfl=(1) ???\nfn=(1) 0x0000000000001000\n0x1000 0 5\n");
    let want = "ob=(1) ???\nfl=(1) ???\nob=/m\nfl=sum.calc\nfn=(1) sum_to\n0x1000 3 5\n";
    assert_eq!(out, want);
    assert_eq!(
        rewrite_exact("ob=(1) ???\nfl=(1) ???\nfn=(1) 0x0000000000001000\n0x1000 0 5\n"),
        want
    );
}

#[test]
fn a_call_into_jit_code_names_the_callee_object_file_and_line() {
    let body = "ob=(1) /bin/a\nfl=(1) a.c\nfn=(1) main\n0x400000 7 1\n\
                cob=(2) ???\ncfi=(2) ???\ncfn=(3) 0x0000000000001000\n\
                calls=1 0x1000 0\n0x400004 8 50\n";
    let want = "ob=(1) /bin/a\nfl=(1) a.c\nfn=(1) main\n0x400000 7 1\n\
                cob=/m\ncfi=sum.calc\ncfn=(3) sum_to\n\
                calls=1 0x1000 3\n0x400004 8 50\n";
    assert_eq!(rewrite(body), want);
    // The exact pass knows the input's position (line 7) and writes the
    // target's line relative to it.
    let exact = want.replace("calls=1 0x1000 3", "calls=1 0x1000 -4");
    assert_eq!(rewrite_exact(body), exact);
}

#[test]
fn native_code_after_a_jit_block_gets_its_names_back() {
    let body = "ob=(1) ???\nfl=(1) ???\nfn=(1) 0x0000000000001000\n0x1000 0 5\n\
                ob=(2) /bin/a\nfl=(2) a.c\nfn=(2) main\n0x400000 7 1\n";
    let want = "ob=(1) ???\nfl=(1) ???\nob=/m\nfl=sum.calc\nfn=(1) sum_to\n0x1000 3 5\n\
                ob=(2) /bin/a\nfl=(2) a.c\nfn=(2) main\n0x400000 7 1\n";
    assert_eq!(rewrite(body), want);
}

#[test]
fn native_lines_stay_byte_for_byte() {
    let body = "ob=(1) /bin/a\nfl=(1) a.c\nfn=(1) main\n0x400000 7 1\n+4 * 2\n\
                cfn=(2) f\ncalls=1 0x400100 9\n* +1 30\n";
    assert_eq!(rewrite(body), body);
    assert_eq!(rewrite_exact(body), body);
}

#[test]
fn a_jit_name_that_reads_as_an_id_gets_an_id_of_its_own() {
    let mut table = SymbolTable::builder();
    table.add_perf_map("/m".into(), b"1000 100 (7) looks_like_id\n");
    let table = table.build();
    let body = "ob=/bin/a\nfl=a.c\nfn=main\n0x400000 7 1\ncob=???\ncfi=???\n\
                cfn=0x0000000000001000\ncalls=1 0x1000 0\n0x400004 8 50\n\
                ob=???\nfl=???\nfn=0x0000000000001000\n0x1000 0 5\n";
    let mut out = Vec::new();
    passes::exact(
        std::io::Cursor::new(format!("{HEAD}{body}").as_bytes()),
        &mut out,
        &table,
    )
    .unwrap();
    let out = String::from_utf8(out).unwrap();
    assert!(out.contains("cfn=(1) (7) looks_like_id\n"), "{out}");
    assert!(out.contains("\nfn=(1)\n"), "{out}");
    // Other ids defined afterwards are fine, above ours or not.
    let others = format!("{HEAD}{body}fn=(2) other\n0x400010 9 1\nfl=(5) b.c\n");
    assert!(passes::exact(std::io::Cursor::new(others.as_bytes()), Vec::new(), &table).is_ok());
    // The input defining that id afterwards would rename the function.
    let later = format!("{HEAD}{body}fn=(1) other\n0x400010 9 1\n");
    let err =
        passes::exact(std::io::Cursor::new(later.as_bytes()), Vec::new(), &table).unwrap_err();
    assert!(err.to_string().contains("id (1) is defined after"), "{err}");
}

/// The counts of the lazy pass on a whole profile (`HEAD` not added).
fn stats_of(profile: &str) -> crate::callgrind::Stats {
    passes::lazy(
        std::io::Cursor::new(profile.as_bytes()),
        Vec::new(),
        &table(),
    )
    .unwrap()
}

#[test]
fn header_lines_give_the_parts_events_totals_and_ending() {
    let part = "positions: line\nevents: Ir  Dr\nsummary: 90\nfl=a.c\nfn=f\n3 5 1\n";
    let stats = stats_of(&format!("{part}totals: 40\n"));
    assert_eq!(
        (stats.parts, stats.events.clone()),
        (1, vec!["Ir".into(), "Dr".into()])
    );
    assert_eq!(
        (stats.total, stats.ending),
        (40, crate::callgrind::Ending::Complete)
    );
    let two = stats_of(&format!("{part}totals: 40\n{part}totals: 2\n"));
    assert_eq!((two.parts, two.total), (2, 42));
    let no_totals = stats_of(part);
    assert_eq!(
        (no_totals.total, no_totals.ending),
        (90, crate::callgrind::Ending::NoTotals)
    );
    let cut = stats_of(&format!("{part}totals: 40"));
    assert_eq!(cut.ending, crate::callgrind::Ending::CutLine);
}

#[test]
fn code_in_no_range_keeps_its_address_name_and_its_cost_is_counted() {
    let body = "ob=(1) ???\nfl=(1) ???\nfn=(1) 0x0000000000009000\n0x9000 0 5\n+4 0 7\n\
                fn=(2) 0x0000000000001000\n0x1000 0 3\nfn=(3) 0x0000000000009100\n0x9100 0 2\n";
    let stats = stats_of(&format!("{HEAD}{body}"));
    let mut unnamed: Vec<_> = stats.unnamed_cost.iter().map(|(&a, &c)| (a, c)).collect();
    unnamed.sort();
    assert_eq!(unnamed, [(0x9000, 12), (0x9100, 2)]);
    assert_eq!((stats.unnamed_total(), stats.jit_total()), (14, 3));
    assert!(rewrite(body)
        .starts_with("ob=(1) ???\nfl=(1) ???\nfn=(1) 0x0000000000009000\n0x9000 0 5\n+4 0 7\n"));
}

#[test]
fn only_an_epochs_trigger_marks_a_part_as_an_epoch() {
    let part = |trigger: &str| format!("desc: {trigger}\n{HEAD}fn=f\n0x10 1 5\ntotals: 5\n");
    let ours = "Trigger: Client Request: callgrind-jit epoch ends at 4 loads";
    let theirs = [
        "Trigger: Program termination",
        "I1 cache: 32768 B, 64 B, 8-way associative",
    ];
    let seen = |p: &str| stats_of(p).epoch_parts_seen;
    assert_eq!(seen(&format!("{}{}", part(ours), part(theirs[0]))), 1);
    assert_eq!(seen(&format!("{}{}", part(theirs[1]), part(theirs[0]))), 0);
}

#[test]
fn unknown_keys_are_counted_and_kept() {
    let profile = "events: Ir\nfl=a.c\nfn=f\nbb=3\n3 5\nln=2\ntotals: 5\n";
    let mut out = Vec::new();
    let stats = passes::lazy(std::io::Cursor::new(profile.as_bytes()), &mut out, &table()).unwrap();
    assert_eq!((stats.unknown_lines, out), (2, profile.as_bytes().to_vec()));
}

#[test]
fn an_undefined_id_is_named_by_its_space() {
    for (line, word) in [
        ("fl=(3)", "file"),
        ("ob=(3)", "object"),
        ("fn=(3)", "function"),
    ] {
        let err = exact_error(&format!("{HEAD}{line}\n"));
        assert_eq!(err, format!("line 3: undefined {word} id (3)"));
    }
}

/// The error of the exact pass on `profile`.
fn exact_error(profile: &str) -> String {
    let input = std::io::Cursor::new(profile.as_bytes());
    let err = passes::exact(input, Vec::new(), &table()).unwrap_err();
    err.to_string()
}

#[test]
fn a_call_group_s_error_names_the_group_s_line_not_the_position_line() {
    for (body, line) in [
        ("fn=(1) f\ncob=(2\ncfn=(3) g\ncalls=1 0x10\n0x10 1\n", 4),
        ("fn=(1) f\ncfn=(3) g\ncalls=1x 0x10\n0x10 1\n", 5),
        ("fn=(1) f\njcnd=1/x 0x10\n0x10 1\n", 4),
        ("fn=(1) f\ncfn=(3) g\ncalls=1 zz\n0x10 1\n", 5),
    ] {
        let err = exact_error(&format!("{HEAD}{body}"));
        assert!(err.starts_with(&format!("line {line}: ")), "{body}: {err}");
    }
}

#[test]
fn code_a_jump_entered_is_written_under_its_own_function() {
    let mut table = SymbolTable::builder();
    table.add_perf_map(
        "/m".into(),
        b"1000 100 sum_to(sum.calc:3)\n2000 20 tramp(t.calc:9)\n",
    );
    let table = table.build();
    let body = "ob=(1) ???\nfl=(1) ???\nfn=(1) 0x0000000000002000'2\n0x2000 0 2\n\
                0x1004 0 30\n+4 0 5\n0x2008 0 1\n";
    let mut out = Vec::new();
    let stats = passes::exact(
        std::io::Cursor::new(format!("{HEAD}{body}").as_bytes()),
        &mut out,
        &table,
    )
    .unwrap();
    let out = String::from_utf8(out).unwrap();
    // tramp then calls what it jumped into: as often as its first line
    // ran, from its last line before the jump, with all of its cost.
    let want = "ob=(1) ???\nfl=(1) ???\nob=/m\nfl=t.calc\nfn=(1) tramp'2\n0x2000 9 2\n\
                fl=sum.calc\nfn=sum_to'2\n0x1004 3 30\n+4 * 5\n\
                fl=t.calc\nfn=(1)\ncfi=sum.calc\ncfn=sum_to'2\ncalls=30 0x1004 3\n0x2000 9 35\n\
                +8 * 1\n";
    assert_eq!(out.strip_prefix(HEAD).unwrap(), want);
    assert_eq!(stats.moved_cost, 35);
    assert_eq!(stats.jit_cost.values().sum::<u64>(), 38);
}

/// `sum_to` at 0x1000 (sum.calc) and `tramp` at 0x2000 (t.calc).
fn two_functions() -> SymbolTable {
    let mut table = SymbolTable::builder();
    table.add_perf_map(
        "/m".into(),
        b"1000 100 sum_to(sum.calc:3)\n2000 20 tramp(t.calc:9)\n",
    );
    table.build()
}

fn rewrite_with(table: &SymbolTable, body: &str) -> String {
    let mut out = Vec::new();
    passes::exact(
        std::io::Cursor::new(format!("{HEAD}{body}").as_bytes()),
        &mut out,
        table,
    )
    .unwrap();
    String::from(String::from_utf8(out).unwrap().strip_prefix(HEAD).unwrap())
}

#[test]
fn code_jumped_into_before_any_own_line_is_called_from_the_functions_start() {
    // tramp's block starts in sum_to's code: the call's site is tramp's
    // first instruction at its declared line.
    let body = "ob=(1) ???\nfl=(1) ???\nfn=(1) 0x0000000000002000\n0x1000 0 4\n0x2004 0 1\n";
    let want = "ob=(1) ???\nfl=(1) ???\nob=/m\nfl=t.calc\nfn=(1) tramp\n\
                fl=sum.calc\nfn=sum_to\n0x1000 3 4\n\
                fl=t.calc\nfn=(1)\ncfi=sum.calc\ncfn=sum_to\ncalls=4 0x1000 3\n0x2000 9 4\n\
                +4 * 1\n";
    assert_eq!(rewrite_with(&two_functions(), body), want);
}

#[test]
fn a_jit_helper_resuming_its_caller_gives_the_continuation_back_to_the_arc() {
    // sum_to calls tramp (100, of which 60 are the continuation tramp
    // calls back into sum_to's middle): the arc keeps 40.
    let body = "ob=(1) ???\nfl=(1) ???\nfn=(1) 0x0000000000001000\n0x1000 0 1\n\
                cfn=(2) 0x0000000000002000\ncalls=1 0x2000 0\n0x1004 0 100\n\
                fn=(2)\n0x2000 0 2\ncfn=(3) 0x0000000000001010\ncalls=1 0x1010 0\n0x2002 0 60\n\
                fn=(3)\n0x1010 0 60\n";
    let mut out = Vec::new();
    let input = std::io::Cursor::new(format!("{HEAD}{body}").into_bytes());
    let stats = passes::exact(input, &mut out, &two_functions()).unwrap();
    let out = String::from_utf8(out).unwrap();
    assert_eq!((stats.reentry.taken, stats.reentry.unplaced), (60, 0));
    assert!(
        out.contains("cfn=(2) tramp\ncalls=1 0x2000 +6\n+4 * 40\n"),
        "{out}"
    );
    assert!(
        !out.contains(" 60\nfn=(3)"),
        "the resuming call is folded: {out}"
    );
}

/// tramp's block (at `level`) jumps into sum_to's code, which "calls"
/// sum_to's continuation at 0x1010, named by callgrind at level 1.
fn jump_into_own_continuation(level: &str) -> String {
    let body = format!(
        "ob=(1) ???\nfl=(1) ???\nfn=(1) 0x0000000000002000{level}\n0x2000 0 1\n0x1000 0 3\n\
         cfn=(2) 0x0000000000001010\ncalls=1 0x1010 0\n0x1004 0 50\n\
         fn=(2)\n0x1010 0 50\n"
    );
    let mut out = Vec::new();
    let input = std::io::Cursor::new(format!("{HEAD}{body}").into_bytes());
    let stats = passes::exact(input, &mut out, &two_functions()).unwrap();
    let across = usize::from(!level.is_empty());
    assert_eq!(
        (stats.level_calls, stats.folded_calls),
        (across as u64, 1 - across as u64)
    );
    String::from(String::from_utf8(out).unwrap().strip_prefix(HEAD).unwrap())
}

#[test]
fn a_call_between_two_levels_of_one_function_stays_a_call() {
    // sum_to'2 (moved from tramp'2) reaches sum_to at level 1: folded,
    // sum_to would hold 50 its callers never called it with.
    let out = jump_into_own_continuation("'2");
    assert!(
        out.contains("fn=sum_to'2\n0x1000 3 3\ncfn=(2) sum_to\ncalls=1 +16 *\n+4 * 50\n"),
        "{out}"
    );
    // The moved code's call from tramp'2 holds it.
    assert!(out.contains("cfn=sum_to'2\ncalls=3 0x1000 3\n0x2000 9 53\n"));
    // At one level the same call is sum_to's own jump: folded.
    let out = jump_into_own_continuation("");
    assert!(!out.contains("cfn=(2) sum_to\ncalls"), "{out}");
}

/// The error of the lazy pass (the fast lane open in native code).
fn lazy_error(body: &str) -> String {
    let input = std::io::Cursor::new(format!("{HEAD}{body}").into_bytes());
    let err = passes::lazy(input, Vec::new(), &table()).unwrap_err();
    err.to_string()
}

#[test]
fn a_call_left_unfinished_in_native_code_is_an_error_at_its_line() {
    let unfinished = "a call (cfn=/calls=) or jump (jump=/jcnd=) is not finished";
    for (body, want) in [
        // A cost line, a function line or a name line where `calls=` is due.
        (
            "fn=(1) f\n0x10 1\ncfn=(2) g\n0x10 1\n",
            format!("line 6: {unfinished}"),
        ),
        (
            "fn=(1) f\n0x10 1\ncob=(3) o\ncfn=(2) g\nfn=(1)\n",
            format!("line 7: {unfinished}"),
        ),
        (
            "fn=(1) f\n0x10 1\ncfn=(2) g\nfl=(4) a.c\n",
            format!("line 6: {unfinished}"),
        ),
        // The file ends inside a call: its last line, ended or not.
        (
            "fn=(1) f\n0x10 1\ncfn=(2) g\ncalls=1 0x10\n",
            "line 6: file ends inside a call or jump".into(),
        ),
        (
            "fn=(1) f\n0x10 1\ncfn=(2) g\ncalls=1 0x10",
            "line 6: file ends inside a call or jump".into(),
        ),
    ] {
        assert_eq!(lazy_error(body), want, "{body}");
    }
}

#[test]
fn a_stub_a_native_call_named_still_gives_its_jit_code_to_its_function() {
    // The lane copies the call to the address-named stub (its group
    // stays as written) without taking the stub for native code: its own
    // block still gives the line in sum_to's code to sum_to, called from
    // the stub.
    let body = "ob=(1) /bin/a\nfl=(1) a.c\nfn=(1) main\n0x400000 7 1\n\
                cob=(2) ???\ncfn=(2) 0x0000000000005000\ncalls=1 0x5000 0\n0x400004 8 50\n\
                ob=(2)\nfn=(2)\n0x5000 0 3\n0x1010 0 4\n";
    let want = "ob=(1) /bin/a\nfl=(1) a.c\nfn=(1) main\n0x400000 7 1\n\
                cob=(2) ???\ncfn=(2) 0x0000000000005000\ncalls=1 0x5000 0\n0x400004 8 50\n\
                ob=(2)\nfn=(2)\n0x5000 0 3\n\
                ob=/m\nfl=sum.calc\nfn=sum_to\n0x1010 3 4\n\
                ob=(2)\nfl=(1)\nfn=(2)\ncob=/m\ncfi=sum.calc\ncfn=sum_to\ncalls=4 0x1010 3\n0x5000 0 4\n";
    assert_eq!(rewrite(body), want);
}
