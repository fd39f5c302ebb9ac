//! The output side: whole lines, gathered into [`Batch`]es for the writer
//! thread. Lines copied from the input stay in the input chunk and are
//! named by range; lines the rewriter writes go to the batch's own buffer.
//! A batch is sent when the driver is done with its chunk, or once its
//! own buffer holds about 1 MiB.

use std::io;
use std::ops::Range;

use super::reader::Chunk;
use super::writer::{Batch, Piece, Sender};

/// Size of own bytes at which a batch is sent before its chunk is done.
const SEND_AT: usize = 1 << 20;

/// Writes lines; remembers an unterminated last line so that anything
/// written after it starts on a line of its own.
pub struct Out {
    batch: Batch,
    /// Start of the own bytes not yet in a piece.
    own_from: usize,
    sink: Sender,
    unterminated: bool,
}

impl Out {
    pub fn new(sink: Sender) -> Self {
        Out {
            batch: Batch {
                own: Vec::with_capacity(SEND_AT * 2),
                ..Batch::default()
            },
            own_from: 0,
            sink,
            unterminated: false,
        }
    }

    /// An input line exactly as read (LF-terminated if it was terminated).
    pub fn verbatim(&mut self, content: &[u8], terminated: bool) -> io::Result<()> {
        self.separate();
        self.batch.own.extend_from_slice(content);
        if terminated {
            self.batch.own.push(b'\n');
        } else {
            self.unterminated = true;
        }
        self.sent_if_full()
    }

    /// Whole lines of the input, `range` of the chunk the driver will hand
    /// to [`Out::chunk_done`] (each ends in LF), written from there: the
    /// chunk must not change before then.
    pub fn copy_input(&mut self, range: Range<usize>) -> io::Result<()> {
        if range.is_empty() {
            return Ok(());
        }
        self.separate();
        self.close_own();
        match self.batch.pieces.last_mut() {
            Some(Piece::Input(last)) if last.end == range.start => last.end = range.end,
            _ => self.batch.pieces.push(Piece::Input(range)),
        }
        Ok(())
    }

    /// A new line `key=value`.
    pub fn spec(&mut self, key: &str, value: &[u8]) -> io::Result<()> {
        self.separate();
        let own = &mut self.batch.own;
        own.extend_from_slice(key.as_bytes());
        own.push(b'=');
        own.extend_from_slice(value);
        own.push(b'\n');
        self.sent_if_full()
    }

    /// A new line `key=(id)` or `key=(id) name`.
    pub fn spec_id(&mut self, key: &str, id: u64, name: Option<&[u8]>) -> io::Result<()> {
        self.separate();
        let own = &mut self.batch.own;
        own.extend_from_slice(key.as_bytes());
        own.extend_from_slice(b"=(");
        crate::callgrind::format::position::push_decimal(own, id);
        own.push(b')');
        if let Some(name) = name {
            own.push(b' ');
            own.extend_from_slice(name);
        }
        own.push(b'\n');
        self.sent_if_full()
    }

    /// A new line that `compose` appends to the output itself.
    #[inline]
    pub fn composed(&mut self, compose: impl FnOnce(&mut Vec<u8>)) -> io::Result<()> {
        self.separate();
        compose(&mut self.batch.own);
        self.batch.own.push(b'\n');
        self.sent_if_full()
    }

    /// The driver is done with `chunk`: the batch that copies from it is
    /// sent with it (the writer gives it back to the reader).
    pub fn chunk_done(&mut self, chunk: Chunk) -> io::Result<()> {
        self.batch.chunk = Some(chunk);
        self.send()
    }

    #[inline]
    fn separate(&mut self) {
        if std::mem::take(&mut self.unterminated) {
            self.batch.own.push(b'\n');
        }
    }

    /// Ends the piece of own bytes written since the last piece.
    fn close_own(&mut self) {
        let end = self.batch.own.len();
        if end > self.own_from {
            self.batch.pieces.push(Piece::Own(self.own_from..end));
            self.own_from = end;
        }
    }

    /// Sends a batch whose own bytes reach [`SEND_AT`] when it copies
    /// nothing from the chunk in use (else its size is bounded by the
    /// chunk's: it is sent with the chunk).
    #[inline]
    fn sent_if_full(&mut self) -> io::Result<()> {
        let copies = |p: &Piece| matches!(p, Piece::Input(_));
        if self.batch.own.len() >= SEND_AT && !self.batch.pieces.iter().any(copies) {
            self.send()?;
        }
        Ok(())
    }

    fn send(&mut self) -> io::Result<()> {
        self.close_own();
        if self.batch.pieces.is_empty() && self.batch.chunk.is_none() {
            return Ok(());
        }
        self.batch = self.sink.send(std::mem::take(&mut self.batch))?;
        self.own_from = 0;
        Ok(())
    }

    /// Sends what is left.
    pub fn finish(mut self) -> io::Result<()> {
        self.send()
    }
}
