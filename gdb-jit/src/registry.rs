//! What was registered: each entry's functions, so that an unregistration
//! unloads them, and each object's descriptor, found once. One lock: the
//! interface has the JIT serialise its calls, so it is never contended.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use jit_client::LineEntry;

use crate::descriptor::{self, Action};
use crate::memory::Memory;
use crate::symfile::{self, Function};

/// Objects larger than this are not read (gdb's own limit is memory).
const LARGEST_OBJECT: u64 = 1 << 30;

#[derive(Default)]
struct Registry {
    /// The descriptor's address by the wrapped function's address.
    descriptors: HashMap<usize, Option<usize>>,
    /// The code ranges each registered entry gave, by entry address.
    entries: HashMap<usize, Vec<(usize, usize)>>,
    /// Problems already reported (each kind once per process).
    reported: HashSet<&'static str>,
    /// Where reads of the JIT's memory are safe.
    memory: Memory,
}

static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);

/// The JIT called `__jit_debug_register_code` defined at `original`.
pub fn on_registration(original: usize) {
    let mut guard = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    let registry = guard.get_or_insert_with(Registry::default);
    registry.handle(original);
}

/// jit-client's process session, opened at the first function to load:
/// a runtime that registers only objects of its own format (Erlang's BEAM
/// does) and writes its own perf files gets no files from us.
fn session() -> Option<&'static jit_client::Session> {
    Some(jit_client::global()).filter(|s| s.is_enabled())
}

impl Registry {
    fn handle(&mut self, original: usize) {
        let found = *self
            .descriptors
            .entry(original)
            .or_insert_with(|| descriptor::find(original));
        let Some(at) = found else {
            return self.report(
                "descriptor",
                "no __jit_debug_descriptor found beside the registration function",
            );
        };
        let Some(d) = descriptor::read(&mut self.memory, at) else {
            return self.report("descriptor-read", "the JIT's descriptor cannot be read");
        };
        if d.version != 1 {
            return self.report(
                "version",
                "a descriptor of a version other than 1 is left alone",
            );
        }
        match d.action {
            Action::Register => self.register(d.entry),
            Action::Unregister => self.unregister(d.entry),
            Action::Nothing => {}
        }
    }

    fn register(&mut self, entry_addr: usize) {
        let Some(entry) = descriptor::entry(&mut self.memory, entry_addr) else {
            let message = format!("the entry registered at {entry_addr:#x} cannot be read");
            return self.report("entry", &message);
        };
        let place = format!(
            "the object registered at {:#x} ({} bytes, entry {entry_addr:#x})",
            entry.symfile_addr, entry.symfile_size
        );
        if entry.symfile_size == 0 || entry.symfile_size > LARGEST_OBJECT {
            return self.report("size", &format!("{place} is skipped: empty or over 1 GiB"));
        }
        let Some(object) = self
            .memory
            .copy(entry.symfile_addr, entry.symfile_size as usize)
        else {
            let message = format!("{place} is skipped: not all of it is readable memory");
            return self.report("object", &message);
        };
        let functions = match symfile::functions(&object) {
            Ok(functions) => functions,
            Err(why) => return self.report("parse", &format!("{place} is skipped: {why}")),
        };
        let Some(session) = session().filter(|_| !functions.is_empty()) else {
            return;
        };
        let mut ranges = Vec::with_capacity(functions.len());
        for function in &functions {
            if let Some(range) = self.load(function, session) {
                ranges.push(range);
            }
        }
        self.entries.insert(entry_addr, ranges);
    }

    /// Gives one function to jit-client; its range, if it was loaded.
    fn load(&mut self, f: &Function, session: &jit_client::Session) -> Option<(usize, usize)> {
        let addr = usize::try_from(f.addr).ok()?;
        let size = usize::try_from(f.size).ok()?;
        if !self.memory.readable(addr, size) {
            let name = String::from_utf8_lossy(&f.name);
            let message = format!(
                "{name} at {addr:#x} ({size} bytes) is skipped: not all of it is readable memory"
            );
            self.report("code", &message);
            return None;
        }
        let lines: Vec<LineEntry> = f
            .lines
            .iter()
            .map(|r| {
                LineEntry::new(
                    (r.addr - f.addr) as u32,
                    r.line,
                    r.column,
                    r.file.as_bytes(),
                )
            })
            .collect();
        // SAFETY: the range was readable just now, and the JIT is inside
        // its registration call: the code stays until it unregisters it.
        let code = unsafe { std::slice::from_raw_parts(addr as *const u8, size) };
        // jit-client reports its own failures once; the JIT goes on.
        let _ = session.code_loaded(code, &f.name, &lines);
        Some((addr, size))
    }

    fn unregister(&mut self, entry_addr: usize) {
        let ranges = self.entries.remove(&entry_addr).unwrap_or_default();
        if let (false, Some(session)) = (ranges.is_empty(), session()) {
            for (addr, size) in ranges {
                let _ = session.code_unloaded(addr, size);
            }
        }
    }

    fn report(&mut self, kind: &'static str, message: &str) {
        if self.reported.insert(kind) {
            eprintln!(
                "callgrind-jit-gdb: {message} (the first of its kind; others are not reported)"
            );
        }
    }
}
