//! The jitdump reader: header, record framing, and each record's body.

use super::format::{self, RecordType};
use crate::body::debug_info;
pub(crate) use crate::body::{code_load, code_move, unwinding_info};
pub use crate::records::{Header, Jitdump, Move, Problem, ProblemKind, ReadError, Record};
use nom::number::complete::{u32 as nom_u32, u64 as nom_u64};
use nom::number::Endianness;
use nom::IResult;

/// Records larger than this are refused as corrupt (no real one comes near).
pub(super) const MAX_RECORD_SIZE: u64 = 256 << 20;

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
