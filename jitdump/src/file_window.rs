//! Reading a large file front to back, or a few records of it, without
//! holding it: a window of the file read into a buffer by positioned
//! reads, moved along as the reader goes. Memory stays at the window's
//! size whatever the file's.
//!
//! Not mapped: a jitdump may belong to a JIT that is still running, and a
//! mapped file truncated under the reader kills it with SIGBUS. A read
//! instead finds the file shorter than it was, and says so.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use crate::aligned::{AlignedBuf, ALIGN};

/// Bytes read at a time while reading on from where the last read ended.
const SEQUENTIAL: usize = 1 << 20;

/// Bytes read at a time for a jump elsewhere (a record looked up again):
/// a record or two, not a whole window.
const JUMP: usize = 64 << 10;

/// A moving view of a file.
pub struct Window<'f> {
    file: &'f File,
    len: u64,
    /// File offset of `buf`'s first byte.
    base: u64,
    buf: AlignedBuf,
}

impl<'f> Window<'f> {
    /// A window over `file` (its length read now: bytes appended later are
    /// not seen).
    pub fn new(file: &'f File) -> io::Result<Self> {
        Ok(Window {
            file,
            len: file.metadata()?.len(),
            base: 0,
            buf: AlignedBuf::default(),
        })
    }

    /// The file's length.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True for an empty file.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes from `offset` on: at least `want` of them, fewer only
    /// where the file ends first; often more. An error where the file has
    /// become shorter than it was when the window was made.
    pub fn at(&mut self, offset: u64, want: usize) -> io::Result<&[u8]> {
        let have = self.buf.len() as u64;
        let inside = offset >= self.base && offset - self.base <= have;
        let enough = inside && {
            let end = (offset + want as u64).min(self.len);
            end <= self.base + have
        };
        if !enough {
            let size = if inside { SEQUENTIAL } else { JUMP };
            self.move_to(offset, want, size)?;
        }
        let from = (offset - self.base) as usize;
        Ok(&self.buf[from.min(self.buf.len())..])
    }

    /// Reads `want` bytes from `offset` on, `size` at least, into the
    /// buffer (reused). The read starts on an [`ALIGN`] boundary of the
    /// file, as the buffer does in memory (see [`crate::aligned`]).
    fn move_to(&mut self, offset: u64, want: usize, size: usize) -> io::Result<()> {
        let offset = offset.min(self.len);
        let base = offset - offset % ALIGN as u64;
        let len = ((offset - base) as usize + want.max(size)).min((self.len - base) as usize);
        self.base = base;
        // Zeroed only where it grows: under callgrind, zeroing a window
        // at every move was 7% of indexing a large perf map.
        if self.buf.len() < len {
            self.buf.resize(len);
        }
        self.buf.truncate(len);
        self.file.read_exact_at(&mut self.buf, base).map_err(|e| {
            self.buf.clear();
            shorter(e, self.len)
        })
    }
}

/// A read's error, saying so where the file has become shorter than its
/// `len` bytes.
pub(crate) fn shorter(e: io::Error, len: u64) -> io::Error {
    match e.kind() {
        io::ErrorKind::UnexpectedEof => io::Error::new(
            e.kind(),
            format!("the file became shorter while it was read (was {len} bytes)"),
        ),
        _ => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn every_request_sees_the_files_own_bytes() {
        let data: Vec<u8> = (0..(3 * SEQUENTIAL + 1234))
            .map(|i| (i % 251) as u8)
            .collect();
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&data).unwrap();
        let mut w = Window::new(&file).unwrap();
        let len = data.len() as u64;
        let offsets = [
            0,
            5,
            SEQUENTIAL as u64 - 3,
            2 * SEQUENTIAL as u64 + 7,
            len - 10,
            len,
            40,
        ];
        for offset in offsets {
            for want in [0, 1, 16, SEQUENTIAL + 100] {
                let got = w.at(offset, want).unwrap();
                let end = (offset as usize + want).min(data.len());
                assert!(got.len() >= end - offset as usize, "{offset} {want}");
                assert_eq!(got, &data[offset as usize..offset as usize + got.len()]);
            }
        }
    }

    #[test]
    fn the_length_is_the_files_when_the_window_was_made() {
        let mut file = tempfile::tempfile().unwrap();
        let w = Window::new(&file).unwrap();
        assert_eq!((w.len(), w.is_empty()), (0, true));
        file.write_all(b"jitdump").unwrap();
        let w = Window::new(&file).unwrap();
        assert_eq!((w.len(), w.is_empty()), (7, false));
        (&file).write_all(b" grows").unwrap();
        assert_eq!(w.len(), 7);
    }

    #[test]
    fn reads_start_on_a_line_and_are_sized_for_jumps_and_runs() {
        let data = vec![5u8; 3 * SEQUENTIAL];
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&data).unwrap();
        let mut w = Window::new(&file).unwrap();
        // A jump: a record or two, read from the line below the offset.
        let jump = 1_234_567;
        w.at(jump, 16).unwrap();
        assert_eq!(w.base, jump - jump % ALIGN as u64);
        assert_eq!(w.buf.len(), JUMP + (jump - w.base) as usize);
        // Inside the window: no read.
        w.at(jump + 100, 16).unwrap();
        assert_eq!(w.base, jump - jump % ALIGN as u64);
        // Reading on past its end: a long read.
        let on = w.base + w.buf.len() as u64 - 8;
        w.at(on, 16).unwrap();
        assert_eq!(w.base, on - on % ALIGN as u64);
        assert_eq!(w.buf.len(), SEQUENTIAL + (on - w.base) as usize);
    }

    #[test]
    fn a_file_truncated_under_the_reader_is_an_error_not_a_crash() {
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&vec![7; 3 * SEQUENTIAL]).unwrap();
        let mut w = Window::new(&file).unwrap();
        assert_eq!(w.at(0, 16).unwrap()[0], 7);
        // The JIT truncates its dump (a mapping would now raise SIGBUS).
        file.set_len(100).unwrap();
        let err = w.at(2 * SEQUENTIAL as u64, 16).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        assert!(err.to_string().contains("became shorter"), "{err}");
    }
}
