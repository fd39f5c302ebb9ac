//! Reads of the JIT's memory that fail instead of crashing: a descriptor,
//! entry or symbol may point anywhere.
//!
//! A read is checked against the process's readable mappings, as
//! /proc/self/maps lists them, re-read only when an address is not in the
//! copy held (5 times in an Erlang run of 100 registrations). No system
//! call is made otherwise: under Valgrind each one hands the CPU to
//! another thread, which may spin meanwhile.

/// The readable ranges of the address space, merged where they touch.
#[derive(Debug, Default)]
pub struct Memory {
    readable: Vec<(usize, usize)>,
}

impl Memory {
    /// A copy of `len` bytes at `addr`, or None where any of them is not in
    /// a readable mapping.
    pub fn copy(&mut self, addr: usize, len: usize) -> Option<Vec<u8>> {
        if !self.readable(addr, len) {
            return None;
        }
        // SAFETY: the range lies in readable mappings (checked just now),
        // which the JIT keeps while it is inside its registration call.
        Some(unsafe { std::slice::from_raw_parts(addr as *const u8, len) }.to_vec())
    }

    /// The pointer-sized words at `addr`, or None where they cannot be read.
    pub fn words<const N: usize>(&mut self, addr: usize) -> Option<[u64; N]> {
        let bytes = self.copy(addr, N * 8)?;
        let mut out = [0u64; N];
        for (word, chunk) in out.iter_mut().zip(bytes.chunks_exact(8)) {
            *word = u64::from_ne_bytes(chunk.try_into().ok()?);
        }
        Some(out)
    }

    /// Whether `len` bytes at `addr` lie in readable mappings; the list is
    /// read again once when they do not seem to.
    pub fn readable(&mut self, addr: usize, len: usize) -> bool {
        let Some(end) = addr.checked_add(len) else {
            return false;
        };
        if covered(&self.readable, addr, end) {
            return true;
        }
        self.readable = read_maps();
        covered(&self.readable, addr, end)
    }
}

/// Whether `[start, end)` lies inside one of the merged `ranges`.
fn covered(ranges: &[(usize, usize)], start: usize, end: usize) -> bool {
    let i = ranges.partition_point(|&(_, e)| e <= start);
    ranges.get(i).is_some_and(|&(s, e)| s <= start && end <= e)
}

/// The readable mappings of /proc/self/maps, merged where they touch.
fn read_maps() -> Vec<(usize, usize)> {
    let text = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    let mut out: Vec<(usize, usize)> = Vec::new();
    for line in text.lines() {
        let mut fields = line.split_whitespace();
        let (Some(range), Some(perms)) = (fields.next(), fields.next()) else {
            continue;
        };
        let Some((s, e)) = range.split_once('-') else {
            continue;
        };
        let (Ok(s), Ok(e)) = (usize::from_str_radix(s, 16), usize::from_str_radix(e, 16)) else {
            continue;
        };
        if !perms.starts_with('r') {
            continue;
        }
        match out.last_mut() {
            Some(last) if last.1 == s => last.1 = e,
            _ => out.push((s, e)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_is_mapped_and_refuses_what_is_not() {
        let mut memory = Memory::default();
        let data = vec![7u8; 10_000];
        assert_eq!(
            memory.copy(data.as_ptr() as usize, data.len()),
            Some(data.clone())
        );
        assert_eq!(memory.copy(8, 16), None, "the first page is never mapped");
        assert_eq!(memory.copy(usize::MAX - 4, 16), None, "wraps around");
        assert!(!memory.readable(data.as_ptr() as usize, usize::MAX / 2));
    }

    #[test]
    fn merged_ranges_cover_only_what_they_hold() {
        let ranges = [(0x1000, 0x3000), (0x5000, 0x6000)];
        assert!(covered(&ranges, 0x1000, 0x3000));
        assert!(covered(&ranges, 0x2fff, 0x3000));
        assert!(!covered(&ranges, 0x2fff, 0x3001));
        assert!(!covered(&ranges, 0x3000, 0x3001));
        assert!(covered(&ranges, 0x5000, 0x5001));
        assert!(!covered(&ranges, 0x6000, 0x6001));
    }
}
