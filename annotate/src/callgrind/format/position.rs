//! Position columns (`positions: instr line`): decoding with the readers'
//! model (every position line moves the state, call and jump targets do
//! not) and encoding the way callgrind writes them.

use super::line::{parse_u64, LineError};
pub use super::pos::{Pos, MAX_COLUMNS};

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

    /// True for exactly the columns `instr line` (see
    /// [`quick::instr_line`](super::quick::instr_line)).
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
    pub(super) fn split<'a>(
        &self,
        text: &'a [u8],
    ) -> Result<([&'a [u8]; MAX_COLUMNS], &'a [u8]), LineError> {
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
        match super::quick::columns(self.kinds.len(), text, state) {
            Some(decoded) => Ok(decoded),
            None => self.decode_checked(text, state),
        }
    }

    pub(super) fn decode_checked<'a>(
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
        if let Some(decoded) = super::quick::absolute_columns(self.kinds.len(), text) {
            return Ok(decoded);
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

    /// The position columns of a line alone (its costs cut off).
    pub fn positions_only<'a>(&self, text: &'a [u8]) -> Result<&'a [u8], LineError> {
        let (tokens, _) = self.split(text)?;
        let last = tokens[self.kinds.len() - 1];
        let end = last.as_ptr() as usize - text.as_ptr() as usize + last.len();
        Ok(&text[..end])
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
    #[inline]
    pub fn encode(&self, out: &mut Vec<u8>, pos: &Pos, prev: &Pos, absolute: bool) {
        if self.is_instr_line() {
            return super::quick::encode_instr_line(out, pos, prev, absolute);
        }
        self.encode_columns(out, pos, prev, absolute);
    }

    /// [`encode`](Self::encode) column by column, for any columns.
    pub(super) fn encode_columns(&self, out: &mut Vec<u8>, pos: &Pos, prev: &Pos, absolute: bool) {
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
pub(super) fn hex(digits: &mut [u8; 18], mut v: u64) -> &[u8] {
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

pub(super) fn decode_one(token: &[u8], prev: u64) -> Result<u64, LineError> {
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
pub(super) fn has_relative(tokens: &[&[u8]]) -> bool {
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
    match super::quick::first_cost(costs) {
        Some(first) => Ok(first),
        None => first_cost_checked(costs),
    }
}

pub(super) fn first_cost_checked(costs: &[u8]) -> Result<u64, LineError> {
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

/// Every cost column of a line (trailing zeros may be left out, as
/// callgrind leaves them out).
pub fn all_costs(costs: &[u8]) -> Result<Vec<u64>, LineError> {
    let mut values = Vec::new();
    let mut at = 0;
    loop {
        let (start, end) = next_token(costs, at);
        if start == end {
            return Ok(values);
        }
        let token = &costs[start..end];
        let value = parse_u64(token)
            .ok_or_else(|| format!("bad cost '{}'", String::from_utf8_lossy(token)))?;
        values.push(value);
        at = end;
    }
}

/// Adds the cost columns `costs` to `sum`, column by column (`sum` grows
/// to the columns given; a sum stops at u64::MAX).
pub fn add_costs(sum: &mut Vec<u64>, costs: &[u8]) -> Result<(), LineError> {
    let mut at = 0;
    for column in 0.. {
        let (start, end) = next_token(costs, at);
        if start == end {
            break;
        }
        let token = &costs[start..end];
        let value = parse_u64(token)
            .ok_or_else(|| format!("bad cost '{}'", String::from_utf8_lossy(token)))?;
        if sum.len() <= column {
            sum.push(0);
        }
        sum[column] = sum[column].saturating_add(value);
        at = end;
    }
    Ok(())
}

/// Writes cost columns as callgrind does: blank-separated, trailing
/// zeros left out (one column stays).
pub fn push_costs(out: &mut Vec<u8>, costs: &[u64]) {
    let used = costs.iter().rposition(|&c| c != 0).map_or(1, |i| i + 1);
    for (i, &c) in costs.iter().take(used).enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        push_decimal(out, c);
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
mod tests;
