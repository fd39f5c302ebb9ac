//! The symbol table: address reuse, CODE_MOVE, bias, and source priority,
//! on jitdumps built with jit-client's own encoder.

use annotate::symbols::{BiasMode, SymbolTable};
use jitdump::write;
use jitdump::{CodeLoad, DebugEntry};

fn header() -> Vec<u8> {
    let mut buf = Vec::new();
    write::header(&mut buf, 62, 1, 0);
    buf
}

fn load(buf: &mut Vec<u8>, addr: u64, size: u64, index: u64, name: &[u8]) {
    let load = CodeLoad {
        pid: 1,
        tid: 1,
        code_addr: addr,
        code_size: size,
        code_index: index,
        name,
        code: None,
    };
    write::code_load_head(buf, 0, &load);
    buf.resize(buf.len() + size as usize, 0x90);
}

fn debug(buf: &mut Vec<u8>, addr: u64, rows: &[(u64, u32)]) {
    let entries = rows.iter().map(|&(a, line)| DebugEntry {
        addr: a,
        line,
        discrim: 0,
        file: b"f.toy",
    });
    write::debug_info(buf, 0, addr, entries);
}

fn table(dump: &[u8], map: Option<&[u8]>) -> SymbolTable {
    let mut table = SymbolTable::builder();
    if let Some(map) = map {
        table.add_perf_map("perf-1.map".into(), map);
    }
    table
        .add_jitdump("jit-1.dump".into(), dump, BiasMode::Detect)
        .unwrap();
    table.build()
}

fn name_at(table: &SymbolTable, addr: u64) -> Option<(String, bool)> {
    table
        .lookup(addr)
        .map(|h| (table.symbol(h.symbol).name.clone(), h.ambiguous))
}

#[test]
fn reused_addresses_name_the_latest_load_and_are_ambiguous() {
    let mut dump = header();
    load(&mut dump, 0x1000, 0x100, 0, b"old");
    load(&mut dump, 0x1000, 0x40, 1, b"new");
    let table = table(&dump, None);
    assert_eq!(name_at(&table, 0x1010), Some(("new".into(), true)));
    assert_eq!(name_at(&table, 0x1080), Some(("old".into(), false)));
    assert_eq!(name_at(&table, 0x1100), None);
}

#[test]
fn a_moved_function_is_found_at_its_new_address_with_its_lines() {
    let mut dump = header();
    debug(&mut dump, 0x1000, &[(0x1000, 7), (0x1008, 8), (0x1010, 0)]);
    load(&mut dump, 0x1000, 0x10, 5, b"mover");
    // CODE_MOVE: id 1, size 64, timestamp 0, pid, tid, vma, old, new, size, index.
    let mut rec = Vec::new();
    for v in [1u32, 64] {
        rec.extend_from_slice(&v.to_ne_bytes());
    }
    rec.extend_from_slice(&0u64.to_ne_bytes());
    for v in [1u32, 1] {
        rec.extend_from_slice(&v.to_ne_bytes());
    }
    for v in [0x9000u64, 0x1000, 0x9000, 0x10, 5] {
        rec.extend_from_slice(&v.to_ne_bytes());
    }
    dump.extend_from_slice(&rec);
    let table = table(&dump, None);
    let hit = table.lookup(0x9009).expect("moved range");
    let symbol = table.symbol(hit.symbol);
    assert_eq!(symbol.name, "mover");
    assert_eq!(symbol.row_at(0x9009).map(|r| r.line), Some(8));
}

#[test]
fn v8_style_bias_and_sentinels_give_the_right_lines() {
    let mut dump = header();
    // V8's mark in the header's reserved word, where jit-client puts its own.
    dump[16..20].copy_from_slice(&0xdead_beef_u32.to_ne_bytes());
    // Entries 0x40 too far, as V8 writes them; no sentinel: the last row runs to the end.
    debug(&mut dump, 0x2000, &[(0x2040, 3), (0x2048, 4)]);
    load(&mut dump, 0x2000, 0x20, 0, b"JS:*f /x/f.js:3:1");
    let table = table(&dump, None);
    let symbol = table.symbol(table.lookup(0x2000).unwrap().symbol);
    assert_eq!((symbol.name.as_str(), symbol.line), ("f", 3));
    assert_eq!(symbol.row_at(0x2007).map(|r| r.line), Some(3));
    assert_eq!(symbol.row_at(0x201f).map(|r| r.line), Some(4));
    let decision = &table.report.bias[0].1;
    assert_eq!((decision.shift, decision.records), (0x40, 1));
}

#[test]
fn a_jitdump_beats_a_map_covering_the_same_code() {
    let mut dump = header();
    load(&mut dump, 0x3000, 0x10, 0, b"from_dump");
    let table = table(&dump, Some(b"3000 10 from_map\n3010 10 only_map\n"));
    assert_eq!(
        name_at(&table, 0x3004).map(|n| n.0),
        Some("from_dump".into())
    );
    assert_eq!(
        name_at(&table, 0x3014).map(|n| n.0),
        Some("only_map".into())
    );
}

/// Erlang writes both files, spelling names differently in each: the
/// same range from both is one function, the jitdump's, and no reuse.
#[test]
fn a_range_both_files_give_is_one_function_named_from_the_jitdump() {
    let mut dump = header();
    load(&mut dump, 0x3000, 0x10, 0, b"global::apply_fun_shared");
    let map = b"3000 10 $global::apply_fun_shared\n3010 10 only_in_the_map\n";
    let table = table(&dump, Some(map));
    assert_eq!(
        name_at(&table, 0x3004),
        Some(("global::apply_fun_shared".into(), false))
    );
    assert_eq!(
        name_at(&table, 0x3014),
        Some(("only_in_the_map".into(), false))
    );
    assert_eq!(table.report.map_twins, [(0, 1)]);
}

#[test]
fn control_characters_in_jitdump_names_cannot_break_profile_lines() {
    let mut dump = header();
    load(&mut dump, 0x5000, 0x10, 0, b"two_lines_");
    // jit-client's encoder replaces them; other writers may not.
    let at = dump.windows(10).position(|w| w == b"two_lines_").unwrap();
    dump[at..at + 10].copy_from_slice(b"two\nlines\r");
    let table = table(&dump, None);
    let symbol = table.symbol(table.lookup(0x5000).unwrap().symbol);
    assert_eq!(
        symbol.name, "two_lines",
        "inner breaks replaced, the trailing one trimmed"
    );
}

/// A table of `jit-77.dump` (three functions, f0 at 0x10000, f1 at
/// 0x10100), and the dump's path: rewrite it to change the file under
/// the table.
fn table_of_a_dump(tag: &str) -> (std::path::PathBuf, SymbolTable) {
    let path = crate::util::scratch(tag).join("jit-77.dump");
    std::fs::write(&path, crate::scale::many_functions(3)).unwrap();
    let mut table = SymbolTable::builder();
    let file = std::fs::File::open(&path).unwrap();
    table
        .add_jitdump_file(path.clone(), file, BiasMode::Detect)
        .unwrap();
    (path, table.build())
}

/// Rewrites `profile` with `table`, which must fail for a symbol file,
/// saying why and naming the dump.
fn assert_symbol_file_fails(profile: &str, table: &SymbolTable) {
    let input = std::io::Cursor::new(profile.as_bytes());
    let result = annotate::callgrind::rewrite(input, Vec::new(), table);
    let Err(annotate::callgrind::RewriteError::SymbolFile(why)) = result else {
        panic!("{result:?}")
    };
    assert!(why.contains("jit-77.dump"), "{why}");
}

#[test]
fn a_symbol_file_changed_after_indexing_fails_the_output_not_the_process() {
    let (path, table) = table_of_a_dump("changed-dump");
    // Rewritten in place by someone else: its records are gone.
    std::fs::write(&path, b"JiTD").unwrap();
    let symbol = table.symbol(table.lookup(0x10100).unwrap().symbol);
    assert_eq!(symbol.name, "0x0000000000010100");
    // A rewrite that meets the range returns why it could not name it.
    let profile = "positions: instr\nevents: Ir\nob=???\nfn=0x0000000000010100\n0x10100 1\n";
    assert_symbol_file_fails(profile, &table);
    // The table keeps no failure: a profile that meets no changed range,
    // rewritten with it next (another output of the run), is written.
    let native = "events: Ir\nfn=main\n1 1\n";
    let input = std::io::Cursor::new(native.as_bytes());
    let written = annotate::callgrind::rewrite(input, Vec::new(), &table);
    assert!(written.is_ok(), "{written:?}");
}

#[test]
fn a_range_met_only_by_address_after_its_file_changed_fails_the_output() {
    let (path, table) = table_of_a_dump("changed-dump-lookup");
    // f0 is read before the file changes; f1 only after, when a cost line
    // of f0's block lies in f1's code (not by its name).
    let f0 = table.lookup(0x10000).unwrap().symbol;
    assert_eq!(table.symbol(f0).name, "f0");
    std::fs::write(&path, b"JiTD").unwrap();
    let profile = "positions: instr line\nevents: Ir\nob=???\nfn=0x0000000000010000\n0x10000 1 1\n0x10120 1 1\n";
    assert_symbol_file_fails(profile, &table);
}

/// The file a table files the function at `addr` under.
fn file_at(table: &SymbolTable, addr: u64) -> Option<String> {
    let symbol = table.symbol(table.lookup(addr)?.symbol);
    symbol.file.map(|f| table.file(f).to_string())
}

#[test]
fn two_modules_functions_of_one_name_stay_one_with_a_source_file() {
    // Two modules, each a block of two functions back to back (wasmtime's
    // layout). `fib` has a source file in both: one function, filed under
    // it. `tramp` has none: two functions, one per module.
    let mut dump = header();
    for (i, base) in [0x1000u64, 0x2000].into_iter().enumerate() {
        debug(&mut dump, base, &[(base, 3)]);
        load(&mut dump, base, 0x10, 2 * i as u64, b"fib");
        load(&mut dump, base + 0x10, 0x20, 2 * i as u64 + 1, b"tramp");
    }
    let table = table(&dump, None);
    for base in [0x1000, 0x2000] {
        assert_eq!(file_at(&table, base).as_deref(), Some("f.toy"), "{base:#x}");
    }
    assert_eq!(file_at(&table, 0x1010).as_deref(), Some("<jit module 1>"));
    assert_eq!(file_at(&table, 0x2010).as_deref(), Some("<jit module 2>"));
}

#[test]
fn a_module_block_allows_up_to_63_bytes_of_padding() {
    // The same two modules with `tramp` 63 bytes after `fib`'s end: still
    // blocks, so the two `tramp`s are told apart; at 64 bytes, four loads
    // one at a time, and each name is one function.
    for (gap, apart) in [(63u64, true), (64, false)] {
        let mut dump = header();
        for (i, base) in [0x1000u64, 0x2000].into_iter().enumerate() {
            load(&mut dump, base, 0x10, 2 * i as u64, b"fib");
            load(
                &mut dump,
                base + 0x10 + gap,
                0x20,
                2 * i as u64 + 1,
                b"tramp",
            );
        }
        let table = table(&dump, None);
        let module = file_at(&table, 0x1010 + gap);
        assert_eq!(module.is_some(), apart, "gap {gap}: {module:?}");
    }
}
