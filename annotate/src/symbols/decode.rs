//! Decoding one indexed range into its [`Symbol`]: the name (split by the
//! runtime's convention), source file, declared line and line table, read
//! again from the range's records in its symbol file.

use std::os::unix::fs::FileExt;

use super::decoded::Decoding;
use super::{Entry, FileId, Row, SourceKind, Symbol, SymbolId, SymbolTable, NO_DEBUG};
use jitdump::scan::{parse_record, record_at};
use jitdump::{DebugEntry, Record};

/// The symbol of entry `id`. A file that no longer holds what the index
/// saw (it changed meanwhile) gives a symbol named after its address, and
/// why, naming the file.
pub fn symbol(table: &SymbolTable, id: SymbolId) -> Decoding {
    let entry = table.entries[id.index()];
    let source = &table.sources[entry.source as usize];
    let decoded = match source.kind {
        SourceKind::Jitdump => from_jitdump(table, &entry),
        SourceKind::PerfMap => from_perf_map(table, &entry),
    };
    let (mut symbol, failure) = match decoded {
        Ok(symbol) => (symbol, None),
        Err(why) => (
            unnamed(&entry),
            Some(format!("'{}' {why}", source.path.display())),
        ),
    };
    if symbol.file.is_none() && entry.module != 0 {
        symbol.file = Some(table.intern_file(&format!("<jit module {}>", entry.module)));
    }
    Decoding { symbol, failure }
}

fn unnamed(entry: &Entry) -> Symbol {
    Symbol {
        name: format!("{:#018x}", entry.start),
        file: None,
        line: 0,
        start: entry.start,
        size: entry.size,
        rows: Vec::new(),
        source: entry.source as usize,
    }
}

const CHANGED: &str = "changed while it was read (its records are no longer where they were)";

fn from_jitdump(table: &SymbolTable, entry: &Entry) -> Result<Symbol, String> {
    let source = &table.sources[entry.source as usize];
    let header = source.header.as_ref().ok_or(CHANGED)?;
    let read = |offset| record_at(&source.file, offset).map_err(|e| format!("cannot be read: {e}"));
    let load_bytes = read(entry.record)?;
    let Ok(Record::Load(load)) = parse_record(&load_bytes, header) else {
        return Err(CHANGED.into());
    };
    let debug_bytes = match entry.debug {
        NO_DEBUG => Vec::new(),
        offset => read(offset)?,
    };
    let entries = match parse_record(&debug_bytes, header) {
        Ok(Record::DebugInfo { entries, .. }) => entries,
        _ if entry.debug == NO_DEBUG => Vec::new(),
        _ => return Err(CHANGED.into()),
    };
    let raw = String::from_utf8_lossy(load.name);
    let split = super::runtime_names::split(&table.readable(&raw));
    // Line entries name the load's own addresses, also for a moved range.
    let rows = rows(
        table,
        (load.code_addr, load.code_size),
        &entries,
        source.shift,
    );
    let first = rows.iter().find(|r| r.line != 0);
    let file = first
        .map(|r| r.file)
        .or_else(|| split.file.as_deref().map(|f| table.intern_file(f)));
    let line = match split.line {
        0 => first.map_or(0, |r| r.line),
        line => line,
    };
    Ok(Symbol {
        name: split.name,
        file,
        line,
        start: entry.start,
        size: entry.size,
        rows,
        source: entry.source as usize,
    })
}

/// Entries as offsets from the load's own address, `shift` (the bias)
/// removed, those past the end dropped, sorted, the last entry per offset
/// kept. An entry below the start holds at the start where no entry is
/// nearer below it (BEAM starts a function's table with the line its code
/// continues from). A sentinel (line 0 or no file) is kept as a row with
/// line 0: it ends the previous row's range.
fn rows(table: &SymbolTable, load: (u64, u64), debug: &[DebugEntry], shift: u64) -> Vec<Row> {
    let (code_addr, size) = load;
    let row = |e: &DebugEntry, offset| {
        let (line, file) = match clean_file(e.file) {
            Some(f) if e.line != 0 => (e.line, table.intern_file(f)),
            _ => (0, FileId(0)),
        };
        Row { offset, line, file }
    };
    let mut rows: Vec<Row> = Vec::with_capacity(debug.len());
    let mut below: Option<&DebugEntry> = None;
    for e in debug {
        let offset = e
            .addr
            .checked_sub(code_addr)
            .and_then(|o| o.checked_sub(shift));
        match offset {
            Some(offset) if offset <= size => rows.push(row(e, offset)),
            Some(_) => {}
            None if below.is_none_or(|b| b.addr <= e.addr) => below = Some(e),
            None => {}
        }
    }
    if let Some(e) = below.filter(|_| !rows.iter().any(|r| r.offset == 0)) {
        rows.push(row(e, 0));
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
fn clean_file(raw: &[u8]) -> Option<&str> {
    let s = std::str::from_utf8(raw).ok()?;
    (!s.is_empty() && !s.chars().any(char::is_control)).then_some(s)
}

/// The perf map line at the entry's offset, read up to its newline.
fn from_perf_map(table: &SymbolTable, entry: &Entry) -> Result<Symbol, String> {
    let source = &table.sources[entry.source as usize];
    let mut line = Vec::new();
    let mut chunk = [0u8; 512];
    loop {
        let at = entry.record + line.len() as u64;
        let n = source
            .file
            .read_at(&mut chunk, at)
            .map_err(|e| format!("cannot be read: {e}"))?;
        let got = &chunk[..n];
        match memchr::memchr(b'\n', got) {
            Some(end) => break line.extend_from_slice(&got[..end]),
            None if n == 0 => break,
            None => line.extend_from_slice(got),
        }
    }
    let line = line.strip_suffix(b"\r").unwrap_or(&line);
    let (start, size, raw) = crate::perfmap::fields(line).ok_or(CHANGED)?;
    if (start, size) != (entry.start, entry.size) {
        return Err(CHANGED.into());
    }
    let split = super::runtime_names::split(&table.readable(&crate::perfmap::name(raw)));
    Ok(Symbol {
        file: split.file.as_deref().map(|f| table.intern_file(f)),
        name: split.name,
        line: split.line,
        start: entry.start,
        size: entry.size,
        rows: Vec::new(),
        source: entry.source as usize,
    })
}

/// The code bytes of a jitdump range (`None`: a perf map's, or a load
/// written without them).
pub fn code(table: &SymbolTable, id: SymbolId) -> std::io::Result<Option<Vec<u8>>> {
    let entry = table.entries[id.index()];
    let source = &table.sources[entry.source as usize];
    let Some(header) = source.header.as_ref() else {
        return Ok(None);
    };
    let bytes = record_at(&source.file, entry.record)?;
    match parse_record(&bytes, header) {
        Ok(Record::Load(load)) => Ok(load.code.map(<[u8]>::to_vec)),
        _ => Err(std::io::Error::other(CHANGED)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_below_the_start_holds_at_the_start() {
        // BEAM's table for gen_server:try_dispatch/3 at 0x474a4688: its
        // code continues line 1116 from the entry 0x33 bytes below it.
        let table = SymbolTable::default();
        let entry = |addr, line, file: &'static [u8]| DebugEntry {
            addr,
            line,
            discrim: 0,
            file,
        };
        let code = 0x474a4688;
        let debug = [
            entry(code - 0x50, 1090, b"gen_server.erl"),
            entry(code - 0x33, 1116, b"gen_server.erl"),
            entry(code + 0x8b, 1121, b"gen_server.erl"),
            entry(code + 0x90, 0, b""),
        ];
        let lines: Vec<(u64, u32)> = rows(&table, (code, 0x90), &debug, 0)
            .iter()
            .map(|r| (r.offset, r.line))
            .collect();
        assert_eq!(lines, [(0, 1116), (0x8b, 1121), (0x90, 0)]);
        // An entry at the start wins over any below it.
        let at_start = [entry(code - 0x33, 1116, b"f"), entry(code, 7, b"f")];
        let rows = rows(&table, (code, 0x90), &at_start, 0);
        assert_eq!(rows.iter().map(|r| r.line).collect::<Vec<_>>(), [7]);
    }
}
