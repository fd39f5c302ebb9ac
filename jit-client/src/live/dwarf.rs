//! DWARF for one function: a compile unit with its address range, a
//! subprogram, and a line program from the JIT's line table (gimli writes it).

use gimli::write::{
    Address, AttributeValue, DwarfUnit, EndianVec, FileId, LineProgram, LineString, Sections,
};
use gimli::{Encoding, Format, LineEncoding};

use crate::writer::LineEntry;

/// Section name and contents, for the ELF file.
pub type Section = (&'static str, Vec<u8>);

#[cfg(target_endian = "little")]
type Endian = gimli::LittleEndian;
#[cfg(target_endian = "big")]
type Endian = gimli::BigEndian;

/// `.debug_*` sections describing `name` at `[addr, addr+size)`.
pub fn sections(
    name: &[u8],
    addr: u64,
    size: u64,
    lines: &[LineEntry],
) -> gimli::write::Result<Vec<Section>> {
    let encoding = Encoding {
        format: Format::Dwarf32,
        version: 4,
        address_size: 8,
    };
    let main_file = lines.first().map_or(&b"<jit>"[..], |l| l.file);
    let mut dwarf = DwarfUnit::new(encoding);
    dwarf.unit.line_program = line_program(encoding, main_file, addr, size, lines);
    let root = dwarf.unit.root();
    let unit = dwarf.unit.get_mut(root);
    unit.set(
        gimli::DW_AT_producer,
        AttributeValue::String(b"callgrind-jit live mode".to_vec()),
    );
    unit.set(
        gimli::DW_AT_name,
        AttributeValue::String(main_file.to_vec()),
    );
    unit.set(
        gimli::DW_AT_low_pc,
        AttributeValue::Address(Address::Constant(addr)),
    );
    unit.set(gimli::DW_AT_high_pc, AttributeValue::Udata(size));
    let function = dwarf.unit.add(root, gimli::DW_TAG_subprogram);
    let function = dwarf.unit.get_mut(function);
    function.set(gimli::DW_AT_name, AttributeValue::String(name.to_vec()));
    function.set(gimli::DW_AT_external, AttributeValue::Flag(true));
    function.set(
        gimli::DW_AT_low_pc,
        AttributeValue::Address(Address::Constant(addr)),
    );
    function.set(gimli::DW_AT_high_pc, AttributeValue::Udata(size));
    let mut out = Sections::new(EndianVec::new(Endian::default()));
    dwarf.write(&mut out)?;
    let mut sections = Vec::new();
    out.for_each(|id, data| {
        if !data.slice().is_empty() {
            sections.push((id.name(), data.slice().to_vec()));
        }
        Ok::<_, gimli::write::Error>(())
    })?;
    Ok(sections)
}

/// One sequence over the function: a row per line entry, ended at `size`.
fn line_program(
    encoding: Encoding,
    main_file: &[u8],
    addr: u64,
    size: u64,
    lines: &[LineEntry],
) -> LineProgram {
    let (dir, file) = split_path(main_file);
    let mut program = LineProgram::new(
        encoding,
        LineEncoding::default(),
        LineString::String(dir.to_vec()),
        LineString::String(file.to_vec()),
        None,
    );
    let mut files: Vec<(&[u8], FileId)> = Vec::new();
    program.begin_sequence(Some(Address::Constant(addr)));
    for l in lines
        .iter()
        .filter(|l| u64::from(l.offset) < size && l.line > 0)
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
    program.end_sequence(size);
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
