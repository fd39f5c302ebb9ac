//! A real object (tests/gdb/two.o: `gcc -g -O0 -c` of tests/gdb/two.c,
//! its compile folder mapped to /src) read as a JIT would hand it to gdb:
//! as gcc wrote it, with its code section placed in memory (what LLVM's
//! JITs do), and linked where it runs. The expected places and lines are
//! what `nm -S` and `objdump --dwarf=decodedline` say of the file.

use super::*;
use crate::lines::within;

const TWO: &[u8] = include_bytes!("../../../tests/gdb/two.o");

/// Where a JIT put the code in these tests.
const BASE: u64 = 0x7f00_0000_1000;

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
}

/// `bytes` with section `name`'s address set to `addr` (its header's
/// `sh_addr`).
fn place_section(bytes: &mut [u8], name: &str, addr: u64) {
    let index = object::File::parse(&*bytes)
        .unwrap()
        .section_by_name(name)
        .unwrap()
        .index()
        .0;
    let at = u64_at(bytes, 0x28) as usize + index * 64 + 16;
    bytes[at..at + 8].copy_from_slice(&addr.to_le_bytes());
}

/// `bytes` with symbol `name`'s value (`field` 8) or size (`field` 16)
/// set to `v`.
fn set_symbol(bytes: &mut [u8], name: &str, field: usize, v: u64) {
    let file = object::File::parse(&*bytes).unwrap();
    let index = file.symbol_by_name(name).unwrap().index().0;
    let (table, _) = file
        .section_by_name(".symtab")
        .unwrap()
        .file_range()
        .unwrap();
    let at = table as usize + index * 24 + field;
    bytes[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// (name, address, size, lines as (address, line)) of each function.
type Found = Vec<(String, u64, u64, Vec<(u64, u32)>)>;

fn found(bytes: &[u8]) -> Found {
    let functions = functions(bytes).unwrap();
    for f in &functions {
        assert!(f.lines.iter().all(|r| r.file == "/src/two.c"), "{f:?}");
    }
    functions
        .into_iter()
        .map(|f| {
            let lines = f.lines.iter().map(|r| (r.addr, r.line)).collect();
            (String::from_utf8(f.name).unwrap(), f.addr, f.size, lines)
        })
        .collect()
}

/// The functions of two.o with its code at `base`.
fn two_at(base: u64) -> Found {
    let square = [(0, 3), (0x7, 4), (0x10, 5), (0x16, 6)];
    let sum_to = [
        (0x18, 9),
        (0x23, 10),
        (0x2a, 11),
        (0x31, 11),
        (0x33, 12),
        (0x3d, 12),
        (0x40, 11),
        (0x44, 11),
        (0x4c, 13),
        (0x4f, 14),
    ];
    let at = |rows: &[(u64, u32)]| rows.iter().map(|&(a, l)| (base + a, l)).collect();
    vec![
        ("square".into(), base, 0x18, at(&square)),
        ("sum_to".into(), base + 0x18, 0x39, at(&sum_to)),
    ]
}

#[test]
fn an_object_as_gcc_wrote_it_is_read_at_its_own_addresses() {
    // (A copy: the reader wants the header aligned, as a JIT's memory is.)
    // `counter`, a data symbol, is no function.
    let bytes = TWO.to_vec();
    assert_eq!(found(&bytes), two_at(0));
}

#[test]
fn a_code_section_placed_in_memory_moves_its_symbols_and_lines() {
    let mut bytes = TWO.to_vec();
    place_section(&mut bytes, ".text", BASE);
    assert_eq!(found(&bytes), two_at(BASE));
}

#[test]
fn symbols_already_at_their_addresses_stay_there() {
    // An image linked where it runs: values inside their section.
    let mut bytes = TWO.to_vec();
    place_section(&mut bytes, ".text", BASE);
    set_symbol(&mut bytes, "square", 8, BASE);
    set_symbol(&mut bytes, "sum_to", 8, BASE + 0x18);
    let got = found(&bytes);
    let want = two_at(BASE);
    let places = |f: &Found| {
        f.iter()
            .map(|(n, a, s, _)| (n.clone(), *a, *s))
            .collect::<Vec<_>>()
    };
    assert_eq!(places(&got), places(&want));
}

#[test]
fn sizes_run_to_the_next_symbol_or_the_sections_end_and_no_further() {
    let mut bytes = TWO.to_vec();
    place_section(&mut bytes, ".text", BASE);
    set_symbol(&mut bytes, "square", 16, 0);
    set_symbol(&mut bytes, "sum_to", 16, 0);
    assert_eq!(found(&bytes), two_at(BASE), "sizes of 0");
    set_symbol(&mut bytes, "square", 16, 0x1000);
    set_symbol(&mut bytes, "sum_to", 16, 0x1000);
    let sizes: Vec<u64> = found(&bytes).iter().map(|f| f.2).collect();
    assert_eq!(sizes, [0x51, 0x39], "cut at the section's end");
}

#[test]
fn a_symbol_past_its_sections_end_is_no_function() {
    let mut bytes = TWO.to_vec();
    set_symbol(&mut bytes, "sum_to", 8, 0x60);
    let names: Vec<String> = found(&bytes).into_iter().map(|f| f.0).collect();
    assert_eq!(names, ["square"]);
}

#[test]
fn two_symbols_of_unknown_size_at_one_address_run_to_the_sections_end() {
    let mut bytes = TWO.to_vec();
    set_symbol(&mut bytes, "sum_to", 8, 0);
    set_symbol(&mut bytes, "square", 16, 0);
    set_symbol(&mut bytes, "sum_to", 16, 0);
    let places: Vec<(String, u64, u64)> =
        found(&bytes).into_iter().map(|f| (f.0, f.1, f.2)).collect();
    assert_eq!(
        places,
        [("square".into(), 0, 0x51), ("sum_to".into(), 0, 0x51)]
    );
}

#[test]
fn what_is_no_object_is_refused_with_why() {
    let err = functions(b"not an object at all").unwrap_err();
    assert!(err.starts_with("not an object file"), "{err}");
    // (Only ELF is compiled into the reader: any other format fails to
    // parse, before the check that names it.)
}

#[test]
fn the_rows_of_a_range_begin_with_the_row_that_covers_its_start() {
    let row = |addr, line| crate::lines::Row {
        addr,
        line,
        column: 0,
        file: "f".into(),
    };
    let rows = [
        row(0x10, 1),
        row(0x20, 2),
        row(0x30, 0),
        row(0x40, 4),
        row(0x50, 5),
    ];
    let lines = |start, end| -> Vec<(u64, u32)> {
        within(&rows, start, end)
            .iter()
            .map(|r| (r.addr, r.line))
            .collect()
    };
    assert_eq!(lines(0x10, 0x30), [(0x10, 1), (0x20, 2)]);
    // Inside a row: it heads the range, at the range's start.
    assert_eq!(lines(0x18, 0x21), [(0x18, 1), (0x20, 2)]);
    // Inside a row of line 0 (no line): nothing heads it.
    assert_eq!(lines(0x38, 0x50), [(0x40, 4)]);
    // A row at the range's end is not in it; before every row, nothing.
    assert_eq!(lines(0x00, 0x10), []);
    assert_eq!(lines(0x50, 0x60), [(0x50, 5)]);
    assert_eq!(lines(0x58, 0x60), [(0x58, 5)]);
}
