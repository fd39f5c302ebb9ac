//! Decoding one indexed range into its [`Symbol`]: the name (split by the
//! runtime's convention), source file, declared line and line table, read
//! again from the range's records in its symbol file.

use std::io;

use super::decoded::Decoding;
use super::reads::{Pread, Reads};
use super::{Entry, FileId, Row, SourceKind, Symbol, SymbolId, SymbolTable, NO_DEBUG};
use jitdump::scan::{parse_record, record_size};
use jitdump::{DebugEntry, Record};

/// The symbol of entry `id`. A file that no longer holds what the index
/// saw (it changed meanwhile) gives a symbol named after its address, and
/// why, naming the file.
pub fn symbol(table: &SymbolTable, id: SymbolId) -> Decoding {
    let entry = table.entries[id.index()];
    let source = &table.sources[entry.source as usize];
    let mut reads = Pread::new(&source.file);
    let decoded = decode(table, &entry, &mut reads, |f| table.intern_file(f));
    let (mut symbol, failure) = match decoded {
        Ok(symbol) => (symbol, None),
        Err(why) => (
            unnamed(&entry),
            Some(format!("'{}' {why}", source.path.display())),
        ),
    };
    if symbol.file.is_none() {
        let module = table.modules.of(table, id);
        if module != 0 {
            symbol.file = Some(table.intern_file(&format!("<jit module {module}>")));
        }
    }
    Decoding { symbol, failure }
}

/// Entry `entry`'s symbol read through `reads`, its files numbered by
/// `file_id`.
fn decode(
    table: &SymbolTable,
    entry: &Entry,
    reads: &mut impl Reads,
    file_id: impl FnMut(&str) -> FileId,
) -> Result<Symbol, String> {
    match table.sources[entry.source as usize].kind {
        SourceKind::Jitdump => from_jitdump(table, entry, reads, file_id),
        SourceKind::PerfMap => from_perf_map(table, entry, reads, file_id),
    }
}

pub(super) fn unnamed(entry: &Entry) -> Symbol {
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

/// The bytes of the jitdump record at `at`.
fn record(reads: &mut impl Reads, at: u64) -> Result<&[u8], String> {
    let size = match reads.at(at, 8).map_err(unreadable)? {
        &[_, _, _, _, a, b, c, d, ..] => record_size([a, b, c, d]),
        _ => return Err(CHANGED.into()),
    };
    let bytes = reads.at(at, size).map_err(unreadable)?;
    bytes.get(..size).ok_or_else(|| CHANGED.to_string())
}

fn unreadable(e: io::Error) -> String {
    format!("cannot be read: {e}")
}

const CHANGED: &str = "changed while it was read (its records are no longer where they were)";

fn from_jitdump(
    table: &SymbolTable,
    entry: &Entry,
    reads: &mut impl Reads,
    mut file_id: impl FnMut(&str) -> FileId,
) -> Result<Symbol, String> {
    let (header, shift) = header_of(table, entry)?;
    let debug = debug_bytes(entry, reads)?;
    let (split, code) = load_name(table, entry, header, reads)?;
    // Line entries name the load's own addresses, also for a moved range.
    let debug = match &debug {
        Some(bytes) => entries_of(bytes, header)?,
        None => Vec::new(),
    };
    let rows = rows(code, &debug, shift, &mut file_id);
    let first = rows.iter().find(|r| r.line != 0);
    let file = first
        .map(|r| r.file)
        .or_else(|| split.file.as_deref().map(file_id));
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

/// A jitdump entry's name, and whether it has a source file (from its
/// name, else its line table), reading the line table only where the
/// name gives none.
pub(super) fn jitdump_identity(
    table: &SymbolTable,
    entry: &Entry,
    reads: &mut impl Reads,
) -> Result<(String, bool), String> {
    let (header, shift) = header_of(table, entry)?;
    let (split, code) = load_name(table, entry, header, reads)?;
    if split.file.is_some() {
        return Ok((split.name, true));
    }
    let Some(bytes) = debug_bytes(entry, reads)? else {
        return Ok((split.name, false));
    };
    let rows = rows(code, &entries_of(&bytes, header)?, shift, &mut |_| {
        FileId(0)
    });
    Ok((split.name, rows.iter().any(|r| r.line != 0)))
}

/// The header of an entry's jitdump (its byte order) and the bias
/// decided for the file.
fn header_of<'t>(
    table: &'t SymbolTable,
    entry: &Entry,
) -> Result<(&'t jitdump::Header, u64), String> {
    let source = &table.sources[entry.source as usize];
    Ok((source.header.as_ref().ok_or(CHANGED)?, source.shift))
}

/// A jitdump load's name split by its runtime's convention, and its code
/// (address, size).
fn load_name(
    table: &SymbolTable,
    entry: &Entry,
    header: &jitdump::Header,
    reads: &mut impl Reads,
) -> Result<(super::runtime_names::Split, (u64, u64)), String> {
    let Ok(Record::Load(load)) = parse_record(record(reads, entry.record)?, header) else {
        return Err(CHANGED.into());
    };
    let raw = String::from_utf8_lossy(load.name);
    let split = super::runtime_names::split(&table.readable(&raw));
    Ok((split, (load.code_addr, load.code_size)))
}

/// The bytes of a jitdump entry's DEBUG_INFO record, if it has one.
fn debug_bytes(entry: &Entry, reads: &mut impl Reads) -> Result<Option<Vec<u8>>, String> {
    match entry.debug {
        NO_DEBUG => Ok(None),
        offset => record(reads, offset).map(|bytes| Some(bytes.to_vec())),
    }
}

/// The line entries of DEBUG_INFO record `bytes`.
fn entries_of<'a>(
    bytes: &'a [u8],
    header: &jitdump::Header,
) -> Result<Vec<DebugEntry<'a>>, String> {
    match parse_record(bytes, header) {
        Ok(Record::DebugInfo { entries, .. }) => Ok(entries),
        _ => Err(CHANGED.into()),
    }
}

/// Entries as offsets from the load's own address, `shift` (the bias)
/// removed, those past the end dropped, sorted, the last entry per offset
/// kept. An entry below the start holds at the start where no entry is
/// nearer below it (BEAM starts a function's table with the line its code
/// continues from). A sentinel (line 0 or no file) is kept as a row with
/// line 0: it ends the previous row's range.
fn rows(
    load: (u64, u64),
    debug: &[DebugEntry],
    shift: u64,
    file_id: &mut impl FnMut(&str) -> FileId,
) -> Vec<Row> {
    let (code_addr, size) = load;
    let mut row = |e: &DebugEntry, offset| {
        let (line, file) = match clean_file(e.file) {
            Some(f) if e.line != 0 => (e.line, file_id(f)),
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
pub(super) fn from_perf_map(
    table: &SymbolTable,
    entry: &Entry,
    reads: &mut impl Reads,
    file_id: impl FnMut(&str) -> FileId,
) -> Result<Symbol, String> {
    let raw = perf_map_name(entry, reads)?;
    Ok(perf_map_symbol(table, entry, raw, file_id))
}

/// The name of `entry`'s perf map line as the map spells it, where the
/// line still gives the entry's range.
pub(super) fn perf_map_name<'r>(
    entry: &Entry,
    reads: &'r mut impl Reads,
) -> Result<&'r [u8], String> {
    let mut want = 512;
    let len = loop {
        let got = reads.at(entry.record, want).map_err(unreadable)?;
        match memchr::memchr(b'\n', got) {
            Some(end) => break end,
            None if got.len() < want => break got.len(),
            None => want *= 2,
        }
    };
    // (read again to return it: the loop cannot hand out its borrow)
    let got = reads.at(entry.record, want).map_err(unreadable)?;
    let line = &got[..len.min(got.len())];
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let (start, size, raw) = crate::perfmap::fields(line).ok_or(CHANGED)?;
    if (start, size) != (entry.start, entry.size) {
        return Err(CHANGED.into());
    }
    Ok(raw)
}

/// `entry`'s symbol from its perf map name `raw`.
pub(super) fn perf_map_symbol(
    table: &SymbolTable,
    entry: &Entry,
    raw: &[u8],
    file_id: impl FnMut(&str) -> FileId,
) -> Symbol {
    let split = super::runtime_names::split(&table.readable(&crate::perfmap::name(raw)));
    Symbol {
        file: split.file.as_deref().map(file_id),
        name: split.name,
        line: split.line,
        start: entry.start,
        size: entry.size,
        rows: Vec::new(),
        source: entry.source as usize,
    }
}

/// The code bytes of a jitdump range (`None`: a perf map's, or a load
/// written without them).
pub fn code(table: &SymbolTable, id: SymbolId) -> std::io::Result<Option<Vec<u8>>> {
    let entry = table.entries[id.index()];
    let source = &table.sources[entry.source as usize];
    let Some(header) = source.header.as_ref() else {
        return Ok(None);
    };
    let bytes = jitdump::scan::record_at(&source.file, entry.record)?;
    match parse_record(&bytes, header) {
        Ok(Record::Load(load)) => Ok(load.code.map(<[u8]>::to_vec)),
        _ => Err(std::io::Error::other(CHANGED)),
    }
}

#[cfg(test)]
mod tests {
    use super::super::names::Names;
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
        let mut file_id = |f: &str| table.intern_file(f);
        let lines: Vec<(u64, u32)> = rows((code, 0x90), &debug, 0, &mut file_id)
            .iter()
            .map(|r| (r.offset, r.line))
            .collect();
        assert_eq!(lines, [(0, 1116), (0x8b, 1121), (0x90, 0)]);
        // An entry at the start wins over any below it.
        let at_start = [entry(code - 0x33, 1116, b"f"), entry(code, 7, b"f")];
        let rows = rows((code, 0x90), &at_start, 0, &mut file_id);
        assert_eq!(rows.iter().map(|r| r.line).collect::<Vec<_>>(), [7]);
    }

    #[test]
    fn a_perf_map_name_longer_than_a_read_is_read_whole() {
        // Reads ask for 512 bytes first, then twice as many until the
        // line's end is in them (or the file's, for the last line).
        let long = |n: usize| "n".repeat(n);
        let names = [long(600), long(1500), "short".into(), long(511), long(2000)];
        let map: String = (0u64..)
            .zip(&names)
            .map(|(i, name)| format!("{:x} 10 {name}\n", 0x1000 + i * 0x10))
            .collect();
        let map = map.trim_end();
        let mut table = SymbolTable::builder();
        table.add_perf_map("perf-1.map".into(), map.as_bytes());
        let table = table.build();
        let decoded: Vec<String> = table
            .ids()
            .map(|id| table.symbol(id).name.clone())
            .collect();
        assert_eq!(decoded, names);
        let mut read = Names::new(&table, 0).unwrap();
        let in_order: Vec<String> = table.ids().map(|id| read.of(id).0).collect();
        assert_eq!(in_order, names);
    }
}
