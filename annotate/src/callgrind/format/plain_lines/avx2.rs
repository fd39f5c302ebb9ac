//! The AVX2 classes of a block, 32 bytes at a time, used where the CPU
//! has AVX2 (checked once at run time).

use super::{breaks_with, classes, Breaks, Classify, Lanes, Masks, BLOCK};
use std::arch::x86_64::*;

pub(super) fn detected() -> bool {
    is_x86_feature_detected!("avx2")
        && is_x86_feature_detected!("popcnt")
        && is_x86_feature_detected!("bmi1")
        && is_x86_feature_detected!("lzcnt")
}

#[target_feature(enable = "avx2,popcnt,bmi1,lzcnt")]
pub(super) fn breaks(chunk: &[u8], out: &mut Breaks) {
    breaks_with::<Avx2>(chunk, out);
}

struct Avx2;

impl Classify for Avx2 {
    #[inline(always)]
    fn masks(block: &[u8; BLOCK]) -> Masks {
        // SAFETY: only reached from `breaks`, compiled for AVX2.
        // SAFETY: AVX2 is enabled where a `Wide` exists (see the impl).
        unsafe { masks(block) }
    }
}

/// The classes of a block, 32 bytes at a time.
#[target_feature(enable = "avx2")]
pub(super) fn masks(block: &[u8; BLOCK]) -> Masks {
    let mut m = Masks::default();
    for (i, half) in block.chunks_exact(32).enumerate() {
        // SAFETY: reads the 32 bytes of `half` (unaligned loads are allowed).
        let v = unsafe { _mm256_loadu_si256(half.as_ptr().cast()) };
        m.merge(half_masks(v), 32 * i as u32);
    }
    m
}

/// 32 bytes. Made only in `half_masks`, compiled for AVX2, and never
/// returned from it (the trait's promise).
#[derive(Clone, Copy)]
struct Wide(__m256i);

#[target_feature(enable = "avx2")]
fn half_masks(v: __m256i) -> Masks {
    classes(Wide(v))
}

// SAFETY: `Wide` exists only inside `half_masks`, compiled for AVX2,
// where these methods inline; so AVX2 is there wherever they run.
unsafe impl Lanes for Wide {
    #[inline(always)]
    fn is(self, c: u8) -> Self {
        // SAFETY: AVX2 is enabled where a `Wide` exists (see the impl).
        Wide(unsafe { _mm256_cmpeq_epi8(self.0, _mm256_set1_epi8(c as i8)) })
    }
    #[inline(always)]
    fn within(self, lo: u8, hi: u8) -> Self {
        // SAFETY: AVX2 is enabled where a `Wide` exists (see the impl).
        Wide(unsafe {
            let above = _mm256_cmpgt_epi8(self.0, _mm256_set1_epi8(lo as i8 - 1));
            _mm256_andnot_si256(_mm256_cmpgt_epi8(self.0, _mm256_set1_epi8(hi as i8)), above)
        })
    }
    #[inline(always)]
    fn or(self, other: Self) -> Self {
        // SAFETY: AVX2 is enabled where a `Wide` exists (see the impl).
        Wide(unsafe { _mm256_or_si256(self.0, other.0) })
    }
    #[inline(always)]
    fn lower(self) -> Self {
        // SAFETY: AVX2 is enabled where a `Wide` exists (see the impl).
        Wide(unsafe { _mm256_or_si256(self.0, _mm256_set1_epi8(0x20)) })
    }
    #[inline(always)]
    fn bits(self) -> u64 {
        // SAFETY: AVX2 is enabled where a `Wide` exists (see the impl).
        u64::from(unsafe { _mm256_movemask_epi8(self.0) } as u32)
    }
}
