//! Reading perf map files (`/tmp/perf-PID.map`): `START SIZE NAME` lines.
//!
//! Lenient like the runtimes that write them: `0x` prefixes, upper case,
//! tabs, CRLF and names with spaces are accepted; lines that do not parse
//! are counted and skipped.

/// One map line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Start address.
    pub start: u64,
    /// Size in bytes (never 0).
    pub size: u64,
    /// The name, lossily decoded as UTF-8.
    pub name: String,
    /// 1-based line number in the map (file order = time order).
    pub line: usize,
}

/// A parsed map and what was skipped.
#[derive(Clone, Debug, Default)]
pub struct PerfMap {
    /// Usable entries, in file order.
    pub entries: Vec<Entry>,
    /// Line numbers of lines that did not parse (or had size 0).
    pub skipped: Vec<usize>,
    /// The last line had no newline (the writer may have died mid-line).
    pub unterminated_tail: bool,
}

/// Parses a whole map file.
pub fn parse(data: &[u8]) -> PerfMap {
    let mut map = PerfMap {
        unterminated_tail: !data.is_empty() && !data.ends_with(b"\n"),
        ..Default::default()
    };
    for (index, raw) in data.split(|&b| b == b'\n').enumerate() {
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match parse_line(line) {
            Some((start, size, name)) if size > 0 => {
                map.entries.push(Entry {
                    start,
                    size,
                    name,
                    line: index + 1,
                });
            }
            _ => map.skipped.push(index + 1),
        }
    }
    map
}

/// True when `data` looks like a perf map: its first line parses.
pub fn looks_like_perf_map(data: &[u8]) -> bool {
    let first = data.split(|&b| b == b'\n').next().unwrap_or_default();
    parse_line(first.strip_suffix(b"\r").unwrap_or(first)).is_some()
}

/// `7f3c2a1000 1a4 LazyCompile:~foo file.js:3` -> (start, size, name).
fn parse_line(line: &[u8]) -> Option<(u64, u64, String)> {
    let (start, size, rest) = fields(line)?;
    Some((start, size, name(rest)))
}

/// A line's address, size and name bytes, without decoding the name;
/// `None` where the line does not parse or its name is blank.
pub fn fields(line: &[u8]) -> Option<(u64, u64, &[u8])> {
    let (start, rest) = hex_field(line)?;
    let (size, rest) = hex_field(rest)?;
    let blank = match rest.is_ascii() {
        true => rest.iter().all(|&b| (b as char).is_whitespace()),
        false => name(rest).is_empty(),
    };
    (!blank).then_some((start, size, rest))
}

/// A name's bytes as text: lossily decoded, trailing blanks dropped.
pub fn name(raw: &[u8]) -> String {
    String::from_utf8_lossy(raw).trim_end().to_string()
}

/// A hex number (optional `0x`, at most 16 digits), then a run of blanks.
fn hex_field(s: &[u8]) -> Option<(u64, &[u8])> {
    let s = s
        .strip_prefix(b"0x")
        .or_else(|| s.strip_prefix(b"0X"))
        .unwrap_or(s);
    let mut value = 0u64;
    let mut end = 0;
    while let Some(digit) = s.get(end).and_then(|&b| char::from(b).to_digit(16)) {
        value = value.wrapping_shl(4) | u64::from(digit);
        end += 1;
    }
    if end == 0 || end > 16 {
        return None;
    }
    let rest = &s[end..];
    let blanks = rest
        .iter()
        .take_while(|b| matches!(b, b' ' | b'\t'))
        .count();
    (blanks > 0).then(|| (value, &rest[blanks..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_variants_runtimes_write() {
        let map = parse(b"95e6000 a09 find_method(x.nqp:1)\n0x10 0x20 JS:~f a.js:1:2\r\n00000000DEAD0000\t10\t[Tier1] A::B()\n");
        let names: Vec<_> = map
            .entries
            .iter()
            .map(|e| (e.start, e.size, e.name.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                (0x95e6000, 0xa09, "find_method(x.nqp:1)"),
                (0x10, 0x20, "JS:~f a.js:1:2"),
                (0xdead0000, 0x10, "[Tier1] A::B()")
            ]
        );
        assert!(map.skipped.is_empty());
    }

    #[test]
    fn counts_bad_lines_and_a_cut_tail() {
        let map = parse(b"zz 10 f\n10 0 empty\n10 20\n10 20 ok\n30 4 cut");
        assert_eq!(map.skipped, [1, 2, 3]);
        assert_eq!(map.entries.len(), 2);
        assert!(map.unterminated_tail);
    }

    #[test]
    fn hex_fields_read_every_digit_and_refuse_over_sixteen() {
        for value in [0u64, 1, 0xa, 0xF0, 0x7f3c_2a10_00ff, u64::MAX] {
            for text in [format!("{value:x} "), format!("0X{value:X}\t")] {
                assert_eq!(
                    hex_field(text.as_bytes()),
                    Some((value, &b""[..])),
                    "{text}"
                );
            }
        }
        assert_eq!(hex_field(b"10000000000000000 x"), None);
        assert_eq!(hex_field(b"0x 1"), None);
        assert_eq!(hex_field(b"12g 1"), None);
        assert_eq!(hex_field(b"12"), None);
    }
}
