//! The jitdump file layout: magic, record ids and fixed sizes.
//!
//! This module is the single source of these numbers: the writer in this
//! crate and the reader in the `annotate` crate both use it. Layout as in
//! perf's `jitdump-specification.txt`; every integer is in the writer's byte
//! order, which the reader learns from the magic.

/// `JiTD` as a native-endian `u32`; on disk `44 54 69 4A` means little-endian.
pub const MAGIC: u32 = 0x4A69_5444;
/// The only header version perf accepts.
pub const VERSION: u32 = 1;
/// jit-client's mark in the header's reserved word (offset 16), which
/// perf and every other reader ignore: `cgj1` in the writer's byte order.
/// Readers use it to know the writer (jit-client writes no +0x40 bias).
pub const JIT_CLIENT_MARK: u32 = u32::from_le_bytes(*b"cgj1");
/// Size of the file header; records start at the header's `total_size`.
pub const HEADER_SIZE: usize = 40;
/// Header flag: record timestamps are TSC ticks rather than CLOCK_MONOTONIC.
pub const FLAG_ARCH_TIMESTAMP: u64 = 1;
/// Every record starts with `u32 id`, `u32 total_size`, `u64 timestamp`.
pub const RECORD_PREFIX_SIZE: usize = 16;

/// CODE_LOAD: pid, tid, vma, code_addr, code_size, code_index, then the name
/// (NUL-terminated) and the code bytes.
pub const CODE_LOAD_FIXED_SIZE: usize = 56;
/// CODE_MOVE has no variable part.
pub const CODE_MOVE_SIZE: usize = 64;
/// DEBUG_INFO: code_addr, nr_entry, then the entries.
pub const DEBUG_INFO_FIXED_SIZE: usize = 32;
/// One DEBUG_INFO entry: u64 addr, u32 line, u32 discrim, then the file name.
pub const DEBUG_ENTRY_FIXED_SIZE: usize = 16;
/// UNWINDING_INFO: unwind_data_size, eh_frame_hdr_size, mapped_size, data.
pub const UNWINDING_INFO_FIXED_SIZE: usize = 40;

/// A record id. Unknown ids stay representable so readers can skip them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RecordType(pub u32);

impl RecordType {
    /// Code was loaded (and its bytes are in the record).
    pub const CODE_LOAD: Self = Self(0);
    /// Code moved to a new address.
    pub const CODE_MOVE: Self = Self(1);
    /// Source lines for the code at an address.
    pub const DEBUG_INFO: Self = Self(2);
    /// The writer closed the file.
    pub const CODE_CLOSE: Self = Self(3);
    /// `.eh_frame` data for the next load.
    pub const UNWINDING_INFO: Self = Self(4);
}

/// ELF `e_machine` of the target this crate was compiled for.
pub const fn elf_machine() -> u32 {
    if cfg!(target_arch = "x86_64") {
        62
    } else if cfg!(target_arch = "aarch64") {
        183
    } else if cfg!(target_arch = "x86") {
        3
    } else if cfg!(target_arch = "arm") {
        40
    } else if cfg!(target_arch = "riscv64") {
        243
    } else if cfg!(target_arch = "s390x") {
        22
    } else if cfg!(target_arch = "powerpc64") {
        21
    } else {
        0
    }
}

/// Zero bytes needed after `len` bytes to reach a multiple of 8.
pub const fn pad8(len: usize) -> usize {
    (8 - len % 8) % 8
}
