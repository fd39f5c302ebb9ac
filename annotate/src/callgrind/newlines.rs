//! Finding line ends eight bytes at a time. Callgrind lines are short
//! (about eleven bytes on average), too short for `memchr` calls per line
//! to pay off; one pass over whole words finds every newline of a buffer.

const LF: u64 = 0x0a0a_0a0a_0a0a_0a0a;
const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;

/// The offsets of every `\n` in a slice, in order.
pub struct Newlines<'a> {
    hay: &'a [u8],
    /// Offset of the word in `mask`.
    word: usize,
    /// One high bit per newline byte of the current word not yet returned.
    mask: u64,
}

impl<'a> Newlines<'a> {
    pub fn new(hay: &'a [u8]) -> Self {
        let mut it = Newlines {
            hay,
            word: 0,
            mask: 0,
        };
        it.mask = it.load(0);
        it
    }

    /// The newline mask of the word at `at` (shorter at the end).
    fn load(&self, at: usize) -> u64 {
        let rest = &self.hay[at.min(self.hay.len())..];
        let word = match rest.get(..8) {
            Some(w) => u64::from_le_bytes(w.try_into().expect("eight bytes")),
            None => {
                let mut w = [0u8; 8];
                w[..rest.len()].copy_from_slice(rest);
                u64::from_le_bytes(w)
            }
        };
        zero_bytes(word ^ LF)
    }
}

impl Iterator for Newlines<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        while self.mask == 0 {
            self.word += 8;
            if self.word >= self.hay.len() {
                return None;
            }
            self.mask = self.load(self.word);
        }
        let at = self.word + (self.mask.trailing_zeros() / 8) as usize;
        self.mask &= self.mask - 1;
        Some(at)
    }
}

/// The high bit of each byte of `x` that is zero (exact: no carries cross
/// bytes).
fn zero_bytes(x: u64) -> u64 {
    !(((x & LOW7).wrapping_add(LOW7)) | x | LOW7)
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
        }
    }
}
