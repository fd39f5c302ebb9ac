//! Writing on a second thread: the rewriter fills buffers of about 1 MiB
//! and a writer thread hands them to the output, so the time the system
//! spends writing overlaps the rewriting instead of adding to it.

use std::io::{self, Write};
use std::sync::mpsc::{channel, sync_channel, Receiver, SyncSender};
use std::thread::{Scope, ScopedJoinHandle};

/// Buffers in flight between the threads (memory stays bounded).
const IN_FLIGHT: usize = 2;

/// The rewriter's end: sends full buffers, gets written ones back.
pub struct Sender {
    full: SyncSender<Vec<u8>>,
    empty: Receiver<Vec<u8>>,
}

impl Sender {
    /// Queues `buf` for writing; returns an empty buffer to fill next.
    pub fn send(&mut self, buf: Vec<u8>) -> io::Result<Vec<u8>> {
        let capacity = buf.capacity();
        self.full
            .send(buf)
            .map_err(|_| io::Error::other("the writer thread stopped"))?;
        Ok(self
            .empty
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(capacity)))
    }
}

/// Starts a writer thread in `scope` writing to `out`. Its result is the
/// first write error, if any; it ends when the [`Sender`] is dropped.
pub fn spawn<'scope, W: Write + Send + 'scope>(
    scope: &'scope Scope<'scope, '_>,
    mut out: W,
) -> (Sender, ScopedJoinHandle<'scope, io::Result<()>>) {
    let (full_tx, full_rx) = sync_channel::<Vec<u8>>(IN_FLIGHT);
    let (empty_tx, empty_rx) = channel();
    let handle = scope.spawn(move || {
        for mut buf in full_rx {
            out.write_all(&buf)?;
            buf.clear();
            let _ = empty_tx.send(buf);
        }
        out.flush()
    });
    let sender = Sender {
        full: full_tx,
        empty: empty_rx,
    };
    (sender, handle)
}

/// Waits for the writer thread: its error if it had one.
pub fn join(handle: ScopedJoinHandle<'_, io::Result<()>>) -> io::Result<()> {
    handle
        .join()
        .unwrap_or_else(|_| Err(io::Error::other("the writer thread panicked")))
}
