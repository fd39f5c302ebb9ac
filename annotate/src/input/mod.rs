//! Input files: opened once, spooled to a temporary file when they cannot
//! be read twice (`-`, pipes, FIFOs), and told apart by content.

use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// The comment that ends every output of ours (both readers skip `#`
/// lines): it tells an annotated profile from the one valgrind wrote.
pub const OUTPUT_MARK: &str = "# annotated by callgrind-jit\n";

/// Compressed formats, by their magic bytes, and how to undo them.
const COMPRESSED: [(&[u8], &str, &str); 4] = [
    (b"\x1f\x8b", "gzip", "gunzip -k"),
    (b"\xfd7zXZ\x00", "xz", "unxz -k"),
    (b"\x28\xb5\x2f\xfd", "zstd", "unzstd"),
    (b"BZh", "bzip2", "bunzip2 -k"),
];

/// What an input file is, by content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A callgrind profile.
    Profile,
    /// An empty file (thread runs can leave one).
    Empty,
    /// A jitdump.
    Jitdump,
    /// A perf map.
    PerfMap,
    /// A Valgrind tool's output with stack frames: a text log (memcheck,
    /// helgrind, DRD: `==PID== ` lines) or its XML (`--xml=yes`),
    /// massif's `massif.out.PID` or DHAT's `dhat.out.PID`.
    ToolLog,
}

/// An opened input: a regular file that can be read from any offset.
#[derive(Debug)]
pub struct Input {
    /// The name the user gave (`-` for stdin).
    pub path: PathBuf,
    /// The file (a spooled copy for stdin, pipes and FIFOs).
    pub file: File,
    /// What it is.
    pub kind: Kind,
    /// Its permission bits (0600 for a spooled copy).
    pub mode: u32,
    /// Read from stdin, a pipe or a FIFO into a copy: it has no folder
    /// of its own to write beside.
    pub spooled: bool,
}

impl Input {
    /// Another handle to the same file: a spooled copy (stdin, a pipe) is
    /// shared, not read again.
    pub fn try_clone(&self) -> std::io::Result<Input> {
        Ok(Input {
            path: self.path.clone(),
            file: self.file.try_clone()?,
            kind: self.kind,
            mode: self.mode,
            spooled: self.spooled,
        })
    }

    /// Opens `path` (`-` is stdin) and tells what it is.
    pub fn open(path: &Path) -> Result<Input> {
        let name = path.display();
        let (file, mode, spooled) =
            open_readable(path).with_context(|| format!("cannot read '{name}'"))?;
        let kind = kind(path, &file)?;
        Ok(Input {
            path: path.to_path_buf(),
            file,
            kind,
            mode,
            spooled,
        })
    }

    /// True for stdin, a pipe or a FIFO (`-`, `/dev/stdin`, `<(...)`).
    pub fn is_spooled(&self) -> bool {
        self.spooled
    }

    /// Where a profile that was cut off (a crash, a full disk, callgrind
    /// still writing) ends its last whole record, and how it was cut;
    /// `None` if it ends with a whole record.
    pub fn cut(&self) -> std::io::Result<Option<(u64, Cut)>> {
        cut_of(&self.file)
    }

    /// The first `len` bytes, as an input of their own (a spooled copy).
    pub fn prefix(&self, len: u64) -> std::io::Result<Input> {
        use std::io::Read;
        let mut from = self.rewound()?.take(len);
        let mut copy = crate::output::unlinked_temp_file()?;
        std::io::copy(&mut from, &mut copy)?;
        Ok(Input {
            path: self.path.clone(),
            file: copy,
            kind: self.kind,
            mode: self.mode,
            spooled: self.spooled,
        })
    }

    /// The file, rewound, for one pass of reading.
    pub fn rewound(&self) -> std::io::Result<&File> {
        (&self.file).seek(SeekFrom::Start(0))?;
        Ok(&self.file)
    }
}

/// A regular file as it is, with its mode; anything else copied into an
/// unlinked temporary file first (mode 0600, spooled), so nothing read to
/// tell its type is lost.
fn open_readable(path: &Path) -> std::io::Result<(File, u32, bool)> {
    use std::os::unix::fs::PermissionsExt;
    if path != Path::new("-") {
        let file = File::open(path)?;
        let meta = file.metadata()?;
        if meta.is_file() {
            return Ok((file, meta.permissions().mode() & 0o7777, false));
        }
        return Ok((spool(file)?, 0o600, true));
    }
    Ok((spool(std::io::stdin().lock())?, 0o600, true))
}

fn spool(mut from: impl std::io::Read) -> std::io::Result<File> {
    let mut file = crate::output::unlinked_temp_file()?;
    std::io::copy(&mut from, &mut file)?;
    Ok(file)
}

/// Reads the first bytes to tell what `file` is.
fn kind(path: &Path, file: &File) -> Result<Kind> {
    let mut head = [0u8; 512];
    let n = read_at_most(file, &mut head, 0)
        .with_context(|| format!("cannot read '{}'", path.display()))?;
    let head = &head[..n];
    if head.is_empty() {
        return Ok(Kind::Empty);
    }
    if jitdump::is_jitdump(head) {
        return Ok(Kind::Jitdump);
    }
    let text = String::from_utf8_lossy(head);
    if is_massif_or_dhat(&text) {
        return Ok(Kind::ToolLog);
    }
    if let Some(what) = foreign(path, head, &text) {
        bail!("{what}");
    }
    let profile_keys = [
        "# callgrind format",
        "version:",
        "creator:",
        "events:",
        "positions:",
        "cmd:",
        "pid:",
    ];
    if profile_keys.iter().any(|k| text.starts_with(k)) {
        if is_our_output(file) {
            bail!(
                "'{}' is already annotated by callgrind-jit: annotate the profile valgrind \
                 wrote (callgrind.out.PID) instead",
                path.display()
            );
        }
        return Ok(Kind::Profile);
    }
    if crate::perfmap::looks_like_perf_map(head) {
        return Ok(Kind::PerfMap);
    }
    // A saved stderr may start with the program's own lines.
    if text.lines().take(16).any(|line| log_pid(line).is_some()) {
        return Ok(Kind::ToolLog);
    }
    bail!(
        "'{}' is neither a callgrind profile, a Valgrind log, a jitdump nor a perf map",
        path.display()
    )
}

/// How a cut-off profile ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// Inside a line.
    InLine,
    /// After the first lines of a call or jump, before its cost line.
    InCall,
}

impl Cut {
    /// What the cut is, for messages.
    pub fn describe(self) -> &'static str {
        match self {
            Cut::InLine => "its last line is cut off",
            Cut::InCall => "it ends inside a call or jump",
        }
    }
}

/// Lines that open a call or jump: its cost line must follow.
const GROUP_KEYS: [&[u8]; 9] = [
    b"calls=", b"jump=", b"jcnd=", b"cob=", b"cfi=", b"cfl=", b"cfn=", b"jfi=", b"jfn=",
];

/// See [`Input::cut`].
fn cut_of(file: &File) -> std::io::Result<Option<(u64, Cut)>> {
    let len = file.metadata()?.len();
    let window = len.min(64 * 1024);
    let mut tail = vec![0; window as usize];
    let n = read_at_most(file, &mut tail, len - window)?;
    tail.truncate(n);
    let base = len - window;
    let mut end = tail.len();
    let mut cut = None;
    if tail.last().is_some_and(|&b| b != b'\n') {
        end = memchr::memrchr(b'\n', &tail).map_or(0, |i| i + 1);
        cut = Some(Cut::InLine);
    }
    while end > 0 {
        let start = memchr::memrchr(b'\n', &tail[..end - 1]).map_or(0, |i| i + 1);
        let line = &tail[start..end];
        if !GROUP_KEYS.iter().any(|k| line.starts_with(k)) || (start == 0 && base > 0) {
            break;
        }
        end = start;
        cut = cut.or(Some(Cut::InCall));
    }
    Ok(cut.map(|c| (base + end as u64, c)))
}

/// massif's output (`desc:`, `cmd:`, `time_unit:`), DHAT's JSON or a
/// tool's XML log (`--xml=yes`).
fn is_massif_or_dhat(text: &str) -> bool {
    let massif = text.starts_with("desc:") && text.contains("\ntime_unit:");
    let dhat = text.trim_start().starts_with('{') && text.contains("\"dhatFileVersion\"");
    let xml = text.starts_with("<?xml") && text.contains("<valgrindoutput>");
    massif || dhat || xml
}

/// The pid of a Valgrind log line (`==PID== `, `--PID-- `, `**PID** `)
/// and what follows the prefix.
pub fn log_pid(line: &str) -> Option<(u32, &str)> {
    let mark = line.get(..2).filter(|m| ["==", "--", "**"].contains(m))?;
    let rest = &line[2..];
    let end = rest.find(mark)?;
    let pid = rest[..end].parse().ok()?;
    Some((pid, &rest[end + 2..]))
}

/// Fills `buf` from `offset` as far as the file goes; returns the count.
fn read_at_most(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match file.read_at(&mut buf[n..], offset + n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// What a file we cannot read is, with what to do, for the error.
fn foreign(path: &Path, head: &[u8], text: &str) -> Option<String> {
    let name = path.display();
    if let Some((_, format, undo)) = COMPRESSED.iter().find(|(m, _, _)| head.starts_with(m)) {
        return Some(format!(
            "'{name}' is {format}-compressed: decompress it first ({undo} '{name}')"
        ));
    }
    let cachegrind = text.starts_with("# cachegrind format")
        || (text.starts_with("desc:") && !text.contains("creator: callgrind"));
    cachegrind.then(|| {
        format!(
            "'{name}' is a cachegrind profile, which has no calls or JIT call sites to name: \
             record with valgrind --tool=callgrind (or callgrind-jit record)"
        )
    })
}

/// True if the file at `path` is a profile callgrind-jit wrote (it ends
/// with [`OUTPUT_MARK`]).
pub fn is_our_output_at(path: &Path) -> bool {
    File::open(path).is_ok_and(|file| is_our_output(&file))
}

/// True if `file` ends with [`OUTPUT_MARK`].
fn is_our_output(file: &File) -> bool {
    let mark = OUTPUT_MARK.as_bytes();
    let Ok(len) = file.metadata().map(|m| m.len()) else {
        return false;
    };
    let Some(start) = len.checked_sub(mark.len() as u64) else {
        return false;
    };
    let mut tail = vec![0; mark.len()];
    read_at_most(file, &mut tail, start).is_ok_and(|n| n == mark.len()) && tail == mark
}

/// The `pid:` of a profile's header, if it has one in its first 64 lines.
pub fn profile_pid(file: &File) -> Option<u32> {
    let mut head = vec![0; 16 * 1024];
    let n = read_at_most(file, &mut head, 0).ok()?;
    head[..n].split(|&b| b == b'\n').take(64).find_map(|line| {
        line.strip_prefix(b"pid:")
            .and_then(|v| std::str::from_utf8(v).ok()?.trim().parse().ok())
    })
}

/// The `cmd:` of a profile's header (the command valgrind ran), if it has
/// one in its first 64 lines.
pub fn profile_command(file: &File) -> Option<String> {
    let mut head = vec![0; HEAD];
    let n = read_at_most(file, &mut head, 0).ok()?;
    command_in(&head[..n])
}

/// How much of a profile's start its header is looked for in.
pub(crate) const HEAD: usize = 16 * 1024;

/// The `cmd:` among the first 64 lines of `head`.
pub(crate) fn command_in(head: &[u8]) -> Option<String> {
    head.split(|&b| b == b'\n').take(64).find_map(|line| {
        let cmd = line.strip_prefix(b"cmd:")?;
        Some(String::from_utf8_lossy(cmd).trim().to_string())
    })
}

/// Where the epoch a profile covers ends in each symbol file: the places
/// jit-client put in the description of the dump that wrote it
/// (`desc: Trigger: Client Request: callgrind-jit epoch ends at
/// jit-PID.dump@BYTES perf-PID.map@BYTES`), if its header has one in its
/// first 64 lines. Malformed places are left out (none left: `None`).
pub fn epoch_end(file: &File) -> Option<Vec<(String, u64)>> {
    let mut head = vec![0; 16 * 1024];
    let n = read_at_most(file, &mut head, 0).ok()?;
    let marker = format!(
        "desc: Trigger: Client Request: {}",
        jit_client::epochs::DESC_PREFIX
    );
    let line = head[..n]
        .split(|&b| b == b'\n')
        .take(64)
        .find_map(|line| line.strip_prefix(marker.as_bytes()))?;
    let places = std::str::from_utf8(line).ok()?.split_whitespace();
    let parsed = places.filter_map(|place| {
        let (file, at) = place.rsplit_once('@')?;
        Some((file.to_string(), at.parse().ok()?))
    });
    let places: Vec<_> = parsed.collect();
    (!places.is_empty()).then_some(places)
}

#[cfg(test)]
mod tests;
