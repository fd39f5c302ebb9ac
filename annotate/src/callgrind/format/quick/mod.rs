//! One-pass readers of the common line forms: the fast variants of the
//! reference parsers in [`position`](super::position) and
//! [`line`](super::line). Each answers `None` where it is unsure, and the
//! caller then asks the reference; where it answers, it gives the
//! reference's answer. Which reference, and which test holds them
//! together:
//!
//! | here | reference | test |
//! |---|---|---|
//! | [`columns`] | `Columns::decode` | `one_pass_decoding_agrees_with_the_token_wise_one` |
//! | [`absolute_columns`] | `Columns::decode_absolute` | the same |
//! | [`instr_line`], [`absolute_instr_line`] | `Columns::decode`, `decode_absolute` | `instr_line_answers_as_the_token_wise_decoder_where_it_answers` |
//! | [`encode_instr_line`] | `Columns::encode_columns` | `encoding_instr_line_in_one_go_agrees_with_the_column_wise_one` |
//! | [`first_cost`] | `position::first_cost` | `one_pass_cost_check_agrees_with_the_token_wise_one` |
//! | [`instr_line`] and [`first_cost_to_lf`] on text running on | [`instr_line`] and [`first_cost`] of the line | `a_line_read_to_its_lf_reads_as_the_line_alone` |
//! | [`keyed_id`] | `line::classify` + `line::name_ref` | `keyed_ids_are_only_bare_ids_of_name_keys` |
//! | [`plain_count`] | `line::CountLine::parse` | `a_plain_count_is_one_the_full_parse_accepts` |
//! | [`plain_lines`](super::plain_lines) | `Columns::check` on a plain line | its own `*_agree_*` tests |

use super::line::bare_id;
use super::pos::{Pos, MAX_COLUMNS};

/// The address, line and costs of a position line of the columns
/// `instr line` against `state`, in the form callgrind writes: `*`, `+N`,
/// `-N` or a number (`0x` hex up to 16 digits, decimal up to 19) in each,
/// one space after each. `None` for anything else: then
/// `Columns::decode` reads it (with the same answer where this has one).
#[inline]
pub fn instr_line<'a>(text: &'a [u8], state: &Pos) -> Option<(u64, u64, &'a [u8])> {
    two_columns::<false>(text, state)
}

/// [`instr_line`] where no state is known: only absolute columns (each
/// starting with a digit) are read, as `Columns::decode_absolute` does.
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

/// `Columns::decode` of `n` columns in one pass over the common forms;
/// `None` for anything else (valid or not), which the token-wise decoder
/// then reads.
#[inline]
pub fn columns<'a>(n: usize, text: &'a [u8], state: &Pos) -> Option<(Pos, &'a [u8])> {
    let mut scan = Scan { text, at: 0 };
    let mut pos = *state;
    for (p, prev) in pos.iter_mut().zip(state).take(n) {
        *p = scan.column(*prev)?;
    }
    scan.skip_blanks();
    Some((pos, &text[scan.at..]))
}

/// `Columns::decode_absolute` of `n` columns in one pass: `None` where a
/// column is relative or not of a common form.
#[inline]
pub fn absolute_columns(n: usize, text: &[u8]) -> Option<(Pos, &[u8])> {
    let mut scan = Scan { text, at: 0 };
    let mut pos = [0; MAX_COLUMNS];
    let all = pos.iter_mut().take(n).all(|p| {
        scan.skip_blanks();
        let relative = matches!(text.get(scan.at), Some(b'*' | b'+' | b'-'));
        scan.column(0)
            .filter(|_| !relative)
            .map(|v| *p = v)
            .is_some()
    });
    all.then(|| {
        scan.skip_blanks();
        (pos, &text[scan.at..])
    })
}

/// `position::first_cost` in one pass where no number has over 19 digits (no
/// overflow possible); `None` otherwise, or on a bad byte.
#[inline]
pub fn first_cost(costs: &[u8]) -> Option<u64> {
    scan_costs::<false>(costs).map(|(cost, _)| cost)
}

/// [`first_cost`] of the costs from the start of `text` to its first LF,
/// and their length: `text` runs on to further lines. `None` where
/// `first_cost` has none, or without an LF.
#[inline]
pub fn first_cost_to_lf(text: &[u8]) -> Option<(u64, usize)> {
    scan_costs::<true>(text)
}

/// [`first_cost`], which with `TO_LF` stops at an LF (else a bad byte) and
/// needs one; and the length read.
#[inline(always)]
fn scan_costs<const TO_LF: bool>(text: &[u8]) -> Option<(u64, usize)> {
    let (mut first, mut value, mut digits) = (None, 0u64, 0);
    for (at, &b) in text.iter().enumerate() {
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
            b'\n' if TO_LF => {
                if digits > 0 {
                    first.get_or_insert(value);
                }
                return Some((first.unwrap_or(0), at));
            }
            _ => return None,
        }
    }
    if TO_LF {
        return None;
    }
    if digits > 0 {
        first.get_or_insert(value);
    }
    Some((first.unwrap_or(0), text.len()))
}

/// A one-pass reader of position columns (see [`columns`]).
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

/// The keys of name lines [`keyed_id`] knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdKey {
    /// `ob=`.
    Ob,
    /// `fl=`.
    Fl,
    /// `fi=` or `fe=`.
    Fi,
    /// `fn=`.
    Fn,
    /// `cob=`.
    Cob,
    /// `cfi=` or `cfl=`.
    Cfi,
    /// `cfn=`.
    Cfn,
}

/// The key and id of a line `key=(id)`.
#[inline]
pub fn keyed_id(line: &[u8]) -> Option<(IdKey, u64)> {
    let (key, value_at) = match line.get(..4)? {
        b"ob=(" => (IdKey::Ob, 3),
        b"fl=(" => (IdKey::Fl, 3),
        b"fi=(" | b"fe=(" => (IdKey::Fi, 3),
        b"fn=(" => (IdKey::Fn, 3),
        b"cob=" => (IdKey::Cob, 4),
        b"cfi=" | b"cfl=" => (IdKey::Cfi, 4),
        b"cfn=" => (IdKey::Cfn, 4),
        _ => return None,
    };
    Some((key, bare_id(&line[value_at..])?))
}

/// True when `value` starts with a count `CountLine::parse` accepts
/// without a closer look: 1 to 19 digits, then a blank or the end.
#[inline]
pub fn plain_count(value: &[u8]) -> bool {
    let digits = value.iter().take_while(|b| b.is_ascii_digit()).count();
    (1..20).contains(&digits) && matches!(value.get(digits), None | Some(b' ' | b'\t'))
}

/// `Columns::encode` of the columns `instr line`: composed in a block of
/// fixed size at the output's end, then cut to length (copies of a size
/// known when compiling stay inline; a push per byte would check the
/// capacity each time).
#[inline]
pub fn encode_instr_line(out: &mut Vec<u8>, pos: &Pos, prev: &Pos, absolute: bool) {
    let start = out.len();
    out.resize(start + ENCODED_MAX, 0);
    let buf: &mut [u8; ENCODED_MAX] = (&mut out[start..]).try_into().expect("resized");
    let at = encode_column::<true>(buf, 0, pos[0], prev[0], absolute);
    buf[at] = b' ';
    let end = encode_column::<false>(buf, at + 1, pos[1], prev[1], absolute);
    out.truncate(start + end);
}

/// The longest `instr line` encoding: `0x` and 16 hex digits, a blank,
/// 20 decimal digits.
const ENCODED_MAX: usize = 40;

/// One column of [`encode_instr_line`] at `buf[at..]`; where it ends.
#[inline(always)]
fn encode_column<const INSTR: bool>(
    buf: &mut [u8; ENCODED_MAX],
    at: usize,
    v: u64,
    p: u64,
    absolute: bool,
) -> usize {
    if !absolute {
        let step = if v == p {
            Some((b'*', 0))
        } else if p > 0 && v > p && v - p < 100 {
            Some((b'+', v - p))
        } else if p > 0 && v < p && p - v < 100 {
            Some((b'-', p - v))
        } else {
            None
        };
        match step {
            Some((b'*', _)) => {
                buf[at] = b'*';
                return at + 1;
            }
            Some((sign, n)) if n < 10 => {
                (buf[at], buf[at + 1]) = (sign, b'0' + n as u8);
                return at + 2;
            }
            Some((sign, n)) => {
                buf[at] = sign;
                (buf[at + 1], buf[at + 2]) = (b'0' + (n / 10) as u8, b'0' + (n % 10) as u8);
                return at + 3;
            }
            None => {}
        }
    }
    if INSTR {
        let digits = (64 - (v | 1).leading_zeros()).div_ceil(4) as usize;
        (buf[at], buf[at + 1]) = (b'0', b'x');
        for i in 0..digits {
            let nibble = (v >> (4 * (digits - 1 - i))) & 15;
            buf[at + 2 + i] = b"0123456789abcdef"[nibble as usize];
        }
        at + 2 + digits
    } else {
        let mut digits = [0u8; 20];
        let mut n = 0;
        let mut rest = v;
        loop {
            digits[19 - n] = b'0' + (rest % 10) as u8;
            n += 1;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        for i in 0..n {
            buf[at + i] = digits[20 - n + i];
        }
        at + n
    }
}

#[cfg(test)]
mod tests;
