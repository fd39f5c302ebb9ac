//! The slow reference for the DWARF writer: the same sections written by
//! gimli's general writer (what live mode used before it wrote them
//! itself).

use gimli::write::{
    Address, AttributeValue, DwarfUnit, EndianVec, FileId, LineProgram, LineString, Sections,
};
use gimli::{Encoding, Format, LineEncoding};

use super::{Function, Section};

#[cfg(target_endian = "little")]
type Endian = gimli::LittleEndian;
#[cfg(target_endian = "big")]
type Endian = gimli::BigEndian;

/// `.debug_*` sections describing `functions` (sorted by address, at
/// least one). The unit's range is the functions' span: Valgrind reads no
/// lines from a unit whose range reaches past its code.
pub fn sections(functions: &[Function], producer: &[u8]) -> gimli::write::Result<Vec<Section>> {
    let start = functions.first().map_or(0, |f| f.addr);
    let end = functions
        .iter()
        .map(|f| f.addr + f.size)
        .max()
        .unwrap_or(start);
    let encoding = Encoding {
        format: Format::Dwarf32,
        version: 4,
        address_size: 8,
    };
    let main_file = functions
        .iter()
        .find_map(|f| f.lines.first())
        .map_or(&b"<jit>"[..], |l| l.file);
    let mut dwarf = DwarfUnit::new(encoding);
    dwarf.unit.line_program = line_program(encoding, main_file, functions);
    let root = dwarf.unit.root();
    let unit = dwarf.unit.get_mut(root);
    unit.set(
        gimli::DW_AT_producer,
        AttributeValue::String(producer.to_vec()),
    );
    unit.set(
        gimli::DW_AT_name,
        AttributeValue::String(main_file.to_vec()),
    );
    unit.set(
        gimli::DW_AT_low_pc,
        AttributeValue::Address(Address::Constant(start)),
    );
    unit.set(gimli::DW_AT_high_pc, AttributeValue::Udata(end - start));
    for f in functions {
        let id = dwarf.unit.add(root, gimli::DW_TAG_subprogram);
        let entry = dwarf.unit.get_mut(id);
        entry.set(gimli::DW_AT_name, AttributeValue::String(f.name.to_vec()));
        entry.set(gimli::DW_AT_external, AttributeValue::Flag(true));
        entry.set(
            gimli::DW_AT_low_pc,
            AttributeValue::Address(Address::Constant(f.addr)),
        );
        entry.set(gimli::DW_AT_high_pc, AttributeValue::Udata(f.size));
    }
    let mut out = Sections::new(EndianVec::new(Endian::default()));
    dwarf.write(&mut out)?;
    let mut sections = Vec::new();
    out.for_each(|id, data| {
        if !data.slice().is_empty() {
            sections.push((id.name(), data.slice().to_vec().into()));
        }
        Ok::<_, gimli::write::Error>(())
    })?;
    Ok(sections)
}

/// One sequence per function: a row per line entry, ended at its size.
fn line_program(encoding: Encoding, main_file: &[u8], functions: &[Function]) -> LineProgram {
    let (dir, file) = split_path(main_file);
    let mut program = LineProgram::new(
        encoding,
        LineEncoding::default(),
        LineString::String(dir.to_vec()),
        LineString::String(file.to_vec()),
        None,
    );
    let mut files: Vec<(&[u8], FileId)> = Vec::new();
    for f in functions {
        program.begin_sequence(Some(Address::Constant(f.addr)));
        for l in f
            .lines
            .iter()
            .filter(|l| u64::from(l.offset) < f.size && l.line > 0)
        {
            let file = match files.iter().find(|(name, _)| *name == l.file) {
                Some(&(_, id)) => id,
                None => {
                    let id = add_file(&mut program, l.file);
                    files.push((l.file, id));
                    id
                }
            };
            let row = program.row();
            (row.address_offset, row.file, row.line, row.column) = (
                u64::from(l.offset),
                file,
                u64::from(l.line),
                u64::from(l.column),
            );
            program.generate_row();
        }
        program.end_sequence(f.size);
    }
    program
}

fn add_file(program: &mut LineProgram, path: &[u8]) -> FileId {
    let (dir, file) = split_path(path);
    let dir = if dir.is_empty() {
        program.default_directory()
    } else {
        program.add_directory(LineString::String(dir.to_vec()))
    };
    program.add_file(LineString::String(file.to_vec()), dir, None)
}

/// `a/b/c.toy` -> (`a/b`, `c.toy`).
fn split_path(path: &[u8]) -> (&[u8], &[u8]) {
    match path.iter().rposition(|&b| b == b'/') {
        Some(i) => (&path[..i.max(1)], &path[i + 1..]),
        None => (b"", path),
    }
}
