//! The input shared by the reader thread, which reads it in order, and the
//! rewriter, which now and then reads a stretch of it again (a position
//! the lazy pass copied without decoding: see `rewrite/recall.rs`).

use std::io::{self, Read, Seek, SeekFrom};
use std::ops::Range;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Bytes of the input read again, by offset from where the rewrite
/// started reading.
pub trait ReadAgain: Sync {
    /// Appends the input's bytes `range` to `buf` (fewer where the input
    /// ends first).
    fn read_again(&self, range: Range<u64>, buf: &mut Vec<u8>) -> io::Result<()>;
}

/// An input behind a lock: `&Shared` reads on from where the last read
/// ended; [`ReadAgain`] reads elsewhere and leaves that place as it was.
pub struct Shared<R> {
    input: Mutex<R>,
    /// Where the rewrite started reading.
    start: u64,
}

impl<R: Seek> Shared<R> {
    /// Shares `input`, offsets counting from where it stands now.
    pub fn new(mut input: R) -> io::Result<Self> {
        let start = input.stream_position()?;
        Ok(Shared {
            input: Mutex::new(input),
            start,
        })
    }
}

impl<R> Shared<R> {
    fn lock(&self) -> MutexGuard<'_, R> {
        self.input.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<R: Read> Read for &Shared<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.lock().read(buf)
    }
}

impl<R: Read + Seek + Send> ReadAgain for Shared<R> {
    fn read_again(&self, range: Range<u64>, buf: &mut Vec<u8>) -> io::Result<()> {
        let mut input = self.lock();
        let resume = input.stream_position()?;
        input.seek(SeekFrom::Start(self.start + range.start))?;
        let len = range.end.saturating_sub(range.start);
        let read = (&mut *input).take(len).read_to_end(buf);
        input.seek(SeekFrom::Start(resume))?;
        read.map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    #[test]
    fn reading_back_leaves_the_reader_where_it_was() {
        let mut data = Cursor::new(b"0123456789abcdef".to_vec());
        data.set_position(2);
        let shared = Shared::new(data).unwrap();
        let mut head = [0; 4];
        (&shared).read_exact(&mut head).unwrap();
        assert_eq!(&head, b"2345");
        let mut back = b"x".to_vec();
        shared.read_again(1..5, &mut back).unwrap();
        assert_eq!(back, b"x3456", "offsets count from where reading began");
        (&shared).read_exact(&mut head).unwrap();
        assert_eq!(&head, b"6789");
        back.clear();
        shared.read_again(10..99, &mut back).unwrap();
        assert_eq!(back, b"cdef", "cut short where the input ends");
    }
}
