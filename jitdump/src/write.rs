//! Encoding jitdump records into a byte buffer, in native byte order.
//!
//! The functions append to a caller-owned `Vec<u8>` so a session can reuse
//! one buffer and hand each finished record to a single `write`/`writev`.
//! They are `#[inline]`: they run inside a JIT at every load, and without
//! it no call from jit-client (another crate) inlines them (the plain path
//! grew by 120 instructions a load when this module left jit-client).

use super::format::{self, RecordType};
use super::{CodeLoad, DebugEntry};

#[inline]
fn put_u32(buf: &mut Vec<u8>, v: u32) {
    buf.extend_from_slice(&v.to_ne_bytes());
}

#[inline]
fn put_u64(buf: &mut Vec<u8>, v: u64) {
    buf.extend_from_slice(&v.to_ne_bytes());
}

#[inline]
fn put_prefix(buf: &mut Vec<u8>, id: RecordType, total_size: usize, timestamp: u64) {
    put_u32(buf, id.0);
    put_u32(buf, total_size as u32);
    put_u64(buf, timestamp);
}

/// Appends the 40-byte file header.
#[inline]
pub fn header(buf: &mut Vec<u8>, e_machine: u32, pid: u32, timestamp: u64) {
    put_u32(buf, format::MAGIC);
    put_u32(buf, format::VERSION);
    put_u32(buf, format::HEADER_SIZE as u32);
    put_u32(buf, e_machine);
    put_u32(buf, format::JIT_CLIENT_MARK);
    put_u32(buf, pid);
    put_u64(buf, timestamp);
    put_u64(buf, 0);
}

/// Appends a DEBUG_INFO record for the code at `code_addr`, padded to 8
/// bytes. `entries` is iterated twice (size, then bytes); file names are
/// written sanitized (see [`put_str`]).
#[inline]
pub fn debug_info<'a, I>(buf: &mut Vec<u8>, timestamp: u64, code_addr: u64, entries: I)
where
    I: Iterator<Item = DebugEntry<'a>> + Clone,
{
    let (count, body) = entries.clone().fold((0u64, 0usize), |(n, size), e| {
        (
            n + 1,
            size + format::DEBUG_ENTRY_FIXED_SIZE + e.file.len() + 1,
        )
    });
    let unpadded = format::DEBUG_INFO_FIXED_SIZE + body;
    let total = unpadded + format::pad8(unpadded);
    buf.reserve(total);
    put_prefix(buf, RecordType::DEBUG_INFO, total, timestamp);
    put_u64(buf, code_addr);
    put_u64(buf, count);
    for e in entries {
        put_u64(buf, e.addr);
        put_u32(buf, e.line);
        put_u32(buf, e.discrim);
        put_str(buf, e.file);
    }
    buf.resize(buf.len() + format::pad8(unpadded), 0);
}

/// Appends `s` and a NUL, with NUL, `\n` and `\r` inside `s` replaced by
/// `_` (as wasmtime does): they would cut a jitdump string or a perf map
/// line short.
#[inline]
pub fn put_str(buf: &mut Vec<u8>, s: &[u8]) {
    let start = buf.len();
    buf.extend_from_slice(s);
    for b in &mut buf[start..] {
        if matches!(*b, 0 | b'\n' | b'\r') {
            *b = b'_';
        }
    }
    buf.push(0);
}

/// Appends a CODE_LOAD record up to and including the name's NUL; the caller
/// writes the `code_size` code bytes right after it (`load.code` is not
/// written here).
#[inline]
pub fn code_load_head(buf: &mut Vec<u8>, timestamp: u64, load: &CodeLoad) {
    let total = format::CODE_LOAD_FIXED_SIZE + load.name.len() + 1 + load.code_size as usize;
    put_prefix(buf, RecordType::CODE_LOAD, total, timestamp);
    put_u32(buf, load.pid);
    put_u32(buf, load.tid);
    put_u64(buf, load.code_addr);
    put_u64(buf, load.code_addr);
    put_u64(buf, load.code_size);
    put_u64(buf, load.code_index);
    put_str(buf, load.name);
}

/// Appends a CODE_CLOSE record.
#[inline]
pub fn close(buf: &mut Vec<u8>, timestamp: u64) {
    put_prefix(
        buf,
        RecordType::CODE_CLOSE,
        format::RECORD_PREFIX_SIZE,
        timestamp,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_info_is_padded_and_sized() {
        let mut buf = Vec::new();
        let entries = [DebugEntry {
            addr: 0x1000,
            line: 3,
            discrim: 1,
            file: b"a.js",
        }];
        debug_info(&mut buf, 7, 0x1000, entries.iter().copied());
        assert_eq!(buf.len() % 8, 0);
        let size = u32::from_ne_bytes(buf[4..8].try_into().unwrap()) as usize;
        assert_eq!(size, buf.len());
        assert_eq!(size, 32 + 16 + 5 + 3);
    }

    #[test]
    fn strings_lose_nul_and_line_breaks() {
        let mut buf = Vec::new();
        put_str(&mut buf, b"a\nb\0c\rd");
        assert_eq!(buf, b"a_b_c_d\0");
    }

    #[test]
    fn code_load_head_counts_the_code() {
        let mut buf = Vec::new();
        let load = CodeLoad {
            pid: 2,
            tid: 3,
            code_addr: 0x4000,
            code_size: 10,
            code_index: 0,
            name: b"f",
            code: None,
        };
        code_load_head(&mut buf, 1, &load);
        assert_eq!(buf.len(), 56 + 2);
        let size = u32::from_ne_bytes(buf[4..8].try_into().unwrap()) as usize;
        assert_eq!(size, buf.len() + 10);
    }
}
