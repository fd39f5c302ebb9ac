use super::*;
use gimli::{EndianSlice, RunTimeEndian};

type Slice<'a> = EndianSlice<'a, RunTimeEndian>;

/// What a reader gets from the sections: the entries (tag, name, low_pc,
/// high_pc) and the line rows (address, file path, line, column, end of
/// sequence).
type Read = (
    Vec<(u16, Vec<u8>, u64, u64)>,
    Vec<(u64, Vec<u8>, u64, u64, bool)>,
);

fn read(sections: &[Section]) -> Read {
    let endian = if cfg!(target_endian = "little") {
        RunTimeEndian::Little
    } else {
        RunTimeEndian::Big
    };
    let load = |id: gimli::SectionId| -> Result<Slice, gimli::Error> {
        let data = sections
            .iter()
            .find(|(name, _)| *name == id.name())
            .map_or(&[][..], |(_, d)| &d[..]);
        Ok(EndianSlice::new(data, endian))
    };
    let dwarf = gimli::read::Dwarf::load(load).unwrap();
    let header = dwarf.units().next().unwrap().unwrap();
    let unit = dwarf.unit(header).unwrap();
    let mut entries = Vec::new();
    let mut cursor = unit.entries();
    while let Some((_, e)) = cursor.next_dfs().unwrap() {
        let name = match e.attr_value(gimli::DW_AT_name).unwrap() {
            Some(v) => dwarf.attr_string(&unit, v).unwrap().to_vec(),
            None => Vec::new(),
        };
        let low = match e.attr_value(gimli::DW_AT_low_pc).unwrap() {
            Some(gimli::AttributeValue::Addr(a)) => a,
            _ => 0,
        };
        let high = e
            .attr_value(gimli::DW_AT_high_pc)
            .unwrap()
            .and_then(|v| v.udata_value())
            .unwrap_or(0);
        entries.push((e.tag().0, name, low, high));
    }
    let program = unit.line_program.clone().unwrap();
    let mut rows = program.rows();
    let mut lines = Vec::new();
    while let Some((header, row)) = rows.next_row().unwrap() {
        let mut path = Vec::new();
        if let Some(file) = row.file(header) {
            if let Some(dir) = file.directory(header) {
                let dir = dwarf.attr_string(&unit, dir).unwrap();
                if !dir.is_empty() {
                    path.extend_from_slice(&dir);
                    path.push(b'/');
                }
            }
            path.extend_from_slice(&dwarf.attr_string(&unit, file.path_name()).unwrap());
        }
        let column = match row.column() {
            gimli::ColumnType::LeftEdge => 0,
            gimli::ColumnType::Column(c) => c.get(),
        };
        let line = row.line().map_or(0, |l| l.get());
        lines.push((row.address(), path, line, column, row.end_sequence()));
    }
    (entries, lines)
}

fn check(functions: &[Function]) {
    let ours = read(&sections(functions, b"producer"));
    let gimlis = read(&reference::sections(functions, b"producer").unwrap());
    assert_eq!(ours, gimlis);
}

#[test]
fn a_function_without_lines_reads_as_gimli_writes_it() {
    check(&[Function {
        name: b"f0",
        addr: 0x483c000,
        size: 6,
        lines: &[],
    }]);
}

#[test]
fn lines_files_and_columns_read_as_gimli_writes_them() {
    let a = [
        LineEntry::new(0, 10, 1, "demo.toy"),
        LineEntry::new(4, 12, 5, "demo.toy"),
        LineEntry::new(9, 3, 0, "/usr/lib/x/lib.toy"),
        LineEntry::new(12, 0, 0, "demo.toy"), // line 0: no row
        LineEntry::new(16, 11, 2, "src/demo.toy"),
        LineEntry::new(32, 7, 0, "demo.toy"), // at the end: no row
        LineEntry::new(40, 99, 1, "demo.toy"), // past the end: no row
    ];
    let b = [
        LineEntry::new(0, 200, 3, "/usr/lib/x/lib.toy"),
        LineEntry::new(300, 1, 1, "/usr/lib/x/other.toy"),
    ];
    check(&[
        Function {
            name: b"first",
            addr: 0x1000,
            size: 32,
            lines: &a,
        },
        Function {
            name: b"second",
            addr: 0x1040,
            size: 1000,
            lines: &b,
        },
    ]);
}

#[test]
fn numbers_encode_as_leb128() {
    let mut out = Vec::new();
    put_uleb(&mut out, 624485);
    assert_eq!(out, [0xe5, 0x8e, 0x26]);
    out.clear();
    put_sleb(&mut out, -123456);
    assert_eq!(out, [0xc0, 0xbb, 0x78]);
    out.clear();
    put_sleb(&mut out, 63);
    put_sleb(&mut out, 64);
    assert_eq!(out, [0x3f, 0xc0, 0x00]);
    // -65: a last seven bits without the sign bit need one byte more.
    out.clear();
    put_sleb(&mut out, -65);
    put_sleb(&mut out, -64);
    assert_eq!(out, [0xbf, 0x7f, 0x40]);
}
