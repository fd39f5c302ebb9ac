//! The output side: whole lines, appended to a buffer that is handed to
//! the writer thread ([`Sender`]) each time it holds about 1 MiB.

use std::io;

use super::pipe::Sender;

/// Size at which the buffer is sent.
const SEND_AT: usize = 1 << 20;

/// Writes lines; remembers an unterminated last line so that anything
/// written after it starts on a line of its own.
pub struct Out {
    buf: Vec<u8>,
    sink: Sender,
    unterminated: bool,
}

impl Out {
    pub fn new(sink: Sender) -> Self {
        Out {
            buf: Vec::with_capacity(SEND_AT * 2),
            sink,
            unterminated: false,
        }
    }

    /// An input line exactly as read (LF-terminated if it was terminated).
    pub fn verbatim(&mut self, content: &[u8], terminated: bool) -> io::Result<()> {
        self.separate();
        self.buf.extend_from_slice(content);
        if terminated {
            self.buf.push(b'\n');
        } else {
            self.unterminated = true;
        }
        self.sent_if_full()
    }

    /// Whole lines copied from the input in one piece (each ends in LF).
    pub fn copy_run(&mut self, lines: &[u8]) -> io::Result<()> {
        if lines.is_empty() {
            return Ok(());
        }
        self.separate();
        self.buf.extend_from_slice(lines);
        self.sent_if_full()
    }

    /// A new line `key=value`.
    pub fn spec(&mut self, key: &str, value: &[u8]) -> io::Result<()> {
        self.separate();
        self.buf.extend_from_slice(key.as_bytes());
        self.buf.push(b'=');
        self.buf.extend_from_slice(value);
        self.buf.push(b'\n');
        self.sent_if_full()
    }

    /// A new line `key=(id)` or `key=(id) name`.
    pub fn spec_id(&mut self, key: &str, id: u64, name: Option<&[u8]>) -> io::Result<()> {
        self.separate();
        self.buf.extend_from_slice(key.as_bytes());
        self.buf.extend_from_slice(b"=(");
        super::position::push_decimal(&mut self.buf, id);
        self.buf.push(b')');
        if let Some(name) = name {
            self.buf.push(b' ');
            self.buf.extend_from_slice(name);
        }
        self.buf.push(b'\n');
        self.sent_if_full()
    }

    /// A new line that `compose` appends to the output itself.
    pub fn composed(&mut self, compose: impl FnOnce(&mut Vec<u8>)) -> io::Result<()> {
        self.separate();
        compose(&mut self.buf);
        self.buf.push(b'\n');
        self.sent_if_full()
    }

    fn separate(&mut self) {
        if std::mem::take(&mut self.unterminated) {
            self.buf.push(b'\n');
        }
    }

    fn sent_if_full(&mut self) -> io::Result<()> {
        if self.buf.len() >= SEND_AT {
            self.buf = self.sink.send(std::mem::take(&mut self.buf))?;
        }
        Ok(())
    }

    /// Sends what is left.
    pub fn finish(mut self) -> io::Result<()> {
        if !self.buf.is_empty() {
            self.sink.send(std::mem::take(&mut self.buf))?;
        }
        Ok(())
    }
}
