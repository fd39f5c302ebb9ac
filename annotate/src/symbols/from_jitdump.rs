//! Symbols from a jitdump: CODE_LOADs with DEBUG_INFO matched by address,
//! offsets normalised (V8/LLVM's +0x40 bias removed), CODE_MOVEs followed.

use std::collections::{BTreeMap, HashMap};

use super::{FileId, Row, Symbol, SymbolTable};
use crate::jitdump::{CodeLoad, DebugEntry, Jitdump, Record};

/// How to treat the +0x40 ELF-header bias V8 and LLVM add to line addresses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BiasMode {
    /// Detect it per record (the default).
    #[default]
    Detect,
    /// Never subtract anything.
    None,
    /// Always subtract this many bytes (0x40 for 64-bit, 0x34 for 32-bit writers).
    Fixed(u64),
}

const ELF64_BIAS: u64 = 0x40;

pub fn add(table: &mut SymbolTable, source: usize, dump: &Jitdump, bias: BiasMode) {
    let mut pending: HashMap<u64, &[DebugEntry]> = HashMap::new();
    let mut previous_debug: Option<(u64, &[DebugEntry])> = None;
    let mut by_index: HashMap<u64, usize> = HashMap::new();
    for (_, record) in &dump.records {
        match record {
            Record::DebugInfo { code_addr, entries } => {
                pending.insert(*code_addr, entries);
                previous_debug = Some((*code_addr, entries));
            }
            Record::Load(load) => {
                // Match by address (LLVM ORC batches DEBUG_INFOs); fall back
                // to the record just before, as perf and samply do.
                let debug = pending.remove(&load.code_addr).or_else(|| {
                    previous_debug
                        .filter(|(a, _)| pending.contains_key(a))
                        .map(|(a, _)| pending.remove(&a).unwrap_or(&[]))
                });
                previous_debug = None;
                let symbol = load_symbol(table, source, load, debug.unwrap_or(&[]), bias);
                by_index.insert(load.code_index, table.symbols.len());
                table.push(symbol);
            }
            Record::Move(m) => {
                if let Some(&i) = by_index.get(&m.code_index) {
                    let mut moved = table.symbols[i].clone();
                    moved.start = m.new_code_addr;
                    table.push(moved);
                }
            }
            _ => {}
        }
    }
    table.report.orphan_debug_info += pending.len();
    report_problems(table, source, dump);
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
    bias: BiasMode,
) -> Symbol {
    let raw = String::from_utf8_lossy(load.name);
    let split = super::runtime_names::split(&raw);
    let rows = rows(table, load, debug, bias);
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
        name: split.name,
        file,
        line,
        start: load.code_addr,
        size: load.code_size,
        rows,
        source,
    }
}

/// Entries as offsets, bias removed, out-of-range ones dropped, sorted,
/// the last entry per offset kept. A sentinel (line 0 or no file) is kept
/// as a row with line 0: it ends the previous row's range.
fn rows(
    table: &mut SymbolTable,
    load: &CodeLoad,
    debug: &[DebugEntry],
    bias: BiasMode,
) -> Vec<Row> {
    let offsets: Vec<Option<u64>> = debug
        .iter()
        .map(|e| e.addr.checked_sub(load.code_addr))
        .collect();
    let shift = match bias {
        BiasMode::Detect => detect_bias(&offsets, load.code_size),
        BiasMode::None => 0,
        BiasMode::Fixed(b) => b,
    };
    if shift != 0 {
        table.report.biased_debug_info += 1;
    }
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

/// V8 and LLVM add 0x40 to every entry: every offset lies in
/// `[0x40, size + 0x40]` and the first is exactly 0x40 or one is past the code.
fn detect_bias(offsets: &[Option<u64>], size: u64) -> u64 {
    let all: Option<Vec<u64>> = offsets.iter().copied().collect();
    let Some(all) = all.filter(|a| !a.is_empty()) else {
        return 0;
    };
    let in_window = all
        .iter()
        .all(|&o| (ELF64_BIAS..=size + ELF64_BIAS).contains(&o));
    let telltale = all[0] == ELF64_BIAS || all.iter().any(|&o| o > size);
    if in_window && telltale {
        ELF64_BIAS
    } else {
        0
    }
}

/// A usable file name: UTF-8 without control characters, not empty.
fn clean_file(raw: &[u8]) -> Option<String> {
    let s = std::str::from_utf8(raw).ok()?;
    (!s.is_empty() && !s.chars().any(char::is_control)).then(|| s.to_string())
}

#[cfg(test)]
mod tests {
    use super::detect_bias;

    #[test]
    fn bias_is_detected_only_with_a_telltale() {
        assert_eq!(detect_bias(&[Some(0x40), Some(0x48)], 0x20), 0x40);
        assert_eq!(detect_bias(&[Some(0x44), Some(0x58)], 0x20), 0x40);
        assert_eq!(detect_bias(&[Some(0x44), Some(0x70)], 0x20), 0);
        assert_eq!(detect_bias(&[Some(0x0), Some(0x10)], 0x20), 0);
        assert_eq!(detect_bias(&[Some(0x44), Some(0x50)], 0x100), 0);
        assert_eq!(detect_bias(&[], 0x100), 0);
    }
}
