//! Reading a large file front to back, or a few records of it, without
//! holding it: a window of the file mapped read-only, moved along as the
//! reader goes (read into a buffer where the file cannot be mapped).
//! Memory stays at the window's size whatever the file's.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;

/// Bytes mapped at a time, unless one request needs more.
const WINDOW: usize = 16 << 20;

/// A moving view of a file.
pub struct Window<'f> {
    file: &'f File,
    len: u64,
    /// File offset of `view`'s first byte.
    base: u64,
    view: View,
}

enum View {
    None,
    Mapped(*const u8, usize),
    Buffer(Vec<u8>),
}

impl View {
    fn bytes(&self) -> &[u8] {
        match self {
            View::None => &[],
            // SAFETY: the mapping is live until the view is replaced or
            // dropped, and `&self` keeps it from either.
            View::Mapped(ptr, len) => unsafe { std::slice::from_raw_parts(*ptr, *len) },
            View::Buffer(buf) => buf,
        }
    }
}

impl Drop for View {
    fn drop(&mut self) {
        if let View::Mapped(ptr, len) = *self {
            // SAFETY: unmaps exactly what `map` mapped.
            unsafe { libc::munmap(ptr as *mut libc::c_void, len) };
        }
    }
}

impl<'f> Window<'f> {
    /// A window over `file` (its length read now: bytes appended later are
    /// not seen).
    pub fn new(file: &'f File) -> io::Result<Self> {
        Ok(Window {
            file,
            len: file.metadata()?.len(),
            base: 0,
            view: View::None,
        })
    }

    /// The file's length.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True for an empty file.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes from `offset` on: at least `want` of them, fewer only
    /// where the file ends first; often more.
    pub fn at(&mut self, offset: u64, want: usize) -> io::Result<&[u8]> {
        let have = self.view.bytes().len() as u64;
        let inside = offset >= self.base && offset - self.base <= have;
        let enough = inside && {
            let end = (offset + want as u64).min(self.len);
            end <= self.base + have
        };
        if !enough {
            self.move_to(offset, want)?;
        }
        let from = (offset - self.base) as usize;
        Ok(&self.view.bytes()[from.min(self.view.bytes().len())..])
    }

    fn move_to(&mut self, offset: u64, want: usize) -> io::Result<()> {
        self.view = View::None;
        let page = page_size();
        let base = offset.min(self.len) / page * page;
        let need = (offset - base) as usize + want;
        let len = need.max(WINDOW).min((self.len - base) as usize);
        self.base = base;
        if len == 0 {
            return Ok(());
        }
        self.view = match map(self.file, base, len) {
            Some(ptr) => View::Mapped(ptr, len),
            None => {
                let mut buf = vec![0; len];
                self.file.read_exact_at(&mut buf, base)?;
                View::Buffer(buf)
            }
        };
        Ok(())
    }
}

/// `len` bytes of `file` from `offset` (page aligned), mapped read-only;
/// `None` where the file cannot be mapped.
fn map(file: &File, offset: u64, len: usize) -> Option<*const u8> {
    // SAFETY: a fresh private read-only mapping of an open file; nothing
    // else refers to it.
    let ptr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_PRIVATE,
            file.as_raw_fd(),
            offset as libc::off_t,
        )
    };
    if ptr == libc::MAP_FAILED {
        return None;
    }
    // SAFETY: advice on the mapping just made.
    unsafe { libc::madvise(ptr, len, libc::MADV_SEQUENTIAL) };
    Some(ptr as *const u8)
}

fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(size).ok().filter(|&s| s > 0).unwrap_or(4096)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn every_request_sees_the_files_own_bytes() {
        let data: Vec<u8> = (0..(3 * WINDOW + 1234)).map(|i| (i % 251) as u8).collect();
        let mut file = tempfile();
        file.write_all(&data).unwrap();
        let mut w = Window::new(&file).unwrap();
        let len = data.len() as u64;
        let offsets = [
            0,
            5,
            WINDOW as u64 - 3,
            2 * WINDOW as u64 + 7,
            len - 10,
            len,
            40,
        ];
        for offset in offsets {
            for want in [0, 1, 16, WINDOW + 100] {
                let got = w.at(offset, want).unwrap();
                let end = (offset as usize + want).min(data.len());
                assert!(got.len() >= end - offset as usize, "{offset} {want}");
                assert_eq!(got, &data[offset as usize..offset as usize + got.len()]);
            }
        }
    }

    fn tempfile() -> File {
        let path = std::env::temp_dir().join(format!("window-{}", std::process::id()));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        std::fs::remove_file(&path).unwrap();
        file
    }
}
