//! The only module that talks to Valgrind (through crabgrind).

use std::ffi::CString;

/// True when the process runs on Valgrind's synthetic CPU.
pub fn running_on_valgrind() -> bool {
    #[cfg(feature = "valgrind")]
    {
        crabgrind::valgrind::running_mode().is_valgrind()
    }
    #[cfg(not(feature = "valgrind"))]
    {
        false
    }
}

/// Tells Valgrind to drop its translations of `[addr, addr+size)`, so it
/// never runs stale code when a JIT reuses memory.
pub fn discard_translations(addr: usize, size: usize) {
    #[cfg(feature = "valgrind")]
    if running_on_valgrind() {
        crabgrind::valgrind::discard_translations(addr as *const _, size);
    }
    #[cfg(not(feature = "valgrind"))]
    let _ = (addr, size);
}

/// Tells helgrind/DRD that everything before this happens before a later
/// [`happens_after`] on the same key (a lock release).
pub fn happens_before(key: usize) {
    #[cfg(feature = "valgrind")]
    crabgrind::helgrind::annotate_happens_before(key as *const _);
    #[cfg(not(feature = "valgrind"))]
    let _ = key;
}

/// The other end of [`happens_before`] (a lock acquisition).
pub fn happens_after(key: usize) {
    #[cfg(feature = "valgrind")]
    crabgrind::helgrind::annotate_happens_after(key as *const _);
    #[cfg(not(feature = "valgrind"))]
    let _ = key;
}

/// Prints one line into Valgrind's log (`==PID==` prefixed by Valgrind).
pub fn log(message: &str) {
    #[cfg(feature = "valgrind")]
    if running_on_valgrind() {
        // Built by hand (format! and replace were most of a first load's
        // log line): NULs become blanks, so the C string always forms.
        let mut text = Vec::with_capacity(message.len() + 16);
        text.extend_from_slice(b"callgrind-jit: ");
        text.extend(message.bytes().map(|b| if b == 0 { b' ' } else { b }));
        text.push(b'\n');
        if let Ok(text) = CString::new(text) {
            crabgrind::vg_print(&text);
        }
    }
    #[cfg(not(feature = "valgrind"))]
    let _ = (message, CString::default());
}

/// Asks callgrind to write the profile so far, as a part described by
/// `description` (callgrind writes `desc: Trigger: Client Request: ...`).
/// Other tools ignore the request without a word (checked under memcheck,
/// helgrind, drd, massif, dhat, cachegrind and none).
pub fn dump_stats(description: &str) {
    #[cfg(feature = "valgrind")]
    if running_on_valgrind() {
        if let Ok(text) = CString::new(description.replace('\0', " ")) {
            crabgrind::callgrind::dump_stats(text.as_c_str());
        }
    }
    #[cfg(not(feature = "valgrind"))]
    let _ = description;
}
