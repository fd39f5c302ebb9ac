//! A position the lazy pass forgot, found again without starting over.
//!
//! The lazy pass copies native position lines without decoding them, so
//! the input's position is then unknown; callgrind writes each function's
//! first position absolutely, so it is seldom needed again before it is
//! known. Where a line needs it anyway (a function starting with a
//! relative position, not callgrind's own layout), the lines between the
//! last known position and that line are read again from the input and
//! their positions decoded: each stretch of the input is read back at most
//! once, and the output goes on where it is.

use std::ops::Range;

use super::{Fail, Res, Rewriter};
use crate::callgrind::format::line::starts_position;
use crate::callgrind::format::position::{Columns, Pos};
use crate::callgrind::stream::shared::ReadAgain;

/// Bytes read back at a time.
const WINDOW: u64 = 256 << 10;

/// The input to read back from, and where the line being handled starts.
pub(in crate::callgrind) struct Recall<'a> {
    input: &'a dyn ReadAgain,
    /// The input offset of the line the rewriter is handling (set by the
    /// driver before it hands over a line or copies a run).
    pub line_at: u64,
}

impl<'a> Recall<'a> {
    pub fn new(input: &'a dyn ReadAgain) -> Self {
        Recall { input, line_at: 0 }
    }
}

impl Rewriter<'_> {
    /// The current line's position lines are copied undecoded from here:
    /// the input's position is forgotten, and where it was last known is
    /// kept.
    #[inline]
    pub(in crate::callgrind) fn forget_pos(&mut self) {
        self.reader.forget_pos(self.recall.line_at);
    }

    /// Decodes relative line (or target) `text` against the position read
    /// back (see [`recall_pos`](Self::recall_pos)).
    pub(super) fn decode_recalled<'a>(&mut self, text: &'a [u8]) -> Res<(Pos, &'a [u8])> {
        let state = self.recall_pos()?;
        Ok(self.cols.decode(text, &state)?)
    }

    /// The input's position before the current line, where the lazy pass
    /// forgot it: the position lines since it was last known decoded
    /// again, read back from the input.
    fn recall_pos(&mut self) -> Res<Pos> {
        let from = self.reader.forgotten_at();
        let to = self.recall.line_at;
        let mut pos = *self.reader.last_pos();
        let input = self.recall.input;
        decode_between(input, &self.cols, from..to, &mut pos, WINDOW).map_err(|e| match e {
            Fail::Line(e) => Fail::Line(format!(
                "cannot place a relative position: reading back from byte {from}: {e}"
            )),
            other => other,
        })?;
        self.stats.read_back.times += 1;
        self.stats.read_back.bytes += to - from;
        self.reader.set_pos(pos);
        // The output's reader follows the input's while they are synced.
        match self.writer.synced {
            true => self.writer.pos = pos,
            false => self.writer.absolute_next = true,
        }
        Ok(pos)
    }
}

/// Applies the position lines of the input's bytes `range` (whole lines)
/// to `pos`, `window` bytes at a time.
fn decode_between(
    input: &dyn ReadAgain,
    cols: &Columns,
    range: Range<u64>,
    pos: &mut Pos,
    window: u64,
) -> Res {
    let mut buf = Vec::new();
    let mut at = range.start;
    while at < range.end {
        let len = buf.len() as u64;
        input.read_again(at..(at + window).min(range.end), &mut buf)?;
        let read = buf.len() as u64 - len;
        if read == 0 {
            return Err("the input ends before the line being read".into());
        }
        at += read;
        let whole = match at == range.end {
            true => buf.len(),
            false => buf.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1),
        };
        for line in buf[..whole].split(|&b| b == b'\n') {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if starts_position(line) {
                *pos = cols.decode(line, pos)?.0;
            }
        }
        buf.drain(..whole);
    }
    Ok(())
}

/// Call and jump targets read back where the lazy pass forgot the input's
/// state (placed without reading back where it can: `call.rs`).
impl Rewriter<'_> {
    /// A call or jump target relative to the input's state (targets never
    /// move the state), read back where the lazy pass forgot that state.
    pub(super) fn decode_target(&mut self, text: &[u8]) -> Res<Pos> {
        match self.placed_target(text)? {
            Some(pos) => Ok(pos),
            None => Ok(self.decode_recalled(text)?.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::callgrind::stream::shared::Shared;
    use std::io::Cursor;

    const LINES: &str = "fn=a\n0x10 3 1\n+1 * 1\r\nfn=b\n+2 -1 2\n\n* +4 3\n-1 * 4\nfn=c\n";

    fn decoded(range: Range<u64>, window: u64) -> Result<Pos, String> {
        let shared = Shared::new(Cursor::new(LINES.as_bytes().to_vec())).unwrap();
        let cols = Columns::parse(b"instr line").unwrap();
        let mut pos = [7, 7, 0];
        match decode_between(&shared, &cols, range, &mut pos, window) {
            Ok(()) => Ok(pos),
            Err(Fail::Line(e) | Fail::Symbol(e)) => Err(e),
            Err(Fail::Before(earlier)) => Err(earlier.0),
            Err(Fail::Io(e)) => Err(e.to_string()),
        }
    }

    #[test]
    fn every_window_size_gives_the_positions_of_every_line() {
        let end = LINES.len() as u64;
        for window in 1..=end + 1 {
            assert_eq!(decoded(0..end, window), Ok([0x12, 6, 0]), "window {window}");
        }
        // From the second line on: relative to the position given.
        let second = LINES.find("+1").unwrap() as u64;
        assert_eq!(decoded(second..end, 5), Ok([7 + 2, 7 + 3, 0]));
        assert_eq!(decoded(second..second, 5), Ok([7, 7, 0]), "nothing between");
    }

    #[test]
    fn a_bad_line_or_a_short_input_is_an_error() {
        let end = LINES.len() as u64;
        assert!(decoded(0..end + 10, 4).unwrap_err().contains("ends before"));
        let shared = Shared::new(Cursor::new(b"+x 1\n".to_vec())).unwrap();
        let cols = Columns::parse(b"instr").unwrap();
        let mut pos = [0; 3];
        assert!(decode_between(&shared, &cols, 0..5, &mut pos, 3).is_err());
    }
}
