//! A byte buffer whose bytes begin on a cache line, for the kernel to
//! read files into.
//!
//! The kernel's copy out of the page cache (`rep movsb` on this machine,
//! an AMD EPYC) is about six times slower where the destination lies 1 to
//! 31 bytes after the source, counted modulo a page. A large `Vec<u8>`
//! begins 16 bytes past a page (the allocator puts its header in front),
//! so every read of a page-aligned part of a file into one was slow:
//! 1 MiB `pread`s of a page-cached 600 MB file took 0.32 s of system time
//! into it and 0.05 s into a buffer 32, 64 or 4096 bytes past a page.
//! Bytes read from an offset on an [`ALIGN`] boundary into a buffer on one
//! are always fast.

use std::ops::{Deref, DerefMut};

/// The boundary a buffer's first byte lies on.
pub const ALIGN: usize = 64;

/// The first index of `buf` at or after `from` whose byte lies on an
/// [`ALIGN`] boundary (`from` itself where `align_offset` gives no answer:
/// only the speed depends on it). `buf` needs `ALIGN - 1` bytes of room
/// after `from` for it to be found.
pub fn aligned_from(buf: &[u8], from: usize) -> usize {
    let offset = buf[from..].as_ptr().align_offset(ALIGN);
    if offset < ALIGN {
        from + offset
    } else {
        from
    }
}

/// A growable byte buffer whose first byte lies on an [`ALIGN`] boundary
/// (see [`aligned_from`]).
#[derive(Default)]
pub struct AlignedBuf {
    /// The allocation; the bytes are `store[start..start + len]`.
    store: Vec<u8>,
    start: usize,
    len: usize,
}

impl AlignedBuf {
    /// Bytes it can hold without a new allocation.
    pub fn capacity(&self) -> usize {
        self.store.len() - self.start
    }

    /// Makes it `len` bytes long, like `Vec::resize` with zeros: the bytes
    /// kept stay, the new ones are zero.
    pub fn resize(&mut self, len: usize) {
        if len > self.capacity() {
            // (a new allocation is zeroed)
            self.reserve_total(len);
        } else if len > self.len {
            let at = self.start;
            self.store[at + self.len..at + len].fill(0);
        }
        self.len = len;
    }

    /// Shortens it to `len` bytes (no change where it is shorter).
    pub fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    /// Empties it, keeping the allocation.
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Appends `bytes`.
    pub fn extend_from_slice(&mut self, bytes: &[u8]) {
        let len = self.len + bytes.len();
        if len > self.capacity() {
            self.reserve_total(len.max(2 * self.capacity()));
        }
        let at = self.start + self.len;
        self.store[at..at + bytes.len()].copy_from_slice(bytes);
        self.len = len;
    }

    /// A new allocation for `total` bytes, aligned, holding the bytes.
    fn reserve_total(&mut self, total: usize) {
        let mut store = vec![0; total + ALIGN];
        let start = aligned_from(&store, 0);
        store[start..start + self.len].copy_from_slice(self);
        self.store = store;
        self.start = start;
    }
}

impl Deref for AlignedBuf {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.store[self.start..self.start + self.len]
    }
}

impl DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.store[self.start..self.start + self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn aligned(buf: &AlignedBuf) -> bool {
        (buf.as_ptr() as usize).is_multiple_of(ALIGN)
    }

    #[test]
    fn it_holds_what_a_vec_would_and_begins_on_a_line() {
        let mut buf = AlignedBuf::default();
        buf.resize(100);
        let mut vec = vec![0u8; 100];
        assert!(aligned(&buf));
        buf[3] = 7;
        vec[3] = 7;
        // (truncate to, resize to, then so many ones appended)
        let steps = [
            (10, 10, 0),
            (10, 50, 0),
            (400, 50, 300),
            (20, 20, 0),
            (20, 5000, 0),
        ];
        for (to, size, ones) in steps {
            buf.truncate(to);
            vec.truncate(to);
            buf.resize(size);
            vec.resize(size, 0);
            buf.extend_from_slice(&vec![1; ones]);
            vec.extend_from_slice(&vec![1; ones]);
            assert_eq!(&buf[..], &vec[..]);
            assert!(aligned(&buf) && buf.capacity() >= buf.len());
        }
        buf.clear();
        buf.extend_from_slice(b"tail");
        assert_eq!(&buf[..], b"tail");
    }

    #[test]
    fn the_aligned_index_is_the_first_on_a_line() {
        let buf = vec![0u8; 300];
        for from in [0, 1, 63, 64, 100, 200] {
            let at = aligned_from(&buf, from);
            assert!((from..from + ALIGN).contains(&at), "{from} {at}");
            assert!(
                (buf[at..].as_ptr() as usize).is_multiple_of(ALIGN),
                "{from}"
            );
        }
    }

    #[test]
    fn growth_doubles() {
        let mut buf = AlignedBuf::default();
        buf.extend_from_slice(b"callgrind");
        assert_eq!(&buf[..], b"callgrind");
        assert!(aligned(&buf));
        // Growth doubles: appends take amortised constant time.
        buf.extend_from_slice(&[1; 1001]);
        let room = buf.capacity();
        buf.extend_from_slice(&vec![2; room - buf.len() + 1]);
        assert!(buf.capacity() >= 2 * room, "{room} {}", buf.capacity());
    }

    #[test]
    fn growing_within_the_allocation_zeroes_the_new_bytes() {
        let mut buf = AlignedBuf::default();
        buf.resize(64);
        buf.fill(9);
        buf.truncate(8);
        buf.resize(64);
        assert_eq!(&buf[..8], &[9; 8]);
        assert_eq!(&buf[8..], &[0; 56]);
        assert!(buf.capacity() >= 64);
    }
}
