//! What the pages live mode would map over are now, from /proc/self/maps:
//! live mode only replaces pages the JIT owns alone (private, anonymous)
//! and cannot write to, or pages it mapped itself.

use std::path::Path;

/// Why pages cannot be mapped live.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Some page is writable (RWX code): a read-only file mapping would
    /// crash the JIT's next write.
    Writable,
    /// Some page is shared or file-backed (a dual mapping, say a memfd
    /// mapped once writable and once executable): a private copy would
    /// stop seeing the JIT's writes.
    Shared,
    /// Some page is not mapped at all, or not readable.
    Unmapped,
}

impl Refusal {
    /// The one-line reason, for the warning.
    pub fn reason(&self) -> &'static str {
        match self {
            Refusal::Writable => {
                "the code's pages are writable (RWX): mapping them read-only would crash the JIT"
            }
            Refusal::Shared => {
                "the code's pages are shared or file-backed (a dual mapping?): a private copy \
                 would not see the JIT's writes"
            }
            Refusal::Unmapped => "the code's pages are not all mapped and readable",
        }
    }
}

/// One line of /proc/self/maps.
struct Segment<'a> {
    start: u64,
    end: u64,
    perms: &'a str,
    inode: u64,
    path: &'a str,
}

fn parse(line: &str) -> Option<Segment<'_>> {
    let mut fields = line.split_ascii_whitespace();
    let (start, end) = fields.next()?.split_once('-')?;
    let perms = fields.next()?;
    let _offset = fields.next()?;
    let _device = fields.next()?;
    let inode = fields.next()?.parse().ok()?;
    let path = fields.next().unwrap_or("");
    Some(Segment {
        start: u64::from_str_radix(start, 16).ok()?,
        end: u64::from_str_radix(end, 16).ok()?,
        perms,
        inode,
        path,
    })
}

/// Checks `[start, end)` against `maps` (the text of /proc/self/maps): every
/// byte mapped, nothing writable, and each segment either private and
/// anonymous or a file in `own_dir` (an image live mode mapped before).
pub fn check(maps: &str, start: u64, end: u64, own_dir: &Path) -> Result<(), Refusal> {
    let mut covered = start;
    // Only the range is read of lines that cannot overlap (most of them).
    let overlaps = |line: &&str| {
        let range = line.split_once(' ').and_then(|(r, _)| r.split_once('-'));
        range.is_some_and(|(a, b)| {
            let a = u64::from_str_radix(a, 16).unwrap_or(u64::MAX);
            let b = u64::from_str_radix(b, 16).unwrap_or(0);
            b > start && a < end
        })
    };
    let mut segments: Vec<Segment> = maps.lines().filter(overlaps).filter_map(parse).collect();
    segments.sort_by_key(|s| s.start);
    for s in &segments {
        if s.start > covered {
            return Err(Refusal::Unmapped);
        }
        covered = covered.max(s.end);
        if !s.perms.starts_with('r') {
            return Err(Refusal::Unmapped);
        }
        if s.perms.contains('w') {
            return Err(Refusal::Writable);
        }
        let private = s.perms.as_bytes().get(3) == Some(&b'p');
        let anonymous = s.inode == 0;
        let ours = Path::new(s.path).parent() == Some(own_dir);
        if !private || !(anonymous || ours) {
            return Err(Refusal::Shared);
        }
    }
    if covered < end {
        return Err(Refusal::Unmapped);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAPS: &str = "\
00400000-00401000 r-xp 00000000 00:00 0
00401000-00402000 r-xp 00000000 08:01 77 /tmp/callgrind-jit-9/jit-1-400000.so
00402000-00403000 rwxp 00000000 00:00 0
00403000-00404000 r-xs 00000000 00:01 5 /memfd:code (deleted)
00404000-00405000 r-xp 00000000 08:01 12 /usr/lib/libc.so.6
00406000-00407000 r-xp 00000000 00:00 0
00408000-00409000 --xp 00000000 00:00 0
";

    #[test]
    fn only_private_anonymous_or_own_read_only_pages_pass() {
        let own = Path::new("/tmp/callgrind-jit-9");
        assert_eq!(check(MAPS, 0x400000, 0x402000, own), Ok(()));
        assert_eq!(check(MAPS, 0x400800, 0x400900, own), Ok(()));
        assert_eq!(check(MAPS, 0x402000, 0x403000, own), Err(Refusal::Writable));
        assert_eq!(check(MAPS, 0x403000, 0x404000, own), Err(Refusal::Shared));
        assert_eq!(check(MAPS, 0x404000, 0x405000, own), Err(Refusal::Shared));
        assert_eq!(check(MAPS, 0x405000, 0x406000, own), Err(Refusal::Unmapped));
        assert_eq!(check(MAPS, 0x404000, 0x407000, own), Err(Refusal::Shared));
        assert_eq!(check(MAPS, 0x406000, 0x408000, own), Err(Refusal::Unmapped));
        assert_eq!(check(MAPS, 0x408000, 0x409000, own), Err(Refusal::Unmapped));
        let other = Path::new("/tmp/callgrind-jit-10");
        assert_eq!(check(MAPS, 0x401000, 0x402000, other), Err(Refusal::Shared));
    }
}
