//! A perf map line's hex numbers. Two a line, a million lines in a large
//! map: read a digit at a time they were most of indexing one (about 240
//! instructions a line). Where 16 bytes can be loaded, a number's digits
//! are found and combined 16 bytes at once (SSE2, part of every x86-64
//! CPU); the digit-at-a-time reading is the meaning, and the reference a
//! test holds the other to.

/// A hex number (optional `0x`, at most 16 digits), then a run of blanks
/// (spaces, tabs): the number and what follows the blanks.
#[inline]
pub fn hex_field(s: &[u8]) -> Option<(u64, &[u8])> {
    let s = s
        .strip_prefix(b"0x")
        .or_else(|| s.strip_prefix(b"0X"))
        .unwrap_or(s);
    let (value, digits) = match s.first_chunk::<16>() {
        Some(block) => leading_number(block, s.get(16)),
        None => by_digit(s),
    }?;
    after_blanks(value, &s[digits..])
}

/// The number and the rest past its blanks, where there is a blank.
#[inline]
fn after_blanks(value: u64, rest: &[u8]) -> Option<(u64, &[u8])> {
    let blanks = rest
        .iter()
        .position(|b| !matches!(b, b' ' | b'\t'))
        .unwrap_or(rest.len());
    (blanks > 0).then(|| (value, &rest[blanks..]))
}

/// The number the hex digits at the start of `s` spell, and how many
/// there are: `None` for none or more than 16.
fn by_digit(s: &[u8]) -> Option<(u64, usize)> {
    let (mut value, mut digits) = (0u64, 0);
    for &b in s {
        let digit = HEX_DIGIT[usize::from(b)];
        if digit == NOT_HEX {
            break;
        }
        value = value.wrapping_shl(4) | u64::from(digit);
        digits += 1;
    }
    (1..=16).contains(&digits).then_some((value, digits))
}

/// [`by_digit`] of `block` and the byte after it (`next`), 16 bytes at
/// once.
#[inline]
fn leading_number(block: &[u8; 16], next: Option<&u8>) -> Option<(u64, usize)> {
    let (hex, all) = hex_bits_and_value(block);
    let digits = (!hex).trailing_zeros().min(16) as usize;
    let more = digits == 16 && next.is_some_and(|&b| HEX_DIGIT[usize::from(b)] != NOT_HEX);
    match digits == 0 || more {
        true => None,
        // The values past the number's end shifted out.
        false => Some((all >> (4 * (16 - digits)), digits)),
    }
}

#[cfg(not(target_arch = "x86_64"))]
use hex_bits_and_value_by_byte as hex_bits_and_value;

/// Bit i set where `block[i]` is a hex digit, and the number the 16 bytes
/// spell taken each as a digit (any byte gives some value below 16).
#[cfg(target_arch = "x86_64")]
#[inline]
fn hex_bits_and_value(block: &[u8; 16]) -> (u32, u64) {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is always present on x86-64; the load reads the 16
    // bytes of `block` (unaligned loads are allowed).
    unsafe {
        let bytes = _mm_loadu_si128(block.as_ptr().cast());
        let between = |v, lo: u8, hi: u8| {
            let above = _mm_cmpgt_epi8(v, _mm_set1_epi8(lo as i8 - 1));
            _mm_and_si128(above, _mm_cmplt_epi8(v, _mm_set1_epi8(hi as i8 + 1)))
        };
        // Bytes from 0x80 compare as negative: below every bound.
        let decimal = between(bytes, b'0', b'9');
        let letter = between(_mm_or_si128(bytes, _mm_set1_epi8(0x20)), b'a', b'f');
        let hex = _mm_movemask_epi8(_mm_or_si128(decimal, letter)) as u32;
        // A digit's value: its low four bits, plus 9 for a letter (`a`
        // and `A` end in 1).
        let nine = _mm_and_si128(_mm_cmpgt_epi8(bytes, _mm_set1_epi8(0x3f)), _mm_set1_epi8(9));
        let low = _mm_and_si128(bytes, _mm_set1_epi8(0x0f));
        let values = _mm_and_si128(_mm_add_epi8(low, nine), _mm_set1_epi8(0x0f));
        // Two values to a byte (the first one high), the eight in order.
        let high = _mm_slli_epi16(_mm_and_si128(values, _mm_set1_epi16(0x00ff)), 4);
        let pairs = _mm_or_si128(high, _mm_srli_epi16(values, 8));
        let packed = _mm_cvtsi128_si64(_mm_packus_epi16(pairs, pairs)) as u64;
        (hex, packed.swap_bytes())
    }
}

/// [`hex_bits_and_value`] a byte at a time: other machines', and the
/// reference a test holds the SSE2 one to.
#[cfg(any(test, not(target_arch = "x86_64")))]
fn hex_bits_and_value_by_byte(block: &[u8; 16]) -> (u32, u64) {
    let digit = |b: u8| HEX_DIGIT[usize::from(b)];
    let hex = (0..16).filter(|&i| digit(block[i]) != NOT_HEX);
    let value = block
        .iter()
        .fold(0u64, |v, &b| v << 4 | u64::from(digit(b) & 0x0f));
    (hex.fold(0, |bits, i| bits | 1 << i), value)
}

/// [`HEX_DIGIT`] of a byte that is no hex digit.
const NOT_HEX: u8 = 0xff;

/// Each byte's value as a hex digit, or [`NOT_HEX`].
const HEX_DIGIT: [u8; 256] = {
    let mut table = [NOT_HEX; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = match b as u8 {
            c @ b'0'..=b'9' => c - b'0',
            c @ b'a'..=b'f' => c - b'a' + 10,
            c @ b'A'..=b'F' => c - b'A' + 10,
            _ => NOT_HEX,
        };
        b += 1;
    }
    table
};

#[cfg(test)]
mod tests {
    use super::*;

    /// The meaning: a digit at a time, whatever the length.
    fn reference(s: &[u8]) -> Option<(u64, &[u8])> {
        let s = s
            .strip_prefix(b"0x")
            .or_else(|| s.strip_prefix(b"0X"))
            .unwrap_or(s);
        let (value, digits) = by_digit(s)?;
        after_blanks(value, &s[digits..])
    }

    #[test]
    fn hex_fields_read_every_digit_and_refuse_over_sixteen() {
        for value in [0u64, 1, 0xa, 0xF0, 0x7f3c_2a10_00ff, u64::MAX] {
            for text in [format!("{value:x} "), format!("0X{value:X}\t")] {
                // Short, and followed by a name long enough for a block.
                for tail in ["", "JS:*fn_0 /app/m0000.js:10:5"] {
                    let line = format!("{text}{tail}");
                    let want = Some((value, tail.as_bytes()));
                    assert_eq!(hex_field(line.as_bytes()), want, "{line}");
                }
            }
        }
        for refused in [
            &b"10000000000000000 x"[..],
            b"10000000000000000 long enough name",
            b"0x10000000000000000 long enough name",
            b"0x 1",
            b"0x long enough name after the prefix",
            b"12g 1",
            b"12g long enough name after the g",
            b"12",
            b"0123456789abcdef",
            b"0x0123456789abcdef",
        ] {
            assert_eq!(
                hex_field(refused),
                None,
                "{}",
                String::from_utf8_lossy(refused)
            );
        }
    }

    #[test]
    fn sixteen_digits_then_a_blank_are_read_whole() {
        let line = b"0x000000001b5f71c0 0x0000000000000270 long Hot.collatz(long)";
        let (start, rest) = hex_field(line).unwrap();
        assert_eq!(
            hex_field(rest),
            Some((0x270, &b"long Hot.collatz(long)"[..]))
        );
        assert_eq!(start, 0x1b5f_71c0);
        assert_eq!(
            hex_field(b"fedcba9876543210\tf"),
            Some((0xfedc_ba98_7654_3210, &b"f"[..]))
        );
    }

    #[test]
    fn sixteen_bytes_at_once_read_as_a_digit_at_a_time() {
        // Every byte value after every number of digits, at every place
        // in a block and past it, with and without a prefix.
        let digits = b"0123456789abcdefABCDEF";
        for len in 0..=18 {
            for b in 0..=255u8 {
                for prefix in [&b""[..], b"0x"] {
                    let mut line = prefix.to_vec();
                    line.extend((0..len).map(|i| digits[(i * 7 + len) % digits.len()]));
                    line.push(b);
                    line.extend(b" \t name of a function");
                    for cut in [line.len(), prefix.len() + len + 1, 16.min(line.len())] {
                        let s = &line[..cut];
                        assert_eq!(hex_field(s), reference(s), "{}", String::from_utf8_lossy(s));
                    }
                }
            }
        }
    }

    #[test]
    fn sse2_reads_blocks_as_the_byte_loop_does() {
        // Blocks of digits, letters, blanks and bytes from 0x80 at every
        // place, and of every byte value.
        let mut blocks: Vec<[u8; 16]> = (0..=255u8).map(|b| [b; 16]).collect();
        for seed in 0..20_000u32 {
            let pick = b"09afAFgG/:@`x \t\x80\xff";
            let mut block = [0u8; 16];
            for (i, b) in block.iter_mut().enumerate() {
                *b = pick[(seed.wrapping_mul(2_654_435_761) >> (i % 16 + 8)) as usize % pick.len()];
            }
            blocks.push(block);
        }
        for block in blocks {
            let (bits, value) = hex_bits_and_value(&block);
            let (want_bits, want_value) = hex_bits_and_value_by_byte(&block);
            // The digits' values; other bytes' may differ.
            let digits = (0..16)
                .filter(|i| want_bits & 1 << i != 0)
                .fold(0u64, |mask, i| mask | 0xf << (4 * (15 - i)));
            assert_eq!(
                (bits, value & digits),
                (want_bits, want_value & digits),
                "{block:?}"
            );
        }
    }

    #[test]
    fn the_digit_table_reads_as_the_standard_library_does() {
        for b in 0..=255u8 {
            let want = char::from(b).to_digit(16).map(|d| d as u8);
            let got = Some(HEX_DIGIT[usize::from(b)]).filter(|&d| d != NOT_HEX);
            assert_eq!(got, want, "{b:#x}");
        }
    }
}
