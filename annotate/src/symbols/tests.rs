//! The table's lookups held to plain walks.
use super::*;

/// Numbers below `n` at each call, from `seed` (xorshift): the random
/// layouts the symbols' tests try.
pub(super) fn below(mut seed: u64) -> impl FnMut(u64) -> u64 {
    move |n| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    }
}

#[test]
fn a_row_hint_never_changes_the_answer() {
    let row = |offset, line| Row {
        offset,
        line,
        file: FileId(0),
    };
    let rows = vec![
        row(0, 3),
        row(4, 0),
        row(5, 7),
        row(9, 8),
        row(20, 9),
        row(21, 2),
    ];
    let symbol = Symbol {
        name: "f".into(),
        file: None,
        line: 1,
        start: 0x100,
        size: 30,
        rows,
        source: 0,
    };
    for addr in 0xf0u64..0x130 {
        // By a plain walk: the last row at or before the address.
        let offset = addr.wrapping_sub(0x100);
        let at = symbol.rows.iter().rposition(|r| r.offset <= offset);
        let (want_span, want_row) = match at {
            _ if addr < 0x100 => (0..0x100, None),
            Some(i) => {
                let end = symbol
                    .rows
                    .get(i + 1)
                    .map_or(u64::MAX, |r| 0x100 + r.offset);
                let row = Some(symbol.rows[i]).filter(|r| r.line != 0);
                (0x100 + symbol.rows[i].offset..end, row)
            }
            None => unreachable!("the first row is at offset 0"),
        };
        for hint in 0..=symbol.rows.len() + 1 {
            let (span, row, _) = symbol.row_span_near(addr, hint);
            assert_eq!(
                (span, row),
                (want_span.clone(), want_row),
                "{addr:#x} hint {hint}"
            );
        }
    }
}

#[test]
fn a_symbol_hint_never_changes_the_answer() {
    // b overlaps the middle of a (later wins), c2 has c's very range,
    // and the empty range owns no segment.
    let table = map_table(b"1000 100 a\n1040 20 b\n2000 10 c\n2000 10 c2\n3000 0 empty\n");
    let addrs = (0xff0u64..0x1110)
        .chain(0x1ff0..0x2020)
        .chain(0x2ff0..0x3010);
    addrs.for_each(|addr| assert_near_agrees(&table, addr));
}

/// The table of one perf map holding `map`.
fn map_table(map: &[u8]) -> SymbolTable {
    let mut table = SymbolTable::builder();
    table.add_perf_map("perf-1.map".into(), map);
    table.build()
}

/// The range found at `addr`, and its symbol's name.
fn named_range(table: &SymbolTable, addr: u64) -> Option<(std::ops::Range<u64>, String)> {
    table
        .lookup_range(addr)
        .map(|(r, h)| (r, table.symbol(h.symbol).name.clone()))
}

/// A lookup near any symbol (and one past the last) answers as the plain
/// lookup does.
fn assert_near_agrees(table: &SymbolTable, addr: u64) {
    let want = table.lookup_range(addr);
    for symbol in 0..table.len() as u32 + 1 {
        let near = table.lookup_range_near(addr, SymbolId(symbol));
        assert_eq!(near, want, "{addr:#x} near {symbol}");
    }
}

#[test]
fn a_range_inside_another_leaves_the_outer_one_around_it() {
    // The inner range is the later line: it wins where it lies; the outer
    // one holds what is left on both sides, up to its own end, also when
    // no range starts after the inner one ends.
    let table = map_table(b"1000 100 outer\n1010 10 inner\n");
    let name = |addr| named_range(&table, addr);
    let outer = |r: std::ops::Range<u64>| Some((r, "outer".to_string()));
    assert_eq!(name(0x1005), outer(0x1000..0x1010));
    assert_eq!(name(0x1015), Some((0x1010..0x1020, "inner".into())));
    assert_eq!(name(0x1050), outer(0x1020..0x1100));
    assert_eq!(name(0x1100), None);
}

#[test]
fn a_later_range_over_an_earlier_one_is_ambiguous_only_where_names_differ() {
    // The outer range is the later line: it wins over the inner one. Of
    // one name, they are one range, not ambiguous; of two, the part they
    // share is ambiguous and a range of its own.
    let lookup = |map: &[u8], addr| {
        let table = map_table(map);
        let (range, hit) = table.lookup_range(addr).unwrap();
        (range, table.symbol(hit.symbol).name.clone(), hit.ambiguous)
    };
    let same = b"1010 10 f\n1000 100 f\n";
    for addr in [0x1005, 0x1015, 0x1050] {
        assert_eq!(lookup(same, addr), (0x1000..0x1100, "f".into(), false));
    }
    let other = b"1010 10 g\n1000 100 f\n";
    assert_eq!(lookup(other, 0x1015), (0x1010..0x1020, "f".into(), true));
    assert_eq!(lookup(other, 0x1050), (0x1020..0x1100, "f".into(), false));
}

#[test]
fn ranges_over_ranges_are_told_apart_by_name_wherever_they_overlap() {
    // `f` holds two later ranges, apart from each other: `f` again (one
    // function: not ambiguous) and `g` (ambiguous where it lies), and a
    // third `f` begins where `f` ends (touching is not overlapping).
    let table = map_table(b"1000 100 f\n1010 10 f\n1080 10 g\n1100 10 f\n");
    let answer = |addr| {
        let (range, hit) = table.lookup_range(addr).unwrap();
        (range, table.symbol(hit.symbol).name.clone(), hit.ambiguous)
    };
    assert_eq!(answer(0x1005), (0x1000..0x1010, "f".into(), false));
    assert_eq!(answer(0x1015), (0x1010..0x1020, "f".into(), false));
    assert_eq!(answer(0x1085), (0x1080..0x1090, "g".into(), true));
    assert_eq!(answer(0x1095), (0x1090..0x1100, "f".into(), false));
    assert_eq!(answer(0x1105), (0x1100..0x1110, "f".into(), false));
}

#[test]
fn disjoint_ranges_in_any_load_order_answer_as_segments_would() {
    // In address order as loaded, the ranges are the index; loaded from
    // three spaces by turns, they are in the order the lanes give; in
    // either case the answers, near any symbol too, are the segments'.
    let ordered = b"1000 100 a\n1100 20 b\n1200 10 c\n2000 8 d\n";
    let shuffled = b"2000 8 d\n1200 10 c\n1000 100 a\n1100 20 b\n";
    let tables = [&ordered[..], &shuffled[..]].map(map_table);
    assert!(matches!(tables[0].index, Index::Entries { .. }));
    assert!(matches!(tables[1].index, Index::Ordered { .. }));
    for addr in (0xff0u64..0x1220).chain(0x1ff0..0x2010) {
        let (a, b) = (named_range(&tables[0], addr), named_range(&tables[1], addr));
        assert_eq!(a, b, "{addr:#x}");
        tables.iter().for_each(|t| assert_near_agrees(t, addr));
    }
    let (map, spans) = three_spaces_by_turns(2000);
    let mut table = map_table(map.as_bytes());
    assert!(matches!(table.index, Index::Ordered { .. }));
    let addrs: Vec<u64> = spans.iter().flat_map(|s| s.start - 1..s.end + 1).collect();
    let answers = |t: &SymbolTable| addrs.iter().map(|&a| t.lookup_range(a)).collect::<Vec<_>>();
    let near = |t: &SymbolTable| {
        let ids: Vec<_> = t.ids().collect();
        let near = |(i, &a): (usize, &u64)| t.lookup_range_near(a, ids[i * 7 % ids.len()]);
        addrs.iter().enumerate().map(near).collect::<Vec<_>>()
    };
    let (by_lanes, near_by_lanes) = (answers(&table), near(&table));
    table.index = Index::swept(&table);
    assert!(matches!(table.index, Index::Segments { .. }));
    assert_eq!(by_lanes, answers(&table));
    assert_eq!(near_by_lanes, near(&table));
}

/// A map of `n` ranges from three code spaces, loaded by turns of 1 to 5
/// from each (sizes and gaps varied), and each space's addresses.
fn three_spaces_by_turns(n: u64) -> (String, Vec<std::ops::Range<u64>>) {
    let mut next = [0x10_0000u64, 0x30_0000, 0x20_0000];
    let first = next;
    let mut map = String::new();
    let (mut space, mut left) = (0, 1);
    for i in 0..n {
        if left == 0 {
            space = (space + 1 + (i % 2) as usize) % 3;
            left = 1 + i % 5;
        }
        left -= 1;
        let size = 1 + i * 7 % 40;
        map.push_str(&format!("{:x} {size:x} f{i}\n", next[space]));
        next[space] += size + i % 3;
    }
    let spans = first.iter().zip(next).map(|(&a, b)| a..b).collect();
    (map, spans)
}

#[test]
fn ordered_ranges_answer_as_a_plain_walk_does_across_sampled_starts() {
    // More ranges than one stride of sampled starts, of varied sizes with
    // gaps between some: each address (every range's edges, the gaps,
    // before the first and past the last) gets the last range starting at
    // or below it, if it covers the address.
    let ranges: Vec<(u64, u64)> = (0..300u64)
        .scan(0x1000, |at, i| {
            let range = (*at, 1 + i % 5);
            *at += range.1 + i % 3;
            Some(range)
        })
        .collect();
    let map: String = ranges
        .iter()
        .enumerate()
        .map(|(i, (start, size))| format!("{start:x} {size:x} f{i}\n"))
        .collect();
    let table = map_table(map.as_bytes());
    assert!(matches!(table.index, Index::Entries { .. }));
    let end = ranges.last().map_or(0, |r| r.0 + r.1);
    for addr in 0xffe..end + 2 {
        let walk = ranges
            .iter()
            .rposition(|r| r.0 <= addr)
            .filter(|&i| addr < ranges[i].0 + ranges[i].1)
            .map(|i| (ranges[i].0..ranges[i].0 + ranges[i].1, format!("f{i}")));
        assert_eq!(named_range(&table, addr), walk, "{addr:#x}");
    }
}

#[test]
fn an_epoch_holds_the_code_loaded_before_its_end_less_what_replaced_it() {
    // a, then b over a, then c elsewhere; b's line starts at byte 10.
    let map = b"1000 10 a\n1000 10 b\n2000 10 c\n";
    let names = |end: u64| {
        let mut builder = SymbolTable::builder().epoch_ending_at(vec![("perf-1.map".into(), end)]);
        builder.add_perf_map("/x/perf-1.map".into(), map);
        let table = builder.build();
        let at = |addr| {
            table
                .lookup(addr)
                .map(|hit| table.symbol(hit.symbol).name.clone())
        };
        (
            at(0x1000),
            at(0x2000),
            table.lookup(0x1000).is_some_and(|h| h.ambiguous),
        )
    };
    assert_eq!(
        names(10),
        (Some("a".into()), None, false),
        "the epoch before b"
    );
    assert_eq!(names(20), (Some("b".into()), None, false), "a replaced");
    assert_eq!(
        names(u64::MAX),
        (Some("b".into()), Some("c".into()), false),
        "the last epoch"
    );
    // A file the epoch does not name keeps everything (and the reuse shows).
    let mut builder = SymbolTable::builder().epoch_ending_at(vec![("jit-1.dump".into(), 0)]);
    builder.add_perf_map("/x/perf-1.map".into(), map);
    let table = builder.build();
    assert!(table.lookup(0x1000).is_some_and(|h| h.ambiguous));
}

#[test]
fn an_epochs_table_made_from_the_files_indexed_once_is_the_table_read_anew() {
    // The map the epoch names (a, b over a, and c right after b:
    // touching, not over it; b's line starts at byte 10, c's at 20)
    // between two it does not name (e, d), so that it starts after one
    // and another comes after its trimmed ranges.
    let maps: [(&str, &[u8]); 3] = [
        ("perf-3.map", b"5000 10 e\n"),
        ("perf-1.map", b"1000 10 a\n1000 10 b\n1010 10 c\n"),
        ("perf-2.map", b"3000 10 d\n"),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (name, map) in maps {
        std::fs::write(dir.path().join(name), map).unwrap();
    }
    let add = |builder: &mut SymbolTableBuilder| {
        for (name, _) in maps {
            let path = dir.path().join(name);
            let file = std::fs::File::open(&path).unwrap();
            builder.add_perf_map_file(path, file).unwrap();
        }
    };
    let names = |table: SymbolTable| -> Vec<Option<String>> {
        [0x1000, 0x1010, 0x3000, 0x5000]
            .into_iter()
            .map(|addr| table.lookup(addr))
            .map(|hit| hit.map(|h| table.symbol(h.symbol).name.clone()))
            .collect()
    };
    let want = |names: [Option<&str>; 2]| {
        let others = [Some("d"), Some("e")];
        let all = names.into_iter().chain(others).map(|n| n.map(String::from));
        all.collect::<Vec<_>>()
    };
    let ends = [
        (0, want([None, None])),
        (10, want([Some("a"), None])),
        (20, want([Some("b"), None])),
        (u64::MAX, want([Some("b"), Some("c")])),
    ];
    let mut indexed = SymbolTable::builder();
    add(&mut indexed);
    for (end, want) in ends {
        let epoch = vec![("perf-1.map".into(), end)];
        let mut anew = SymbolTable::builder().epoch_ending_at(epoch.clone());
        add(&mut anew);
        assert_eq!(
            names(anew.build()),
            want,
            "read anew, epoch ending at {end}"
        );
        let fork = indexed.fork().unwrap().epoch_ending_at(epoch);
        assert_eq!(names(fork.build()), want, "forked, epoch ending at {end}");
    }
    // The files are not indexed again: emptied now, a fork still has
    // their ranges where a new builder finds none.
    for (name, _) in maps {
        std::fs::write(dir.path().join(name), b"").unwrap();
    }
    let fork = indexed.fork().unwrap().build();
    assert!(fork.lookup(0x3000).is_some());
    let mut again = SymbolTable::builder();
    add(&mut again);
    assert!(again.build().lookup(0x3000).is_none());
}

#[test]
fn a_fork_keeps_the_names_raw_where_the_files_were_read_so() {
    let mut raw = SymbolTable::builder().raw_names(true);
    raw.add_perf_map("/x/perf-1.map".into(), b"1000 10 _Z3foov\n");
    let mut demangled = SymbolTable::builder();
    demangled.add_perf_map("/x/perf-1.map".into(), b"1000 10 _Z3foov\n");
    let name = |builder: &SymbolTableBuilder| {
        let table = builder.fork().unwrap().build();
        let hit = table.lookup(0x1000).unwrap();
        table.symbol(hit.symbol).name.clone()
    };
    assert_eq!(name(&raw), "_Z3foov");
    assert_eq!(name(&demangled), "foo()");
}

#[test]
fn ranges_in_the_program_s_own_code_are_left_out_and_counted() {
    // Two ranges inside the program's executable segment, one across its
    // end and one outside: the first two are left out, and said so.
    let map = b"1000 10 inside_a\n1800 10 inside_b\n1ff8 10 across\n3000 10 outside\n";
    let program = |segment: std::ops::Range<u64>| mapped::MappedCode {
        file: "/usr/bin/node".into(),
        segments: vec![segment],
    };
    let mut builder = SymbolTable::builder();
    builder.add_perf_map("perf-1.map".into(), map);
    let table = builder.outside(Some(program(0x1000..0x2000))).build();
    let names: Vec<_> = table
        .ids()
        .map(|id| table.symbol(id).name.clone())
        .collect();
    assert_eq!(names, ["across", "outside"]);
    assert_eq!(table.report.in_program, Some(("/usr/bin/node".into(), 2)));
    assert_eq!(
        named_range(&table, 0x3004).map(|r| r.1).as_deref(),
        Some("outside")
    );
    // Nothing in the program's code: nothing said.
    let mut builder = SymbolTable::builder();
    builder.add_perf_map("perf-1.map".into(), map);
    let table = builder.outside(Some(program(0x8000..0x9000))).build();
    assert_eq!((table.len(), table.report.in_program.clone()), (4, None));
}

#[test]
fn qemu_s_blocks_are_named_by_the_guest_s_functions() {
    let mut builder = SymbolTable::builder();
    builder.add_perf_map("perf-1.map".into(), b"7000 10 guest-0x401622\n");
    let guest = guest::GuestSymbols::of_functions(vec![(0x401615, 0x58, "collatz".into())]);
    let table = builder.guest(Some(guest)).build();
    assert_eq!(
        named_range(&table, 0x7004).map(|r| r.1).as_deref(),
        Some("collatz")
    );
}
