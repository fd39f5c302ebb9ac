//! The C ABI (`include/callgrind_jit.h`). Every function runs behind a
//! panic boundary and checks its pointers; none can abort the JIT.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::error::ErrorKind;
use crate::global::{global, global_if_open};
use crate::writer::LineEntry;

/// Success (also returned when the session is off).
pub const CGJIT_OK: c_int = 0;
/// An argument was invalid (null pointer with a non-zero count, wrap-around).
pub const CGJIT_EINVAL: c_int = -1;
/// A file could not be written; it has been reported and closed.
pub const CGJIT_EIO: c_int = -2;
/// An internal error was caught before it reached the caller.
pub const CGJIT_EINTERNAL: c_int = -3;
/// The session was closed (`cgjit_close` or process exit): nothing written.
pub const CGJIT_ECLOSED: c_int = -4;

/// One source line of a function, as the C header declares it.
#[repr(C)]
pub struct cgjit_line {
    /// Byte offset from the code's address of the line's first instruction.
    pub offset: u32,
    /// 1-based source line.
    pub line: u32,
    /// 1-based column, or 0.
    pub column: u32,
    /// Source file; NULL means the same file as the previous entry.
    pub file: *const c_char,
}

fn boundary(f: impl FnOnce() -> c_int) -> c_int {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(CGJIT_EINTERNAL)
}

fn status(result: crate::Result<()>) -> c_int {
    match result {
        Ok(()) => CGJIT_OK,
        Err(e) => match e.kind() {
            ErrorKind::InvalidArgument => CGJIT_EINVAL,
            ErrorKind::Closed => CGJIT_ECLOSED,
            _ => CGJIT_EIO,
        },
    }
}

/// Opens the process's session (from `CALLGRIND_JIT` and `JITDUMPDIR`).
/// Optional: the first `cgjit_code_loaded` opens it too. After
/// `cgjit_close`, `CGJIT_ECLOSED`: a session is not opened again.
#[no_mangle]
pub extern "C" fn cgjit_open() -> c_int {
    boundary(|| match global().is_closed() {
        true => CGJIT_ECLOSED,
        false => CGJIT_OK,
    })
}

/// 1 if the session writes files, else 0.
#[no_mangle]
pub extern "C" fn cgjit_is_enabled() -> c_int {
    boundary(|| c_int::from(global().is_enabled()))
}

/// Registers `size` bytes of committed code at `addr` named `name` (a
/// C string, may be NULL) with `nlines` line entries.
///
/// # Safety
/// `addr..addr+size` must be readable; `name` NULL or a C string; `lines`
/// NULL (with `nlines` 0) or `nlines` entries whose `file` is NULL or a C
/// string.
#[no_mangle]
pub unsafe extern "C" fn cgjit_code_loaded(
    addr: *const c_void,
    size: usize,
    name: *const c_char,
    lines: *const cgjit_line,
    nlines: usize,
) -> c_int {
    boundary(|| {
        let session = global();
        if !session.is_enabled() {
            return status(session.off_status());
        }
        if addr.is_null() || (lines.is_null() && nlines > 0) {
            return CGJIT_EINVAL;
        }
        // Checked before a slice is made of the range.
        if let Err(e) = crate::session::checked_range(addr as usize, size) {
            return status(Err(e));
        }
        // SAFETY: the caller guarantees the pointers per the contract above.
        let (code, name, lines) =
            unsafe { (bytes(addr, size), c_str(name), c_lines(lines, nlines)) };
        status(session.code_loaded(code, name, &lines))
    })
}

/// Turns live mode on (`on` != 0) or off: under Valgrind, functions are
/// then named by Valgrind itself. Returns 1 if it is on now.
///
/// # Safety
/// The page-ownership rule of [`crate::Options::live`] (the C header states it).
#[no_mangle]
pub unsafe extern "C" fn cgjit_set_live(on: c_int) -> c_int {
    // SAFETY: the caller keeps the page-ownership rule, per the contract.
    boundary(|| c_int::from(unsafe { global().set_live(on != 0) }))
}

/// Tells Valgrind the code at `addr..addr+size` is gone.
#[no_mangle]
pub extern "C" fn cgjit_code_unloaded(addr: *const c_void, size: usize) -> c_int {
    boundary(|| status(global().code_unloaded(addr as usize, size)))
}

/// Writes CODE_CLOSE and closes the files. Also happens at exit.
#[no_mangle]
pub extern "C" fn cgjit_close() -> c_int {
    boundary(|| match global_if_open() {
        Some(session) => status(session.close()),
        None => CGJIT_OK,
    })
}

unsafe fn bytes<'a>(addr: *const c_void, size: usize) -> &'a [u8] {
    if size == 0 {
        return &[];
    }
    // SAFETY: the caller guarantees `addr..addr+size` is readable.
    unsafe { std::slice::from_raw_parts(addr.cast(), size) }
}

unsafe fn c_str<'a>(s: *const c_char) -> &'a [u8] {
    if s.is_null() {
        return b"";
    }
    // SAFETY: the caller guarantees a NUL-terminated string.
    unsafe { CStr::from_ptr(s).to_bytes() }
}

unsafe fn c_lines<'a>(lines: *const cgjit_line, n: usize) -> Vec<LineEntry<'a>> {
    if n == 0 {
        return Vec::new();
    }
    // SAFETY: the caller guarantees `n` readable entries.
    let raw = unsafe { std::slice::from_raw_parts(lines, n) };
    let mut file: &[u8] = b"";
    raw.iter()
        .map(|l| {
            if !l.file.is_null() {
                // SAFETY: a non-null `file` is a C string by contract.
                file = unsafe { c_str(l.file) };
            }
            LineEntry {
                offset: l.offset,
                line: l.line,
                column: l.column,
                file,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn the_status_codes_are_the_headers() {
        let header = include_str!("../include/callgrind_jit.h");
        for (name, value) in [
            ("CGJIT_OK", CGJIT_OK),
            ("CGJIT_EINVAL", CGJIT_EINVAL),
            ("CGJIT_EIO", CGJIT_EIO),
            ("CGJIT_EINTERNAL", CGJIT_EINTERNAL),
            ("CGJIT_ECLOSED", CGJIT_ECLOSED),
        ] {
            let line = header
                .lines()
                .find(|l| l.starts_with(&format!("#define {name} ")))
                .unwrap_or_else(|| panic!("{name} is not in the header"));
            let defined = line.split_whitespace().nth(2).unwrap();
            assert_eq!(
                defined.trim_matches(['(', ')']),
                value.to_string(),
                "{name}"
            );
        }
    }

    #[test]
    fn each_error_kind_has_its_status_and_a_panic_is_internal() {
        let err = |kind| status(Err(Error::new(kind, "x")));
        assert_eq!(status(Ok(())), CGJIT_OK);
        assert_eq!(err(ErrorKind::InvalidArgument), CGJIT_EINVAL);
        assert_eq!(err(ErrorKind::Closed), CGJIT_ECLOSED);
        assert_eq!(err(ErrorKind::Io), CGJIT_EIO);
        assert_eq!(boundary(|| 7), 7);
        // (The panic's message is printed: the hook is the process's.)
        assert_eq!(
            boundary(|| panic!("caught at the boundary")),
            CGJIT_EINTERNAL
        );
    }
}
