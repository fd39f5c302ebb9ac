//! Where a symbol's records are read from when it is decoded: the file by
//! positioned reads (a symbol looked up alone), or a window moving
//! through it (many symbols, in file order).

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use jitdump::file_window::Window;

/// Where a symbol's records are read: at least `want` bytes from `at`
/// on (fewer only where the file ends).
pub trait Reads {
    fn at(&mut self, at: u64, want: usize) -> io::Result<&[u8]>;
}

impl Reads for Window<'_> {
    fn at(&mut self, at: u64, want: usize) -> io::Result<&[u8]> {
        Window::at(self, at, want)
    }
}

/// Positioned reads of the few bytes asked for: a symbol looked up alone.
pub struct Pread<'f> {
    file: &'f File,
    buf: Vec<u8>,
}

impl<'f> Pread<'f> {
    pub fn new(file: &'f File) -> Self {
        Pread {
            file,
            buf: Vec::new(),
        }
    }
}

impl Reads for Pread<'_> {
    fn at(&mut self, at: u64, want: usize) -> io::Result<&[u8]> {
        self.buf.resize(want, 0);
        let mut got = 0;
        while got < want {
            match self.file.read_at(&mut self.buf[got..], at + got as u64) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(&self.buf[..got])
    }
}
