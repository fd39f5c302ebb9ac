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

#[cfg(test)]
mod tests {
    use super::*;
    use object::{Object, ObjectSection, ObjectSymbol};

    /// A jitdump's bytes: each load at its address with its code, the
    /// first with line rows (offset, line) in `f.toy`.
    fn dump(loads: &[(u64, &[u8], &str)], rows: &[(u64, u32)]) -> Vec<u8> {
        crate::symbols::test_dump::jitdump(loads, rows, b"f.toy")
    }

    fn table(dump: &[u8]) -> SymbolTable {
        let mut table = SymbolTable::builder();
        let bias = crate::symbols::BiasMode::None;
        table.add_jitdump("jit-1.dump".into(), dump, bias).unwrap();
        table.build()
    }

    fn all(table: &SymbolTable) -> Vec<SymbolId> {
        table.ids().collect()
    }

    #[test]
    fn the_image_is_named_beside_the_profile_without_its_prefix() {
        let path = path_for(Path::new("/runs/callgrind.jit.out.7"));
        assert_eq!(path, Path::new("/runs/jit-code.callgrind.jit.out.7.elf"));
    }

    #[test]
    fn only_a_jitdump_can_give_code() {
        let mut map = SymbolTable::builder();
        map.add_perf_map("perf-1.map".into(), b"1000 10 f\n");
        assert!(!wanted(&map.build()));
        assert!(wanted(&table(&dump(&[(0x1000, b"\x90", "f")], &[]))));
    }

    #[test]
    fn the_image_holds_each_functions_code_name_and_lines() {
        let f: &[u8] = &[0x55, 0x48, 0x89, 0xe5, 0xc3, 0x90, 0x90, 0x90];
        let g: &[u8] = &[0xc3; 4];
        // f and g back to back (one piece of .text), h apart.
        let loads = [
            (0x4000, f, "f"),
            (0x4008, g, "g"),
            (0x9000, b"\xcc" as &[u8], "h"),
        ];
        let table = table(&dump(&loads, &[(0, 3), (4, 0), (5, 4)]));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("jit-code.out.elf");
        assert_eq!(
            write(&table, all(&table).into_iter(), &path, 0o640).unwrap(),
            3
        );
        let bytes = std::fs::read(&path).unwrap();
        assert!(is_ours(&bytes));
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
        let elf = object::File::parse(&*bytes).unwrap();
        let mut symbols: Vec<_> = elf
            .symbols()
            .filter(|s| s.kind() == object::SymbolKind::Text)
            .map(|s| (s.name().unwrap().to_string(), s.address(), s.size()))
            .collect();
        symbols.sort();
        let want = [("f", 0x4000, 8), ("g", 0x4008, 4), ("h", 0x9000, 1)];
        assert_eq!(symbols, want.map(|(n, a, s)| (n.to_string(), a, s)));
        let code_at = |addr: u64, len: usize| {
            let section = elf
                .sections()
                .find(|s| (s.address()..s.address() + s.size()).contains(&addr))
                .unwrap();
            let data = section.data().unwrap();
            data[(addr - section.address()) as usize..][..len].to_vec()
        };
        assert_eq!(code_at(0x4000, 12), [f, g].concat());
        assert_eq!(code_at(0x9000, 1), [0xcc]);
        // f's rows without the sentinel (line 0).
        let functions = functions(&table, all(&table).into_iter()).unwrap();
        let lines: Vec<_> = functions[0].lines.iter().map(|l| (l.0, l.1)).collect();
        assert_eq!(lines, [(0, 3), (5, 4)]);
        let debug_line = elf.section_by_name(".debug_line").unwrap();
        let data = debug_line.data().unwrap();
        assert!(memchr::memmem::find(data, b"f.toy").is_some());
    }

    #[test]
    fn code_loaded_over_code_is_imaged_once_as_its_last_load() {
        let loads = [
            (0x4000, &[1u8; 8][..], "old"),
            (0x4000, &[2u8; 8][..], "new"),
        ];
        let table = table(&dump(&loads, &[]));
        let functions = functions(&table, all(&table).into_iter()).unwrap();
        let got: Vec<_> = functions
            .iter()
            .map(|f| (f.name.as_str(), f.code[0]))
            .collect();
        assert_eq!(got, [("new", 2)]);
    }

    #[test]
    fn nothing_is_written_where_no_symbol_has_code() {
        let mut map = SymbolTable::builder();
        map.add_perf_map("perf-1.map".into(), b"1000 10 f\n");
        let map = map.build();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("jit-code.out.elf");
        assert_eq!(write(&map, all(&map).into_iter(), &path, 0o644).unwrap(), 0);
        assert!(!path.exists());
    }

    #[test]
    fn only_nothing_or_an_image_of_ours_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str, bytes: &[u8]| {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            path
        };
        let ours = [b"\x7fELF" as &[u8], b"junk", MARK].concat();
        assert!(check_target(&dir.path().join("none.elf"), &[]).is_ok());
        assert!(check_target(&at("ours.elf", &ours), &[]).is_ok());
        let ours_path = dir.path().join("ours.elf");
        let err = check_target(&ours_path, &[&ours_path]).unwrap_err();
        assert!(err.to_string().contains("input"), "{err}");
        let foreign = [
            at("text.elf", b"hello"),
            at("plain-elf.elf", b"\x7fELF\x02\x01\x01"),
            at("mark-only.elf", &[b"junk", MARK].concat()),
        ];
        for path in foreign {
            let err = check_target(&path, &[]).unwrap_err().to_string();
            assert!(
                err.contains("not a code image callgrind-jit wrote"),
                "{err}"
            );
        }
        let err = check_target(dir.path(), &[]).unwrap_err().to_string();
        assert!(err.contains("refusing to replace"), "{err}");
    }
}
