//! A file read front to back a chunk ahead of its reader, by a thread of
//! its own: copying the file's bytes out of the page cache was a third of
//! scanning a large jitdump, and it now overlaps the parsing.
//!
//! Like [`crate::file_window`], it reads by positioned reads, never a
//! mapping: a file truncated under the reader is an error, not SIGBUS.
//! Where no thread can be made, the chunks are read in turn on the
//! reader's own.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::Scope;

use crate::aligned::AlignedBuf;

/// Bytes read at a time.
const CHUNK: usize = 1 << 20;

/// Chunks read and not yet taken, at most.
const QUEUED: usize = 2;

/// A chunk of the file: its offset and bytes.
#[derive(Default)]
struct Chunk {
    base: u64,
    bytes: AlignedBuf,
}

impl Chunk {
    fn end(&self) -> u64 {
        self.base + self.bytes.len() as u64
    }

    /// True where the chunk has the bytes `offset..end`.
    fn holds(&self, offset: u64, end: u64) -> bool {
        offset >= self.base && end <= self.end()
    }
}

/// Where the chunks come from.
enum Feed<'f> {
    /// The reading thread, and the channel that gives it spent buffers.
    Thread {
        chunks: Receiver<io::Result<Chunk>>,
        spent: SyncSender<AlignedBuf>,
    },
    /// Read here, in turn: the next chunk's offset, and a spent buffer.
    Here {
        file: &'f File,
        next: u64,
        spent: AlignedBuf,
    },
}

/// The bytes of a file from the front on, for offsets that never go back.
pub(crate) struct Ahead<'f> {
    feed: Feed<'f>,
    len: u64,
    /// The latest chunk taken.
    current: Chunk,
    /// A stretch gathered across chunks; it ends inside `current`.
    joined: Chunk,
    /// The buffer the next stretch is gathered in.
    spare: AlignedBuf,
}

impl<'f> Ahead<'f> {
    /// Starts reading `file` (its length as of now) on a thread of
    /// `scope`.
    pub(crate) fn new<'s, 'e>(file: &'f File, scope: &'s Scope<'s, 'e>) -> io::Result<Self>
    where
        'f: 's,
    {
        let len = file.metadata()?.len();
        let (chunks, received) = sync_channel(QUEUED);
        let (spent, recycled) = sync_channel(QUEUED + 2);
        let reading = std::thread::Builder::new()
            .name("jitdump-read".into())
            .stack_size(64 << 10)
            .spawn_scoped(scope, move || read_ahead(file, len, &chunks, &recycled));
        let feed = match reading {
            Ok(_) => Feed::Thread {
                chunks: received,
                spent,
            },
            Err(_) => Feed::Here {
                file,
                next: 0,
                spent: AlignedBuf::default(),
            },
        };
        Ok(Ahead::with(feed, len))
    }

    fn with(feed: Feed<'f>, len: u64) -> Self {
        Ahead {
            feed,
            len,
            current: Chunk::default(),
            joined: Chunk::default(),
            spare: AlignedBuf::default(),
        }
    }

    /// The file's length when reading began.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// The bytes from `offset` on: at least `want` of them, fewer only
    /// where the file ends first. `offset` is at least the one asked for
    /// before (a scan goes forward). An error where the file has become
    /// shorter than it was.
    pub(crate) fn at(&mut self, offset: u64, want: usize) -> io::Result<&[u8]> {
        let end = offset.saturating_add(want as u64).min(self.len);
        if !self.current.holds(offset, end) && !self.joined.holds(offset, end) {
            self.gather(offset, end)?;
        }
        let chunk = match self.current.holds(offset, end) {
            true => &self.current,
            false => &self.joined,
        };
        Ok(&chunk.bytes[(offset - chunk.base) as usize..])
    }

    /// Copies the bytes `offset..end` into `joined`, taking chunks as
    /// needed (the last one taken becomes `current`).
    fn gather(&mut self, offset: u64, end: u64) -> io::Result<()> {
        let mut out = std::mem::take(&mut self.spare);
        out.clear();
        let (current, joined) = (&self.current, &self.joined);
        if offset < current.base {
            // Before the current chunk: in the stretch, which ends in it.
            if offset < joined.base {
                return Err(backwards(offset));
            }
            debug_assert!(joined.end() >= current.base);
            let from = (offset - joined.base) as usize;
            out.extend_from_slice(&joined.bytes[from..(current.base - joined.base) as usize]);
        }
        let need = (end - offset) as usize;
        let mut chunk = Some(std::mem::take(&mut self.current));
        while let Some(taken) = chunk {
            let from = offset
                .saturating_sub(taken.base)
                .min(taken.bytes.len() as u64) as usize;
            let more = (need - out.len()).min(taken.bytes.len() - from);
            out.extend_from_slice(&taken.bytes[from..from + more]);
            chunk = match out.len() < need {
                true => self.next_chunk()?,
                false => None,
            };
            match chunk {
                Some(_) => self.recycle(taken.bytes),
                None => self.current = taken,
            }
        }
        self.spare = std::mem::replace(&mut self.joined.bytes, out);
        self.joined.base = offset;
        Ok(())
    }

    /// The next chunk of the file; `None` after its end.
    fn next_chunk(&mut self) -> io::Result<Option<Chunk>> {
        match &mut self.feed {
            Feed::Thread { chunks, .. } => chunks.recv().ok().transpose(),
            Feed::Here { next, .. } if *next >= self.len => Ok(None),
            Feed::Here { file, next, spent } => {
                let chunk = read_chunk(file, self.len, *next, std::mem::take(spent))?;
                *next = chunk.end();
                Ok(Some(chunk))
            }
        }
    }

    /// Gives a chunk's buffer back to be read into again.
    fn recycle(&mut self, buffer: AlignedBuf) {
        match &mut self.feed {
            Feed::Thread { spent, .. } => drop(spent.try_send(buffer)),
            Feed::Here { spent, .. } => *spent = buffer,
        }
    }
}

/// The error of an offset before what was taken already.
fn backwards(offset: u64) -> io::Error {
    io::Error::other(format!("read back to offset {offset} in a forward scan"))
}

/// The reading thread: each chunk from the front, until the file ends,
/// a read fails or the reader is gone.
fn read_ahead(
    file: &File,
    len: u64,
    chunks: &SyncSender<io::Result<Chunk>>,
    recycled: &Receiver<AlignedBuf>,
) {
    let mut base = 0;
    while base < len {
        let buffer = recycled.try_recv().unwrap_or_default();
        let chunk = read_chunk(file, len, base, buffer);
        let failed = chunk.is_err();
        base = chunk.as_ref().map_or(len, Chunk::end);
        if chunks.send(chunk).is_err() || failed {
            return;
        }
    }
}

/// The chunk at `base` read into `buffer`.
fn read_chunk(file: &File, len: u64, base: u64, mut buffer: AlignedBuf) -> io::Result<Chunk> {
    let size = CHUNK.min((len - base) as usize);
    // Zeroed only where it grows (see `file_window`).
    if buffer.len() < size {
        buffer.resize(size);
    }
    buffer.truncate(size);
    file.read_exact_at(&mut buffer, base)
        .map_err(|e| crate::file_window::shorter(e, len))?;
    Ok(Chunk {
        base,
        bytes: buffer,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file_of(data: &[u8]) -> File {
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(data).unwrap();
        file
    }

    /// Forward requests of every size, across chunk ends and over whole
    /// chunks, each answered with the file's own bytes.
    fn reads_forward(mut ahead: Ahead, data: &[u8]) {
        let len = data.len() as u64;
        let mut offset = 0;
        let wants = [16, 0, 100, CHUNK + 100, 1, 3 * CHUNK, 7];
        for (i, want) in wants.iter().cycle().take(200).enumerate() {
            let got = ahead.at(offset, *want).unwrap();
            let end = (offset as usize + want).min(data.len());
            assert!(got.len() >= end - offset as usize, "{offset} {want}");
            assert_eq!(got, &data[offset as usize..offset as usize + got.len()]);
            // On by what was asked for, or by less (a prefix read first).
            offset = (offset + (*want as u64) / (1 + i as u64 % 2) + 1).min(len);
        }
        assert_eq!(offset, len, "the requests reach the end");
        assert_eq!(ahead.at(len, 16).unwrap(), b"");
    }

    fn data(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i % 251) as u8).collect()
    }

    /// Runs `test` on an `Ahead` (on its thread) over a file of `len`
    /// bytes, and the bytes.
    fn on_file_of(len: usize, test: impl FnOnce(Ahead, &[u8])) {
        let data = data(len);
        let file = file_of(&data);
        std::thread::scope(|scope| test(Ahead::new(&file, scope).unwrap(), &data));
    }

    #[test]
    fn every_request_sees_the_files_own_bytes() {
        on_file_of(5 * CHUNK + 1234, reads_forward);
    }

    #[test]
    fn without_a_thread_the_chunks_are_read_in_turn() {
        let data = data(5 * CHUNK + 1234);
        let file = file_of(&data);
        let here = Feed::Here {
            file: &file,
            next: 0,
            spent: AlignedBuf::default(),
        };
        reads_forward(Ahead::with(here, data.len() as u64), &data);
    }

    #[test]
    fn a_file_truncated_under_the_reader_is_an_error_not_a_crash() {
        let file = file_of(&vec![7; 8 * CHUNK]);
        std::thread::scope(|scope| {
            let mut ahead = Ahead::new(&file, scope).unwrap();
            assert_eq!(ahead.at(0, 16).unwrap()[0], 7);
            // The JIT truncates its dump (a mapping would now raise SIGBUS).
            file.set_len(100).unwrap();
            let err = ahead.at(7 * CHUNK as u64, 16).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
            assert!(err.to_string().contains("became shorter"), "{err}");
        });
    }

    /// A record's prefix read across a chunk's end, then the whole record
    /// from the same offset (as the scan reads each record).
    #[test]
    fn a_stretch_asked_for_again_longer_is_the_files_bytes() {
        on_file_of(3 * CHUNK, |mut ahead, data| {
            let at = CHUNK - 4;
            assert_eq!(&ahead.at(at as u64, 8).unwrap()[..8], &data[at..at + 8]);
            let got = ahead.at(at as u64, CHUNK + 100).unwrap();
            assert_eq!(&got[..CHUNK + 100], &data[at..at + CHUNK + 100]);
            let at = at + 6;
            assert_eq!(&ahead.at(at as u64, 50).unwrap()[..50], &data[at..at + 50]);
        });
    }

    #[test]
    fn a_request_behind_what_was_read_is_an_error() {
        on_file_of(3 * CHUNK, |mut ahead, _| {
            ahead.at(2 * CHUNK as u64 + 5, 10).unwrap();
            let err = ahead.at(10, CHUNK).unwrap_err();
            assert!(err.to_string().contains("forward scan"), "{err}");
        });
    }
}
