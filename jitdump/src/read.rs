//! The jitdump reader: header, record framing, and each record's body.

use std::fmt;

use super::format::{self, RecordType};
use super::{CodeLoad, DebugEntry};
use crate::body::debug_info;
pub(crate) use crate::body::{code_load, code_move, unwinding_info};
use nom::number::complete::{u32 as nom_u32, u64 as nom_u64};
use nom::number::Endianness;
use nom::IResult;

/// Records larger than this are refused as corrupt (no real one comes near).
pub(super) const MAX_RECORD_SIZE: u64 = 256 << 20;

/// The 40-byte file header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// True for a big-endian writer (`JiTD` on disk).
    pub big_endian: bool,
    /// 1 for every known writer.
    pub version: u32,
    /// Header size; records start here.
    pub total_size: u32,
    /// ELF machine of the code.
    pub elf_mach: u32,
    /// The reserved word after `elf_mach`: 0 from most writers,
    /// [`format::JIT_CLIENT_MARK`] from jit-client.
    pub reserved: u32,
    /// Writer's process id.
    pub pid: u32,
    /// File creation time (unit depends on the writer).
    pub timestamp: u64,
    /// Bit 0: record timestamps are TSC ticks.
    pub flags: u64,
}

impl Header {
    /// True for a file jit-client wrote.
    pub fn is_jit_client(&self) -> bool {
        self.reserved == format::JIT_CLIENT_MARK
    }
}

/// A CODE_MOVE record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Move {
    /// Old address of the code.
    pub old_code_addr: u64,
    /// New address of the code.
    pub new_code_addr: u64,
    /// Size of the code.
    pub code_size: u64,
    /// The moved load's code_index.
    pub code_index: u64,
}

/// One record, in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Record<'a> {
    /// Code was loaded.
    Load(CodeLoad<'a>),
    /// Code moved.
    Move(Move),
    /// Lines for the code at `code_addr`.
    DebugInfo {
        /// Address of the described code.
        code_addr: u64,
        /// The entries, in file order.
        entries: Vec<DebugEntry<'a>>,
    },
    /// The writer closed the file.
    Close,
    /// Unwinding data (only sizes are kept).
    UnwindingInfo,
    /// A record id this reader does not know.
    Unknown(u32),
}

/// Damage found while reading; the reader went on past it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// Byte offset of the record concerned.
    pub offset: u64,
    /// What was wrong.
    pub kind: ProblemKind,
}

/// The kinds of damage, each counted in the summary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ProblemKind {
    /// The file ends inside a record (the writer died or is still writing).
    TruncatedTail,
    /// A record's size is below 16 or absurdly large: reading stopped.
    BadRecordSize,
    /// A record's body does not fit its declared layout: skipped.
    CorruptRecord,
    /// DEBUG_INFO entries do not parse (V8 writes such records): dropped.
    CorruptDebugInfo,
    /// A record id this reader does not know: skipped.
    UnknownRecord,
    /// Bytes after the CLOSE record were ignored.
    DataAfterClose,
    /// Header version other than 1 (read with the version 1 layout).
    UnexpectedVersion,
    /// Header flags other than the TSC flag.
    UnknownFlags,
}

impl fmt::Display for ProblemKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ProblemKind::TruncatedTail => {
                "ends inside a record (its writer died, is still writing, or never flushed \
                 its last writes, as Bun does at exit): code loaded after that is missing \
                 from it and stays address-named"
            }
            ProblemKind::BadRecordSize => "record with an impossible size (reading stopped)",
            ProblemKind::CorruptRecord => "corrupt record skipped",
            ProblemKind::CorruptDebugInfo => {
                "corrupt DEBUG_INFO dropped (V8 writes such records, a known V8 bug: \
                 their functions get no per-line costs, only the line in their name)"
            }
            ProblemKind::UnknownRecord => "unknown record type skipped",
            ProblemKind::DataAfterClose => "data after CODE_CLOSE ignored",
            ProblemKind::UnexpectedVersion => "unexpected header version",
            ProblemKind::UnknownFlags => "unknown header flags",
        })
    }
}

/// A file that is not a usable jitdump at all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadError {
    /// Byte offset of the problem.
    pub offset: u64,
    /// What was expected.
    pub message: &'static str,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at byte {}: {}", self.offset, self.message)
    }
}

impl std::error::Error for ReadError {}

/// A parsed jitdump: header, records in file order, and damage found.
#[derive(Clone, Debug)]
pub struct Jitdump<'a> {
    /// The file header.
    pub header: Header,
    /// Records with their byte offsets, in file order.
    pub records: Vec<(u64, Record<'a>)>,
    /// Damage the reader stepped over.
    pub problems: Vec<Problem>,
}

/// True when `data` starts with the jitdump magic in either byte order.
pub fn is_jitdump(data: &[u8]) -> bool {
    magic_endianness(data).is_some()
}

pub(super) fn magic_endianness(data: &[u8]) -> Option<Endianness> {
    let magic: [u8; 4] = data.get(..4)?.try_into().ok()?;
    if magic == format::MAGIC.to_le_bytes() {
        Some(Endianness::Little)
    } else if magic == format::MAGIC.to_be_bytes() {
        Some(Endianness::Big)
    } else {
        None
    }
}

/// Reads only the header, from the first bytes of a jitdump (at least the
/// header's `total_size`).
pub fn read_header(data: &[u8]) -> Result<Header, ReadError> {
    let endian = magic_endianness(data).ok_or(ReadError {
        offset: 0,
        message: "not a jitdump (no JiTD magic)",
    })?;
    header(data, endian)
}

/// Reads a whole jitdump held in memory.
pub fn read(data: &[u8]) -> Result<Jitdump<'_>, ReadError> {
    let endian = magic_endianness(data).ok_or(ReadError {
        offset: 0,
        message: "not a jitdump (no JiTD magic)",
    })?;
    let header = header(data, endian)?;
    let mut dump = Jitdump {
        header,
        records: Vec::new(),
        problems: Vec::new(),
    };
    dump.check_header();
    let mut offset = dump.header.total_size as usize;
    while offset < data.len() {
        match next_record(data, offset, endian) {
            Frame::Record(size, record) => {
                let is_close = record == Record::Close;
                dump.push(offset, record);
                offset += size;
                if is_close && offset < data.len() {
                    dump.problem(offset, ProblemKind::DataAfterClose);
                }
                if is_close {
                    break;
                }
            }
            Frame::Skip(size, kind) => {
                dump.problem(offset, kind);
                offset += size;
            }
            Frame::Stop(kind) => {
                dump.problem(offset, kind);
                break;
            }
        }
    }
    Ok(dump)
}

impl<'a> Jitdump<'a> {
    fn check_header(&mut self) {
        for kind in header_problems(&self.header) {
            self.problem(0, kind);
        }
    }

    fn push(&mut self, offset: usize, record: Record<'a>) {
        if let Record::Unknown(_) = record {
            self.problem(offset, ProblemKind::UnknownRecord);
        }
        self.records.push((offset as u64, record));
    }

    fn problem(&mut self, offset: usize, kind: ProblemKind) {
        self.problems.push(Problem {
            offset: offset as u64,
            kind,
        });
    }
}

/// What is odd in a header that still reads.
pub(super) fn header_problems(header: &Header) -> Vec<ProblemKind> {
    let mut problems = Vec::new();
    if header.version != format::VERSION {
        problems.push(ProblemKind::UnexpectedVersion);
    }
    if header.flags & !format::FLAG_ARCH_TIMESTAMP != 0 {
        problems.push(ProblemKind::UnknownFlags);
    }
    problems
}

pub(super) fn header(data: &[u8], e: Endianness) -> Result<Header, ReadError> {
    let short = ReadError {
        offset: data.len() as u64,
        message: "file ends inside the 40-byte header",
    };
    let fields = |i| -> IResult<&[u8], Header> {
        let (i, _magic) = nom_u32(e)(i)?;
        let (i, version) = nom_u32(e)(i)?;
        let (i, total_size) = nom_u32(e)(i)?;
        let (i, elf_mach) = nom_u32(e)(i)?;
        let (i, reserved) = nom_u32(e)(i)?;
        let (i, pid) = nom_u32(e)(i)?;
        let (i, timestamp) = nom_u64(e)(i)?;
        let (i, flags) = nom_u64(e)(i)?;
        let big_endian = e == Endianness::Big;
        Ok((
            i,
            Header {
                big_endian,
                version,
                total_size,
                elf_mach,
                reserved,
                pid,
                timestamp,
                flags,
            },
        ))
    };
    let (_, header) = fields(data).map_err(|_| short)?;
    if (header.total_size as usize) < format::HEADER_SIZE {
        return Err(ReadError {
            offset: 8,
            message: "header size below 40",
        });
    }
    if header.total_size as usize > data.len() {
        return Err(ReadError {
            offset: 8,
            message: "header size beyond the end of the file",
        });
    }
    Ok(header)
}

enum Frame<'a> {
    Record(usize, Record<'a>),
    Skip(usize, ProblemKind),
    Stop(ProblemKind),
}

fn next_record(data: &[u8], offset: usize, e: Endianness) -> Frame<'_> {
    let rest = &data[offset..];
    let (id, size) = match frame(rest, e) {
        Ok(frame) => frame,
        Err(kind) => return Frame::Stop(kind),
    };
    let body = &rest[format::RECORD_PREFIX_SIZE..size];
    match record(RecordType(id), body, e) {
        Ok(record) => Frame::Record(size, record),
        Err(kind) => Frame::Skip(size, kind),
    }
}

/// The id and size of the record `rest` starts with, checked against what
/// `rest` holds (a short `rest` is a truncated tail).
pub(super) fn frame(rest: &[u8], e: Endianness) -> Result<(u32, usize), ProblemKind> {
    let prefix = |i| -> IResult<&[u8], (u32, u32)> {
        let (i, id) = nom_u32(e)(i)?;
        let (i, size) = nom_u32(e)(i)?;
        Ok((i, (id, size)))
    };
    let Ok((_, (id, size))) = prefix(rest) else {
        return Err(ProblemKind::TruncatedTail);
    };
    let size64 = u64::from(size);
    if size64 < format::RECORD_PREFIX_SIZE as u64 || size64 > MAX_RECORD_SIZE {
        return Err(ProblemKind::BadRecordSize);
    }
    let size = size as usize;
    if size > rest.len() || rest.len() < format::RECORD_PREFIX_SIZE {
        return Err(ProblemKind::TruncatedTail);
    }
    Ok((id, size))
}

pub(super) fn record(
    kind: RecordType,
    body: &[u8],
    e: Endianness,
) -> Result<Record<'_>, ProblemKind> {
    let corrupt = |_| ProblemKind::CorruptRecord;
    match kind {
        RecordType::CODE_LOAD => code_load(body, e)
            .map(|(_, r)| Record::Load(r))
            .map_err(corrupt),
        RecordType::CODE_MOVE => code_move(body, e)
            .map(|(_, r)| Record::Move(r))
            .map_err(corrupt),
        RecordType::DEBUG_INFO => debug_info(body, e),
        RecordType::CODE_CLOSE => Ok(Record::Close),
        RecordType::UNWINDING_INFO => unwinding_info(body, e).map(|_| Record::UnwindingInfo),
        RecordType(other) => Ok(Record::Unknown(other)),
    }
}
