//! What the readers give: the file header, the records, and the damage
//! found on the way.

use std::fmt;

use super::{format, CodeLoad, DebugEntry};

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
