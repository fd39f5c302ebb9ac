//! Valgrind tools' output with stack frames: memcheck's, helgrind's and
//! DRD's text logs (`--log-file`, or a saved stderr) and XML logs (a
//! frame of only `<ip>` gets `<fn>`, `<dir>`, `<file>`, `<line>`), massif's
//! `massif.out.PID` and DHAT's `dhat.out.PID` JSON. Each frame Valgrind
//! printed as `0xADDR: ???` (code in no file: JIT code) is named
//! `0xADDR: name (file:line)` as Valgrind prints a native frame, from the
//! symbol files of its process: a log line's `==PID==`, massif's file
//! name, DHAT's `"pid"`. Valgrind prints a return address one byte back,
//! inside the call, so every address is looked up as it stands. Frames in
//! a mapped file (`??? (in FILE)`) and everything else are copied as they
//! are.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::PathBuf;

use anyhow::{bail, Result};

use super::provenance::{self, Provenance};
use super::{discover, load_symbols, Request, Run};
use crate::input::{self, Input};
use crate::output::{self, Target};
use crate::symbols::{Symbol, SymbolTable};

/// One log named.
#[derive(Debug)]
pub struct Named {
    /// The log read.
    pub input: PathBuf,
    /// Where it was written (`-` for stdout).
    pub output: PathBuf,
    /// JIT frames named.
    pub named: usize,
    /// `???` frames outside every JIT range, left as they are.
    pub unnamed: usize,
    /// Per process: each symbol file considered, and why.
    pub provenance: Vec<(u32, PathBuf, String)>,
    /// A text log (memcheck, helgrind, DRD), read by people as it is;
    /// not massif's or DHAT's data.
    pub text: bool,
}

/// Names the frames of each log in `logs` (with `sources`, the symbol
/// files given, else those found for each process).
pub(crate) fn annotate(
    request: &Request,
    logs: Vec<Input>,
    sources: Vec<Input>,
) -> Result<Vec<Named>> {
    if request.output.is_some() && logs.len() > 1 {
        bail!("-o names one output, but {} logs were given", logs.len());
    }
    let mut protected: Vec<PathBuf> = logs
        .iter()
        .chain(&sources)
        .map(|i| i.path.clone())
        .collect();
    let mut named = Vec::new();
    for log in &logs {
        let (pids, text) = pids_of(log)?;
        let provenances = match sources.is_empty() {
            true => pids
                .iter()
                .map(|&pid| discover(pid, std::slice::from_ref(log), request))
                .collect(),
            false => given(&pids, log, &sources, request)?,
        };
        let mut tables = BTreeMap::new();
        let mut notes = Vec::new();
        for (&pid, provenance) in pids.iter().zip(provenances) {
            protected.extend(provenance.used.iter().map(|i| i.path.clone()));
            notes.extend(provenance.notes.into_iter().map(|(p, why)| (pid, p, why)));
            tables.insert(pid, load_symbols(&provenance.used, request, None)?);
        }
        let protected: Vec<&std::path::Path> = protected.iter().map(PathBuf::as_path).collect();
        let (output, (named_frames, unnamed)) = write(request, log, &tables, &protected)?;
        named.push(Named {
            input: log.path.clone(),
            output,
            named: named_frames,
            unnamed,
            provenance: notes,
            text,
        });
    }
    Ok(named)
}

/// The processes a log speaks for, in order: its lines' `==PID==`, else
/// DHAT's `"pid"` or the XML's `<pid>`, else the number ending massif's
/// file name; and whether it is a text log (`==PID==` lines).
fn pids_of(log: &Input) -> Result<(Vec<u32>, bool)> {
    let mut pids = Vec::new();
    let mut text = false;
    for line in std::io::BufReader::new(log.rewound()?).split(b'\n') {
        let line = line?;
        let line = String::from_utf8_lossy(&line);
        let logged = input::log_pid(&line).map(|(pid, _)| pid);
        text |= logged.is_some();
        let pid = logged
            .or_else(|| json_pid(&line))
            .or_else(|| xml_value(&line, "pid").and_then(|p| p.parse().ok()));
        if let Some(pid) = pid.filter(|p| !pids.contains(p)) {
            pids.push(pid);
        }
    }
    if pids.is_empty() {
        let name = log.path.file_name().unwrap_or_default().to_string_lossy();
        let digits = name.rsplit('.').next().unwrap_or_default();
        pids.extend(digits.parse::<u32>().ok());
    }
    if pids.is_empty() {
        bail!(
            "'{}' names no process (no ==PID== lines, no \"pid\", no .PID ending): \
             rename it massif.out.PID",
            log.path.display()
        );
    }
    Ok((pids, text))
}

/// DHAT's `"pid":N` on a line of its JSON.
fn json_pid(line: &str) -> Option<u32> {
    let at = line.find("\"pid\":")? + 6;
    let digits: String = line[at..]
        .chars()
        .skip_while(|c| *c == ' ')
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// The given symbol files, per process of the log.
fn given(
    pids: &[u32],
    log: &Input,
    sources: &[Input],
    request: &Request,
) -> Result<Vec<Provenance>> {
    let folder = super::folder_of(&log.path);
    let runs: Vec<Run> = pids
        .iter()
        .map(|&pid| Run {
            pid: Some(pid),
            folder: folder.clone(),
        })
        .collect();
    let copies = sources
        .iter()
        .map(Input::try_clone)
        .collect::<std::io::Result<_>>()?;
    provenance::given(&runs, copies, request.any_pid)
}

/// Writes the named log: where, and how many frames were named and not.
fn write(
    request: &Request,
    log: &Input,
    tables: &BTreeMap<u32, SymbolTable>,
    protected: &[&std::path::Path],
) -> Result<(PathBuf, (usize, usize))> {
    let target = match &request.output {
        Some(o) => Target::from_arg(o),
        None if log.is_spooled() => Target::Stdout,
        None => Target::File(output::default_output(&log.path)),
    };
    let name = |file: &std::fs::File| name_frames(log, file, tables);
    let counts = match &target {
        Target::Stdout => output::write_to_stdout(name)?,
        Target::File(out) => {
            output::check_target(out, protected)?;
            output::write_atomically(out, log.mode, name)?
        }
    };
    let output = match target {
        Target::Stdout => PathBuf::from("-"),
        Target::File(out) => out,
    };
    Ok((output, counts))
}

/// Copies the log into `out`, JIT frames named; (named, left unnamed).
fn name_frames(
    log: &Input,
    out: &std::fs::File,
    tables: &BTreeMap<u32, SymbolTable>,
) -> Result<(usize, usize)> {
    let mut out = std::io::BufWriter::new(out);
    let (mut named, mut unnamed) = (0, 0);
    let only = (tables.len() == 1)
        .then(|| tables.values().next())
        .flatten();
    // An XML frame's `<ip>` line, held until the next line tells whether
    // the frame has anything more.
    let mut ip: Option<(Vec<u8>, u64)> = None;
    for line in std::io::BufReader::new(log.rewound()?).split(b'\n') {
        let line = line?;
        let text = String::from_utf8_lossy(&line);
        if let Some((held, addr)) = ip.take() {
            out.write_all(&held)?;
            out.write_all(b"\n")?;
            if text.trim() == "</frame>" {
                let indent = &text[..text.len() - text.trim_start().len()];
                match only.and_then(|t| xml_frame(t, addr, indent)) {
                    Some(elements) => {
                        named += 1;
                        out.write_all(elements.as_bytes())?;
                    }
                    None => unnamed += 1,
                }
            }
        }
        if let Some(addr) =
            xml_value(&text, "ip").and_then(|v| v.strip_prefix("0x").map(str::to_string))
        {
            if let Ok(addr) = u64::from_str_radix(&addr, 16) {
                ip = Some((line, addr));
                continue;
            }
        }
        let table = match input::log_pid(&text) {
            Some((pid, _)) => tables.get(&pid),
            None => only,
        };
        let frames = unknown_frames(&text);
        if frames.is_empty() {
            out.write_all(&line)?;
        } else {
            let (new, counts) = name_line(&text, &frames, table);
            named += counts.0;
            unnamed += counts.1;
            out.write_all(new.as_bytes())?;
        }
        out.write_all(b"\n")?;
    }
    if let Some((held, _)) = ip {
        out.write_all(&held)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok((named, unnamed))
}

/// Each `0xADDR: ???` of a line that ends there or a JSON string
/// (`"0xADDR: ???"`): where its `???` starts, the address, and whether
/// it is in JSON.
fn unknown_frames(line: &str) -> Vec<(usize, u64, bool)> {
    let mut frames = Vec::new();
    for (at, _) in line.match_indices(": ???") {
        let end = at + 5;
        let json = line[end..].starts_with('"');
        if end != line.len() && !json {
            continue;
        }
        let start = line[..at]
            .rfind("0x")
            .filter(|&s| line[s + 2..at].bytes().all(|b| b.is_ascii_hexdigit()));
        if let Some(start) = start {
            if let Ok(addr) = u64::from_str_radix(&line[start + 2..at], 16) {
                frames.push((at + 2, addr, json));
            }
        }
    }
    frames
}

/// `line` with its frames named where a JIT range holds them; how many
/// were named and how many not.
fn name_line(
    line: &str,
    frames: &[(usize, u64, bool)],
    table: Option<&SymbolTable>,
) -> (String, (usize, usize)) {
    let mut new = String::with_capacity(line.len() + 64);
    let mut copied = 0;
    let mut counts = (0, 0);
    for &(at, addr, json) in frames {
        let Some(name) = table.and_then(|t| frame_name(t, addr)) else {
            counts.1 += 1;
            continue;
        };
        counts.0 += 1;
        new.push_str(&line[copied..at]);
        match json {
            true => new.push_str(&json_escaped(&name)),
            false => new.push_str(&name),
        }
        copied = at + 3;
    }
    new.push_str(&line[copied..]);
    (new, counts)
}

/// `name (file:line)` of the JIT code at `addr`, as Valgrind names a
/// native frame (`name (in FILE)` without a source file).
fn frame_name(table: &SymbolTable, addr: u64) -> Option<String> {
    let (symbol, place) = frame_at(table, addr)?;
    let place = match place {
        Some((file, 0)) => file,
        Some((file, line)) => format!("{file}:{line}"),
        None => format!("in {}", table.sources()[symbol.source].path.display()),
    };
    Some(format!("{} ({place})", symbol.name))
}

/// The JIT symbol at `addr` and its source place there: the line table's
/// file and line, else the declared file and line (0: none), if any.
fn frame_at(table: &SymbolTable, addr: u64) -> Option<(&Symbol, Option<(String, u32)>)> {
    let symbol = table.symbol(table.lookup(addr)?.symbol);
    let row = symbol.row_at(addr).filter(|r| r.line != 0);
    let place = match (row, symbol.file) {
        (Some(row), _) => Some((table.file(row.file).to_string(), row.line)),
        (None, Some(file)) => Some((table.file(file).to_string(), symbol.line)),
        (None, None) => None,
    };
    Some((symbol, place))
}

/// The text of `<tag>TEXT</tag>` on a line of its own.
fn xml_value<'a>(line: &'a str, tag: &str) -> Option<&'a str> {
    let inner = line.trim().strip_prefix(&format!("<{tag}>"))?;
    inner.strip_suffix(&format!("</{tag}>"))
}

/// The elements Valgrind gives a frame it can name (protocol 4: `<fn>`,
/// then `<dir>`, `<file>`, `<line>` where a line is known), for the JIT
/// code at `addr`, each on a line of its own at `indent` plus two spaces.
fn xml_frame(table: &SymbolTable, addr: u64, indent: &str) -> Option<String> {
    let (symbol, place) = frame_at(table, addr)?;
    // Protocol 4 gives a file only with its line.
    let place = place.filter(|(_, line)| *line > 0);
    let pad = format!("{indent}  ");
    let mut out = format!("{pad}<fn>{}</fn>\n", xml_escaped(&symbol.name));
    if let Some((path, line)) = place {
        let (dir, file) = match path.rsplit_once('/') {
            Some((dir, file)) if !dir.is_empty() => (Some(dir), file),
            _ => (None, path.as_str()),
        };
        if let Some(dir) = dir {
            out.push_str(&format!("{pad}<dir>{}</dir>\n", xml_escaped(dir)));
        }
        out.push_str(&format!("{pad}<file>{}</file>\n", xml_escaped(file)));
        out.push_str(&format!("{pad}<line>{line}</line>\n"));
    }
    Some(out)
}

/// `s` as XML text.
fn xml_escaped(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// `s` as the inside of a JSON string.
fn json_escaped(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests;
