//! The machine code of a profile's JIT functions, for disassembly views
//! (KCachegrind's Machine Code tab runs objdump on a function's `ob=`):
//! one ELF file beside each annotated profile, `jit-code.NAME.elf`, with
//! the code of the JIT functions the profile names at their own addresses,
//! a symbol each and DWARF line tables, made from the jitdump's code
//! bytes. Its name does not start with the profile's (KCachegrind loads
//! every file whose name starts with the one opened), and nothing
//! `callgrind-jit clean` removes is needed to read it.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use jit_client::image::{self, dwarf, elf};
use jit_client::LineEntry;

use crate::symbols::{SourceKind, SymbolId, SymbolTable};

/// The `.comment` of every image we write: it tells ours from other files.
pub const MARK: &[u8] = b"callgrind-jit code image\0";

/// The image's path for the output profile `output`.
pub fn path_for(output: &Path) -> PathBuf {
    let name = output.file_name().unwrap_or_default().to_string_lossy();
    output.with_file_name(format!("jit-code.{name}.elf"))
}

/// True where some symbols come from a jitdump: their code may be there.
pub fn wanted(table: &SymbolTable) -> bool {
    table
        .sources()
        .iter()
        .any(|s| s.kind == SourceKind::Jitdump)
}

/// Refuses a path that holds something other than an image of ours, or
/// one of the inputs.
pub fn check_target(path: &Path, protected: &[&Path]) -> Result<()> {
    crate::output::check_not_input(path, protected)?;
    if let Some(what) = crate::output::not_regular(path) {
        bail!(
            "refusing to replace '{}': it is {} (--no-code writes no code image)",
            path.display(),
            what.describe()
        );
    }
    match std::fs::read(path) {
        Ok(bytes) if !is_ours(&bytes) => bail!(
            "refusing to replace '{}': it is not a code image callgrind-jit wrote \
             (--no-code writes no code image)",
            path.display()
        ),
        _ => Ok(()),
    }
}

fn is_ours(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\x7fELF") && memchr::memmem::find(bytes, MARK).is_some()
}

/// A JIT function's code, as the image holds it.
struct Function {
    name: String,
    addr: u64,
    code: Vec<u8>,
    lines: Vec<(u32, u32, std::sync::Arc<str>)>,
}

/// Writes the image of `symbols` (those a profile names) to `path`, whole
/// or not at all, with permission bits `mode` (the profile's). Returns
/// how many functions it holds (0: nothing written, no symbol had code
/// bytes).
pub fn write(
    table: &SymbolTable,
    symbols: impl Iterator<Item = SymbolId>,
    path: &Path,
    mode: u32,
) -> Result<usize> {
    let functions = functions(table, symbols)?;
    if functions.is_empty() {
        return Ok(0);
    }
    let bytes = image(&functions)?;
    crate::output::write_atomically(path, mode, |mut file| {
        file.write_all(&bytes)
            .with_context(|| format!("cannot write '{}'", path.display()))
    })?;
    Ok(functions.len())
}

/// The functions with code bytes, by address; where two overlap (an
/// address used twice) the one the profile's addresses name.
fn functions(
    table: &SymbolTable,
    symbols: impl Iterator<Item = SymbolId>,
) -> Result<Vec<Function>> {
    let mut functions = Vec::new();
    for id in symbols {
        let symbol = table.symbol(id);
        let owns_start = table
            .lookup(symbol.start)
            .is_some_and(|hit| hit.symbol == id);
        if !owns_start {
            continue;
        }
        let Some(code) = table.code(id)? else {
            continue;
        };
        let lines = symbol
            .rows
            .iter()
            .filter(|r| r.line != 0)
            .map(|r| (r.offset as u32, r.line, table.file(r.file)))
            .collect();
        functions.push(Function {
            name: symbol.name.clone(),
            addr: symbol.start,
            code,
            lines,
        });
    }
    // One owner per start address: the addresses are distinct.
    functions.sort_by_key(|f| f.addr);
    Ok(functions)
}

/// The ELF bytes: back-to-back functions share a piece of `.text`.
fn image(functions: &[Function]) -> Result<Vec<u8>> {
    let lines: Vec<Vec<LineEntry>> = functions.iter().map(|f| line_entries(&f.lines)).collect();
    let described: Vec<dwarf::Function> = functions
        .iter()
        .zip(&lines)
        .map(|(f, lines)| dwarf::Function {
            name: f.name.as_bytes(),
            addr: f.addr,
            size: f.code.len() as u64,
            lines,
        })
        .collect();
    let code = pieces(functions);
    let pieces: Vec<elf::Piece> = code
        .iter()
        .map(|(addr, bytes)| elf::Piece { addr: *addr, bytes })
        .collect();
    // Never loaded: pieces need no page alignment in the file.
    let elf = image::build(&described, &pieces, None, 16, MARK);
    Ok(elf.bytes())
}

fn line_entries(lines: &[(u32, u32, std::sync::Arc<str>)]) -> Vec<LineEntry<'_>> {
    lines
        .iter()
        .map(|(offset, line, file)| LineEntry::new(*offset, *line, 0, file.as_bytes()))
        .collect()
}

/// Runs of functions laid out back to back, as (address, bytes); a
/// function overlapping the one before is cut to fit.
fn pieces(functions: &[Function]) -> Vec<(u64, Vec<u8>)> {
    let mut pieces: Vec<(u64, Vec<u8>)> = Vec::new();
    for f in functions {
        match pieces.last_mut() {
            Some((addr, bytes)) if *addr + bytes.len() as u64 >= f.addr => {
                let end = *addr + bytes.len() as u64;
                let skip = (end - f.addr) as usize;
                bytes.extend_from_slice(f.code.get(skip..).unwrap_or_default());
            }
            _ => pieces.push((f.addr, f.code.clone())),
        }
    }
    pieces
}
