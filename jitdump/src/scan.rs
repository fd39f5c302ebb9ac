//! Reading a jitdump from its file in one pass without holding it: the
//! records are framed and checked as [`read`](super::read()) does, read a
//! chunk ahead of the parsing by a thread of their own (`ahead.rs`), and
//! handed to the caller one at a time. DEBUG_INFO entries are checked and
//! summed up ([`EntrySpan`]) but not collected; [`record_at`] reads one
//! record again later, whole, for the few functions a caller needs in
//! full.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use nom::number::Endianness;

use super::format::{self, RecordType};
use super::read;
use super::records::{Header, Move, Problem, ProblemKind, ReadError, Record};
use super::{CodeLoad, DebugEntry};
use crate::ahead::Ahead;

/// What a DEBUG_INFO's entries say of its addresses: the first entry's,
/// the lowest and the highest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntrySpan {
    /// The first entry's address.
    pub first: u64,
    /// The lowest address.
    pub min: u64,
    /// The highest address.
    pub max: u64,
}

impl EntrySpan {
    /// The span of `entries`; `None` for none.
    pub fn of(entries: &[DebugEntry]) -> Option<EntrySpan> {
        let first = entries.first()?.addr;
        let mut span = EntrySpan {
            first,
            min: first,
            max: first,
        };
        for e in entries {
            span.add(e.addr);
        }
        Some(span)
    }

    fn add(&mut self, addr: u64) {
        self.min = self.min.min(addr);
        self.max = self.max.max(addr);
    }
}

/// One record as the scan hands it over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item<'a> {
    /// Code was loaded.
    Load(CodeLoad<'a>),
    /// Code moved.
    Move(Move),
    /// Lines for the code at `code_addr`, summed up.
    DebugInfo {
        /// Address of the described code.
        code_addr: u64,
        /// Its entries' addresses (`None`: no entries).
        span: Option<EntrySpan>,
    },
    /// The writer closed the file.
    Close,
    /// Unwinding data, or a record id this reader does not know.
    Other,
}

impl<'a> From<&Record<'a>> for Item<'a> {
    /// The item a scan hands over for a record [`read`](super::read())
    /// gives: the two readers agree record for record.
    fn from(record: &Record<'a>) -> Item<'a> {
        match record {
            Record::Load(load) => Item::Load(*load),
            Record::Move(m) => Item::Move(m.clone()),
            Record::DebugInfo { code_addr, entries } => Item::DebugInfo {
                code_addr: *code_addr,
                span: EntrySpan::of(entries),
            },
            Record::Close => Item::Close,
            Record::UnwindingInfo | Record::Unknown(_) => Item::Other,
        }
    }
}

/// What a scan found besides the records.
#[derive(Clone, Debug)]
pub struct Scan {
    /// The file header.
    pub header: Header,
    /// Damage stepped over, as [`read`](super::read()) reports it.
    pub problems: Vec<Problem>,
}

/// A file that could not be scanned.
#[derive(Debug)]
pub enum ScanError {
    /// Reading failed.
    Io(io::Error),
    /// Not a usable jitdump.
    Format(ReadError),
}

impl std::fmt::Display for ScanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScanError::Io(e) => e.fmt(f),
            ScanError::Format(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for ScanError {}

impl From<io::Error> for ScanError {
    fn from(e: io::Error) -> Self {
        ScanError::Io(e)
    }
}

/// Reads `file` front to back, handing each record to `visit` with its
/// byte offset, in file order.
pub fn scan(file: &File, visit: impl FnMut(u64, Item<'_>)) -> Result<Scan, ScanError> {
    std::thread::scope(|scope| {
        let window = Ahead::new(file, scope)?;
        scan_from(window, visit)
    })
}

/// [`scan`] through `window`.
fn scan_from(mut window: Ahead, mut visit: impl FnMut(u64, Item<'_>)) -> Result<Scan, ScanError> {
    let head = window.at(0, 4096)?;
    let e = read::magic_endianness(head).ok_or(ScanError::Format(ReadError {
        offset: 0,
        message: "not a jitdump (no JiTD magic)",
    }))?;
    let header = read::header(head, e).map_err(ScanError::Format)?;
    let mut problems: Vec<Problem> = read::header_problems(&header)
        .into_iter()
        .map(|kind| Problem { offset: 0, kind })
        .collect();
    let mut problem = |offset: u64, kind| problems.push(Problem { offset, kind });
    let len = window.len();
    let mut offset = u64::from(header.total_size);
    while offset < len {
        let head = window.at(offset, format::RECORD_PREFIX_SIZE)?;
        let declared = declared_size(head, e);
        // Most records lie whole in what the first ask gave.
        let rest = match head.len() >= declared {
            true => head,
            false => window.at(offset, declared)?,
        };
        let (id, size) = match read::frame(rest, e) {
            Ok(frame) => frame,
            Err(kind) => {
                problem(offset, kind);
                break;
            }
        };
        let body = &rest[format::RECORD_PREFIX_SIZE..size];
        let here = offset;
        offset += size as u64;
        match item(RecordType(id), body, e) {
            Ok(Item::Close) => {
                visit(here, Item::Close);
                if offset < len {
                    problem(offset, ProblemKind::DataAfterClose);
                }
                break;
            }
            Ok(item) => {
                if item == Item::Other && !is_known(RecordType(id)) {
                    problem(here, ProblemKind::UnknownRecord);
                }
                visit(here, item);
            }
            Err(kind) => problem(here, kind),
        }
    }
    Ok(Scan { header, problems })
}

/// The size a record's prefix declares (0 where `prefix` is short: the
/// framing then reports the cut).
fn declared_size(prefix: &[u8], e: Endianness) -> usize {
    let Some(bytes) = prefix.get(4..8) else {
        return 0;
    };
    let size = u32_at(bytes, e);
    (u64::from(size)).min(read::MAX_RECORD_SIZE) as usize
}

fn is_known(kind: RecordType) -> bool {
    matches!(
        kind,
        RecordType::CODE_LOAD
            | RecordType::CODE_MOVE
            | RecordType::DEBUG_INFO
            | RecordType::CODE_CLOSE
            | RecordType::UNWINDING_INFO
    )
}

fn item(kind: RecordType, body: &[u8], e: Endianness) -> Result<Item<'_>, ProblemKind> {
    let corrupt = |_| ProblemKind::CorruptRecord;
    match kind {
        RecordType::CODE_LOAD => read::code_load(body, e)
            .map(|(_, load)| Item::Load(load))
            .map_err(corrupt),
        RecordType::CODE_MOVE => read::code_move(body, e)
            .map(|(_, m)| Item::Move(m))
            .map_err(corrupt),
        RecordType::DEBUG_INFO => {
            entry_span(body, e).map(|(code_addr, span)| Item::DebugInfo { code_addr, span })
        }
        RecordType::CODE_CLOSE => Ok(Item::Close),
        RecordType::UNWINDING_INFO => read::unwinding_info(body, e).map(|_| Item::Other),
        _ => Ok(Item::Other),
    }
}

/// A DEBUG_INFO body's address and its entries' span, checked as
/// `read::debug_info` checks them, without collecting the entries.
fn entry_span(body: &[u8], e: Endianness) -> Result<(u64, Option<EntrySpan>), ProblemKind> {
    if body.len() < 16 {
        return Err(ProblemKind::CorruptRecord);
    }
    let code_addr = u64_at(body, e);
    let n = u64_at(&body[8..], e);
    let entries = &body[16..];
    if n > (entries.len() / format::DEBUG_ENTRY_FIXED_SIZE) as u64 {
        return Err(ProblemKind::CorruptDebugInfo);
    }
    let mut span: Option<EntrySpan> = None;
    let mut at = 0;
    for _ in 0..n {
        let fixed = entries
            .get(at..at + format::DEBUG_ENTRY_FIXED_SIZE)
            .ok_or(ProblemKind::CorruptDebugInfo)?;
        let addr = u64_at(fixed, e);
        at += format::DEBUG_ENTRY_FIXED_SIZE;
        at += nul_at(&entries[at..]).ok_or(ProblemKind::CorruptDebugInfo)? + 1;
        match &mut span {
            Some(span) => span.add(addr),
            None => {
                span = Some(EntrySpan {
                    first: addr,
                    min: addr,
                    max: addr,
                })
            }
        }
    }
    let padding = &entries[at..];
    if padding.len() >= 8 || padding.iter().any(|&b| b != 0) {
        return Err(ProblemKind::CorruptDebugInfo);
    }
    Ok((code_addr, span))
}

/// The index of the first NUL, eight bytes at a time (file names are
/// short, and there are millions of them).
fn nul_at(s: &[u8]) -> Option<usize> {
    const LOW: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut i = 0;
    while let Some(chunk) = s.get(i..i + 8) {
        let word = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
        let zero = word.wrapping_sub(LOW) & !word & HIGH;
        if zero != 0 {
            return Some(i + (zero.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    s[i..].iter().position(|&b| b == 0).map(|j| i + j)
}

fn u64_at(b: &[u8], e: Endianness) -> u64 {
    let bytes: [u8; 8] = b[..8].try_into().unwrap_or_default();
    match e {
        Endianness::Big => u64::from_be_bytes(bytes),
        _ => u64::from_le_bytes(bytes),
    }
}

fn u32_at(b: &[u8], e: Endianness) -> u32 {
    let bytes: [u8; 4] = b[..4].try_into().unwrap_or_default();
    match e {
        Endianness::Big => u32::from_be_bytes(bytes),
        _ => u32::from_le_bytes(bytes),
    }
}

/// The bytes of the record at `offset`, read again whole (a scan gave the
/// offset). Parse them with [`parse_record`].
pub fn record_at(file: &File, offset: u64) -> io::Result<Vec<u8>> {
    let mut prefix = [0u8; format::RECORD_PREFIX_SIZE];
    file.read_exact_at(&mut prefix, offset)?;
    let mut bytes = vec![0; record_size([prefix[4], prefix[5], prefix[6], prefix[7]])];
    file.read_exact_at(&mut bytes, offset)?;
    Ok(bytes)
}

/// The bytes to read for a record whose size field (bytes 4 to 8 of its
/// prefix) is `field`, in either byte order: the larger reading is not a
/// record size.
pub fn record_size(field: [u8; 4]) -> usize {
    let (le, be) = (u32::from_le_bytes(field), u32::from_be_bytes(field));
    u64::from(le.min(be)).clamp(16, read::MAX_RECORD_SIZE) as usize
}

/// One record's bytes (from [`record_at`]) parsed, in the byte order of
/// `header`'s file.
pub fn parse_record<'a>(bytes: &'a [u8], header: &Header) -> Result<Record<'a>, ProblemKind> {
    let e = match header.big_endian {
        true => Endianness::Big,
        false => Endianness::Little,
    };
    let (id, size) = read::frame(bytes, e)?;
    read::record(RecordType(id), &bytes[format::RECORD_PREFIX_SIZE..size], e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_word_at_a_time_search_finds_every_first_nul() {
        for len in 0..40 {
            for nul in 0..=len {
                let mut s = vec![b'a'; len];
                if nul < len {
                    s[nul] = 0;
                    s.iter_mut().skip(nul + 1).step_by(3).for_each(|b| *b = 0);
                }
                let want = s.iter().position(|&b| b == 0);
                assert_eq!(nul_at(&s), want, "{len} {nul}");
            }
        }
        assert_eq!(nul_at(b"\x80\x01\x00"), Some(2));
        assert_eq!(nul_at(b"\xff\xff\xff\xff\xff\xff\xff\xff\x01\x00"), Some(9));
    }

    /// Records of every size, some larger than the chunks the file is read
    /// in, many across their ends: each comes back whole, at its offset.
    #[test]
    fn records_across_and_over_the_read_chunks_come_back_whole() {
        use std::io::Write;
        let mut buf = Vec::new();
        crate::write::header(&mut buf, 62, 7, 0);
        let mut want = Vec::new();
        let sizes = [10usize, 3 << 20, 100, (1 << 20) - 40, 1, 70_000];
        for (i, size) in sizes.iter().cycle().take(40).enumerate() {
            let code: Vec<u8> = (0..*size).map(|b| (b * 7 + i) as u8).collect();
            let entries = [DebugEntry {
                addr: 0x1000 * i as u64,
                line: 3,
                discrim: 0,
                file: b"f.js",
            }];
            crate::write::debug_info(&mut buf, 0, 0x1000 * i as u64, entries.into_iter());
            let load = CodeLoad {
                pid: 7,
                tid: 7,
                code_addr: 0x1000 * i as u64,
                code_size: *size as u64,
                code_index: i as u64,
                name: b"f",
                code: None,
            };
            want.push((buf.len() as u64, code.clone()));
            crate::write::code_load_head(&mut buf, 0, &load);
            buf.extend_from_slice(&code);
        }
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&buf).unwrap();
        let mut got = Vec::new();
        let mut debug = 0;
        let scanned = scan(&file, |offset, item| match item {
            Item::Load(load) => got.push((offset, load.code.unwrap().to_vec())),
            Item::DebugInfo { .. } => debug += 1,
            _ => panic!("{item:?}"),
        })
        .unwrap();
        assert_eq!(scanned.problems, []);
        assert_eq!(debug, 40);
        assert!(got == want, "the loads differ");
    }
}
