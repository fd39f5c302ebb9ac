//! Code objects. A JIT that compiles a module at a time (wasmtime,
//! Cranelift's JIT module, LLVM ORC) writes the module's functions as one
//! block: consecutive loads, each starting where the one before ended or
//! after no more than alignment padding.
//! Two such blocks can hold functions of one name (two wasm modules' `fib`,
//! and their trampolines): different functions, which must stay apart in
//! both readers. Functions loaded one at a time under one name (a method
//! compiled again by a higher tier, HotSpot's C1 then C2) are one function
//! and stay merged.
//!
//! Both readers tell functions apart by name and file (KCachegrind also by
//! object). Where a name occurs in two blocks of several functions, its
//! functions that have no source file are filed under `<jit module N>`,
//! N counting such blocks in load order, instead of `<jit>`. Functions with
//! a source file keep it: two modules compiled from one file and one
//! function name remain one function.
//!
//! The files of runtimes known to compile a function at a time are not
//! looked at: V8's (a jitdump with its mark, a perf map in its way) and
//! HotSpot's perf maps. Their code spaces put functions back to back too,
//! and a method compiled again in another such block is the same method.
//! (V8 compiles WebAssembly a module at a time where it compiles eagerly,
//! and names its functions without a file, `JS:fib-0-liftoff`: two such
//! modules' functions of one name stay one function. node 20 compiles
//! them lazily by default, one at a time, and then no block holds them.)

use std::cell::OnceCell;
use std::collections::HashMap;
use std::ops::Range;

use super::names::Names;
use super::{Entry, SymbolId, SymbolTable};

/// The code objects of each symbol file's functions. They are worked out
/// the first time a function that could be in one is decoded: one
/// without a source file in a block. A file none of whose touched
/// functions is such (each has a source file, or lies alone) is not read
/// for them at all.
#[derive(Debug, Default)]
pub struct Modules {
    /// Per source number: its entries (in file order), and, once worked
    /// out, the (entry, module) of those filed under a module, by entry.
    sources: Vec<Source>,
}

#[derive(Debug)]
struct Source {
    entries: Range<usize>,
    filed: OnceCell<Vec<(u32, u32)>>,
}

impl Modules {
    /// The modules of `table`'s sources, to be worked out when asked:
    /// told among the ranges the table keeps. Each source's entries are
    /// together, in the order the sources were added, and are found by
    /// binary search (a pass over a million entries cost 2.5 ms).
    pub fn of_sources(table: &SymbolTable) -> Modules {
        let entries = &table.entries;
        let mut start = 0;
        let sources = (0..table.sources.len()).map(|source| {
            let end = start + entries[start..].partition_point(|e| e.source as usize == source);
            let entries = std::mem::replace(&mut start, end)..end;
            let filed = OnceCell::new();
            Source { entries, filed }
        });
        Modules {
            sources: sources.collect(),
        }
    }

    /// The module entry `id` (a function without a source file) is filed
    /// under, numbered from 1; 0 for none.
    pub fn of(&self, table: &SymbolTable, id: SymbolId) -> u32 {
        let entry = &table.entries[id.index()];
        let Some(source) = self.sources.get(entry.source as usize) else {
            return 0;
        };
        if !in_a_block(table, source.entries.clone(), id.index()) {
            return 0;
        }
        let filed = source
            .filed
            .get_or_init(|| separate(table, source.entries.clone()));
        filed
            .binary_search_by_key(&id.0, |&(s, _)| s)
            .map_or(0, |i| filed[i].1)
    }
}

/// True where entry `i` of `range` is in one of its [`blocks`].
fn in_a_block(table: &SymbolTable, range: Range<usize>, i: usize) -> bool {
    let entries = &table.entries;
    (i > range.start && joined(&entries[i - 1], &entries[i]))
        || (i + 1 < range.end && joined(&entries[i], &entries[i + 1]))
}

/// Functions of colliding names filed apart by module, among the entries
/// `range` (one source's, in file order): (entry, module), by entry. Only
/// files with two blocks or more are read for names, front to back
/// through one window; the names are hashed, and only those whose hashes
/// two blocks share are read again and compared whole. A million
/// functions back to back (one block) cost nothing, and a million in
/// blocks a read of the file.
fn separate(table: &SymbolTable, range: Range<usize>) -> Vec<(u32, u32)> {
    let Some(source) = table.entries.get(range.start).map(|e| e.source as usize) else {
        return Vec::new();
    };
    if table.sources[source].by_function {
        return Vec::new();
    }
    let blocks = blocks(table, range.clone());
    if blocks.len() < 2 {
        return Vec::new();
    }
    let Ok(mut names) = Names::new(table, source) else {
        return Vec::new(); // its names then decode to the address, in no module
    };
    // (hash of the name, block, entry) of each name without a file; a
    // hash in two blocks is a candidate (64 bits of it: a collision only
    // costs a closer look).
    let mut hashed: Vec<(u64, u32, u32)> = Vec::new();
    for (i, block) in blocks.iter().enumerate() {
        for s in block.clone() {
            let (hash, has_file) = names.hashed(SymbolId(s as u32));
            if !has_file {
                hashed.push((hash as u64, i as u32, s as u32));
            }
        }
    }
    hashed.sort_unstable();
    // The entries of hashes in two blocks, by place in the file: their
    // names are read again in file order, through the same window.
    let mut candidates: Vec<(u32, u32)> = Vec::new();
    for group in hashed.chunk_by(|a, b| a.0 == b.0) {
        if group.first().map(|g| g.1) != group.last().map(|g| g.1) {
            candidates.extend(group.iter().map(|&(_, block, s)| (s, block)));
        }
    }
    candidates.sort_unstable();
    let filed = in_two_blocks(&mut names, candidates);
    filed.into_iter().map(|(s, block)| (s, block + 1)).collect()
}

/// Of `candidates` (entry, block), those whose name is in two blocks.
/// The names are kept in one string, end to end.
fn in_two_blocks(names: &mut Names, candidates: Vec<(u32, u32)>) -> Vec<(u32, u32)> {
    let mut text = String::new();
    let ends: Vec<usize> = candidates
        .iter()
        .map(|&(s, _)| {
            text.push_str(&names.of(SymbolId(s)).0);
            text.len()
        })
        .collect();
    let name = |i: usize| &text[i.checked_sub(1).map_or(0, |p| ends[p])..ends[i]];
    // By name: the first block it is in, and whether another holds it.
    let mut by_name: HashMap<&str, (u32, bool)> = HashMap::with_capacity(candidates.len());
    for (i, &(_, block)) in candidates.iter().enumerate() {
        let seen = by_name.entry(name(i)).or_insert((block, false));
        seen.1 |= seen.0 != block;
    }
    let colliding = (0..candidates.len()).filter(|&i| by_name[name(i)].1);
    colliding.map(|i| candidates[i]).collect()
}

/// The most padding a module's code puts between two functions (their
/// alignment: wasmtime aligns each to 16 bytes, Cranelift's JIT module
/// and LLVM to at most 64).
const PADDING: u64 = 64;

/// The blocks of two or more ranges laid out one after another, in
/// order, apart by no more than alignment padding.
fn blocks(table: &SymbolTable, range: Range<usize>) -> Vec<Range<usize>> {
    let entries = &table.entries[range.clone()];
    let mut blocks = Vec::new();
    let mut start = 0;
    for i in 1..=entries.len() {
        if i == entries.len() || !joined(&entries[i - 1], &entries[i]) {
            if i - start >= 2 {
                blocks.push(range.start + start..range.start + i);
            }
            start = i;
        }
    }
    blocks
}

/// True where `next` follows `prev` in one block: `prev` has code, and
/// `next` starts after its end by less than [`PADDING`].
fn joined(prev: &Entry, next: &Entry) -> bool {
    let end = prev.start.checked_add(prev.size);
    let gap = end.and_then(|end| next.start.checked_sub(end));
    prev.size > 0 && gap.is_some_and(|gap| gap < PADDING)
}

#[cfg(test)]
mod tests {
    use crate::symbols::{test_dump, BiasMode, SymbolTable};

    fn file_of(table: &SymbolTable, addr: u64) -> Option<String> {
        let symbol = table.symbol(table.lookup(addr).unwrap().symbol);
        symbol.file.map(|f| table.file(f).to_string())
    }

    #[test]
    fn same_names_in_two_module_blocks_stay_apart() {
        let mut table = SymbolTable::builder();
        let map = b"1000 10 fib\n1010 20 tramp\n2000 10 fib\n2010 20 tramp\n3000 8 solo\n";
        table.add_perf_map("m".into(), map);
        let table = table.build();
        assert_eq!(file_of(&table, 0x1000).as_deref(), Some("<jit module 1>"));
        assert_eq!(file_of(&table, 0x2010).as_deref(), Some("<jit module 2>"));
        assert_eq!(file_of(&table, 0x3000), None);
    }

    #[test]
    fn each_of_three_blocks_is_a_module_of_its_own() {
        let map: String = (1..=3u64)
            .map(|b| format!("{:x} 10 fib\n{:x} 20 tramp\n", b << 12, (b << 12) + 0x10))
            .collect();
        let addrs = [0x1000, 0x2010, 0x3000];
        let modules = ["<jit module 1>", "<jit module 2>", "<jit module 3>"];
        assert_eq!(
            map_files(map.as_bytes(), &addrs),
            modules.map(|m| Some(m.to_string()))
        );
    }

    #[test]
    fn a_function_loaded_again_on_its_own_stays_one() {
        let mut table = SymbolTable::builder();
        // A tier-up: the same method twice, each load on its own.
        let map = b"1000 10 Hot.run\n1040 10 other\n2000 10 Hot.run\n";
        table.add_perf_map("m".into(), map);
        let table = table.build();
        assert_eq!(file_of(&table, 0x1000), None);
        assert_eq!(file_of(&table, 0x2000), None);
    }

    /// True once source `source`'s modules were worked out.
    fn worked_out(table: &SymbolTable, source: usize) -> bool {
        let source = &table.modules.sources[source];
        source.filed.get().is_some()
    }

    #[test]
    fn modules_are_worked_out_only_for_a_function_that_could_be_in_one() {
        let mut table = SymbolTable::builder();
        let map = b"1000 10 fib\n1010 20 tramp\n2000 10 fib\n2010 20 tramp\n3000 8 solo\n";
        table.add_perf_map("a".into(), map);
        let map = b"3008 8 next\n5000 10 fib\n5010 20 tramp\n6000 8 JS:~f /a.js:1:1\n6008 8 g\n";
        table.add_perf_map("b".into(), map);
        let table = table.build();
        // Alone (its neighbour in address is another file's), with a
        // source file: not looked for in a module.
        for addr in [0x3000, 0x3008, 0x6000] {
            table.symbol(table.lookup(addr).unwrap().symbol);
        }
        assert!(!worked_out(&table, 0) && !worked_out(&table, 1));
        assert_eq!(file_of(&table, 0x6008), None);
        assert!(worked_out(&table, 1) && !worked_out(&table, 0));
        assert_eq!(file_of(&table, 0x5000).as_deref(), None);
        assert_eq!(file_of(&table, 0x1010), Some("<jit module 1>".into()));
        assert!(worked_out(&table, 0));
    }

    /// Files at `addrs` in a table of `map`.
    fn map_files(map: &[u8], addrs: &[u64]) -> Vec<Option<String>> {
        let mut table = SymbolTable::builder();
        table.add_perf_map("m".into(), map);
        let table = table.build();
        addrs.iter().map(|&a| file_of(&table, a)).collect()
    }

    #[test]
    fn a_function_at_a_time_runtimes_blocks_are_no_modules() {
        // HotSpot's code cache and V8's code spaces put methods back to
        // back too: a method compiled again (C1, then C2) and a V8
        // builtin in two such blocks are one function each.
        let hotspot = b"0x0000000000001000 0x0000000000000010 void A.f()\n\
            0x0000000000001010 0x0000000000000020 I2C/C2I adapters\n\
            0x0000000000002000 0x0000000000000010 void A.f()\n\
            0x0000000000002010 0x0000000000000020 I2C/C2I adapters\n";
        let v8 = b"1000 10 Builtin:A\n1010 20 Stub:B\n2000 10 Builtin:A\n2010 20 Stub:B\n";
        let other = b"1000 10 A\n1010 20 B\n2000 10 A\n2010 20 B\n";
        let addrs = [0x1000, 0x1010, 0x2000, 0x2010];
        assert_eq!(map_files(hotspot, &addrs), [None, None, None, None]);
        assert_eq!(map_files(v8, &addrs), [None, None, None, None]);
        let modules = [
            "<jit module 1>",
            "<jit module 1>",
            "<jit module 2>",
            "<jit module 2>",
        ];
        assert_eq!(
            map_files(other, &addrs),
            modules.map(|m| Some(m.to_string()))
        );
    }

    #[test]
    fn a_jitdumps_modules_are_told_by_names_and_line_tables() {
        // Two blocks of `fib` and `tramp`; the first `fib` has a line
        // table, so a file: only the second is without one, in one block.
        let loads: [(u64, &[u8], &str); 4] = [
            (0x1000, &[0x90; 0x10], "fib"),
            (0x1010, &[0x90; 0x20], "tramp"),
            (0x2000, &[0x90; 0x10], "fib"),
            (0x2010, &[0x90; 0x20], "tramp"),
        ];
        let files = |dump: &[u8]| {
            let mut table = SymbolTable::builder();
            table
                .add_jitdump("j".into(), dump, BiasMode::Detect)
                .unwrap();
            let table = table.build();
            loads.map(|(addr, _, _)| file_of(&table, addr))
        };
        let dump = test_dump::jitdump(&loads, &[(0, 3)], b"f.c");
        let some = |s: &str| Some(s.to_string());
        let modules = [
            some("f.c"),
            some("<jit module 1>"),
            None,
            some("<jit module 2>"),
        ];
        assert_eq!(files(&dump), modules);
        // Written by V8 (its mark in the header's reserved word): no
        // modules.
        let mut v8 = dump.clone();
        v8[16..20].copy_from_slice(&0xdeadbeef_u32.to_le_bytes());
        assert_eq!(files(&v8), [some("f.c"), None, None, None]);
    }

    #[test]
    fn only_the_names_two_blocks_share_are_filed_by_module() {
        // Two blocks of 300; the second has the first's last 150 names.
        let name = |block: u64, i: u64| match (block, i) {
            (1, i) if i < 150 => format!("g{i}"),
            (_, i) => format!("f{i}"),
        };
        let addr = |block: u64, i: u64| 0x1000 + block * 0x10_0000 + i * 0x10;
        let places: Vec<(u64, u64)> = (0..2).flat_map(|b| (0..300).map(move |i| (b, i))).collect();
        let map: String = places
            .iter()
            .map(|&(b, i)| format!("{:x} 10 {}\n", addr(b, i), name(b, i)))
            .collect();
        let addrs: Vec<u64> = places.iter().map(|&(b, i)| addr(b, i)).collect();
        let want = places
            .iter()
            .map(|&(b, i)| (i >= 150).then(|| format!("<jit module {}>", b + 1)));
        assert_eq!(map_files(map.as_bytes(), &addrs), want.collect::<Vec<_>>());
    }
}
