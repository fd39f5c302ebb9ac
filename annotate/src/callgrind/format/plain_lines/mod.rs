//! Which lines of a chunk are plain cost lines, found 64 bytes at a time
//! on the reader thread.
//!
//! Most lines of a profile are cost lines of native code, copied as they
//! are. The reader marks the lines that are not plainly cost lines; in
//! native code the driver passes over everything between two marks in one
//! step. A plain cost line starts with a position character and is made
//! of tokens `*`, `N`, `+N`, `-N` of at most 16 characters (too short to
//! overflow 64 bits), separated by spaces or tabs; N is decimal, or `0x`
//! hex in the first token (an instruction address; costs are decimal).
//! Any other line is marked; the lane reads it in full. Not seen here:
//! how many columns are positions.
//!
//! Each 64-byte block becomes bit masks of byte classes (SSE2 on x86-64);
//! the rules are shifts and ands on those masks, carried across blocks,
//! and each byte that breaks one is spread down to its line's start with
//! shifts too: the marks come out as a bitmap, with no loop over lines.

const BLOCK: usize = 64;

/// The line starts of a chunk that may not be plain cost lines: one bit
/// per byte offset, so the reader never loops over lines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Breaks {
    /// Bit `i % 64` of word `i / 64`: a break at offset `i`.
    words: Vec<u64>,
    /// Newlines in the chunk.
    newlines: u64,
}

impl Breaks {
    /// The first break at or after `at`, if any.
    #[inline]
    pub fn next_from(&self, at: usize) -> Option<usize> {
        let mut word = at / BLOCK;
        let mut bits = self.words.get(word)? & (u64::MAX << (at % BLOCK));
        while bits == 0 {
            word += 1;
            bits = *self.words.get(word)?;
        }
        Some(word * BLOCK + bits.trailing_zeros() as usize)
    }

    /// The number of newlines in the chunk.
    pub fn newlines(&self) -> u64 {
        self.newlines
    }

    /// No breaks, room for those of a chunk of `len` bytes.
    fn reset(&mut self, len: usize) {
        self.words.clear();
        self.words.resize(len / BLOCK + 1, 0);
        self.newlines = 0;
    }

    fn set(&mut self, offset: usize) {
        self.words[offset / BLOCK] |= 1 << (offset % BLOCK);
    }
}

/// Fills `out` with the breaks of `chunk`: one at 0 (the first line may
/// continue the chunk before and is not read), one at each line start
/// after that which is not a plain cost line, and one at the start of the
/// last line (unfinished, or empty when the chunk ends with a newline).
/// Between two breaks, every line is plain.
pub fn breaks(chunk: &[u8], out: &mut Breaks) {
    #[cfg(target_arch = "x86_64")]
    if avx2::detected() {
        // SAFETY: the CPU has the features `with_avx2` is compiled for.
        return unsafe { avx2::breaks(chunk, out) };
    }
    breaks_with::<Baseline>(chunk, out);
}

/// A way to compute the [`Masks`] of a block.
trait Classify {
    fn masks(block: &[u8; BLOCK]) -> Masks;
}

/// What every CPU of the target has (SSE2 on x86-64).
struct Baseline;

impl Classify for Baseline {
    #[inline(always)]
    fn masks(block: &[u8; BLOCK]) -> Masks {
        Masks::of(block)
    }
}

/// Blocks are read from offset 0: the first line's bytes can only mark
/// the start at 0, a break anyway, and its newline ends every rule.
#[inline(always)]
fn breaks_with<C: Classify>(chunk: &[u8], out: &mut Breaks) {
    out.reset(chunk.len());
    let mut scan = Scan {
        out,
        carry: Carry::LINE_START,
        open: 0,
        open_block: 0,
        last_bit: 0,
    };
    let mut blocks = chunk.chunks_exact(BLOCK);
    for (k, block) in blocks.by_ref().enumerate() {
        scan.block(k, &C::masks(block.try_into().expect("chunks_exact")));
    }
    if !blocks.remainder().is_empty() {
        scan.block(chunk.len() / BLOCK, &C::masks(&padded(blocks.remainder())));
    }
    let (open, block, bit) = (scan.open, scan.open_block, scan.last_bit);
    out.words[block] = open;
    let last = match chunk.last() {
        Some(b'\n') => chunk.len(),
        _ => block * BLOCK + bit as usize,
    };
    out.set(0);
    out.set(last);
}

/// A block of the chunk; the last one padded with bytes no line may hold.
#[inline(always)]
fn padded(block: &[u8]) -> [u8; BLOCK] {
    let mut full = [0xff; BLOCK];
    full[..block.len()].copy_from_slice(block);
    full
}

/// The state of a pass over the blocks of a chunk.
struct Scan<'a> {
    out: &'a mut Breaks,
    carry: Carry,
    /// The marks of the last block with a line start, kept out of memory
    /// while later blocks may still add to them (a store and a reload per
    /// block would chain the blocks together).
    open: u64,
    open_block: usize,
    /// The last line start seen: bit `last_bit` of `open_block`.
    last_bit: u32,
}

impl Scan<'_> {
    /// Marks the lines that hold a bad byte of block `k`; bad bytes below
    /// its first line start belong to the last line start seen.
    #[inline(always)]
    fn block(&mut self, k: usize, m: &Masks) {
        let (bad, starts) = self.carry.check(m);
        let reach = spread_down(bad, starts);
        self.open |= (reach & !starts & 1) << self.last_bit;
        self.out.newlines += u64::from(m.nl.count_ones());
        if starts != 0 {
            self.out.words[self.open_block] = self.open;
            self.open = reach & starts;
            self.open_block = k;
            self.last_bit = 63 - starts.leading_zeros();
        }
    }
}

/// Each bit of `bad` spread down to the line start at or below it (or to
/// bit 0), in six doubling steps: a bit passes from i + 1 to i while i + 1
/// is not a line start.
#[inline(always)]
fn spread_down(bad: u64, starts: u64) -> u64 {
    let mut reach = bad;
    let mut pass = !(starts >> 1);
    for shift in [1, 2, 4, 8, 16] {
        reach |= pass & (reach >> shift);
        pass &= pass >> shift;
    }
    reach | pass & (reach >> 32)
}

/// One bit per byte of a block, per byte class.
#[derive(Clone, Copy, Debug, Default)]
struct Masks {
    nl: u64,
    /// Space, tab or newline.
    sep: u64,
    /// Any byte a plain cost line may hold.
    allowed: u64,
    /// `0-9 + - *`: what a position line starts with.
    start: u64,
    /// `+` or `-`.
    sign: u64,
    star: u64,
    /// `x` or `X`.
    x: u64,
    zero: u64,
    digit: u64,
    /// `0-9 a-f A-F`.
    hex: u64,
}

/// What the rules need of the block before: its last bit of some masks,
/// and the hex-digit run and token length still open at its end.
#[derive(Clone, Copy, Debug)]
struct Carry {
    nl: u64,
    sep: u64,
    sign: u64,
    star: u64,
    x: u64,
    /// A `0` that starts a number (after a separator or sign).
    lead_zero: u64,
    /// Carry out of the hex-run addition.
    hex_run: u64,
    /// Carry out of the first-token addition.
    first_token: u64,
    /// Bits of the previous block that are inside tokens.
    token: u64,
}

impl Carry {
    /// Before the first block: a line starts at bit 0.
    const LINE_START: Carry = Carry {
        nl: 1,
        sep: 1,
        sign: 0,
        star: 0,
        x: 0,
        lead_zero: 0,
        hex_run: 0,
        first_token: 0,
        token: 0,
    };

    /// The bytes of this block that break a rule, and its line starts;
    /// becomes the carry for the next block.
    #[inline(always)]
    fn check(&mut self, m: &Masks) -> (u64, u64) {
        let prev = |mask: u64, carry: u64| mask << 1 | carry;
        let starts = prev(m.nl, self.nl);
        let after_sep = prev(m.sep, self.sep);
        let after_sign = prev(m.sign, self.sign);
        let lead_zero = m.zero & (after_sep | after_sign);
        let after_x = prev(m.x, self.x);
        // Hex digits that continue a run begun right after an `x`.
        let (sum, c1) = m.hex.overflowing_add(after_x & m.hex);
        let (sum, c2) = sum.overflowing_add(self.hex_run);
        let hex_run = (sum ^ m.hex) & m.hex;
        let token = !m.sep;
        // Token bytes of the run that begins at a line start.
        let (sum, c3) = token.overflowing_add(starts & token);
        let (sum, c4) = sum.overflowing_add(self.first_token);
        let first_token = (sum ^ token) & token;
        let bad = !m.allowed
            | (m.x & !first_token)
            | (starts & !m.start)
            | ((m.sign | m.star) & !after_sep)
            | (after_sign & !m.digit)
            | (prev(m.star, self.star) & !m.sep)
            | (m.x & !prev(lead_zero, self.lead_zero))
            | (after_x & !m.hex)
            | (m.hex & !m.digit & !hex_run)
            | long_tokens(self.token, token);
        *self = Carry {
            nl: m.nl >> 63,
            sep: m.sep >> 63,
            sign: m.sign >> 63,
            star: m.star >> 63,
            x: m.x >> 63,
            lead_zero: lead_zero >> 63,
            hex_run: u64::from(c1 | c2),
            first_token: u64::from(c3 | c4),
            token,
        };
        (bad, starts)
    }
}

/// Bits of `token` that are the 17th or later byte of a token, given the
/// token bits of the block before.
#[inline(always)]
fn long_tokens(before: u64, token: u64) -> u64 {
    let both = u128::from(token) << 64 | u128::from(before);
    let two = both & both >> 1;
    let four = two & two >> 2;
    let eight = four & four >> 4;
    let sixteen = eight & eight >> 8;
    let seventeen = sixteen & both >> 16;
    // Bit i of `seventeen`: bytes i..=i+16 are token bytes; i+16 is the
    // byte to flag, in this block when 48 <= i < 112.
    (seventeen >> 48) as u64
}

impl Masks {
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn of(block: &[u8; BLOCK]) -> Masks {
        let mut m = Masks::default();
        for (i, chunk) in block.chunks_exact(16).enumerate() {
            let chunk: &[u8; 16] = chunk.try_into().expect("chunks_exact");
            m.merge(sse2::masks(chunk), 16 * i as u32);
        }
        m
    }

    #[cfg(not(target_arch = "x86_64"))]
    fn of(block: &[u8; BLOCK]) -> Masks {
        let mut m = Masks::default();
        for (i, &b) in block.iter().enumerate() {
            m.merge(Masks::of_byte(b), i as u32);
        }
        m
    }

    /// The classes of one byte, in bit 0 (on x86-64, the tests' reference).
    #[cfg_attr(all(target_arch = "x86_64", not(test)), allow(dead_code))]
    fn of_byte(b: u8) -> Masks {
        let bit = |yes: bool| u64::from(yes);
        let digit = b.is_ascii_digit();
        let hex = b.is_ascii_hexdigit();
        let sep = matches!(b, b' ' | b'\t' | b'\n');
        let sign = matches!(b, b'+' | b'-');
        let x = matches!(b, b'x' | b'X');
        Masks {
            nl: bit(b == b'\n'),
            sep: bit(sep),
            allowed: bit(hex || sep || sign || x || b == b'*'),
            start: bit(digit || sign || b == b'*'),
            sign: bit(sign),
            star: bit(b == b'*'),
            x: bit(x),
            zero: bit(b == b'0'),
            digit: bit(digit),
            hex: bit(hex),
        }
    }

    #[inline(always)]
    fn merge(&mut self, part: Masks, shift: u32) {
        self.nl |= part.nl << shift;
        self.sep |= part.sep << shift;
        self.allowed |= part.allowed << shift;
        self.start |= part.start << shift;
        self.sign |= part.sign << shift;
        self.star |= part.star << shift;
        self.x |= part.x << shift;
        self.zero |= part.zero << shift;
        self.digit |= part.digit << shift;
        self.hex |= part.hex << shift;
    }
}

/// A vector of bytes, with what [`classes`] needs of it.
///
/// # Safety
///
/// The methods are safe to call, so an implementor promises that they
/// are sound wherever a value of the type exists: a type whose methods
/// need a CPU feature must only be made inside code compiled with it, and
/// never leave it.
unsafe trait Lanes: Copy {
    /// All ones in the bytes equal to `c`.
    fn is(self, c: u8) -> Self;
    /// All ones in the bytes in `lo..=hi` (ASCII, compared signed: bytes
    /// of 0x80 and up are in no range).
    fn within(self, lo: u8, hi: u8) -> Self;
    fn or(self, other: Self) -> Self;
    /// Each byte with bit 5 set (ASCII letters in lower case).
    fn lower(self) -> Self;
    /// One bit a byte: its top bit.
    fn bits(self) -> u64;
}

/// The classes of the bytes of `v`, in its low bits.
#[inline(always)]
fn classes<V: Lanes>(v: V) -> Masks {
    let nl = v.is(b'\n');
    let sep = v.is(b' ').or(v.is(b'\t')).or(nl);
    let digit = v.within(b'0', b'9');
    let hex = digit.or(v.lower().within(b'a', b'f'));
    let sign = v.is(b'+').or(v.is(b'-'));
    let star = v.is(b'*');
    let x = v.is(b'x').or(v.is(b'X'));
    let allowed = hex.or(sep).or(sign).or(star).or(x);
    Masks {
        nl: nl.bits(),
        sep: sep.bits(),
        allowed: allowed.bits(),
        start: digit.or(sign).or(star).bits(),
        sign: sign.bits(),
        star: star.bits(),
        x: x.bits(),
        zero: v.is(b'0').bits(),
        digit: digit.bits(),
        hex: hex.bits(),
    }
}

/// 16 bytes (SSE2 is part of every x86-64 CPU).
#[cfg(target_arch = "x86_64")]
mod sse2;

/// The same on CPUs with AVX2, POPCNT and BMI1/LZCNT (bit counts are
/// otherwise computed in software), found at run time.
#[cfg(target_arch = "x86_64")]
mod avx2;

#[cfg(test)]
mod tests;
