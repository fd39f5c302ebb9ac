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

/// Bytes asked of a file at a time by [`each_line`] (lines are far
/// shorter).
const STEP: usize = 1 << 20;

/// Gives `each` every line of `file`'s bytes `part` (starting at a line's
/// start; it ends at the file's end at the latest) with its offset, its
/// `\n` cut off, read through one window; a last line without a `\n` is
/// given too, and then true is returned.
pub fn each_line(
    file: &std::fs::File,
    part: std::ops::Range<u64>,
    mut each: impl FnMut(&[u8], u64),
) -> std::io::Result<bool> {
    let mut window = jitdump::file_window::Window::new(file)?;
    let part = part.start..part.end.min(window.len());
    let mut offset = part.start;
    let mut want = STEP;
    while offset < part.end {
        let bytes = window.at(offset, want)?;
        let bytes = &bytes[..bytes.len().min((part.end - offset) as usize)];
        if bytes.is_empty() {
            break;
        }
        let (whole, cut) = match memchr::memrchr(b'\n', bytes) {
            Some(last) => (&bytes[..=last], false),
            None if offset + bytes.len() as u64 >= part.end => (bytes, true),
            None => {
                want = bytes.len() * 2;
                continue;
            }
        };
        let mut line_start = 0;
        for end in Newlines::new(whole).chain(cut.then_some(whole.len())) {
            each(&whole[line_start..end], offset + line_start as u64);
            line_start = end + 1;
        }
        if cut {
            return Ok(true);
        }
        offset += whole.len() as u64;
        want = STEP;
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each line of `text`'s bytes `part` with its offset, as
    /// [`each_line`] gives them, and whether the last had no `\n`.
    fn lines_of(text: &[u8], part: std::ops::Range<u64>) -> (Vec<(Vec<u8>, u64)>, bool) {
        let file = crate::output::file_holding(text).unwrap();
        let mut lines = Vec::new();
        let cut = each_line(&file, part, |line, at| lines.push((line.to_vec(), at))).unwrap();
        (lines, cut)
    }

    #[test]
    fn each_line_gives_the_lines_of_a_part_with_their_offsets() {
        // Lines longer than a step, and many short ones: several reads.
        let long = vec![b'x'; STEP + 100];
        let mut text = [&long[..], b"\n\nab\n"].concat();
        for i in 0..100_000 {
            text.extend(format!("{i}\n").as_bytes());
        }
        text.extend(b"tail");
        let (lines, cut) = lines_of(&text, 0..text.len() as u64);
        assert!(cut);
        assert_eq!(lines.len(), 3 + 100_000 + 1);
        assert_eq!((lines[0].0.len(), lines[0].1), (STEP + 100, 0));
        assert_eq!(lines[2], (b"ab".to_vec(), STEP as u64 + 102));
        assert_eq!(lines.last().unwrap().0, b"tail");
        for (line, at) in &lines {
            assert_eq!(&text[*at as usize..][..line.len()], &line[..]);
        }
        // A part that ends after a line's end; an empty part.
        let from = STEP as u64 + 102;
        let (lines, cut) = lines_of(&text, from..from + 5);
        assert_eq!(
            (lines, cut),
            (
                vec![(b"ab".to_vec(), from), (b"0".to_vec(), from + 3)],
                false
            )
        );
        assert_eq!(lines_of(&text, 7..7), (vec![], false));
        // A file of one line without its end, and a part past the end.
        assert_eq!(lines_of(b"abc", 0..3), (vec![(b"abc".to_vec(), 0)], true));
        assert_eq!(
            lines_of(b"ab\n", 0..u64::MAX),
            (vec![(b"ab".to_vec(), 0)], false)
        );
    }

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
