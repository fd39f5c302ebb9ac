//! Reading on a second thread: a reader thread fills chunks of 1 MiB
//! ahead of the rewriter and marks the lines that are not plain cost
//! lines ([`plain_lines`](crate::callgrind::format::plain_lines)), so the time the system
//! spends reading, and that scan, overlap the rewriting. Each chunk keeps
//! room in front of its data, so the unfinished line of the chunk before
//! can be put there without moving the new data.

use std::io::{self, Read};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::thread::{Scope, ScopedJoinHandle};

use jitdump::aligned::{aligned_from, ALIGN};

use crate::callgrind::format::plain_lines::{breaks, Breaks};

/// Data bytes per chunk.
pub const CHUNK: usize = 1 << 20;
/// Room in front of a chunk's data for the previous chunk's tail.
pub const HEADROOM: usize = 64 << 10;
/// A chunk's buffer: room, data and what aligning the data may take.
const SIZE: usize = HEADROOM + CHUNK + ALIGN - 1;
/// Chunks read ahead (memory stays bounded).
const AHEAD: usize = 2;

/// A chunk read: its data is `buf[start..start + len]`; `len` 0 means the
/// end of the input.
#[derive(Default)]
pub struct Chunk {
    pub buf: Vec<u8>,
    /// Where the data begins: after [`HEADROOM`], on a cache line (the
    /// kernel copies into it several times faster: `jitdump::aligned`).
    pub start: usize,
    pub len: usize,
    /// The lines of the data that may not be plain cost lines.
    pub breaks: Breaks,
}

/// The rewriter's end: receives chunks, gives spent buffers back.
pub struct Feed {
    full: Receiver<io::Result<Chunk>>,
    spent: Sender<Chunk>,
}

impl Feed {
    /// The next chunk, an empty one at the end of the input, or the read
    /// error the reader thread stopped at.
    pub fn next(&mut self) -> io::Result<Chunk> {
        self.full.recv().unwrap_or_else(|_| Ok(Chunk::default()))
    }

    /// Hands a chunk back for the reader to fill again.
    pub fn give_back(&mut self, chunk: Chunk) {
        let _ = self.spent.send(chunk);
    }

    /// Where others (the writer thread) hand chunks back.
    pub fn spent_sender(&self) -> Sender<Chunk> {
        self.spent.clone()
    }
}

/// Starts a reader thread in `scope` reading `input` to its end or first
/// error. It stops early once the [`Feed`] is dropped. Fails where no
/// thread can be started (out of memory).
pub fn spawn<'scope, R: Read + Send + 'scope>(
    scope: &'scope Scope<'scope, '_>,
    mut input: R,
) -> io::Result<(Feed, ScopedJoinHandle<'scope, ()>)> {
    let (full_tx, full_rx) = sync_channel(AHEAD);
    let (spent_tx, spent_rx) = channel();
    let handle = crate::memory::helper_thread()
        .spawn_scoped(scope, move || read_all(&mut input, &full_tx, &spent_rx))?;
    let feed = Feed {
        full: full_rx,
        spent: spent_tx,
    };
    Ok((feed, handle))
}

fn read_all<R: Read>(input: &mut R, full: &SyncSender<io::Result<Chunk>>, spent: &Receiver<Chunk>) {
    loop {
        let pooled = |c: &Chunk| c.buf.len() == SIZE;
        let mut chunk = spent
            .try_recv()
            .ok()
            .filter(pooled)
            .unwrap_or_else(|| Chunk {
                buf: vec![0; SIZE],
                ..Chunk::default()
            });
        let start = aligned_from(&chunk.buf, HEADROOM);
        let chunk = fill(input, &mut chunk.buf[start..start + CHUNK]).map(|len| {
            let data = &chunk.buf[start..start + len];
            breaks(data, &mut chunk.breaks);
            Chunk {
                start,
                len,
                ..chunk
            }
        });
        let last = !matches!(chunk, Ok(Chunk { len, .. }) if len > 0);
        if full.send(chunk).is_err() || last {
            return;
        }
    }
}

/// Reads until `buf` is full or the input ends; the bytes read.
fn fill<R: Read>(input: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match input.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads in uneven pieces and fails after `fail_after` bytes.
    struct Stingy<'a> {
        data: &'a [u8],
        fail_after: Option<usize>,
        read: usize,
    }

    impl Read for Stingy<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.fail_after.is_some_and(|f| self.read >= f) {
                return Err(io::Error::other("disk gone"));
            }
            let n = buf.len().min(self.data.len()).min(1 + self.read % 7919);
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            self.read += n;
            Ok(n)
        }
    }

    fn collect(input: Stingy) -> (Vec<u8>, Option<io::Error>) {
        std::thread::scope(|scope| {
            let (mut feed, _) = spawn(scope, input).unwrap();
            let mut got = Vec::new();
            loop {
                match feed.next() {
                    Ok(Chunk { len: 0, .. }) => return (got, None),
                    Ok(chunk) => {
                        let data = &chunk.buf[chunk.start..chunk.start + chunk.len];
                        // The room in front is there, and the data on a line.
                        assert!(chunk.start >= HEADROOM);
                        assert!((data.as_ptr() as usize).is_multiple_of(ALIGN));
                        got.extend_from_slice(data);
                        feed.give_back(chunk);
                    }
                    Err(e) => return (got, Some(e)),
                }
            }
        })
    }

    #[test]
    fn delivers_the_input_in_order_then_an_empty_chunk() {
        let data: Vec<u8> = (0..3 * CHUNK + 12345).map(|i| (i % 251) as u8).collect();
        let (got, err) = collect(Stingy {
            data: &data,
            fail_after: None,
            read: 0,
        });
        assert!(err.is_none());
        assert!(got == data, "{} bytes of {}", got.len(), data.len());
    }

    /// Interrupted before each of its reads (a signal in the system call).
    struct Interrupted<'a> {
        data: &'a [u8],
        ready: bool,
    }

    impl Read for Interrupted<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.ready = !self.ready;
            if self.ready {
                return Err(io::ErrorKind::Interrupted.into());
            }
            let n = buf.len().min(self.data.len()).min(1000);
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    #[test]
    fn an_interrupted_read_is_tried_again_and_the_thread_ends_at_the_end() {
        let data: Vec<u8> = (0..CHUNK + 5000).map(|i| (i % 253) as u8).collect();
        std::thread::scope(|scope| {
            let input = Interrupted {
                data: &data,
                ready: false,
            };
            let (mut feed, handle) = spawn(scope, input).unwrap();
            let mut got = Vec::new();
            loop {
                let chunk = feed.next().unwrap();
                if chunk.len == 0 {
                    break;
                }
                got.extend_from_slice(&chunk.buf[chunk.start..chunk.start + chunk.len]);
            }
            assert!(got == data, "{} bytes of {}", got.len(), data.len());
            // The reader stops after the empty chunk, the feed still open.
            handle.join().unwrap();
        });
    }

    #[test]
    fn a_read_error_arrives_after_the_data_before_it() {
        let data = vec![b'x'; 3 * CHUNK];
        let (got, err) = collect(Stingy {
            data: &data,
            fail_after: Some(CHUNK + 10),
            read: 0,
        });
        assert_eq!(err.map(|e| e.to_string()).as_deref(), Some("disk gone"));
        assert_eq!(got.len(), CHUNK);
    }
}
