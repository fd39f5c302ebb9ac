//! Live mode: Valgrind names JIT frames itself, in every tool.
//!
//! Valgrind reads symbols and lines from ELF files mapped from disk once it
//! has seen an r-x and an rw- mapping of the same file. For each function
//! whose code occupies whole pages of its own, live mode writes a small ELF
//! file holding those pages' exact bytes at their own address (see
//! [`elf`]), with a symbol and DWARF lines ([`dwarf`]), and maps it over
//! the JIT's pages with `MAP_FIXED`: the bytes are the same, so the JIT's
//! code does not change. The files live in `$TMPDIR/callgrind-jit-PID/`
//! until `callgrind-jit clean` removes the folders of dead processes.
//!
//! When the JIT frees live-mode code it should unmap the pages (or map
//! fresh memory over them) before reusing the addresses: Valgrind drops a
//! file's symbols when its mapping goes away, and not before.

mod maps;

use crate::image::{self, dwarf, elf};

use std::collections::BTreeMap;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::PathBuf;

use crate::live_folder;
use crate::writer::LineEntry;

/// Why a function could not be mapped live.
#[derive(Debug)]
pub enum LiveError {
    /// The pages are not the JIT's alone, or are writable (the jitdump is
    /// used for this function).
    Refused(maps::Refusal),
    /// Building or mapping the file failed.
    Failed(String),
}

/// A function mapped live, kept so its image can be rebuilt when another
/// function is registered on the same pages.
struct Mapped {
    size: u64,
    name: Vec<u8>,
    /// (offset, line, column, file).
    lines: Vec<(u32, u32, u32, Vec<u8>)>,
}

/// Pages mapped from one image file, and the rw- page that goes with it.
struct Image {
    end: u64,
    rw_addr: usize,
}

/// The per-process folder, the functions and images mapped so far, and a
/// counter for file names.
pub struct Live {
    /// The process it was made for ([`crate::sys::fork_generation`]).
    generation: u64,
    dir: PathBuf,
    next: u64,
    page: u64,
    /// By address.
    functions: BTreeMap<u64, Mapped>,
    /// By first page.
    images: BTreeMap<u64, Image>,
    /// /proc/self/maps, open for the kernel's per-range query.
    maps: Option<File>,
    /// The image files mapped so far (their pages may be mapped again).
    files: std::collections::BTreeSet<maps::FileId>,
    /// [`live_folder::LOCK_FILE`], locked for as long as the process lives.
    _lock: File,
}

impl Live {
    /// Creates `$TMPDIR/callgrind-jit-PID/` (mode 0700; an existing folder
    /// that is a symlink or not ours is refused).
    pub fn new(pid: u32) -> io::Result<Live> {
        let dir = live_folder::dir_for(pid);
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => check_own_dir(&dir)?,
            Err(e) => return Err(e),
        }
        let lock = lock_dir(&dir)?;
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64;
        Ok(Live {
            generation: crate::sys::fork_generation(),
            dir,
            next: 0,
            page,
            functions: BTreeMap::new(),
            images: BTreeMap::new(),
            maps: File::open("/proc/self/maps").ok(),
            files: Default::default(),
            _lock: lock,
        })
    }

    /// True in a process forked since this was made: its folder and
    /// file numbers are the parent's.
    pub fn is_parents(&self) -> bool {
        self.generation != crate::sys::fork_generation()
    }

    /// The child's own live state after a fork: a folder of its own, and
    /// the functions and images it inherited (they are mapped in it too).
    pub fn for_child(self, pid: u32) -> io::Result<Live> {
        let mut child = Live::new(pid)?;
        child.functions = self.functions;
        child.images = self.images;
        child.files = self.files;
        Ok(child)
    }

    /// Maps an ELF image over the pages holding `code`, naming `code` and
    /// every function mapped live on those pages before.
    pub fn map(&mut self, code: &[u8], name: &[u8], lines: &[LineEntry]) -> Result<(), LiveError> {
        let addr = code.as_ptr() as u64;
        let size = code.len() as u64;
        let (start, end) = self.pages_with_neighbours(addr, size);
        self.check_pages(start, end)?;
        self.remember(addr, size, name, lines);
        // SAFETY: the kernel shows [start, end) mapped and readable.
        let pages =
            unsafe { std::slice::from_raw_parts(start as *const u8, (end - start) as usize) };
        let rw = self.map_image(start, end, pages)?;
        let replaced: Vec<u64> = self.images.range(start..end).map(|(&s, _)| s).collect();
        for old in replaced {
            if let Some(image) = self.images.remove(&old) {
                // SAFETY: the old image's own rw- page, no longer needed.
                unsafe { libc::munmap(image.rw_addr as *mut _, self.page as usize) };
            }
        }
        self.images.insert(start, Image { end, rw_addr: rw });
        Ok(())
    }

    /// Refuses pages that are not the JIT's alone or are writable (see
    /// [`maps`]): asked of the kernel per range where it can be, else
    /// read off the whole of /proc/self/maps.
    fn check_pages(&self, start: u64, end: u64) -> Result<(), LiveError> {
        let asked = self
            .maps
            .as_ref()
            .and_then(|f| maps::query(f, start, end, &self.files));
        let result = match asked {
            Some(result) => result,
            None => {
                let text = std::fs::read_to_string("/proc/self/maps")
                    .map_err(failed("reading /proc/self/maps"))?;
                maps::check(&text, start, end, &self.dir)
            }
        };
        result.map_err(LiveError::Refused)
    }

    /// The whole pages of `[addr, addr+size)`, widened to take in every
    /// image they touch (its functions are named again in the new one).
    fn pages_with_neighbours(&self, addr: u64, size: u64) -> (u64, u64) {
        let mut start = addr / self.page * self.page;
        let mut end = (addr + size).div_ceil(self.page) * self.page;
        loop {
            // Images do not overlap: of those starting below `start`, only
            // the last can reach into the range.
            let below = self.images.range(..start).next_back();
            let reaching = below.filter(|(_, i)| i.end > start);
            let inside = self.images.range(start..end);
            let touching = reaching
                .into_iter()
                .chain(inside)
                .fold((start, end), |(a, b), (&s, i)| (a.min(s), b.max(i.end)));
            if touching == (start, end) {
                return (start, end);
            }
            (start, end) = touching;
        }
    }

    /// Keeps the function (replacing any it overlaps: the address reused).
    fn remember(&mut self, addr: u64, size: u64, name: &[u8], lines: &[LineEntry]) {
        // Functions kept do not overlap: of those starting below `addr`,
        // only the last can reach into the new one.
        let below = self.functions.range(..addr).next_back();
        let overlapped: Vec<u64> = below
            .into_iter()
            .chain(self.functions.range(addr..addr + size))
            .filter(|(&a, f)| a + f.size > addr)
            .map(|(&a, _)| a)
            .collect();
        for a in overlapped {
            self.functions.remove(&a);
        }
        let lines = lines
            .iter()
            .map(|l| (l.offset, l.line, l.column, l.file.to_vec()))
            .collect();
        let name = name.to_vec();
        self.functions.insert(addr, Mapped { size, name, lines });
    }

    /// Writes the image of `[start, end)` with its functions and maps it;
    /// returns its rw- page.
    fn map_image(&mut self, start: u64, end: u64, pages: &[u8]) -> Result<usize, LiveError> {
        let inside = || self.functions.range(start..end);
        let lines: Vec<Vec<LineEntry>> = inside()
            .map(|(_, f)| {
                f.lines
                    .iter()
                    .map(|(o, l, c, file)| LineEntry::new(*o, *l, *c, &file[..]))
                    .collect()
            })
            .collect();
        let functions: Vec<dwarf::Function> = inside()
            .zip(&lines)
            .map(|((&addr, f), lines)| dwarf::Function {
                name: &f.name,
                addr,
                size: f.size,
                lines,
            })
            .collect();
        let rw = Reservation::new(self.page as usize).map_err(failed("reserving a page"))?;
        let pieces = [elf::Piece {
            addr: start,
            bytes: pages,
        }];
        let writer = b"callgrind-jit live mode\0";
        let elf = image::build(&functions, &pieces, Some(rw.addr as u64), self.page, writer);
        let file = self
            .create_file(start as usize)
            .map_err(failed("creating the file"))?;
        self.files
            .insert(file_id(&file).map_err(failed("reading the file's inode"))?);
        elf.write_to(&file).map_err(failed("writing the file"))?;
        let exec = libc::PROT_READ | libc::PROT_EXEC;
        map_fixed(
            &file,
            start as usize,
            pages.len(),
            exec,
            elf.piece_offsets[0],
        )
        .map_err(failed("mapping the code"))?;
        let data = libc::PROT_READ | libc::PROT_WRITE;
        let rw_offset = elf.rw_offset.unwrap_or_default();
        map_fixed(&file, rw.addr, self.page as usize, data, rw_offset)
            .map_err(failed("mapping the data page"))?;
        let rw_addr = rw.addr;
        std::mem::forget(rw); // now the file's page
        Ok(rw_addr)
    }

    fn create_file(&mut self, addr: usize) -> io::Result<File> {
        self.next += 1;
        let path = self.dir.join(live_folder::image_name(self.next, addr));
        // Readable too: mmap needs a readable descriptor.
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)
    }
}

/// The device and inode of `file`, as the kernel's mapping query gives
/// them.
fn file_id(file: &File) -> io::Result<maps::FileId> {
    use std::os::unix::fs::MetadataExt;
    let meta = file.metadata()?;
    let dev = meta.dev();
    Ok((libc::major(dev), libc::minor(dev), meta.ino()))
}

fn failed<E: std::fmt::Display>(what: &'static str) -> impl Fn(E) -> LiveError {
    move |e| LiveError::Failed(format!("{what}: {e}"))
}

/// Takes the folder's lock (without waiting: a held lock means another
/// live process uses the folder, say one with our pid in another pid
/// namespace).
fn lock_dir(dir: &std::path::Path) -> io::Result<File> {
    let lock = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(dir.join(live_folder::LOCK_FILE))?;
    // An exclusive flock (std's lock on Linux), as `clean` tests it.
    match lock.try_lock() {
        Ok(()) => Ok(lock),
        Err(std::fs::TryLockError::WouldBlock) => Err(io::Error::new(
            io::ErrorKind::WouldBlock,
            format!("{} is in use by another process", dir.display()),
        )),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}

fn check_own_dir(dir: &std::path::Path) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(dir)?;
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    if !meta.is_dir() || meta.uid() != uid {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{} is not our folder", dir.display()),
        ));
    }
    Ok(())
}

/// `mmap(addr, len, prot, MAP_PRIVATE|MAP_FIXED, file, offset)`.
fn map_fixed(
    file: &File,
    addr: usize,
    len: usize,
    prot: libc::c_int,
    offset: u64,
) -> io::Result<()> {
    // SAFETY: replaces pages whose contents are identical (the code) or a
    // page reserved for this purpose; the JIT keeps using the same bytes.
    let got = unsafe {
        libc::mmap(
            addr as *mut _,
            len,
            prot,
            libc::MAP_PRIVATE | libc::MAP_FIXED,
            file.as_raw_fd(),
            offset as libc::off_t,
        )
    };
    if got == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// An address range held with an inaccessible anonymous page until the
/// file's rw- page is mapped there; unmapped if that never happens.
struct Reservation {
    addr: usize,
    len: usize,
}

impl Reservation {
    fn new(len: usize) -> io::Result<Reservation> {
        // SAFETY: a fresh anonymous mapping at an address of the kernel's choice.
        let addr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if addr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Reservation {
            addr: addr as usize,
            len,
        })
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        // SAFETY: our own anonymous mapping.
        unsafe { libc::munmap(self.addr as *mut _, self.len) };
    }
}
