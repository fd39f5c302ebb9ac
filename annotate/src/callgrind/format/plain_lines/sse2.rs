//! The SSE2 classes of a block (every x86-64 CPU has SSE2).

use super::{classes, Lanes, Masks};
use std::arch::x86_64::*;

/// The classes of 16 bytes, in bits 0..16.
#[inline(always)]
pub(super) fn masks(chunk: &[u8; 16]) -> Masks {
    // SAFETY: reads the 16 bytes of `chunk` (unaligned loads are allowed).
    classes(unsafe { _mm_loadu_si128(chunk.as_ptr().cast()) })
}

// SAFETY: SSE2 is part of x86-64: every CPU this runs on has it.
unsafe impl Lanes for __m128i {
    #[inline(always)]
    fn is(self, c: u8) -> Self {
        // SAFETY: SSE2 is part of x86-64.
        unsafe { _mm_cmpeq_epi8(self, _mm_set1_epi8(c as i8)) }
    }
    #[inline(always)]
    fn within(self, lo: u8, hi: u8) -> Self {
        // SAFETY: SSE2 is part of x86-64.
        unsafe {
            let above = _mm_cmpgt_epi8(self, _mm_set1_epi8(lo as i8 - 1));
            _mm_and_si128(above, _mm_cmplt_epi8(self, _mm_set1_epi8(hi as i8 + 1)))
        }
    }
    #[inline(always)]
    fn or(self, other: Self) -> Self {
        // SAFETY: SSE2 is part of x86-64.
        unsafe { _mm_or_si128(self, other) }
    }
    #[inline(always)]
    fn lower(self) -> Self {
        // SAFETY: SSE2 is part of x86-64.
        unsafe { _mm_or_si128(self, _mm_set1_epi8(0x20)) }
    }
    #[inline(always)]
    fn bits(self) -> u64 {
        // SAFETY: SSE2 is part of x86-64.
        u64::from(unsafe { _mm_movemask_epi8(self) } as u16)
    }
}
