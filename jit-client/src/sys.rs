//! Thin wrappers over the few system calls the writer needs.

use std::cell::Cell;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// CLOCK_MONOTONIC in nanoseconds: the clock `perf record -k 1` uses.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The calling process's id (not cached: a forked child sees its own).
pub fn pid() -> u32 {
    std::process::id()
}

/// Bumped in the child after every `fork`; lets hot paths notice a fork
/// without a `getpid` system call per call.
static FORK_GENERATION: AtomicU64 = AtomicU64::new(0);

extern "C" fn after_fork_in_child() {
    FORK_GENERATION.fetch_add(1, Ordering::Relaxed);
}

/// Starts counting forks (idempotent).
pub fn watch_forks() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    // SAFETY: registers a plain extern "C" function without captures.
    ONCE.call_once(|| unsafe {
        libc::pthread_atfork(None, None, Some(after_fork_in_child));
    });
}

/// How many forks this process descends from (since `watch_forks`).
pub fn fork_generation() -> u64 {
    FORK_GENERATION.load(Ordering::Relaxed)
}

thread_local! {
    static TID: Cell<(u64, u32)> = const { Cell::new((u64::MAX, 0)) };
}

/// The calling thread's kernel id, cached per thread (and per fork).
pub fn tid() -> u32 {
    let generation = fork_generation();
    TID.with(|cached| {
        let (seen, tid) = cached.get();
        if seen == generation {
            return tid;
        }
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::gettid() } as u32;
        cached.set((generation, tid));
        tid
    })
}

/// Creates `path` for writing, never through a symbolic link and never
/// into a file that is not ours: a link planted there (say in /tmp) is
/// removed (the link, never its target); a regular file owned by another
/// user is refused; our own earlier file (a process before us with this
/// pid) is replaced by a new one, but one written since this process
/// started is another writer's in this process (a runtime that writes its
/// own perf files, beside the gdb preload) and is left to it. The file is
/// created with `O_EXCL`, so nothing planted in between is ever written to.
pub fn create_private(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::MetadataExt;
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        if meta.file_type().is_symlink() {
            std::fs::remove_file(path)?;
        } else if !meta.is_file() {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                "exists and is not a regular file",
            ));
        } else if meta.uid() != me {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "exists and belongs to uid {}, not to this process",
                    meta.uid()
                ),
            ));
        } else if written_since_start(&meta) {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                "this process writes it already (the runtime's own); left to that writer",
            ));
        } else {
            std::fs::remove_file(path)?;
        }
    }
    open(path, libc::O_EXCL)
}

/// Whether the file was last written after this process started (exec
/// keeps the start time).
fn written_since_start(meta: &std::fs::Metadata) -> bool {
    match (meta.modified(), process_start()) {
        (Ok(written), Some(started)) => written >= started,
        _ => false,
    }
}

/// When this process started: the boot time (`btime` of /proc/stat, whole
/// seconds) plus the start in clock ticks after boot (field 22 of
/// /proc/self/stat, after the parenthesised command name).
fn process_start() -> Option<std::time::SystemTime> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let boot: u64 = stat
        .lines()
        .find_map(|l| l.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()?;
    let own = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after_name = &own[own.rfind(')')? + 1..];
    // Fields from the third (state) on; the start time is the 22nd.
    let ticks: u64 = after_name.split_whitespace().nth(19)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let per_second = u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).ok()?;
    let after_boot = std::time::Duration::from_millis(ticks * 1000 / per_second.max(1));
    Some(std::time::UNIX_EPOCH + std::time::Duration::from_secs(boot) + after_boot)
}

/// Opened read-write: perf records the jitdump only through the marker
/// mapping, and `mmap(PROT_READ)` needs a descriptor open for reading.
fn open(path: &Path, extra: libc::c_int) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | extra)
        .open(path)
}

/// The jitdump's first page, mapped PROT_READ|PROT_EXEC so that
/// `perf record` logs the file and `perf inject --jit` can find it.
pub struct Marker {
    addr: *mut libc::c_void,
    len: usize,
}

// SAFETY: the mapping is never read or written through the pointer; it only
// has to stay mapped, and unmapping from any thread is fine.
unsafe impl Send for Marker {}

impl Marker {
    /// Maps the first page of `file`.
    pub fn map(file: &File) -> io::Result<Marker> {
        // SAFETY: sysconf has no preconditions.
        let len = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        // SAFETY: a fresh private mapping of our own file descriptor.
        let addr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_EXEC,
                libc::MAP_PRIVATE,
                file.as_raw_fd(),
                0,
            )
        };
        if addr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Marker { addr, len })
    }

    /// Forgets the mapping without unmapping it (a forked child's copy).
    pub fn leak(self) {
        std::mem::forget(self);
    }
}

impl Drop for Marker {
    fn drop(&mut self) {
        // SAFETY: `addr`/`len` describe a mapping we created and own.
        unsafe { libc::munmap(self.addr, self.len) };
    }
}

#[cfg(test)]
mod start_tests {
    #[test]
    fn this_process_started_before_now_and_after_boot() {
        let started = super::process_start().expect("read from /proc");
        let now = std::time::SystemTime::now();
        assert!(started <= now);
        assert!(now.duration_since(started).unwrap() < std::time::Duration::from_secs(3600));
    }
}
