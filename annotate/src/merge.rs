//! `--merge`: the annotated parts of one process in one single-part
//! profile. Callgrind writes a part per dump (jit-client's epochs), and
//! KCachegrind loads a run's parts together, but callgrind_annotate reads
//! one part of one file.
//!
//! The parts are joined in the order given (dump order): the first
//! part's header, every part's body, and `totals:` summed over them. Every
//! position (cost lines, call and jump targets) is written absolute: after
//! a dump callgrind 3.19 writes the next part's first positions relative
//! to the part before, and joined they mean what callgrind meant.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;

use anyhow::{bail, Context, Result};

use crate::callgrind::format::pos::Pos;
use crate::callgrind::format::position::{add_costs, Columns};

/// Writes the parts at `parts` (annotated profiles) joined into `out`, in
/// the order of their `part:` and `thread:` numbers.
pub fn write(parts: &[&Path], out: &File) -> Result<()> {
    let mut ordered: Vec<((u64, u64), &Path)> = Vec::new();
    for &path in parts {
        let file = File::open(path).with_context(|| format!("cannot read '{}'", path.display()))?;
        ordered.push((numbers(BufReader::new(file)), path));
    }
    ordered.sort_by_key(|(n, _)| *n);
    let mut joined = Joined::new(BufWriter::new(out));
    for (i, (_, path)) in ordered.iter().enumerate() {
        let file = File::open(path).with_context(|| format!("cannot read '{}'", path.display()))?;
        joined
            .part(BufReader::new(file), i == 0)
            .with_context(|| format!("cannot merge '{}'", path.display()))?;
    }
    joined.finish()
}

/// The joined profile being written.
struct Joined<W: Write> {
    out: W,
    cols: Columns,
    /// The reader's position, carried from part to part.
    state: Pos,
    /// `events:` of the first part: every part must have the same.
    events: Option<String>,
    totals: Vec<u64>,
    line: Vec<u8>,
}

impl<W: Write> Joined<W> {
    fn new(out: W) -> Self {
        Joined {
            out,
            cols: Columns::default(),
            state: Pos::default(),
            events: None,
            totals: Vec::new(),
            line: Vec::new(),
        }
    }

    /// Copies one part: its header only if it is the `first`.
    fn part(&mut self, mut input: impl BufRead, first: bool) -> Result<()> {
        let mut in_body = false;
        let mut number = 0;
        let mut text = String::new();
        loop {
            text.clear();
            if input.read_line(&mut text)? == 0 {
                return Ok(());
            }
            number += 1;
            let line = text.trim_end_matches(['\n', '\r']);
            self.line(line, first, &mut in_body)
                .with_context(|| format!("line {number}"))?;
        }
    }

    fn line(&mut self, line: &str, first: bool, in_body: &mut bool) -> Result<()> {
        if let Some((key, value)) = header(line) {
            match key {
                "totals" | "summary" => {
                    if key == "totals" {
                        add_costs(&mut self.totals, value.as_bytes())
                            .map_err(|e| anyhow::anyhow!("totals: {e}"))?;
                    }
                    return Ok(());
                }
                "events" => self.events(value)?,
                "positions" => {
                    self.cols = Columns::parse(value.as_bytes()).map_err(anyhow::Error::msg)?
                }
                _ => {}
            }
            // A part's trigger and time range are not the whole's.
            let of_a_part = matches!(key, "part" | "thread")
                || key == "desc"
                    && (value.starts_with("Trigger:") || value.starts_with("Timerange:"));
            if first && !*in_body && !of_a_part {
                writeln!(self.out, "{line}")?;
            }
            return Ok(());
        }
        if line.starts_with('#') {
            if first && !*in_body {
                writeln!(self.out, "{line}")?;
            }
            return Ok(());
        }
        *in_body |= !line.is_empty();
        match line.as_bytes().first() {
            Some(b'0'..=b'9' | b'+' | b'-' | b'*') => self.position(line),
            _ if line.starts_with("calls=")
                || line.starts_with("jump=")
                || line.starts_with("jcnd=") =>
            {
                self.transfer(line)
            }
            _ => Ok(writeln!(self.out, "{line}")?),
        }
    }

    fn events(&mut self, value: &str) -> Result<()> {
        let value = value.trim().to_string();
        match &self.events {
            Some(events) if *events != value => {
                bail!("its events ({value}) are not the first part's ({events})")
            }
            _ => self.events = Some(value),
        }
        Ok(())
    }

    /// A cost line, its position written absolute.
    fn position(&mut self, line: &str) -> Result<()> {
        let (pos, costs) = self.decode(line)?;
        self.state = pos;
        self.write_position("", &pos, costs.as_bytes())
    }

    /// A position against the carried state. Wrapping where a relative
    /// value goes below zero (callgrind 3.19 writes such line numbers after
    /// a dump); written as 0 then.
    fn decode<'a>(&self, text: &'a str) -> Result<(Pos, &'a str)> {
        let mut pos = self.state;
        let mut rest = text.trim_start();
        for value in pos.iter_mut().take(self.cols.len()) {
            let (token, tail) = rest.split_once([' ', '\t']).unwrap_or((rest, ""));
            *value = match token.as_bytes().first() {
                Some(b'*') if token.len() == 1 => *value,
                Some(b'+') => value.wrapping_add(number(&token[1..])?),
                Some(b'-') => value.wrapping_sub(number(&token[1..])?),
                _ => number(token)?,
            };
            rest = tail.trim_start();
        }
        Ok((pos, rest))
    }

    /// `calls=N TARGET`, `jump=N TARGET`, `jcnd=E/N TARGET`: the target
    /// written absolute (it does not move the position).
    fn transfer(&mut self, line: &str) -> Result<()> {
        let (key, rest) = line.split_once('=').unwrap_or((line, ""));
        let (count, target) = rest
            .trim_start()
            .split_once([' ', '\t'])
            .unwrap_or((rest, ""));
        let (pos, tail) = self.decode(target)?;
        self.write_position(&format!("{key}={count} "), &pos, tail.as_bytes())
    }

    fn write_position(&mut self, prefix: &str, pos: &Pos, rest: &[u8]) -> Result<()> {
        self.line.clear();
        self.line.extend_from_slice(prefix.as_bytes());
        let below_zero = |v: u64| if v > i64::MAX as u64 { 0 } else { v };
        self.cols
            .encode(&mut self.line, &pos.map(below_zero), &Pos::default(), true);
        if !rest.is_empty() {
            self.line.push(b' ');
            self.line.extend_from_slice(rest.trim_ascii_start());
        }
        self.line.push(b'\n');
        Ok(self.out.write_all(&self.line)?)
    }

    fn finish(mut self) -> Result<()> {
        let totals: Vec<String> = self.totals.iter().map(u64::to_string).collect();
        writeln!(self.out, "\ntotals: {}", totals.join(" "))?;
        write!(self.out, "\n{}", crate::input::OUTPUT_MARK)?;
        Ok(self.out.flush()?)
    }
}

/// `key: value` header lines (a lowercase key, a colon).
fn header(line: &str) -> Option<(&str, &str)> {
    let (key, value) = line.split_once(':')?;
    key.bytes()
        .all(|b| b.is_ascii_lowercase())
        .then_some((key, value.trim_start()))
        .filter(|(k, _)| !k.is_empty())
}

/// A position value: `0x` hex or decimal.
fn number(token: &str) -> Result<u64> {
    let parsed = match token.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => token.parse(),
    };
    parsed.with_context(|| format!("bad position '{token}'"))
}

/// A profile's `part:` and `thread:` numbers (1 where not given), from its
/// header.
fn numbers(input: impl BufRead) -> (u64, u64) {
    let (mut part, mut thread) = (1, 1);
    for line in input.lines().take(64).map_while(Result::ok) {
        match header(&line) {
            Some(("part", v)) => part = v.trim().parse().unwrap_or(1),
            Some(("thread", v)) => thread = v.trim().parse().unwrap_or(1),
            Some(("events", _)) => break,
            _ => {}
        }
    }
    (part, thread)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn joined(parts: &[&str]) -> Result<String> {
        let mut out = Vec::new();
        let mut joined = Joined::new(&mut out);
        for (i, part) in parts.iter().enumerate() {
            joined.part(part.as_bytes(), i == 0)?;
        }
        joined.finish()?;
        Ok(String::from_utf8(out).unwrap())
    }

    const FIRST: &str = "# callgrind format\nversion: 1\npart: 1\n\ndesc: I1 cache: 32768 B\n\
        desc: Trigger: Client Request: x\ndesc: Timerange: Basic block 0 - 9\n\
        positions: instr line\nevents: Ir Dr\nsummary: 10 1\n\nfn=(1) a\n0x10 5 4 1\n+2 -1 6\n\
        cfn=(2) b\ncalls=1 0x40 +3\n* * 9\n\ntotals: 10 1\n# annotated by callgrind-jit\n";
    const SECOND: &str = "# callgrind format\nversion: 1\npart: 2\n\
        positions: instr line\nevents: Ir Dr\nsummary: 70\n\nfn=(1) b\n0x40 -2 7\njump=2 +4 *\n\
        +1 * 0\n\ntotals: 7\n";

    #[test]
    fn parts_join_into_one_with_every_position_absolute_and_the_totals_summed() {
        let text = joined(&[FIRST, SECOND]).unwrap();
        let want = "# callgrind format\nversion: 1\n\ndesc: I1 cache: 32768 B\n\
            positions: instr line\nevents: Ir Dr\n\n\
            fn=(1) a\n0x10 5 4 1\n0x12 4 6\ncfn=(2) b\ncalls=1 0x40 7\n0x12 4 9\n\n\n\
            fn=(1) b\n0x40 2 7\njump=2 0x44 2\n0x41 2 0\n\n\ntotals: 17 1\n\n# annotated by callgrind-jit\n";
        assert_eq!(text, want);
    }

    #[test]
    fn parts_of_other_events_are_refused_at_their_line() {
        let other = SECOND.replace("events: Ir Dr", "events: Ir");
        let err = joined(&[FIRST, &other]).unwrap_err();
        let said = format!("{err:#}");
        assert!(
            said.contains("line 5: its events (Ir) are not the first part's (Ir Dr)"),
            "{said}"
        );
        let bad = SECOND.replace("0x40 -2 7", "0x40 *2 7");
        let err = joined(&[FIRST, &bad]).unwrap_err();
        assert!(
            format!("{err:#}").contains("line 9: bad position '*2'"),
            "{err:#}"
        );
    }

    #[test]
    fn files_are_joined_in_part_order() {
        // Removed when dropped, a failed assertion's unwinding included.
        let dir = tempfile::tempdir().unwrap();
        let (one, two) = (dir.path().join("p.1"), dir.path().join("p"));
        std::fs::write(&one, FIRST).unwrap();
        std::fs::write(&two, SECOND).unwrap();
        let out = dir.path().join("joined");
        write(
            &[two.as_path(), one.as_path()],
            &File::create(&out).unwrap(),
        )
        .unwrap();
        let text = std::fs::read_to_string(&out).unwrap();
        assert_eq!(text, joined(&[FIRST, SECOND]).unwrap());
    }

    #[test]
    fn parts_are_ordered_by_their_part_and_thread_numbers() {
        assert_eq!(numbers(SECOND.as_bytes()), (2, 1));
        assert_eq!(
            numbers("thread: 3\npart: 4\nevents: Ir\npart: 9\n".as_bytes()),
            (4, 3)
        );
        assert_eq!(numbers("events: Ir\n".as_bytes()), (1, 1));
    }

    #[test]
    fn a_line_below_zero_is_written_as_zero() {
        let text = joined(&[SECOND.replace("0x40 -2 7", "0x40 -9 7").as_str()]).unwrap();
        assert!(text.contains("\n0x40 0 7\n"), "{text}");
    }
}
