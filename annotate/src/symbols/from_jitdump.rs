//! Symbols from a jitdump: CODE_LOADs with DEBUG_INFO matched by address,
//! offsets normalised (the +0x40 bias removed where the file has it, see
//! `bias`), CODE_MOVEs followed.

use std::collections::{BTreeMap, HashMap};

use super::{BiasMode, FileId, Row, Symbol, SymbolTable};
use crate::jitdump::{CodeLoad, DebugEntry, Jitdump, Record};

/// What one CODE_LOAD or CODE_MOVE contributes, DEBUG_INFO matched.
enum Item<'d> {
    Load(&'d CodeLoad<'d>, &'d [DebugEntry<'d>]),
    Move(&'d crate::jitdump::Move),
}

pub fn add(table: &mut SymbolTable, source: usize, dump: &Jitdump, bias: BiasMode) {
    let (items, orphans) = items(dump);
    let loads = items.iter().filter_map(|item| match item {
        Item::Load(load, debug) => Some((load.code_addr, load.code_size, *debug)),
        Item::Move(_) => None,
    });
    let decision = super::bias::decide(&dump.header, loads, bias);
    let shift = decision.shift;
    let mut by_index: HashMap<u64, usize> = HashMap::new();
    for item in items {
        match item {
            Item::Load(load, debug) => {
                let symbol = load_symbol(table, source, load, debug, shift);
                by_index.insert(load.code_index, table.symbols.len());
                table.push(symbol);
            }
            Item::Move(m) => {
                if let Some(&i) = by_index.get(&m.code_index) {
                    let mut moved = table.symbols[i].clone();
                    moved.start = m.new_code_addr;
                    table.push(moved);
                }
            }
        }
    }
    table.report.orphan_debug_info += orphans;
    let path = table.sources[source].path.clone();
    table.report.bias.push((path, decision));
    report_problems(table, source, dump);
}

/// The loads and moves in file order, each load with its DEBUG_INFO
/// entries; and the number of DEBUG_INFO records no load took.
fn items<'d>(dump: &'d Jitdump) -> (Vec<Item<'d>>, usize) {
    let mut pending: HashMap<u64, &[DebugEntry]> = HashMap::new();
    let mut previous_debug: Option<u64> = None;
    let mut items = Vec::new();
    for (_, record) in &dump.records {
        match record {
            Record::DebugInfo { code_addr, entries } => {
                pending.insert(*code_addr, entries);
                previous_debug = Some(*code_addr);
            }
            Record::Load(load) => {
                // Match by address (LLVM ORC batches DEBUG_INFOs); fall back
                // to the record just before, as perf and samply do.
                let debug = pending
                    .remove(&load.code_addr)
                    .or_else(|| previous_debug.and_then(|a| pending.remove(&a)));
                previous_debug = None;
                items.push(Item::Load(load, debug.unwrap_or(&[])));
            }
            Record::Move(m) => items.push(Item::Move(m)),
            _ => {}
        }
    }
    (items, pending.len())
}

fn report_problems(table: &mut SymbolTable, source: usize, dump: &Jitdump) {
    let mut counts: BTreeMap<_, usize> = BTreeMap::new();
    for p in &dump.problems {
        *counts.entry(p.kind).or_default() += 1;
    }
    let path = table.sources[source].path.clone();
    for (kind, n) in counts {
        table
            .report
            .problems
            .push((path.clone(), kind.to_string(), n));
    }
}

fn load_symbol(
    table: &mut SymbolTable,
    source: usize,
    load: &CodeLoad,
    debug: &[DebugEntry],
    shift: u64,
) -> Symbol {
    let raw = String::from_utf8_lossy(load.name);
    let split = super::runtime_names::split(&raw);
    let rows = rows(table, load, debug, shift);
    let first = rows.iter().find(|r| r.line != 0);
    let file = first
        .map(|r| r.file)
        .or_else(|| split.file.as_deref().map(|f| table.intern_file(f)));
    let line = if split.line != 0 {
        split.line
    } else {
        first.map_or(0, |r| r.line)
    };
    Symbol {
        // A line break would end the profile line the name is written on.
        name: split.name.replace(|c: char| c.is_control(), "_"),
        file,
        line,
        start: load.code_addr,
        size: load.code_size,
        rows,
        source,
    }
}

/// Entries as offsets, `shift` (the bias) removed, out-of-range ones dropped, sorted,
/// the last entry per offset kept. A sentinel (line 0 or no file) is kept
/// as a row with line 0: it ends the previous row's range.
fn rows(table: &mut SymbolTable, load: &CodeLoad, debug: &[DebugEntry], shift: u64) -> Vec<Row> {
    let offsets = debug.iter().map(|e| e.addr.checked_sub(load.code_addr));
    let mut rows: Vec<Row> = Vec::with_capacity(debug.len());
    for (entry, offset) in debug.iter().zip(offsets) {
        let Some(offset) = offset
            .and_then(|o| o.checked_sub(shift))
            .filter(|&o| o <= load.code_size)
        else {
            continue;
        };
        let file = clean_file(entry.file);
        let (line, file) = match file {
            Some(f) if entry.line != 0 => (entry.line, table.intern_file(&f)),
            _ => (0, FileId(0)),
        };
        rows.push(Row { offset, line, file });
    }
    rows.sort_by_key(|r| r.offset);
    let mut deduped: Vec<Row> = Vec::with_capacity(rows.len());
    for row in rows {
        match deduped.last_mut() {
            Some(last) if last.offset == row.offset => *last = row,
            _ => deduped.push(row),
        }
    }
    deduped
}

/// A usable file name: UTF-8 without control characters, not empty.
fn clean_file(raw: &[u8]) -> Option<String> {
    let s = std::str::from_utf8(raw).ok()?;
    (!s.is_empty() && !s.chars().any(char::is_control)).then(|| s.to_string())
}
