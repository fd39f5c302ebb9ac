//! Every code address a profile names, read ahead of its rewrite where
//! its symbol files are far larger than it (see `symbols::touched`): each
//! position line's instruction address (positions decoded as the rewrite
//! decodes them), each call and jump target's, and each address in a
//! name (callgrind names code without symbols `0x…`, callers after `'`).
//! The rewrite looks up no address that is not among these.

use std::fs::File;

use super::format::line::{self, classify, CountLine, Key, Line};
use super::format::position::{Column, Columns, Pos};
use crate::symbols::Touched;

/// The addresses `profiles` name, added to `touched`; `None` where a line
/// does not read as the rewrite would read it (then nothing may be left
/// out), or a profile cannot be read.
pub fn add(profiles: &[&File], mut touched: Touched) -> Option<Touched> {
    for profile in profiles {
        let mut scan = Scan::default();
        let mut ok = true;
        let each = |text: &[u8], _| ok = ok && scan.line(text, &mut touched).is_some();
        crate::newlines::each_line(profile, 0..u64::MAX, each).ok()?;
        if !ok {
            return None;
        }
    }
    Some(touched)
}

/// What the lines so far left: the columns and position of the part.
#[derive(Default)]
struct Scan {
    cols: Columns,
    pos: Pos,
    events_seen: bool,
}

impl Scan {
    /// Reads one line (a CR before its LF dropped, as the rewrite drops
    /// it); `None` where it does not read.
    fn line(&mut self, text: &[u8], touched: &mut Touched) -> Option<()> {
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        match classify(text).ok()? {
            Line::Position(text) => {
                self.pos = self.cols.decode(text, &self.pos).ok()?.0;
                self.note(self.pos, touched);
            }
            Line::Spec { key, value } => self.spec(key, text, value, touched)?,
            Line::Header { key, value } => self.header(key, value)?,
            Line::Blank | Line::Comment => {}
        }
        Some(())
    }

    /// A part starts afresh as the rewrite's does (see `header.rs`).
    fn header(&mut self, key: &[u8], value: &[u8]) -> Option<()> {
        if self.events_seen && line::starts_part(key) {
            *self = Scan::default();
        }
        match key {
            b"positions" => self.cols = Columns::parse(value).ok()?,
            b"events" => self.events_seen = true,
            _ => {}
        }
        Some(())
    }

    /// A call's or jump's target (the position does not move), or the
    /// addresses in any other spec's value.
    fn spec(&mut self, key: Key, raw: &[u8], value: &[u8], touched: &mut Touched) -> Option<()> {
        let name = match key {
            Key::Calls => "calls",
            Key::Jump => "jump",
            Key::Jcnd => "jcnd",
            _ => {
                hex_numbers(value, |addr| touched.insert(addr));
                return Some(());
            }
        };
        let target = line::trim_start(CountLine::parse(name, raw).ok()?.target);
        let (target, _) = self.cols.decode(target, &self.pos).ok()?;
        self.note(target, touched);
        Some(())
    }

    fn note(&self, pos: Pos, touched: &mut Touched) {
        if let Some(i) = self.cols.index(Column::Instr) {
            touched.insert(pos[i]);
        }
    }
}

/// Gives `each` the value of every `0x` and the hex digits after it in
/// `text` (up to 16 of them).
fn hex_numbers(text: &[u8], mut each: impl FnMut(u64)) {
    for at in memchr::memmem::find_iter(text, b"0x") {
        let digits = &text[at + 2..];
        let len = digits
            .iter()
            .take(16)
            .take_while(|b| b.is_ascii_hexdigit())
            .count();
        let value = digits[..len]
            .iter()
            .fold(0u64, |v, &b| v << 4 | u64::from(hex_value(b)));
        if len > 0 {
            each(value);
        }
    }
}

fn hex_value(b: u8) -> u8 {
    match b {
        b'0'..=b'9' => b - b'0',
        b'a'..=b'f' => b - b'a' + 10,
        _ => b - b'A' + 10,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pages named by `profile`, as the addresses among `asked` that
    /// the result keeps.
    fn kept(profile: &[u8], asked: &[u64]) -> Option<Vec<u64>> {
        let file = crate::output::file_holding(profile).unwrap();
        let touched = add(&[&file], Touched::default())?;
        Some(
            asked
                .iter()
                .copied()
                .filter(|&a| touched.keeps(a, 1))
                .collect(),
        )
    }

    #[test]
    fn names_positions_targets_and_names_with_their_callers() {
        let profile = b"# callgrind format\nversion: 1\npositions: instr line\nevents: Ir\n\n\
            ob=???\nfn=(1) 0x0000000000010000'2'0x0000000000020000'main\n\
            0x30000 1 5\n+8192 2 1\n* * 1\n\
            cfn=(1)\ncalls=2 +20480 0\n-4096 3 4\n\
            jump=1 +131072 0\njcnd=1/2 +196608 0\n\
            fn=(2)\n+65536 1 1\n";
        let asked = [
            0x10000, 0x20000, 0x30000, 0x32000, 0x37000, 0x31000, 0x51000, 0x61000, 0x41000,
            // Named nowhere:
            0x40000, 0x50000, 0x60000,
        ];
        let kept_lf = kept(profile, &asked).unwrap();
        assert_eq!(kept_lf, &asked[..9]);
        // With CRLF line ends (a blank line among them).
        let crlf: Vec<u8> = profile
            .iter()
            .flat_map(|&b| match b {
                b'\n' => vec![b'\r', b'\n'],
                b => vec![b],
            })
            .collect();
        assert_eq!(kept(&crlf, &asked), Some(kept_lf));
    }

    #[test]
    fn a_part_starts_from_position_zero_with_its_own_columns() {
        // (The last line has no line end. Part 1's line, 0x70000, would
        // put part 2's instruction at 0x71000 were the position kept.)
        let profile = b"positions: instr line\nevents: Ir\nfn=a\n0x50000 458752 1\n\
            part: 2\npositions: line instr\nevents: Ir\nfn=a\n3 +4096 1";
        let kept = kept(profile, &[0x50000, 0x51000, 0x1000, 0x71000]).unwrap();
        assert_eq!(kept, [0x50000, 0x1000]);
    }

    #[test]
    fn a_line_the_rewrite_would_not_read_leaves_nothing_out() {
        for bad in [
            &b"events: Ir\nzz 1\n"[..],
            b"events: Ir\n\tfn=a\n",
            b"calls=x 0x1\n",
        ] {
            assert_eq!(kept(bad, &[0x10]), None, "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn hex_numbers_are_read_after_each_0x() {
        let mut seen = Vec::new();
        hex_numbers(b"0x1f'0xABC 0x 0x00000000000000001x 0x", |v| seen.push(v));
        assert_eq!(seen, [0x1f, 0xabc, 0]);
    }
}
