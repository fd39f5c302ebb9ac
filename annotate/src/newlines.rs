//! Finding line ends 64 bytes at a time. Callgrind lines are short (about
//! eleven bytes on average) and perf map lines not much longer, too short
//! for a `memchr` call per line to pay off; one pass over blocks finds
//! every newline of a buffer. On x86-64 a block takes four SSE2 compares.

const BLOCK: usize = 64;

/// The offsets of every `\n` in a slice, in order.
pub struct Newlines<'a> {
    hay: &'a [u8],
    /// Offset of the block in `mask`.
    block: usize,
    /// One bit per newline byte of the current block not yet returned.
    mask: u64,
}

impl<'a> Newlines<'a> {
    pub fn new(hay: &'a [u8]) -> Self {
        Newlines {
            hay,
            block: 0,
            mask: block_mask(hay, 0),
        }
    }

    /// Goes on from `offset`: newlines before it are passed over.
    pub fn skip_to(&mut self, offset: usize) {
        self.block = offset / BLOCK * BLOCK;
        let before = (1u64 << (offset - self.block)) - 1;
        self.mask = block_mask(self.hay, self.block) & !before;
    }
}

impl Iterator for Newlines<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.mask == 0 {
            self.block += BLOCK;
            if self.block >= self.hay.len() {
                return None;
            }
            self.mask = block_mask(self.hay, self.block);
        }
        let at = self.block + self.mask.trailing_zeros() as usize;
        self.mask &= self.mask - 1;
        Some(at)
    }
}

/// The newline bits of the block at `at` (zero-padded at the end).
fn block_mask(hay: &[u8], at: usize) -> u64 {
    let rest = &hay[at.min(hay.len())..];
    match rest.first_chunk::<BLOCK>() {
        Some(block) => newline_bits(block),
        None => {
            let mut block = [0u8; BLOCK];
            block[..rest.len()].copy_from_slice(rest);
            newline_bits(&block)
        }
    }
}

/// Bit i set where `block[i]` is `\n`: four 16-byte compares (SSE2 is
/// part of every x86-64 CPU).
#[cfg(target_arch = "x86_64")]
#[inline]
fn newline_bits(block: &[u8; BLOCK]) -> u64 {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8};
    let mut bits = 0;
    for (i, chunk) in block.chunks_exact(16).enumerate() {
        // SAFETY: SSE2 is always present on x86-64; the load reads the 16
        // bytes of `chunk` (unaligned loads are allowed).
        let mask = unsafe {
            let bytes = _mm_loadu_si128(chunk.as_ptr().cast());
            _mm_movemask_epi8(_mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'\n' as i8)))
        };
        bits |= u64::from(mask as u16) << (16 * i);
    }
    bits
}

/// Bit i set where `block[i]` is `\n`.
#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn newline_bits(block: &[u8; BLOCK]) -> u64 {
    block
        .iter()
        .enumerate()
        .fold(0, |bits, (i, &b)| bits | (u64::from(b == b'\n') << i))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_what_a_byte_scan_finds() {
        let mut text = Vec::new();
        for i in 0..300usize {
            text.extend(std::iter::repeat_n(b'x', i % 19));
            text.push(if i % 7 == 0 { 0x8a } else { b'\n' });
            text.push(0x0b);
        }
        for len in 0..text.len() {
            let hay = &text[..len];
            let want: Vec<_> = (0..len).filter(|&i| hay[i] == b'\n').collect();
            assert_eq!(Newlines::new(hay).collect::<Vec<_>>(), want, "len {len}");
            let from = len * 5 / 7;
            let mut skipped = Newlines::new(hay);
            skipped.next();
            skipped.skip_to(from);
            let rest: Vec<_> = want.iter().copied().filter(|&i| i >= from).collect();
            assert_eq!(skipped.collect::<Vec<_>>(), rest, "len {len} from {from}");
        }
    }
}
