//! Writing on a second thread. The rewriter hands over batches: the input
//! chunk it has finished with, the bytes it wrote itself, and the order in
//! which to write pieces of both. Lines copied unchanged are written
//! straight from the input chunk (no copy in this process); the writer
//! then gives the chunk back to the reader. The time the system spends
//! writing overlaps the rewriting instead of adding to it.

use std::io::{self, IoSlice, Write};
use std::ops::Range;
use std::sync::mpsc::{channel, sync_channel, Receiver, SyncSender};
use std::thread::{Scope, ScopedJoinHandle};

use super::reader::Chunk;

/// Batches in flight between the threads (memory stays bounded).
const IN_FLIGHT: usize = 2;
/// Most slices per `writev` (Linux takes up to 1024).
const MAX_SLICES: usize = 512;

/// Where a piece of output comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// Bytes of the batch's input chunk buffer.
    Input(Range<usize>),
    /// Bytes of the batch's own buffer.
    Own(Range<usize>),
}

/// Output for the writer thread: `pieces` of `chunk` and `own`, in order.
#[derive(Default)]
pub struct Batch {
    pub chunk: Option<Chunk>,
    pub own: Vec<u8>,
    pub pieces: Vec<Piece>,
}

/// The rewriter's end: sends batches, gets written ones back (emptied).
pub struct Sender {
    full: SyncSender<Batch>,
    empty: Receiver<Batch>,
}

impl Sender {
    /// Queues `batch` for writing; returns an empty batch to fill next.
    pub fn send(&mut self, batch: Batch) -> io::Result<Batch> {
        let capacity = batch.own.capacity();
        self.full
            .send(batch)
            .map_err(|_| io::Error::other("the writer thread stopped"))?;
        Ok(self.empty.try_recv().unwrap_or_else(|_| Batch {
            own: Vec::with_capacity(capacity),
            ..Batch::default()
        }))
    }
}

/// Starts a writer thread in `scope` writing to `out`; input chunks it is
/// done with go to `spent`. Its result is the first write error, if any;
/// it ends when the [`Sender`] is dropped. Fails where no thread can be
/// started (out of memory).
pub fn spawn<'scope, W: Write + Send + 'scope>(
    scope: &'scope Scope<'scope, '_>,
    mut out: W,
    spent: std::sync::mpsc::Sender<Chunk>,
) -> io::Result<(Sender, ScopedJoinHandle<'scope, io::Result<()>>)> {
    let (full_tx, full_rx) = sync_channel::<Batch>(IN_FLIGHT);
    let (empty_tx, empty_rx) = channel();
    let handle = crate::memory::helper_thread().spawn_scoped(scope, move || {
        for mut batch in full_rx {
            write_batch(&mut out, &batch)?;
            if let Some(chunk) = batch.chunk.take() {
                let _ = spent.send(chunk);
            }
            batch.own.clear();
            batch.pieces.clear();
            let _ = empty_tx.send(batch);
        }
        out.flush()
    })?;
    let sender = Sender {
        full: full_tx,
        empty: empty_rx,
    };
    Ok((sender, handle))
}

/// Writes the pieces of `batch`, many per system call.
fn write_batch(out: &mut impl Write, batch: &Batch) -> io::Result<()> {
    let input = batch.chunk.as_ref().map_or(&[][..], |c| &c.buf[..]);
    let slice = |piece: &Piece| match piece {
        Piece::Input(r) => IoSlice::new(&input[r.clone()]),
        Piece::Own(r) => IoSlice::new(&batch.own[r.clone()]),
    };
    for group in batch.pieces.chunks(MAX_SLICES) {
        let mut slices: Vec<IoSlice> = group.iter().map(slice).collect();
        write_all_vectored(out, &mut slices)?;
    }
    Ok(())
}

fn write_all_vectored(out: &mut impl Write, mut slices: &mut [IoSlice<'_>]) -> io::Result<()> {
    IoSlice::advance_slices(&mut slices, 0); // drops empty slices in front
    while !slices.is_empty() {
        match out.write_vectored(slices) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => IoSlice::advance_slices(&mut slices, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Waits for the writer thread: its error if it had one.
pub fn join(handle: ScopedJoinHandle<'_, io::Result<()>>) -> io::Result<()> {
    handle
        .join()
        .unwrap_or_else(|_| Err(io::Error::other("the writer thread panicked")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Takes at most `max` bytes a call, from the first slice only, as a
    /// writer without vectored writes does.
    struct Trickle {
        got: Vec<u8>,
        max: usize,
    }

    impl Write for Trickle {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let n = buf.len().min(self.max);
            self.got.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// Interrupted before each write it takes; fails for good after
    /// `fail_after` bytes.
    struct Flaky {
        got: Vec<u8>,
        interrupted: bool,
        fail_after: usize,
    }

    impl Write for Flaky {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.interrupted = !self.interrupted;
            if self.interrupted {
                return Err(io::ErrorKind::Interrupted.into());
            }
            if self.got.len() >= self.fail_after {
                return Err(io::Error::other("disk full"));
            }
            let n = buf.len().min(3);
            self.got.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn an_interrupted_write_is_tried_again_and_a_failed_one_is_the_error() {
        let batch = Batch {
            own: b"own bytes\n".to_vec(),
            pieces: vec![Piece::Own(0..10), Piece::Own(4..10)],
            ..Batch::default()
        };
        let mut out = Flaky {
            got: Vec::new(),
            interrupted: false,
            fail_after: usize::MAX,
        };
        write_batch(&mut out, &batch).unwrap();
        assert_eq!(out.got, b"own bytes\nbytes\n");
        let mut out = Flaky {
            got: Vec::new(),
            interrupted: false,
            fail_after: 6,
        };
        let err = write_batch(&mut out, &batch).unwrap_err();
        assert_eq!((err.to_string().as_str(), out.got.len()), ("disk full", 6));
    }

    #[test]
    fn the_writer_thread_s_error_comes_back_at_the_join() {
        let (spent, _back) = std::sync::mpsc::channel();
        let out = Flaky {
            got: Vec::new(),
            interrupted: false,
            fail_after: 0,
        };
        let err = std::thread::scope(|scope| {
            let (mut sender, handle) = spawn(scope, out, spent).unwrap();
            let batch = Batch {
                own: b"x\n".to_vec(),
                pieces: vec![Piece::Own(0..2)],
                ..Batch::default()
            };
            sender.send(batch).unwrap();
            drop(sender);
            join(handle).unwrap_err()
        });
        assert_eq!(err.to_string(), "disk full");
    }

    #[test]
    fn pieces_are_written_in_order_through_short_writes() {
        let input: Vec<u8> = (0..200u8).collect();
        let own: Vec<u8> = (200..=255u8).collect();
        let mut pieces = Vec::new();
        let mut want = Vec::new();
        for i in 0..1500usize {
            let (from, to) = (i % 150, i % 150 + i % 7);
            if i % 3 == 0 {
                let (from, to) = (from % 50, from % 50 + i % 5);
                pieces.push(Piece::Own(from..to));
                want.extend_from_slice(&own[from..to]);
            } else {
                pieces.push(Piece::Input(from..to));
                want.extend_from_slice(&input[from..to]);
            }
        }
        let batch = Batch {
            chunk: Some(Chunk {
                buf: input,
                ..Chunk::default()
            }),
            own,
            pieces,
        };
        for max in [1, 5, 64, 4096] {
            let mut out = Trickle {
                got: Vec::new(),
                max,
            };
            write_batch(&mut out, &batch).unwrap();
            assert!(out.got == want, "max {max}");
        }
    }
}
