//! What the pages live mode would map over are now: live mode only
//! replaces pages the JIT owns alone (private, anonymous) and cannot write
//! to, or pages it mapped itself. The kernel is asked about the mappings
//! of the range alone (`PROCMAP_QUERY`, Linux 6.11), which costs the same
//! however many mappings the process has; older kernels give the whole of
//! /proc/self/maps to read.

use std::fs::File;
use std::os::fd::AsRawFd;
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

/// `struct procmap_query` of linux/fs.h.
#[repr(C)]
#[derive(Default)]
struct ProcmapQuery {
    size: u64,
    query_flags: u64,
    query_addr: u64,
    vma_start: u64,
    vma_end: u64,
    vma_flags: u64,
    vma_page_size: u64,
    vma_offset: u64,
    inode: u64,
    dev_major: u32,
    dev_minor: u32,
    vma_name_size: u32,
    build_id_size: u32,
    vma_name_addr: u64,
    build_id_addr: u64,
}

/// `_IOWR('f', 17, struct procmap_query)`.
const PROCMAP_QUERY: libc::c_ulong = 0xc068_6611;
const VMA_READABLE: u64 = 1;
const VMA_WRITABLE: u64 = 2;
const VMA_SHARED: u64 = 8;

/// A file live mode mapped: its device (major, minor) and inode.
pub type FileId = (u32, u32, u64);

/// [`check`] by asking the kernel through `maps` (/proc/self/maps, open)
/// for each mapping of `[start, end)`; `ours` are live mode's own image
/// files. `None` where the kernel has no such query: read the file.
pub fn query(
    maps: &File,
    start: u64,
    end: u64,
    ours: &std::collections::BTreeSet<FileId>,
) -> Option<Result<(), Refusal>> {
    let mut addr = start;
    while addr < end {
        let mut q = ProcmapQuery {
            size: std::mem::size_of::<ProcmapQuery>() as u64,
            query_addr: addr,
            ..ProcmapQuery::default()
        };
        // SAFETY: a query struct of the size it declares; no name or build
        // id is asked for, so the kernel writes only into `q`.
        let rc = unsafe { libc::ioctl(maps.as_raw_fd(), PROCMAP_QUERY, &mut q as *mut _) };
        if rc != 0 {
            return match std::io::Error::last_os_error().raw_os_error() {
                Some(libc::ENOENT) => Some(Err(Refusal::Unmapped)),
                _ => None, // ENOTTY, EINVAL: no such query here
            };
        }
        if q.vma_start > addr || q.vma_end <= addr || q.vma_flags & VMA_READABLE == 0 {
            return Some(Err(Refusal::Unmapped));
        }
        if q.vma_flags & VMA_WRITABLE != 0 {
            return Some(Err(Refusal::Writable));
        }
        let ours = ours.contains(&(q.dev_major, q.dev_minor, q.inode));
        if q.vma_flags & VMA_SHARED != 0 || !(q.inode == 0 || ours) {
            return Some(Err(Refusal::Shared));
        }
        addr = q.vma_end;
    }
    Some(Ok(()))
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
    fn the_kernel_query_judges_pages_as_the_file_does() {
        let maps = File::open("/proc/self/maps").unwrap();
        let page = 4096;
        // SAFETY: fresh anonymous mappings of our own.
        let map = |prot| unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                2 * page,
                prot,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            ) as u64
        };
        let rx = map(libc::PROT_READ | libc::PROT_EXEC);
        let rwx = map(libc::PROT_READ | libc::PROT_WRITE | libc::PROT_EXEC);
        let none = std::collections::BTreeSet::new();
        let Some(got) = query(&maps, rx, rx + 2 * page as u64, &none) else {
            return; // a kernel before 6.11: the file is read instead
        };
        assert_eq!(got, Ok(()));
        let whole = |a: u64| (a, a + 2 * page as u64);
        let (a, b) = whole(rwx);
        assert_eq!(query(&maps, a, b, &none), Some(Err(Refusal::Writable)));
        // SAFETY: the second page of our own mapping.
        unsafe { libc::munmap((rx + page as u64) as *mut _, page) };
        let (a, b) = whole(rx);
        assert_eq!(query(&maps, a, b, &none), Some(Err(Refusal::Unmapped)));
        let libc_code = libc::getpid as *const () as u64;
        let (a, b) = (libc_code, libc_code + 1);
        assert_eq!(query(&maps, a, b, &none), Some(Err(Refusal::Shared)));
    }

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
