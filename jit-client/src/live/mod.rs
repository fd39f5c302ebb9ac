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

mod dwarf;
mod elf;

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::PathBuf;

use crate::live_folder;
use crate::writer::LineEntry;

/// Why a function could not be mapped live.
#[derive(Debug)]
pub enum LiveError {
    /// The code does not start on a page boundary (the normal path is used).
    Unaligned,
    /// Building or mapping the file failed.
    Failed(String),
}

/// The per-process folder and a counter for file names.
pub struct Live {
    dir: PathBuf,
    next: u64,
    page: usize,
    /// [`LOCK_FILE`], locked for as long as the process lives.
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
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        Ok(Live {
            dir,
            next: 0,
            page,
            _lock: lock,
        })
    }

    /// Maps an ELF image of `code` over its own pages.
    pub fn map(&mut self, code: &[u8], name: &[u8], lines: &[LineEntry]) -> Result<(), LiveError> {
        let addr = code.as_ptr() as usize;
        if addr % self.page != 0 || code.is_empty() {
            return Err(LiveError::Unaligned);
        }
        let len = code.len().div_ceil(self.page) * self.page;
        // SAFETY: the JIT hands us whole pages it owns (the live-mode
        // contract), so the rest of the last page is mapped and readable.
        let pages = unsafe { std::slice::from_raw_parts(code.as_ptr(), len) };
        let rw = Reservation::new(self.page).map_err(failed("reserving a page"))?;
        let dwarf = dwarf::sections(name, addr as u64, code.len() as u64, lines)
            .map_err(failed("writing DWARF"))?;
        let image = elf::Image {
            name,
            addr: addr as u64,
            pages,
            size: code.len() as u64,
            rw_addr: rw.addr as u64,
            page: self.page as u64,
            dwarf: &dwarf,
        };
        let elf = elf::write(&image).map_err(failed("writing ELF"))?;
        let file = self
            .create_file(addr)
            .map_err(failed("creating the file"))?;
        (&file)
            .write_all(&elf.bytes)
            .map_err(failed("writing the file"))?;
        map_fixed(
            &file,
            addr,
            len,
            libc::PROT_READ | libc::PROT_EXEC,
            elf.text_offset,
        )
        .map_err(failed("mapping the code"))?;
        map_fixed(
            &file,
            rw.addr,
            self.page,
            libc::PROT_READ | libc::PROT_WRITE,
            elf.rw_offset,
        )
        .map_err(failed("mapping the data page"))?;
        std::mem::forget(rw); // now the file's page
        Ok(())
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
    // SAFETY: flock on a descriptor we own.
    if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(
            e.kind(),
            format!("{} is in use by another process ({e})", dir.display()),
        ));
    }
    Ok(lock)
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
