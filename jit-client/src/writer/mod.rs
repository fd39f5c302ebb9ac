//! The open files of one process: the jitdump and the perf map.

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, Write};
use std::path::PathBuf;

use crate::epochs::{self, Epochs};
use crate::names;
use crate::options::Options;
use crate::{sys, valgrind};
use jitdump::{format, write, CodeLoad, DebugEntry};

/// One line of source for a range of code, by offset from the code's start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineEntry<'a> {
    /// Byte offset from the code's address of the first instruction.
    pub offset: u32,
    /// 1-based source line.
    pub line: u32,
    /// 1-based column, or 0.
    pub column: u32,
    /// Source file name (any bytes; NUL and line breaks are replaced).
    pub file: &'a [u8],
}

impl<'a> LineEntry<'a> {
    /// A line entry; `file` may be a `&str` or bytes.
    pub fn new(offset: u32, line: u32, column: u32, file: &'a (impl AsRef<[u8]> + ?Sized)) -> Self {
        LineEntry {
            offset,
            line,
            column,
            file: file.as_ref(),
        }
    }
}

/// Which of the two files failed.
#[derive(Debug)]
pub enum Failure {
    /// Writing `jit-PID.dump` failed; it is closed now.
    Jitdump(io::Error),
    /// Writing `perf-PID.map` failed; it is closed now.
    PerfMap(io::Error),
}

struct Jitdump {
    file: File,
    /// Kept mapped while the file is written (perf looks for the mapping).
    marker: Option<sys::Marker>,
    /// Why the marker could not be mapped, reported once by the session.
    marker_error: Option<io::Error>,
}

/// The files of one process id.
pub struct Writer {
    pub pid: u32,
    /// [`sys::fork_generation`] when the files were created.
    pub generation: u64,
    pub jitdump_path: PathBuf,
    pub perf_map_path: PathBuf,
    jitdump: Option<Jitdump>,
    perf_map: Option<File>,
    next_index: u64,
    buf: Vec<u8>,
    /// Bytes written to each file (where the next record goes).
    jitdump_len: u64,
    perf_map_len: u64,
    epochs: Epochs,
}

impl Writer {
    /// Creates both files for the current process. A file that cannot be
    /// created is left out; what went wrong is returned beside the writer,
    /// one message per problem.
    pub fn create(opts: &Options) -> (Writer, Vec<String>) {
        let pid = sys::pid();
        let pid_number = u64::from(pid);
        let jitdump_path = opts
            .jitdump_dir
            .join(names::numbered("jit-", pid_number, ".dump"));
        let perf_map_path = opts
            .perf_map_dir
            .join(names::numbered("perf-", pid_number, ".map"));
        let mut errors = Vec::new();
        let not_created = |path: &PathBuf, e: io::Error| {
            format!("cannot create {}: {e}; not writing it", path.display())
        };
        let jitdump = match create_jitdump(&jitdump_path, pid) {
            Ok(j) => {
                if let Some(e) = &j.marker_error {
                    errors.push(format!(
                        "cannot map {} for perf ({e}): perf inject --jit will not find it; \
                         callgrind-jit still reads it",
                        jitdump_path.display()
                    ));
                }
                Some(j)
            }
            Err(e) => {
                errors.push(not_created(&jitdump_path, e));
                None
            }
        };
        let perf_map = match opts.perf_map.then(|| sys::create_private(&perf_map_path)) {
            Some(Ok(f)) => Some(f),
            Some(Err(e)) => {
                errors.push(not_created(&perf_map_path, e));
                None
            }
            None => None,
        };
        let writer = Writer {
            pid,
            generation: sys::fork_generation(),
            jitdump_path,
            perf_map_path,
            jitdump,
            perf_map,
            next_index: 0,
            buf: Vec::with_capacity(4096),
            jitdump_len: format::HEADER_SIZE as u64,
            perf_map_len: 0,
            epochs: Epochs::default(),
        };
        (writer, errors)
    }

    /// True while at least one file is still written.
    pub fn is_open(&self) -> bool {
        self.jitdump.is_some() || self.perf_map.is_some()
    }

    /// The paths of the files being written (one may have been refused).
    pub fn open_paths(&self) -> Vec<&std::path::Path> {
        let jitdump = self
            .jitdump
            .is_some()
            .then_some(self.jitdump_path.as_path());
        let perf_map = self
            .perf_map
            .is_some()
            .then_some(self.perf_map_path.as_path());
        jitdump.into_iter().chain(perf_map).collect()
    }

    /// Notes that `[addr, addr+size)` no longer holds code (see `epochs`).
    pub fn code_unloaded(&mut self, addr: u64, size: u64) {
        self.epochs.unload(addr, addr + size);
    }

    /// Writes DEBUG_INFO + CODE_LOAD (one `writev`) and the perf map line.
    pub fn code_loaded(
        &mut self,
        code: &[u8],
        name: &[u8],
        lines: &[LineEntry],
    ) -> Result<(), Failure> {
        let addr = code.as_ptr() as u64;
        if self.epochs.load(addr, addr + code.len() as u64) {
            valgrind::dump_stats(&self.epoch_end());
        }
        let name = function_name(name, addr);
        let result = self
            .write_jitdump(code, &name, lines)
            .map_err(Failure::Jitdump);
        if let Err(Failure::Jitdump(_)) = result {
            self.jitdump = None;
        }
        if let Err(e) = self.write_perf_map(addr, code.len() as u64, &name) {
            self.perf_map = None;
            return result.and(Err(Failure::PerfMap(e)));
        }
        result
    }

    fn write_jitdump(&mut self, code: &[u8], name: &[u8], lines: &[LineEntry]) -> io::Result<()> {
        let Some(jitdump) = &self.jitdump else {
            return Ok(());
        };
        let addr = code.as_ptr() as u64;
        let timestamp = sys::monotonic_ns();
        self.buf.clear();
        self.buf
            .reserve(code.len() + name.len() + 64 + lines.len() * 32);
        push_debug_info(&mut self.buf, timestamp, addr, code.len() as u64, lines);
        let load = CodeLoad {
            pid: self.pid,
            tid: sys::tid(),
            code_addr: addr,
            code_size: code.len() as u64,
            code_index: self.next_index,
            name,
            code: Some(code),
        };
        write::code_load_head(&mut self.buf, timestamp, &load);
        // One write: cheaper than writev here, and a record is never split.
        self.buf.extend_from_slice(code);
        (&jitdump.file).write_all(&self.buf)?;
        self.jitdump_len += self.buf.len() as u64;
        self.next_index += 1;
        Ok(())
    }

    /// The description of a dump ending an epoch: the files written, and
    /// their lengths now (see `epochs`).
    fn epoch_end(&self) -> String {
        let name = |p: &PathBuf| {
            p.file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
        };
        let (dump, map) = (name(&self.jitdump_path), name(&self.perf_map_path));
        let mut files = Vec::new();
        if self.jitdump.is_some() {
            files.push((dump.as_str(), self.jitdump_len));
        }
        if self.perf_map.is_some() {
            files.push((map.as_str(), self.perf_map_len));
        }
        epochs::description(&files)
    }

    fn write_perf_map(&mut self, addr: u64, size: u64, name: &[u8]) -> io::Result<()> {
        let Some(file) = &mut self.perf_map else {
            return Ok(());
        };
        self.buf.clear();
        crate::perfmap::line(&mut self.buf, addr, size, name);
        file.write_all(&self.buf)?;
        self.perf_map_len += self.buf.len() as u64;
        Ok(())
    }

    /// Writes CODE_CLOSE and closes both files.
    pub fn close(mut self) -> io::Result<()> {
        let Some(jitdump) = self.jitdump.take() else {
            return Ok(());
        };
        self.buf.clear();
        write::close(&mut self.buf, sys::monotonic_ns());
        (&jitdump.file).write_all(&self.buf)
    }

    /// Drops the files without writing: they belong to the parent process
    /// this one was forked from.
    pub fn abandon(mut self) {
        if let Some(jitdump) = self.jitdump.take() {
            if let Some(marker) = jitdump.marker {
                marker.leak();
            }
        }
    }
}

fn create_jitdump(path: &std::path::Path, pid: u32) -> io::Result<Jitdump> {
    let mut file = sys::create_private(path)?;
    let mut header = Vec::with_capacity(format::HEADER_SIZE);
    write::header(&mut header, format::elf_machine(), pid, sys::monotonic_ns());
    file.write_all(&header)?;
    // Without the marker perf cannot find the file, but ours still works.
    let (marker, marker_error) = match sys::Marker::map(&file) {
        Ok(m) => (Some(m), None),
        Err(e) => (None, Some(e)),
    };
    Ok(Jitdump {
        file,
        marker,
        marker_error,
    })
}

/// True if the CODE_LOAD and DEBUG_INFO records of a load fit the jitdump's
/// 32-bit record size (a larger one would wrap it and make the rest of the
/// file unreadable).
pub fn records_fit(code_len: usize, name: &[u8], lines: &[LineEntry]) -> bool {
    let limit = u64::from(u32::MAX);
    // Generous for an empty name, which becomes `jit_ADDR`.
    let name = name.len() as u64 + 32;
    let load = format::CODE_LOAD_FIXED_SIZE as u64 + name + code_len as u64;
    let entry = |file_len: usize| (format::DEBUG_ENTRY_FIXED_SIZE + file_len + 1) as u64;
    let entries: u64 = lines
        .iter()
        .filter(|l| (l.offset as usize) < code_len)
        .map(|l| entry(l.file.len()))
        .fold(entry(0), u64::saturating_add);
    let debug = (format::DEBUG_INFO_FIXED_SIZE as u64 + 7).saturating_add(entries);
    load <= limit && debug <= limit
}

/// Appends a DEBUG_INFO for `lines` (if any lies inside the code):
/// absolute addresses, ascending, and a closing sentinel at `addr + size`
/// (line 0, no file) that ends the last line's range.
fn push_debug_info(buf: &mut Vec<u8>, timestamp: u64, addr: u64, size: u64, lines: &[LineEntry]) {
    let sorted;
    let lines = if lines.windows(2).all(|w| w[0].offset <= w[1].offset) {
        lines
    } else {
        sorted = {
            let mut v = lines.to_vec();
            v.sort_by_key(|l| l.offset);
            v
        };
        &sorted[..]
    };
    let inside = lines.iter().filter(|l| u64::from(l.offset) < size);
    if inside.clone().next().is_none() {
        return;
    }
    let entries = inside
        .map(|l| DebugEntry {
            addr: addr + u64::from(l.offset),
            line: l.line,
            discrim: l.column,
            file: l.file,
        })
        .chain(std::iter::once(DebugEntry {
            addr: addr + size,
            line: 0,
            discrim: 0,
            file: b"",
        }));
    write::debug_info(buf, timestamp, addr, entries);
}

/// The name as given, or `jit_<addr>` when empty. (Bytes that would break
/// the files are replaced when the name is written.)
pub(crate) fn function_name(name: &[u8], addr: u64) -> Cow<'_, [u8]> {
    if name.is_empty() {
        return Cow::Owned(format!("jit_{addr:x}").into_bytes());
    }
    Cow::Borrowed(name)
}

#[cfg(test)]
mod tests;
