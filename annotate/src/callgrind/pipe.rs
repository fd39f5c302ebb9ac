//! Writing on a second thread: the rewriter fills buffers of about 1 MiB
//! and a writer thread hands them to the output, so the time the system
//! spends writing overlaps the rewriting instead of adding to it.

use std::io::{self, Write};
use std::sync::mpsc::{channel, sync_channel, Receiver, SyncSender};
use std::thread::{Scope, ScopedJoinHandle};

/// Size at which a buffer is sent.
const BUF: usize = 1 << 20;
/// Buffers in flight between the threads (memory stays bounded).
const IN_FLIGHT: usize = 2;

/// The rewriter's end: a [`Write`] that sends full buffers.
pub struct ChannelWriter {
    buf: Vec<u8>,
    full: SyncSender<Vec<u8>>,
    empty: Receiver<Vec<u8>>,
}

impl ChannelWriter {
    fn send(&mut self) -> io::Result<()> {
        let next = self
            .empty
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(BUF * 2));
        let full = std::mem::replace(&mut self.buf, next);
        self.full
            .send(full)
            .map_err(|_| io::Error::other("the writer thread stopped"))
    }
}

impl Write for ChannelWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= BUF {
            self.send()?;
        }
        Ok(data.len())
    }

    fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        self.write(data).map(drop)
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        self.send()
    }
}

/// Starts a writer thread in `scope` writing to `out`. Its result is the
/// first write error, if any; it ends when the [`ChannelWriter`] is dropped.
pub fn spawn<'scope, W: Write + Send + 'scope>(
    scope: &'scope Scope<'scope, '_>,
    mut out: W,
) -> (ChannelWriter, ScopedJoinHandle<'scope, io::Result<()>>) {
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
    let writer = ChannelWriter {
        buf: Vec::with_capacity(BUF * 2),
        full: full_tx,
        empty: empty_rx,
    };
    (writer, handle)
}

/// Waits for the writer thread: its error if it had one.
pub fn join(handle: ScopedJoinHandle<'_, io::Result<()>>) -> io::Result<()> {
    handle
        .join()
        .unwrap_or_else(|_| Err(io::Error::other("the writer thread panicked")))
}
