//! Valgrind tools' text logs (memcheck, helgrind, DRD; `--log-file` or a
//! saved stderr): each stack frame Valgrind printed as `???` (code in no
//! file: JIT code) is named `name (file:line)` as Valgrind prints a native
//! frame, from the symbol files of the process whose `==PID==` line it is.
//! Frames in a mapped file (`??? (in FILE)`) and every other line are
//! copied as they are.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::PathBuf;

use anyhow::{bail, Result};

use super::provenance::{self, Provenance};
use super::{discover, load_symbols, Request, Run};
use crate::input::{self, Input};
use crate::output::{self, Target};
use crate::symbols::SymbolTable;

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
}

/// Names the frames of each log in `logs` (with `sources`, the symbol
/// files given, else those found for each process).
pub fn annotate(request: &Request, logs: Vec<Input>, sources: Vec<Input>) -> Result<Vec<Named>> {
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
        let pids = pids_of(log)?;
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
            tables.insert(
                pid,
                load_symbols(&provenance.used, request.bias, Vec::new(), None)?,
            );
        }
        let protected: Vec<&std::path::Path> = protected.iter().map(PathBuf::as_path).collect();
        let mut result = write(request, log, &tables, &protected)?;
        result.provenance = notes;
        named.push(result);
    }
    Ok(named)
}

/// The processes a log speaks for, in order.
fn pids_of(log: &Input) -> Result<Vec<u32>> {
    let mut pids = Vec::new();
    for line in std::io::BufReader::new(log.rewound()?).split(b'\n') {
        let line = line?;
        if let Some((pid, _)) = input::log_pid(&String::from_utf8_lossy(&line)) {
            if !pids.contains(&pid) {
                pids.push(pid);
            }
        }
    }
    Ok(pids)
}

/// The given symbol files, per process of the log.
fn given(
    pids: &[u32],
    log: &Input,
    sources: &[Input],
    request: &Request,
) -> Result<Vec<Provenance>> {
    let folder = std::path::absolute(&log.path)
        .ok()
        .and_then(|p| p.parent().and_then(|d| d.canonicalize().ok()));
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

/// Writes the named log.
fn write(
    request: &Request,
    log: &Input,
    tables: &BTreeMap<u32, SymbolTable>,
    protected: &[&std::path::Path],
) -> Result<Named> {
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
    Ok(Named {
        input: log.path.clone(),
        output,
        named: counts.0,
        unnamed: counts.1,
        provenance: Vec::new(),
    })
}

/// Copies the log into `out`, JIT frames named; (named, left unnamed).
fn name_frames(
    log: &Input,
    out: &std::fs::File,
    tables: &BTreeMap<u32, SymbolTable>,
) -> Result<(usize, usize)> {
    let mut out = std::io::BufWriter::new(out);
    let (mut named, mut unnamed) = (0, 0);
    for line in std::io::BufReader::new(log.rewound()?).split(b'\n') {
        let mut line = line?;
        let text = String::from_utf8_lossy(&line);
        if let Some((pid, frame)) = unknown_frame(&text) {
            match tables.get(&pid).and_then(|t| frame.name(t)) {
                Some(new) => {
                    line = new.into_bytes();
                    named += 1;
                }
                None => unnamed += 1,
            }
        }
        out.write_all(&line)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok((named, unnamed))
}

/// A frame line Valgrind could not name: `==PID==    at 0xADDR: ???`.
struct Frame<'a> {
    /// Everything up to the `???`.
    head: &'a str,
    /// `at` (the instruction itself) or `by` (a return address).
    by: bool,
    addr: u64,
}

fn unknown_frame(line: &str) -> Option<(u32, Frame<'_>)> {
    let (pid, rest) = input::log_pid(line)?;
    let head = line.strip_suffix("???")?;
    let frame = rest.trim_start();
    let by = frame.starts_with("by 0x");
    if !by && !frame.starts_with("at 0x") {
        return None;
    }
    let hex = frame[5..].strip_suffix(": ???")?;
    let addr = u64::from_str_radix(hex, 16).ok()?;
    Some((pid, Frame { head, by, addr }))
}

impl Frame<'_> {
    /// The line with its function named, if a JIT range holds it. A
    /// return address (`by`) is looked up one byte back, in the call
    /// instruction, as Valgrind looks up a native one.
    fn name(&self, table: &SymbolTable) -> Option<String> {
        let at = if self.by {
            self.addr.checked_sub(1)?
        } else {
            self.addr
        };
        let symbol = table.symbol(table.lookup(at)?.symbol);
        let line = symbol.row_at(at).filter(|r| r.line != 0);
        let place = match (line, symbol.file) {
            (Some(row), _) => format!("{}:{}", table.file(row.file), row.line),
            (None, Some(file)) if symbol.line > 0 => {
                format!("{}:{}", table.file(file), symbol.line)
            }
            (None, Some(file)) => table.file(file).to_string(),
            (None, None) => format!("in {}", table.sources()[symbol.source].path.display()),
        };
        Some(format!("{}{} ({place})", self.head, symbol.name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_unnamed_frames_are_frames_to_name() {
        let (pid, f) = unknown_frame("==31892==    by 0x4854002: ???").unwrap();
        assert_eq!(
            (pid, f.by, f.addr, f.head),
            (31892, true, 0x4854002, "==31892==    by 0x4854002: ")
        );
        let (_, f) = unknown_frame("==7==    at 0x4855000: ???").unwrap();
        assert!(!f.by);
        assert!(unknown_frame("==7==    at 0x4855000: ??? (in /lib/x.so)").is_none());
        assert!(unknown_frame("==7==    by 0x1394FA: main (live.c:42)").is_none());
        assert!(unknown_frame("==7== Invalid read of size 4 ???").is_none());
    }
}
