//! DWARF for the functions of one image: a compile unit over their span,
//! a subprogram each, and a line program with one sequence per function
//! from the JIT's line tables. DWARF 4, written here byte by byte: live
//! mode builds an image per load inside the JIT, and gimli's general
//! writer cost 21,000 instructions a load for these few bytes. A test
//! holds this writer to gimli's (`reference.rs`), read back with gimli.

use std::borrow::Cow;

use crate::writer::LineEntry;

/// Section name and contents, for the ELF file.
pub type Section = (&'static str, Cow<'static, [u8]>);

/// One function of an image.
pub struct Function<'a> {
    /// Its name.
    pub name: &'a [u8],
    /// Its address.
    pub addr: u64,
    /// Its size in bytes.
    pub size: u64,
    /// Its line table, by offset from `addr`.
    pub lines: &'a [LineEntry<'a>],
}

const DW_TAG_COMPILE_UNIT: u8 = 0x11;
const DW_TAG_SUBPROGRAM: u8 = 0x2e;
const DW_AT_NAME: u8 = 0x03;
const DW_AT_STMT_LIST: u8 = 0x10;
const DW_AT_LOW_PC: u8 = 0x11;
const DW_AT_HIGH_PC: u8 = 0x12;
const DW_AT_PRODUCER: u8 = 0x25;
const DW_AT_EXTERNAL: u8 = 0x3f;
const DW_FORM_ADDR: u8 = 0x01;
const DW_FORM_STRING: u8 = 0x08;
const DW_FORM_FLAG: u8 = 0x0c;
const DW_FORM_UDATA: u8 = 0x0f;
const DW_FORM_SEC_OFFSET: u8 = 0x17;

/// Abbreviation 1: the unit; 2: a subprogram.
const ABBREV: &[u8] = &[
    1,
    DW_TAG_COMPILE_UNIT,
    1, // has children
    DW_AT_PRODUCER,
    DW_FORM_STRING,
    DW_AT_NAME,
    DW_FORM_STRING,
    DW_AT_LOW_PC,
    DW_FORM_ADDR,
    DW_AT_HIGH_PC,
    DW_FORM_UDATA,
    DW_AT_STMT_LIST,
    DW_FORM_SEC_OFFSET,
    0,
    0,
    2,
    DW_TAG_SUBPROGRAM,
    0, // no children
    DW_AT_NAME,
    DW_FORM_STRING,
    DW_AT_EXTERNAL,
    DW_FORM_FLAG,
    DW_AT_LOW_PC,
    DW_FORM_ADDR,
    DW_AT_HIGH_PC,
    DW_FORM_UDATA,
    0,
    0,
    0,
];

/// Line program opcodes.
const DW_LNS_COPY: u8 = 1;
const DW_LNS_ADVANCE_PC: u8 = 2;
const DW_LNS_ADVANCE_LINE: u8 = 3;
const DW_LNS_SET_FILE: u8 = 4;
const DW_LNS_SET_COLUMN: u8 = 5;
const DW_LNE_END_SEQUENCE: u8 = 1;
const DW_LNE_SET_ADDRESS: u8 = 2;

/// Operands of the standard opcodes 1 to 12.
const STANDARD_OPCODE_LENGTHS: [u8; 12] = [0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1];

/// `.debug_*` sections describing `functions` (sorted by address, at
/// least one). The unit's range is the functions' span: Valgrind reads no
/// lines from a unit whose range reaches past its code.
pub fn sections(functions: &[Function], producer: &[u8]) -> Vec<Section> {
    let start = functions.first().map_or(0, |f| f.addr);
    let end = functions
        .iter()
        .map(|f| f.addr + f.size)
        .max()
        .unwrap_or(start);
    let main_file = functions
        .iter()
        .find_map(|f| f.lines.first())
        .map_or(&b"<jit>"[..], |l| l.file);
    let (_, main_name) = split_path(main_file);
    let mut info = Vec::with_capacity(64 + 32 * functions.len());
    put_u32(&mut info, 0); // unit length, set below
    put_u16(&mut info, 4);
    put_u32(&mut info, 0); // abbreviations at offset 0
    info.push(8); // address size
    info.push(1);
    put_str(&mut info, producer);
    put_str(&mut info, main_name);
    put_u64(&mut info, start);
    put_uleb(&mut info, end - start);
    put_u32(&mut info, 0); // the line program at offset 0
    for f in functions {
        info.push(2);
        put_str(&mut info, f.name);
        info.push(1);
        put_u64(&mut info, f.addr);
        put_uleb(&mut info, f.size);
    }
    info.push(0); // end of the unit's children
    set_length(&mut info);
    vec![
        (".debug_abbrev", Cow::Borrowed(ABBREV)),
        (".debug_info", Cow::Owned(info)),
        (".debug_line", Cow::Owned(line_program(functions))),
    ]
}

/// The line program: one sequence per function, a row per line entry
/// inside it (line 0 is none), ended at its size.
fn line_program<'a>(functions: &[Function<'a>]) -> Vec<u8> {
    let rows = || {
        functions.iter().flat_map(|f| {
            f.lines
                .iter()
                .filter(move |l| u64::from(l.offset) < f.size && l.line > 0)
        })
    };
    let mut files = Files::default();
    for l in rows() {
        files.index(l.file);
    }
    let mut out = Vec::with_capacity(64 + 16 * rows().count());
    put_u32(&mut out, 0); // unit length, set below
    put_u16(&mut out, 4);
    put_u32(&mut out, 0); // header length, set below
    let header_start = out.len();
    out.extend_from_slice(&[1, 1, 1]); // instruction length, ops, is_stmt
    out.push(-5i8 as u8); // line base
    out.push(14); // line range
    out.push(STANDARD_OPCODE_LENGTHS.len() as u8 + 1); // opcode base
    out.extend_from_slice(&STANDARD_OPCODE_LENGTHS);
    files.write_tables(&mut out);
    let header_len = (out.len() - header_start) as u32;
    out[6..10].copy_from_slice(&header_len.to_ne_bytes());
    for f in functions {
        sequence(&mut out, f, &mut files);
    }
    set_length(&mut out);
    out
}

/// One function's rows: the registers start at file 1, line 1, column
/// 0 in each sequence.
fn sequence<'a>(out: &mut Vec<u8>, f: &Function<'a>, files: &mut Files<'a>) {
    out.extend_from_slice(&[0, 9, DW_LNE_SET_ADDRESS]);
    put_u64(out, f.addr);
    let (mut file, mut line, mut column, mut offset) = (1u64, 1i64, 0u64, 0u64);
    let inside = |l: &&LineEntry| u64::from(l.offset) < f.size && l.line > 0;
    for l in f.lines.iter().filter(inside) {
        let id = files.index(l.file);
        if id != file {
            out.push(DW_LNS_SET_FILE);
            put_uleb(out, id);
            file = id;
        }
        if i64::from(l.line) != line {
            out.push(DW_LNS_ADVANCE_LINE);
            put_sleb(out, i64::from(l.line) - line);
            line = i64::from(l.line);
        }
        if u64::from(l.column) != column {
            out.push(DW_LNS_SET_COLUMN);
            put_uleb(out, u64::from(l.column));
            column = u64::from(l.column);
        }
        advance(out, &mut offset, u64::from(l.offset));
        out.push(DW_LNS_COPY);
    }
    advance(out, &mut offset, f.size);
    out.extend_from_slice(&[0, 1, DW_LNE_END_SEQUENCE]);
}

/// Moves the address register forward to `to` (the rows of a line table
/// are in address order; a row out of order stays where it is).
fn advance(out: &mut Vec<u8>, offset: &mut u64, to: u64) {
    if to > *offset {
        out.push(DW_LNS_ADVANCE_PC);
        put_uleb(out, to - *offset);
        *offset = to;
    }
}

/// The line program's directories and files, numbered from 1 in the
/// order first met (directory 0 is the unit's own).
#[derive(Default)]
struct Files<'a> {
    dirs: Vec<&'a [u8]>,
    /// Path as given, its name, its directory's number.
    files: Vec<(&'a [u8], &'a [u8], u64)>,
}

impl<'a> Files<'a> {
    /// The file number of `path`, added if new.
    fn index(&mut self, path: &'a [u8]) -> u64 {
        if let Some(i) = self.files.iter().position(|f| f.0 == path) {
            return i as u64 + 1;
        }
        let (dir, name) = split_path(path);
        let dir_index = match dir {
            [] => 0,
            dir => match self.dirs.iter().position(|&d| d == dir) {
                Some(i) => i as u64 + 1,
                None => {
                    self.dirs.push(dir);
                    self.dirs.len() as u64
                }
            },
        };
        self.files.push((path, name, dir_index));
        self.files.len() as u64
    }

    fn write_tables(&self, out: &mut Vec<u8>) {
        for dir in &self.dirs {
            put_str(out, dir);
        }
        out.push(0);
        for &(_, name, dir) in &self.files {
            put_str(out, name);
            put_uleb(out, dir);
            out.extend_from_slice(&[0, 0]); // time, length
        }
        out.push(0);
    }
}

/// `a/b/c.toy` -> (`a/b`, `c.toy`).
fn split_path(path: &[u8]) -> (&[u8], &[u8]) {
    match path.iter().rposition(|&b| b == b'/') {
        Some(i) => (&path[..i.max(1)], &path[i + 1..]),
        None => (b"", path),
    }
}

/// Sets the leading 32-bit length of a unit to what follows it.
fn set_length(unit: &mut [u8]) {
    let len = (unit.len() - 4) as u32;
    unit[..4].copy_from_slice(&len.to_ne_bytes());
}

fn put_u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_ne_bytes());
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_ne_bytes());
}

fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_ne_bytes());
}

/// A NUL-terminated string (a name's own NULs would end it early: cut
/// there).
fn put_str(out: &mut Vec<u8>, s: &[u8]) {
    let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
    out.extend_from_slice(&s[..end]);
    out.push(0);
}

fn put_uleb(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn put_sleb(out: &mut Vec<u8>, mut v: i64) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        let done = (v == 0 && byte & 0x40 == 0) || (v == -1 && byte & 0x40 != 0);
        if done {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

#[cfg(test)]
mod reference;
#[cfg(test)]
mod tests;
