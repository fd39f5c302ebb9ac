//! Source lines from an object's DWARF line programs, with the object's
//! relocations applied first (a relocatable object's line programs hold
//! addresses only as relocations against its code).

use std::collections::HashMap;

use gimli::{EndianSlice, RunTimeEndian};
use object::{Object, ObjectSection, RelocationKind, RelocationTarget};

/// One row: from `addr` on, the code is at `file:line:column`. A row with
/// line 0 ends a sequence (the code after it has no line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub addr: u64,
    pub line: u32,
    pub column: u32,
    pub file: String,
}

/// The rows of every line program in `file`, sorted by address.
pub fn rows(
    file: &object::File,
    target: &dyn Fn(RelocationTarget) -> Option<u64>,
) -> Result<Vec<Row>, gimli::Error> {
    let sections =
        gimli::DwarfSections::load(|id| Ok::<_, gimli::Error>(section(file, id.name(), target)))?;
    let endian = if file.is_little_endian() {
        RunTimeEndian::Little
    } else {
        RunTimeEndian::Big
    };
    let dwarf = sections.borrow(|s| EndianSlice::new(s, endian));
    let mut out = Vec::new();
    let mut units = dwarf.units();
    while let Some(header) = units.next()? {
        let unit = dwarf.unit(header)?;
        let Some(program) = unit.line_program.clone() else {
            continue;
        };
        let mut names: HashMap<u64, String> = HashMap::new();
        let mut program_rows = program.rows();
        while let Some((header, row)) = program_rows.next_row()? {
            let line = if row.end_sequence() {
                0
            } else {
                row.line().map_or(0, |l| l.get() as u32)
            };
            let file = names
                .entry(row.file_index())
                .or_insert_with(|| file_name(&dwarf, &unit, header, row.file_index()))
                .clone();
            let column = match row.column() {
                gimli::ColumnType::LeftEdge => 0,
                gimli::ColumnType::Column(c) => c.get() as u32,
            };
            out.push(Row {
                addr: row.address(),
                line,
                column,
                file,
            });
        }
    }
    out.sort_by_key(|r| r.addr);
    Ok(out)
}

/// The rows for the code in `[start, end)`: those inside it, headed by the
/// row that covers `start` if none begins there.
pub fn within(rows: &[Row], start: u64, end: u64) -> Vec<Row> {
    let first = rows.partition_point(|r| r.addr < start);
    let mut out: Vec<Row> = Vec::new();
    if rows.get(first).is_none_or(|r| r.addr != start) {
        if let Some(before) = first.checked_sub(1).map(|i| &rows[i]) {
            if before.line != 0 {
                out.push(Row {
                    addr: start,
                    ..before.clone()
                });
            }
        }
    }
    out.extend(
        rows[first..]
            .iter()
            .take_while(|r| r.addr < end)
            .filter(|r| r.line != 0)
            .cloned(),
    );
    out
}

type Reader<'a> = EndianSlice<'a, RunTimeEndian>;

/// "dir/name" of a file of the line program (relative directories under
/// the unit's compilation directory).
fn file_name(
    dwarf: &gimli::Dwarf<Reader>,
    unit: &gimli::Unit<Reader>,
    header: &gimli::LineProgramHeader<Reader>,
    index: u64,
) -> String {
    let Some(entry) = header.file(index) else {
        return String::new();
    };
    let text = |value| {
        dwarf
            .attr_string(unit, value)
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let name = text(entry.path_name());
    if name.starts_with('/') {
        return name;
    }
    let mut dir = entry.directory(header).map(text).unwrap_or_default();
    if !dir.starts_with('/') {
        if let Some(comp) = unit.comp_dir {
            let comp = comp.to_string_lossy().into_owned();
            dir = if dir.is_empty() {
                comp
            } else {
                format!("{comp}/{dir}")
            };
        }
    }
    if dir.is_empty() {
        name
    } else {
        format!("{dir}/{name}")
    }
}

/// A debug section's bytes with its absolute relocations applied.
fn section(
    file: &object::File,
    name: &str,
    target: &dyn Fn(RelocationTarget) -> Option<u64>,
) -> Vec<u8> {
    let Some(section) = file.section_by_name(name) else {
        return Vec::new();
    };
    let Ok(data) = section.uncompressed_data() else {
        return Vec::new();
    };
    let mut bytes = data.into_owned();
    for (offset, relocation) in section.relocations() {
        let Some(base) = target(relocation.target()) else {
            continue;
        };
        if relocation.kind() != RelocationKind::Absolute || relocation.has_implicit_addend() {
            continue;
        }
        let value = base.wrapping_add_signed(relocation.addend());
        let little = file.is_little_endian();
        let encoded = match relocation.size() {
            64 if little => value.to_le_bytes().to_vec(),
            64 => value.to_be_bytes().to_vec(),
            32 if little => (value as u32).to_le_bytes().to_vec(),
            32 => (value as u32).to_be_bytes().to_vec(),
            _ => continue,
        };
        let at = offset as usize;
        if let Some(slot) = bytes.get_mut(at..at + encoded.len()) {
            slot.copy_from_slice(&encoded);
        }
    }
    bytes
}
