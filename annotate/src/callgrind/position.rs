//! Position columns (`positions: instr line`): decoding with the readers'
//! model (every position line moves the state, call and jump targets do
//! not) and encoding the way callgrind writes them.

use super::line::{parse_u64, LineError};

/// Most columns a `positions:` line may list.
pub const MAX_COLUMNS: usize = 3;

/// Absolute values of all columns.
pub type Pos = [u64; MAX_COLUMNS];

/// What a column holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Column {
    /// Instruction address (written in hex when absolute).
    Instr,
    /// Source line.
    Line,
    /// Anything else (kept, never changed).
    Other,
}

/// The columns of a part, from its `positions:` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Columns {
    kinds: Vec<Column>,
    /// Where the instruction and line columns are (asked per line).
    instr: Option<usize>,
    line: Option<usize>,
}

/// The address, line and costs of a position line of the columns
/// `instr line` against `state`, in the form callgrind writes: `*`, `+N`,
/// `-N` or a number (`0x` hex up to 16 digits, decimal up to 19) in each,
/// one space after each. `None` for anything else: then
/// [`Columns::decode`] reads it (with the same answer where this has one).
#[inline]
pub fn instr_line<'a>(text: &'a [u8], state: &Pos) -> Option<(u64, u64, &'a [u8])> {
    two_columns::<false>(text, state)
}

/// [`instr_line`] where no state is known: only absolute columns (each
/// starting with a digit) are read, as [`Columns::decode_absolute`] does.
#[inline]
pub fn absolute_instr_line(text: &[u8]) -> Option<(u64, u64, &[u8])> {
    two_columns::<true>(text, &[0; MAX_COLUMNS])
}

/// [`instr_line`]; with `ABSOLUTE`, relative columns are refused.
#[inline(always)]
fn two_columns<'a, const ABSOLUTE: bool>(
    text: &'a [u8],
    state: &Pos,
) -> Option<(u64, u64, &'a [u8])> {
    let column = |text: &'a [u8], prev| {
        if ABSOLUTE && !matches!(text, [b'0'..=b'9', ..]) {
            return None;
        }
        quick_column(text, prev)
    };
    let (addr, rest) = column(text, state[0])?;
    let (line, costs) = column(rest, state[1])?;
    let blank_next = matches!(costs.first(), Some(b' ' | b'\t'));
    (!blank_next).then_some((addr, line, costs))
}

/// One column of [`instr_line`] and what follows its space.
#[inline(always)]
fn quick_column(text: &[u8], prev: u64) -> Option<(u64, &[u8])> {
    let (&first, after) = text.split_first()?;
    let (value, rest) = match first {
        b'*' => (prev, after),
        b'+' => {
            let (n, rest) = quick_decimal(after)?;
            (prev.checked_add(n)?, rest)
        }
        b'-' => {
            let (n, rest) = quick_decimal(after)?;
            (prev.checked_sub(n)?, rest)
        }
        b'0' if after.first() == Some(&b'x') => quick_hex(&after[1..])?,
        _ => quick_decimal(text)?,
    };
    match rest.split_first() {
        None => Some((value, rest)),
        Some((b' ', costs)) => Some((value, costs)),
        Some(_) => None,
    }
}

/// 1 to 19 decimal digits at the start of `text`, and the rest.
#[inline(always)]
fn quick_decimal(text: &[u8]) -> Option<(u64, &[u8])> {
    let n = text
        .iter()
        .take(20)
        .take_while(|b| b.is_ascii_digit())
        .count();
    if n == 0 || n > 19 {
        return None;
    }
    let value = text[..n]
        .iter()
        .fold(0u64, |v, &b| v * 10 + u64::from(b - b'0'));
    Some((value, &text[n..]))
}

/// 1 to 16 hex digits at the start of `text`, and the rest.
#[inline(always)]
fn quick_hex(text: &[u8]) -> Option<(u64, &[u8])> {
    let mut value = 0u64;
    let mut n = 0;
    while let Some(digit) = text.get(n).and_then(|&b| hex_digit(b)) {
        value = value.wrapping_shl(4) | u64::from(digit);
        n += 1;
    }
    (1..=16).contains(&n).then(|| (value, &text[n..]))
}

impl Default for Columns {
    fn default() -> Self {
        Columns::of(vec![Column::Line])
    }
}

impl Columns {
    /// Parses the value of `positions:`.
    pub fn parse(value: &[u8]) -> Result<Columns, LineError> {
        let kinds: Vec<Column> = value
            .split(|b| b.is_ascii_whitespace())
            .filter(|w| !w.is_empty())
            .map(|w| match w {
                b"instr" => Column::Instr,
                b"line" => Column::Line,
                _ => Column::Other,
            })
            .collect();
        if kinds.is_empty() || kinds.len() > MAX_COLUMNS {
            return Err(format!("positions: expects 1 to {MAX_COLUMNS} columns"));
        }
        Ok(Columns::of(kinds))
    }

    /// True for exactly the columns `instr line` (see [`instr_line`]).
    #[inline]
    pub fn is_instr_line(&self) -> bool {
        self.instr == Some(0) && self.line == Some(1) && self.kinds.len() == 2
    }

    fn of(kinds: Vec<Column>) -> Columns {
        let at = |kind| kinds.iter().position(|&k| k == kind);
        let (instr, line) = (at(Column::Instr), at(Column::Line));
        Columns { kinds, instr, line }
    }

    /// Number of columns.
    pub fn len(&self) -> usize {
        self.kinds.len()
    }

    /// Always false: a part has at least one column.
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// Index of the column of this kind.
    #[inline]
    pub fn index(&self, kind: Column) -> Option<usize> {
        match kind {
            Column::Instr => self.instr,
            Column::Line => self.line,
            Column::Other => self.kinds.iter().position(|&k| k == kind),
        }
    }

    /// Splits off the position tokens; returns them and the rest (costs),
    /// blanks removed.
    fn split<'a>(&self, text: &'a [u8]) -> Result<([&'a [u8]; MAX_COLUMNS], &'a [u8]), LineError> {
        let mut tokens: [&[u8]; MAX_COLUMNS] = [b""; MAX_COLUMNS];
        let mut at = 0;
        for token in tokens.iter_mut().take(self.kinds.len()) {
            let (start, end) = next_token(text, at);
            if start == end {
                return Err(format!("expected {} position columns", self.kinds.len()));
            }
            *token = &text[start..end];
            at = end;
        }
        Ok((tokens, &text[next_token(text, at).0..]))
    }

    /// Decodes the position columns of `text` against `state`; returns the
    /// absolute values and the rest of the line (costs), blanks removed.
    #[inline]
    pub fn decode<'a>(&self, text: &'a [u8], state: &Pos) -> Result<(Pos, &'a [u8]), LineError> {
        match self.decode_quick(text, state) {
            Some(decoded) => Ok(decoded),
            None => self.decode_checked(text, state),
        }
    }

    /// [`decode`](Self::decode) in one pass over the common forms; `None`
    /// for anything else (valid or not), which the token-wise decoder
    /// then reads.
    #[inline]
    fn decode_quick<'a>(&self, text: &'a [u8], state: &Pos) -> Option<(Pos, &'a [u8])> {
        let mut scan = Scan { text, at: 0 };
        let mut pos = *state;
        for (p, prev) in pos.iter_mut().zip(state).take(self.kinds.len()) {
            *p = scan.column(*prev)?;
        }
        scan.skip_blanks();
        Some((pos, &text[scan.at..]))
    }

    fn decode_checked<'a>(
        &self,
        text: &'a [u8],
        state: &Pos,
    ) -> Result<(Pos, &'a [u8]), LineError> {
        let (tokens, rest) = self.split(text)?;
        let mut pos = *state;
        for i in 0..self.kinds.len() {
            pos[i] = decode_one(tokens[i], state[i])?;
        }
        Ok((pos, rest))
    }

    /// Decodes a line whose position columns are all absolute; `Err(None)`
    /// when one is relative (it needs the previous state).
    pub fn decode_absolute<'a>(
        &self,
        text: &'a [u8],
    ) -> Result<(Pos, &'a [u8]), Option<LineError>> {
        let mut scan = Scan { text, at: 0 };
        let mut pos = [0; MAX_COLUMNS];
        let quick = pos.iter_mut().take(self.kinds.len()).all(|p| {
            scan.skip_blanks();
            let relative = matches!(text.get(scan.at), Some(b'*' | b'+' | b'-'));
            scan.column(0)
                .filter(|_| !relative)
                .map(|v| *p = v)
                .is_some()
        });
        if quick {
            scan.skip_blanks();
            return Ok((pos, &text[scan.at..]));
        }
        let (tokens, rest) = self.split(text)?;
        let tokens = &tokens[..self.kinds.len()];
        if has_relative(tokens) {
            return Err(None);
        }
        let mut pos = [0; MAX_COLUMNS];
        for (p, token) in pos.iter_mut().zip(tokens) {
            *p = decode_one(token, 0)?;
        }
        Ok((pos, rest))
    }

    /// True when no position column is relative (`*`, `+N`, `-N`).
    pub fn is_absolute(&self, text: &[u8]) -> bool {
        self.split(text)
            .is_ok_and(|(tokens, _)| !has_relative(&tokens[..self.kinds.len()]))
    }

    /// The costs after the position columns.
    pub fn skip<'a>(&self, text: &'a [u8]) -> Result<&'a [u8], LineError> {
        Ok(self.split(text)?.1)
    }

    /// Checks a line that is copied without decoding: the position
    /// columns, then costs, every number fitting 64 bits.
    pub fn check(&self, text: &[u8]) -> Result<(), LineError> {
        let mut tokens = text
            .split(|&b| b == b' ' || b == b'\t')
            .filter(|t| !t.is_empty());
        for _ in 0..self.kinds.len() {
            let token = tokens
                .next()
                .ok_or_else(|| format!("expected {} position columns", self.kinds.len()))?;
            decode_one(token, u64::MAX / 2)?;
        }
        tokens.try_for_each(|t| {
            parse_u64(t)
                .map(drop)
                .ok_or_else(|| format!("bad cost '{}'", String::from_utf8_lossy(t)))
        })
    }

    /// Writes `pos` relative to `prev` the way callgrind does: `*` when
    /// equal, `+N`/`-N` for small steps, else absolute (hex for addresses);
    /// `absolute` forces absolute values.
    pub fn encode(&self, out: &mut Vec<u8>, pos: &Pos, prev: &Pos, absolute: bool) {
        out.reserve(20 * MAX_COLUMNS);
        for (i, kind) in self.kinds.iter().enumerate() {
            if i > 0 {
                out.push(b' ');
            }
            let (v, p) = (pos[i], prev[i]);
            match (absolute, *kind) {
                (false, _) if v == p => out.push(b'*'),
                (false, _) if p > 0 && v > p && v - p < 100 => push_step(out, b'+', v - p),
                (false, _) if p > 0 && v < p && p - v < 100 => push_step(out, b'-', p - v),
                (_, Column::Instr) => out.extend_from_slice(hex(&mut [0u8; 18], v)),
                _ => push_decimal(out, v),
            }
        }
    }
}

/// `sign` and a step below 100.
fn push_step(out: &mut Vec<u8>, sign: u8, step: u64) {
    out.push(sign);
    if step >= 10 {
        out.push(b'0' + (step / 10) as u8);
    }
    out.push(b'0' + (step % 10) as u8);
}

/// Appends `v` in decimal (the formatting machinery is slow per line).
pub fn push_decimal(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(decimal(&mut [0u8; 20], v));
}

/// `v` in decimal, written into the end of `digits`.
pub fn decimal(digits: &mut [u8; 20], mut v: u64) -> &[u8] {
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    &digits[i..]
}

/// `v` as `0x` and lowercase hex, written into the end of `digits`.
fn hex(digits: &mut [u8; 18], mut v: u64) -> &[u8] {
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b"0123456789abcdef"[(v & 15) as usize];
        v >>= 4;
        if v == 0 {
            break;
        }
    }
    digits[i - 2..i].copy_from_slice(b"0x");
    &digits[i - 2..]
}

fn decode_one(token: &[u8], prev: u64) -> Result<u64, LineError> {
    let bad = || format!("bad position '{}'", String::from_utf8_lossy(token));
    match token[0] {
        b'*' if token.len() == 1 => Ok(prev),
        b'+' => prev
            .checked_add(number(&token[1..]).ok_or_else(bad)?)
            .ok_or_else(bad),
        b'-' => prev
            .checked_sub(number(&token[1..]).ok_or_else(bad)?)
            .ok_or_else(bad),
        _ => number(token).ok_or_else(bad),
    }
}

/// True if a position token is relative (`*`, `+N`, `-N`).
fn has_relative(tokens: &[&[u8]]) -> bool {
    tokens.iter().any(|t| matches!(t[0], b'*' | b'+' | b'-'))
}

/// Decimal or `0x` hex.
fn number(s: &[u8]) -> Option<u64> {
    match s.strip_prefix(b"0x").or_else(|| s.strip_prefix(b"0X")) {
        Some(hex) => parse_hex(hex),
        None => parse_u64(s),
    }
}

/// Up to 16 hex digits.
fn parse_hex(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 16 {
        return None;
    }
    s.iter().try_fold(0u64, |acc, &b| {
        let digit = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => return None,
        };
        Some(acc << 4 | u64::from(digit))
    })
}

/// Checks the cost columns (decimal u64s) and returns the first one.
#[inline]
pub fn first_cost(costs: &[u8]) -> Result<u64, LineError> {
    match first_cost_quick(costs) {
        Some(first) => Ok(first),
        None => first_cost_checked(costs),
    }
}

/// [`first_cost`] in one pass where no number has over 19 digits (no
/// overflow possible); `None` otherwise, or on a bad byte.
#[inline]
pub fn first_cost_quick(costs: &[u8]) -> Option<u64> {
    let (mut first, mut value, mut digits) = (None, 0u64, 0);
    for &b in costs {
        match b {
            b'0'..=b'9' if digits < 19 => {
                value = value * 10 + u64::from(b - b'0');
                digits += 1;
            }
            b' ' | b'\t' => {
                if digits > 0 {
                    first.get_or_insert(value);
                }
                (value, digits) = (0, 0);
            }
            _ => return None,
        }
    }
    if digits > 0 {
        first.get_or_insert(value);
    }
    Some(first.unwrap_or(0))
}

fn first_cost_checked(costs: &[u8]) -> Result<u64, LineError> {
    let mut first = None;
    let mut at = 0;
    loop {
        let (start, end) = next_token(costs, at);
        if start == end {
            return Ok(first.unwrap_or(0));
        }
        let token = &costs[start..end];
        let value = parse_u64(token)
            .ok_or_else(|| format!("bad cost '{}'", String::from_utf8_lossy(token)))?;
        first.get_or_insert(value);
        at = end;
    }
}

/// A one-pass reader of position columns (see [`Columns::decode`]).
struct Scan<'a> {
    text: &'a [u8],
    at: usize,
}

impl Scan<'_> {
    fn skip_blanks(&mut self) {
        while matches!(self.text.get(self.at), Some(b' ' | b'\t')) {
            self.at += 1;
        }
    }

    /// One column against `prev`: `*`, `+N`, `-N`, or a number.
    #[inline]
    fn column(&mut self, prev: u64) -> Option<u64> {
        self.skip_blanks();
        let value = match *self.text.get(self.at)? {
            b'*' => {
                self.at += 1;
                prev
            }
            b'+' => {
                self.at += 1;
                prev.checked_add(self.number()?)?
            }
            b'-' => {
                self.at += 1;
                prev.checked_sub(self.number()?)?
            }
            _ => self.number()?,
        };
        matches!(self.text.get(self.at), None | Some(b' ' | b'\t')).then_some(value)
    }

    /// `0x` and up to 16 hex digits, or up to 19 decimal digits.
    #[inline]
    fn number(&mut self) -> Option<u64> {
        let text = self.text;
        let hex = text.get(self.at) == Some(&b'0') && text.get(self.at + 1) == Some(&b'x');
        let start = if hex { self.at + 2 } else { self.at };
        let (mut at, mut value) = (start, 0u64);
        if hex {
            while let Some(digit) = text.get(at).and_then(|&b| hex_digit(b)) {
                value = value.wrapping_shl(4) | u64::from(digit);
                at += 1;
            }
        } else {
            while let Some(digit) = text.get(at).map(|&b| b.wrapping_sub(b'0')) {
                if digit > 9 {
                    break;
                }
                value = value.wrapping_mul(10).wrapping_add(u64::from(digit));
                at += 1;
            }
        }
        let most = if hex { 16 } else { 19 };
        if at == start || at - start > most {
            return None;
        }
        self.at = at;
        Some(value)
    }
}

/// The value of a hex digit (either case).
#[inline]
fn hex_digit(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// The bounds of the first blank-separated token at or after `at` (empty
/// at the end of `text`).
fn next_token(text: &[u8], mut at: usize) -> (usize, usize) {
    while at < text.len() && matches!(text[at], b' ' | b'\t') {
        at += 1;
    }
    let start = at;
    while at < text.len() && !matches!(text[at], b' ' | b'\t') {
        at += 1;
    }
    (start, at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_with_the_reader_model() {
        let cols = Columns::parse(b"instr line").unwrap();
        let (pos, costs) = cols.decode(b"0x11b3 22 1", &[0; 3]).unwrap();
        assert_eq!((pos[0], pos[1], costs), (0x11b3, 22, &b"1"[..]));
        let (pos, costs) = cols.decode(b"+5 * 1 7", &pos).unwrap();
        assert_eq!((pos[0], pos[1], costs), (0x11b8, 22, &b"1 7"[..]));
        assert!(cols.decode(b"-0x99999 3", &pos).is_err());
        assert!(cols.decode(b"5", &pos).is_err());
        assert_eq!(cols.decode_absolute(b"+1 3 4"), Err(None));
        assert_eq!(cols.decode_absolute(b"0x10 3 4").unwrap().0[..2], [0x10, 3]);
        assert_eq!(cols.skip(b"+1 * 4 5").unwrap(), b"4 5");
        assert!(cols.check(b"+1 * 99999999999999999999").is_err());
        assert!(cols.check(b"+1 * 9999999999999999999").is_ok());
    }

    #[test]
    fn encodes_like_callgrind() {
        let cols = Columns::parse(b"instr line").unwrap();
        let mut out = Vec::new();
        cols.encode(&mut out, &[0x1005, 12, 0], &[0x1000, 200, 0], false);
        assert_eq!(out, b"+5 12");
        out.clear();
        cols.encode(&mut out, &[0x1005, 12, 0], &[0x1005, 12, 0], true);
        assert_eq!(out, b"0x1005 12");
    }

    /// Position and cost texts of every shape the readers meet, and broken ones.
    fn shapes() -> Vec<Vec<u8>> {
        let tokens: [&[u8]; 16] = [
            b"*",
            b"+3",
            b"-2",
            b"0x1f",
            b"0X1F",
            b"17",
            b"+0x10",
            b"-0x99999",
            b"**",
            b"+",
            b"0x",
            b"12a",
            b"99999999999999999999",
            b"9999999999999999999",
            b"18446744073709551616",
            b"0xffffffffffffffff",
        ];
        let mut shapes = Vec::new();
        for a in tokens {
            for b in tokens {
                for sep in [&b" "[..], b"\t ", b""] {
                    let line = [a, sep, b, b" 5 6"].concat();
                    shapes.push(line.clone());
                    shapes.push([a, sep, b].concat());
                }
            }
        }
        shapes
    }

    #[test]
    fn one_pass_decoding_agrees_with_the_token_wise_one() {
        let cols = Columns::parse(b"instr line").unwrap();
        for prev in [[0, 0, 0], [0x1000, 7, 0], [u64::MAX, 3, 0]] {
            for text in shapes() {
                let (tokens, rest) = cols.split(&text).unwrap_or_default();
                let absolute = match cols.split(&text) {
                    Err(e) => Err(Some(e)),
                    Ok(_) if has_relative(&tokens[..2]) => Err(None),
                    Ok(_) => {
                        let values: Result<Vec<u64>, _> =
                            tokens[..2].iter().map(|t| decode_one(t, 0)).collect();
                        values.map(|v| ([v[0], v[1], 0], rest)).map_err(Some)
                    }
                };
                assert_eq!(cols.decode_absolute(&text), absolute);
                let want = cols.decode_checked(&text, &prev);
                let got = cols.decode(&text, &prev);
                let text = String::from_utf8_lossy(&text);
                assert_eq!(got, want, "{text:?} after {prev:?}");
            }
        }
    }

    #[test]
    fn instr_line_answers_as_the_token_wise_decoder_where_it_answers() {
        let cols = Columns::parse(b"instr line").unwrap();
        assert!(cols.is_instr_line());
        let mut answered = 0;
        let mut texts = shapes();
        texts.extend([&b"+3 +1  466"[..], b"+3 +1 \t466", b"+3 +1 ", b"* *"].map(<[u8]>::to_vec));
        for prev in [[0, 0, 0], [0x1000, 7, 0], [u64::MAX, 3, 0]] {
            for text in &texts {
                let Some((addr, line, costs)) = instr_line(text, &prev) else {
                    continue;
                };
                answered += 1;
                let name = String::from_utf8_lossy(text);
                let (pos, rest) = cols.decode_checked(text, &prev).expect(&name);
                assert_eq!(([addr, line], costs), ([pos[0], pos[1]], rest), "{name:?}");
            }
        }
        assert!(answered > 100, "{answered}");
        let mut absolute = 0;
        for text in &texts {
            let Some((addr, line, costs)) = absolute_instr_line(text) else {
                continue;
            };
            absolute += 1;
            let name = String::from_utf8_lossy(text);
            let (pos, rest) = cols.decode_absolute(text).expect(&name);
            assert_eq!(([addr, line], costs), ([pos[0], pos[1]], rest), "{name:?}");
        }
        assert!(absolute > 20, "{absolute}");
        for other in [&b"line"[..], b"instr", b"line instr", b"instr line x"] {
            assert!(!Columns::parse(other).unwrap().is_instr_line());
        }
    }

    #[test]
    fn one_pass_cost_check_agrees_with_the_token_wise_one() {
        for text in shapes() {
            let name = String::from_utf8_lossy(&text);
            assert_eq!(first_cost(&text), first_cost_checked(&text), "{name:?}");
        }
    }

    #[test]
    fn costs_are_checked() {
        assert_eq!(first_cost(b"5 6 7").unwrap(), 5);
        assert_eq!(first_cost(b"").unwrap(), 0);
        assert!(first_cost(b"5 99999999999999999999").is_err());
    }
}
