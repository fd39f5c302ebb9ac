//! The output side: whole lines, written in order.

use std::io::{self, Write};

/// Writes lines; remembers an unterminated last line so that anything
/// written after it starts on a line of its own.
pub struct Out<W: Write> {
    w: W,
    unterminated: bool,
}

impl<W: Write> Out<W> {
    pub fn new(w: W) -> Self {
        Out {
            w,
            unterminated: false,
        }
    }

    /// An input line exactly as read (LF-terminated if it was terminated).
    pub fn verbatim(&mut self, content: &[u8], terminated: bool) -> io::Result<()> {
        self.separate()?;
        self.w.write_all(content)?;
        if terminated {
            self.w.write_all(b"\n")
        } else {
            self.unterminated = true;
            Ok(())
        }
    }

    /// Whole lines copied from the input in one piece (each ends in LF).
    pub fn copy_run(&mut self, lines: &[u8]) -> io::Result<()> {
        if lines.is_empty() {
            return Ok(());
        }
        self.separate()?;
        self.w.write_all(lines)
    }

    /// A new line `key=value`.
    pub fn spec(&mut self, key: &str, value: &[u8]) -> io::Result<()> {
        self.separate()?;
        self.w.write_all(key.as_bytes())?;
        self.w.write_all(b"=")?;
        self.w.write_all(value)?;
        self.w.write_all(b"\n")
    }

    /// A new line `key=(id)` or `key=(id) name`.
    pub fn spec_id(&mut self, key: &str, id: u64, name: Option<&[u8]>) -> io::Result<()> {
        self.separate()?;
        self.w.write_all(key.as_bytes())?;
        self.w.write_all(b"=(")?;
        let mut digits = [0u8; 20];
        self.w
            .write_all(super::position::decimal(&mut digits, id))?;
        self.w.write_all(b")")?;
        if let Some(name) = name {
            self.w.write_all(b" ")?;
            self.w.write_all(name)?;
        }
        self.w.write_all(b"\n")
    }

    /// A composed line (the caller's buffer, without its newline).
    pub fn raw_line(&mut self, line: &[u8]) -> io::Result<()> {
        self.separate()?;
        self.w.write_all(line)?;
        self.w.write_all(b"\n")
    }

    fn separate(&mut self) -> io::Result<()> {
        if std::mem::take(&mut self.unterminated) {
            self.w.write_all(b"\n")?;
        }
        Ok(())
    }

    /// Flushes and returns the writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.w.flush()?;
        Ok(self.w)
    }
}
