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

    /// Lines that `compose` appends to the output itself, each ending in
    /// LF; what `compose` returns.
    #[inline]
    pub fn compose_lines<R>(&mut self, compose: impl FnOnce(&mut Vec<u8>) -> R) -> io::Result<R> {
        self.separate();
        let result = compose(&mut self.batch.own);
        self.sent_if_full()?;
        Ok(result)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::callgrind::stream::writer;

    /// What `fill` writes through an [`Out`] and the writer thread, with
    /// `input` as the chunk it copies from.
    fn written(input: &[u8], fill: impl FnOnce(&mut Out) -> io::Result<()>) -> Vec<u8> {
        let mut got = Vec::new();
        let (spent, _back) = std::sync::mpsc::channel();
        std::thread::scope(|scope| {
            let (sink, handle) = writer::spawn(scope, &mut got, spent).unwrap();
            let mut out = Out::new(sink);
            fill(&mut out).unwrap();
            let chunk = Chunk {
                buf: input.to_vec(),
                len: input.len(),
                ..Chunk::default()
            };
            out.chunk_done(chunk).unwrap();
            // Lines after the last chunk go out at the finish.
            out.verbatim(b"after", true).unwrap();
            out.finish().unwrap();
            writer::join(handle).unwrap();
        });
        got
    }

    #[test]
    fn copied_and_own_lines_come_out_in_order() {
        let input = b"a\nbb\nccc\ndddd\n";
        let got = written(input, |out| {
            out.copy_input(0..2)?;
            // "bb" left out: the ranges on both sides stay apart.
            out.copy_input(5..9)?;
            out.verbatim(b"own", true)?;
            out.copy_input(9..14)?;
            out.copy_input(14..14)?;
            out.verbatim(b"cut", false)?;
            out.spec("fn", b"x")?;
            out.spec_id("cfn", 12, Some(b"f"))?;
            out.spec_id("fl", 3, None)?;
            out.composed(|own| own.extend_from_slice(b"totals: 5"))
        });
        let want = "a\nccc\nown\ndddd\ncut\nfn=x\ncfn=(12) f\nfl=(3)\ntotals: 5\nafter\n";
        assert_eq!(String::from_utf8(got).unwrap(), want);
    }

    #[test]
    fn adjacent_copies_are_one_piece_and_own_lines_wait_for_a_full_batch() {
        let (spent, _back) = std::sync::mpsc::channel();
        let mut sink = Vec::new();
        std::thread::scope(|scope| {
            let (sender, handle) = writer::spawn(scope, &mut sink, spent).unwrap();
            let mut out = Out::new(sender);
            out.copy_input(0..2).unwrap();
            out.copy_input(2..5).unwrap();
            out.copy_input(7..9).unwrap();
            let ranges = |out: &Out| -> Vec<Range<usize>> {
                let input = |p: &Piece| match p {
                    Piece::Input(r) => Some(r.clone()),
                    Piece::Own(_) => None,
                };
                out.batch.pieces.iter().filter_map(input).collect()
            };
            assert_eq!(ranges(&out), [0..5, 7..9]);
            let chunk = Chunk {
                buf: vec![b'\n'; 9],
                len: 9,
                ..Chunk::default()
            };
            out.chunk_done(chunk).unwrap();
            // Own lines alone are held up to SEND_AT bytes, then sent.
            let line = [b'x'; 99];
            for _ in 0..(SEND_AT / 100 - 1) {
                out.verbatim(&line, true).unwrap();
            }
            assert_eq!(out.batch.own.len(), (SEND_AT / 100 - 1) * 100);
            for _ in 0..200 {
                out.verbatim(&line, true).unwrap();
            }
            assert!(out.batch.own.len() < 200 * 100, "sent once full");
            out.finish().unwrap();
            writer::join(handle).unwrap();
        });
    }
}
