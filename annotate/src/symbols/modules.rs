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

use std::collections::{BTreeSet, HashMap};
use std::ops::Range;

use super::{SymbolId, SymbolTable};

/// Files functions of colliding names apart by module, among the
/// entries `range` (one source's, in file order). Only files with two
/// blocks or more are read for names, and the names are hashed, not
/// kept: a million functions back to back (one block) cost nothing, and
/// a million in blocks cost a read each, not their decoded symbols.
pub fn separate(table: &mut SymbolTable, range: Range<usize>) {
    let blocks = blocks(table, range.clone());
    if blocks.len() < 2 {
        return;
    }
    let name_of =
        |table: &SymbolTable, s: usize| super::decode::symbol(table, SymbolId(s as u32)).symbol;
    // Each entry's block and the hash of its name; by hash, the first
    // block it is in and whether another holds it too (a hash collision
    // only costs a closer look).
    let mut hashed: Vec<(usize, usize, u64)> = Vec::new();
    let mut seen: HashMap<u64, (usize, bool)> = HashMap::new();
    for (i, block) in blocks.iter().enumerate() {
        for s in block.clone() {
            let h = hash(&name_of(table, s).name);
            hashed.push((i, s, h));
            let seen = seen.entry(h).or_insert((i, false));
            seen.1 |= seen.0 != i;
        }
    }
    // (block, entry, name, has no file) of the names in several blocks,
    // read again only for those.
    let mut candidates: Vec<(usize, usize, String, bool)> = Vec::new();
    for (i, s, h) in hashed {
        if seen[&h].1 {
            let symbol = name_of(table, s);
            candidates.push((i, s, symbol.name, symbol.file.is_none()));
        }
    }
    let mut by_name: HashMap<&str, BTreeSet<usize>> = HashMap::new();
    for (block, _, name, _) in &candidates {
        by_name.entry(name).or_default().insert(*block);
    }
    let colliding: Vec<(usize, usize)> = candidates
        .iter()
        .filter(|(_, _, name, no_file)| *no_file && by_name[name.as_str()].len() > 1)
        .map(|&(block, s, _, _)| (block, s))
        .collect();
    for (block, s) in colliding {
        table.entries[s].module = block as u32 + 1;
        // Decoded again when asked, now under its module.
        table.decoded.forget(SymbolId(s as u32));
    }
}

fn hash(name: &str) -> u64 {
    use std::hash::{BuildHasher, RandomState};
    thread_local!(static STATE: RandomState = RandomState::new());
    STATE.with(|state| state.hash_one(name))
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
        let joined = i < entries.len() && {
            let (prev, next) = (&entries[i - 1], &entries[i]);
            let end = prev.start.checked_add(prev.size);
            let gap = end.and_then(|end| next.start.checked_sub(end));
            prev.size > 0 && gap.is_some_and(|gap| gap < PADDING)
        };
        if !joined {
            if i - start >= 2 {
                blocks.push(range.start + start..range.start + i);
            }
            start = i;
        }
    }
    blocks
}

#[cfg(test)]
mod tests {
    use crate::symbols::SymbolTable;

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
    fn a_function_loaded_again_on_its_own_stays_one() {
        let mut table = SymbolTable::builder();
        // A tier-up: the same method twice, each load on its own.
        let map = b"1000 10 Hot.run\n1040 10 other\n2000 10 Hot.run\n";
        table.add_perf_map("m".into(), map);
        let table = table.build();
        assert_eq!(file_of(&table, 0x1000), None);
        assert_eq!(file_of(&table, 0x2000), None);
    }
}
