//! gdb's JIT interface as the JIT lays it out, and where its descriptor is.
//!
//! The JIT defines `__jit_debug_descriptor` (version, action, the entry the
//! action is about, the list of entries) next to `__jit_debug_register_code`,
//! in the same object. Both are often local symbols (numba's libllvmlite.so
//! has them in `.symtab` only), so the descriptor is found through the object
//! that holds the wrapped function: its path and load address from `dladdr`,
//! the symbol's offset from the file.

use std::ffi::CStr;
use std::path::PathBuf;

use object::{Object, ObjectSegment, ObjectSymbol};

use crate::memory::Memory;

/// What the JIT asks gdb to do (`jit_actions_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Register,
    Unregister,
    Nothing,
}

/// The descriptor's fields at the time of the call.
#[derive(Debug, Clone, Copy)]
pub struct Descriptor {
    pub version: u32,
    pub action: Action,
    /// The address of the `jit_code_entry` the action is about.
    pub entry: usize,
}

/// One `jit_code_entry`: the in-memory object the JIT registered.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    pub symfile_addr: usize,
    pub symfile_size: u64,
}

/// Reads the descriptor at `addr` (on 64-bit targets: two 32-bit fields,
/// then two pointers).
pub fn read(memory: &mut Memory, addr: usize) -> Option<Descriptor> {
    let [head, entry, _first] = memory.words::<3>(addr)?;
    let action = match (head >> 32) as u32 {
        1 => Action::Register,
        2 => Action::Unregister,
        _ => Action::Nothing,
    };
    Some(Descriptor {
        version: head as u32,
        action,
        entry: entry as usize,
    })
}

/// Reads the entry at `addr` (next, prev, symfile address, symfile size).
pub fn entry(memory: &mut Memory, addr: usize) -> Option<Entry> {
    let [_next, _prev, symfile_addr, symfile_size] = memory.words::<4>(addr)?;
    Some(Entry {
        symfile_addr: symfile_addr as usize,
        symfile_size,
    })
}

/// The address of `__jit_debug_descriptor` in the object holding the
/// function at `original`, else the one the dynamic linker finds.
pub fn find(original: usize) -> Option<usize> {
    in_object_of(original).or_else(exported)
}

fn in_object_of(original: usize) -> Option<usize> {
    // SAFETY: Dl_info is plain data; dladdr fills it or returns 0.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the loader's tables.
    if unsafe { libc::dladdr(original as *const libc::c_void, &mut info) } == 0 {
        return None;
    }
    let base = info.dli_fbase as u64;
    let file = std::fs::File::open(object_path(&info)).ok()?;
    // SAFETY: a read-only mapping of a library the process runs, read once
    // for its symbol table: truncating that file would break the process
    // with or without this mapping.
    let mapped = unsafe { memmap2::Mmap::map(&file) }.ok()?;
    let object = object::File::parse(&mapped[..]).ok()?;
    // The load bias: where the object's first segment landed, less the
    // address the file gives it (0 for a program linked at a fixed address).
    let first = object.segments().map(|s| s.address()).min()? & !0xfff;
    let bias = base.checked_sub(first)?;
    let symbol = object
        .symbols()
        .chain(object.dynamic_symbols())
        .find(|s| s.name_bytes() == Ok(b"__jit_debug_descriptor".as_slice()))?;
    usize::try_from(bias.checked_add(symbol.address())?).ok()
}

/// The object's file: the loader's path, or the running program's where
/// that is not a file from here (for the main program `dli_fname` is its
/// argv[0], which may have been found on PATH).
fn object_path(info: &libc::Dl_info) -> PathBuf {
    let exe = || PathBuf::from("/proc/self/exe");
    if info.dli_fname.is_null() {
        return exe();
    }
    // SAFETY: a NUL-terminated string owned by the loader.
    let name = unsafe { CStr::from_ptr(info.dli_fname) }.to_string_lossy();
    let path = PathBuf::from(name.as_ref());
    if path.is_file() {
        path
    } else {
        exe()
    }
}

fn exported() -> Option<usize> {
    // SAFETY: dlsym with a NUL-terminated name only reads the loader's tables.
    let addr = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"__jit_debug_descriptor".as_ptr()) };
    (!addr.is_null()).then_some(addr as usize)
}
