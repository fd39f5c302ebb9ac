//! Running out of memory: one line and exit status 1, never an abort.
//!
//! Rust aborts the process when an allocation fails (exit 134, a core
//! dump, a backtrace). The binary's allocator, [`OneLineOnFailure`], is
//! the system's, except that a failed allocation prints one line, removes
//! the temporary file being filled (if any) and exits with status 1.

use std::alloc::{GlobalAlloc, Layout, System};
use std::ffi::CString;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// The temporary files being filled (an output, and its code image
/// filled inside it), removed if memory runs out.
static FILLING: Mutex<Vec<CString>> = Mutex::new(Vec::new());

/// Notes `path` as a temporary file being filled, until the guard drops.
pub fn filling(path: &std::path::Path) -> Filling {
    use std::os::unix::ffi::OsStrExt;
    let path = CString::new(path.as_os_str().as_bytes()).ok();
    let noted = path.is_some();
    if let (Some(path), Ok(mut filling)) = (path, FILLING.lock()) {
        filling.push(path);
    }
    Filling { noted }
}

/// While it lives, its temporary file is removed if memory runs out.
pub struct Filling {
    noted: bool,
}

impl Drop for Filling {
    fn drop(&mut self) {
        if let (true, Ok(mut filling)) = (self.noted, FILLING.lock()) {
            filling.pop();
        }
    }
}

/// The system allocator, with a one-line error where it fails.
pub struct OneLineOnFailure;

// SAFETY: every call is passed to `System` as it is; on failure the
// process ends without returning.
unsafe impl GlobalAlloc for OneLineOnFailure {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { System.alloc(layout) };
        if p.is_null() {
            out_of_memory(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { System.alloc_zeroed(layout) };
        if p.is_null() {
            out_of_memory(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if p.is_null() {
            out_of_memory(new_size);
        }
        p
    }
}

/// Asks the kernel to back `len` bytes from `start`, memory we own and
/// have not touched yet, with huge pages where it can (where transparent
/// huge pages are enabled for `madvise`, the default of most
/// distributions): one page fault per 2 MiB instead of per 4 KiB. Only the
/// whole 2 MiB pages inside the range are advised; nothing happens where
/// the kernel declines.
pub fn advise_huge_pages(start: *mut u8, len: usize) {
    const HUGE: usize = 2 << 20;
    let (from, to) = (start as usize, (start as usize).saturating_add(len));
    let (from, to) = (from.next_multiple_of(HUGE), to / HUGE * HUGE);
    if to > from {
        // SAFETY: advice on whole pages inside an allocation of ours: it
        // changes neither their contents nor their protection.
        unsafe { libc::madvise(from as *mut libc::c_void, to - from, libc::MADV_HUGEPAGE) };
    }
}

/// A builder for annotate's helper threads (reading, writing, indexing):
/// none runs deep code, so each gets a small stack. With the default of
/// 2 MiB, a run near its memory limit could fail to start a thread before
/// an allocation failed, with no word of memory in the message.
pub fn helper_thread() -> std::thread::Builder {
    std::thread::Builder::new().stack_size(512 << 10)
}

/// Set by the first thread whose allocation failed.
static FAILED: AtomicBool = AtomicBool::new(false);

/// Says so in one line, removes the temporary file, exits 1. Allocates
/// nothing. Where two threads run out at once (the two halves of a perf
/// map, the reader and the rewriter), the first says so and ends the
/// process; the other waits for that, silent (two lines were seen in CI,
/// interleaved).
#[cold]
fn out_of_memory(size: usize) -> ! {
    if FAILED.swap(true, Ordering::SeqCst) {
        loop {
            // SAFETY: waits for a signal; the first thread's `_exit` ends
            // the process.
            unsafe { libc::pause() };
        }
    }
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = size;
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let parts: [&[u8]; 3] = [
        b"callgrind-jit: out of memory (an allocation of ",
        &digits[at..],
        b" bytes failed); no output was left half-written: give it more memory (ulimit -v) or smaller inputs\n",
    ];
    for part in parts {
        // SAFETY: writes bytes we own to stderr.
        unsafe { libc::write(2, part.as_ptr().cast(), part.len()) };
    }
    if let Ok(filling) = FILLING.try_lock() {
        for path in filling.iter() {
            // SAFETY: a NUL-terminated path.
            unsafe { libc::unlink(path.as_ptr()) };
        }
    }
    // SAFETY: ends the process at once, running no more Rust code.
    unsafe { libc::_exit(1) }
}
