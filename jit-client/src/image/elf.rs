//! A minimal ELF shared object for JIT functions: an r-x PT_LOAD and a
//! `.text` section per piece of code, at the code's own address; for live
//! mode an rw- PT_LOAD page Valgrind needs to see before it reads the
//! file; a symbol per function, the DWARF sections, and a `.comment`
//! naming the writer.
//!
//! Written here field by field (64-bit, the machine's byte order): live
//! mode builds an image per load inside the JIT, and object's general
//! writer cost 17,000 instructions a load. A test holds this writer to
//! object's (`reference.rs`), both read back with object's reader.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use super::dwarf::Section;

/// A function symbol.
#[derive(Clone, Copy)]
pub struct Symbol<'a> {
    /// Its name.
    pub name: &'a [u8],
    /// Its address.
    pub addr: u64,
    /// Its size.
    pub size: u64,
}

/// Code bytes at their address.
pub struct Piece<'a> {
    /// Address of the first byte.
    pub addr: u64,
    /// The bytes, as they are in memory.
    pub bytes: &'a [u8],
}

/// What goes into the file (the code borrowed for `'p`, as long as the
/// laid-out file needs it).
pub struct Image<'a, 'p> {
    /// The functions, each inside a piece.
    pub symbols: &'a [Symbol<'a>],
    /// The code, sorted by address, pieces disjoint.
    pub pieces: &'p [Piece<'p>],
    /// Address reserved for an rw- page (live mode), if any.
    pub rw_addr: Option<u64>,
    /// Page size.
    pub page: u64,
    /// `.debug_*` sections.
    pub dwarf: &'a [Section],
    /// The `.comment` section's text (who wrote the file).
    pub comment: &'a [u8],
}

/// The file laid out, and where the loadable parts start in it. The code
/// is not copied in: it goes into the file from the pieces themselves,
/// and the rw- page is a hole (zeros).
pub struct Elf<'a> {
    /// The file header and program headers, at offset 0.
    head: Vec<u8>,
    /// Everything after the code and the rw- page, at `tail_at`.
    tail: Vec<u8>,
    tail_at: u64,
    /// The code.
    pieces: &'a [Piece<'a>],
    /// File offset of each piece's bytes.
    pub piece_offsets: Vec<u64>,
    /// File offset of the rw- page, where one was asked for.
    pub rw_offset: Option<u64>,
}

impl Elf<'_> {
    /// Writes the file into `file` (empty), the code straight from the
    /// pieces.
    pub fn write_to(&self, file: &File) -> io::Result<()> {
        file.write_all_at(&self.head, 0)?;
        for (piece, &offset) in self.pieces.iter().zip(&self.piece_offsets) {
            file.write_all_at(piece.bytes, offset)?;
        }
        file.write_all_at(&self.tail, self.tail_at)
    }

    /// The whole file.
    pub fn bytes(&self) -> Vec<u8> {
        let mut bytes = vec![0; self.tail_at as usize + self.tail.len()];
        bytes[..self.head.len()].copy_from_slice(&self.head);
        for (piece, &offset) in self.pieces.iter().zip(&self.piece_offsets) {
            let offset = offset as usize;
            bytes[offset..offset + piece.bytes.len()].copy_from_slice(piece.bytes);
        }
        bytes[self.tail_at as usize..].copy_from_slice(&self.tail);
        bytes
    }
}

/// Bytes of a header or table, in the machine's byte order.
#[derive(Default)]
struct Out(Vec<u8>);

impl Out {
    fn bytes(&mut self, v: &[u8]) {
        self.0.extend_from_slice(v);
    }
    fn u16(&mut self, v: u16) {
        self.bytes(&v.to_ne_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.bytes(&v.to_ne_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.bytes(&v.to_ne_bytes());
    }
    /// Zeros up to `offset`, where this starts at file offset `base`.
    fn pad_to(&mut self, base: u64, offset: u64) {
        self.0.resize((offset - base) as usize, 0);
    }
}

const EHDR_SIZE: u64 = 64;
const PHDR_SIZE: u64 = 56;
const SHDR_SIZE: u64 = 64;
const SYM_SIZE: u64 = 24;
const ET_DYN: u16 = 3;
const PT_LOAD: u32 = 1;
const PF_X: u32 = 1;
const PF_W: u32 = 2;
const PF_R: u32 = 4;
const SHT_PROGBITS: u32 = 1;
const SHT_SYMTAB: u32 = 2;
const SHT_STRTAB: u32 = 3;
const SHF_ALLOC: u64 = 2;
const SHF_EXECINSTR: u64 = 4;
const STB_GLOBAL_FUNC: u8 = (1 << 4) | 2;

/// Where everything goes: the file's layout.
struct Layout {
    piece_offsets: Vec<u64>,
    rw_offset: Option<u64>,
    comment: u64,
    debug: Vec<u64>,
    symtab: u64,
    strtab: u64,
    shstrtab: u64,
    sections: u64,
    len: u64,
}

/// The symbol names' table, and each name's offset in it.
fn strtab(symbols: &[Symbol]) -> (Vec<u8>, Vec<u32>) {
    let mut table = Vec::with_capacity(1 + symbols.iter().map(|s| s.name.len() + 1).sum::<usize>());
    table.push(0);
    let offsets = symbols
        .iter()
        .map(|s| {
            let at = table.len() as u32;
            let end = s.name.iter().position(|&b| b == 0).unwrap_or(s.name.len());
            table.extend_from_slice(&s.name[..end]);
            table.push(0);
            at
        })
        .collect();
    (table, offsets)
}

fn align(offset: u64, to: u64) -> u64 {
    offset.div_ceil(to) * to
}

impl Layout {
    fn of(image: &Image, phnum: u64, strtab: u64, shstrtab: u64) -> Layout {
        let page = image.page;
        let mut at = EHDR_SIZE + phnum * PHDR_SIZE;
        // Each piece's file offset is its address modulo the page size, as
        // a loader needs it.
        let piece_offsets = image
            .pieces
            .iter()
            .map(|p| {
                let skew = p.addr % page;
                let start = align(at, page);
                at = start + skew + p.bytes.len() as u64;
                start + skew
            })
            .collect();
        let rw_offset = image.rw_addr.map(|_| {
            let start = align(at, page);
            at = start + page;
            start
        });
        let mut next = |len: u64, to: u64| {
            let start = align(at, to);
            at = start + len;
            start
        };
        let comment = next(image.comment.len() as u64, 1);
        let debug = image
            .dwarf
            .iter()
            .map(|(_, data)| next(data.len() as u64, 1))
            .collect();
        let symtab = next((image.symbols.len() as u64 + 1) * SYM_SIZE, 8);
        let strtab = next(strtab, 1);
        let shstrtab = next(shstrtab, 1);
        let shnum = sections_count(image);
        let sections = next(shnum * SHDR_SIZE, 8);
        Layout {
            piece_offsets,
            rw_offset,
            comment,
            debug,
            symtab,
            strtab,
            shstrtab,
            sections,
            len: at,
        }
    }
}

/// Null, a `.text` per piece, `.comment`, the DWARF, `.symtab`,
/// `.strtab`, `.shstrtab`.
fn sections_count(image: &Image) -> u64 {
    1 + image.pieces.len() as u64 + 1 + image.dwarf.len() as u64 + 3
}

/// Lays out and writes the file.
pub fn write<'p>(image: &Image<'_, 'p>) -> Elf<'p> {
    let names = Names::of(image.dwarf);
    let (symbol_names, name_offsets) = strtab(image.symbols);
    let phnum = image.pieces.len() as u64 + u64::from(image.rw_addr.is_some());
    let layout = Layout::of(
        image,
        phnum,
        symbol_names.len() as u64,
        names.table.len() as u64,
    );
    let mut head = Out(Vec::with_capacity((EHDR_SIZE + phnum * PHDR_SIZE) as usize));
    file_header(&mut head, image, phnum, &layout);
    program_headers(&mut head, image, &layout);
    // The code and the rw- page lie between head and tail (see `Elf`).
    let base = layout.comment;
    let mut tail = Out(Vec::with_capacity((layout.len - base) as usize));
    tail.bytes(image.comment);
    for ((_, data), &offset) in image.dwarf.iter().zip(&layout.debug) {
        tail.pad_to(base, offset);
        tail.bytes(data);
    }
    tail.pad_to(base, layout.symtab);
    symbols(&mut tail, image, &name_offsets);
    tail.bytes(&symbol_names);
    tail.bytes(&names.table);
    tail.pad_to(base, layout.sections);
    section_headers(&mut tail, image, &names, &layout, symbol_names.len() as u64);
    debug_assert_eq!(base + tail.0.len() as u64, layout.len);
    Elf {
        head: head.0,
        tail: tail.0,
        tail_at: base,
        pieces: image.pieces,
        piece_offsets: layout.piece_offsets,
        rw_offset: layout.rw_offset,
    }
}

fn file_header(out: &mut Out, image: &Image, phnum: u64, layout: &Layout) {
    let data = if cfg!(target_endian = "little") { 1 } else { 2 };
    out.bytes(&[0x7f, b'E', b'L', b'F', 2, data, 1, 0]);
    out.bytes(&[0; 8]);
    out.u16(ET_DYN);
    out.u16(jitdump::format::elf_machine() as u16);
    out.u32(1); // version
    out.u64(0); // entry
    out.u64(EHDR_SIZE); // program headers
    out.u64(layout.sections);
    out.u32(0); // flags
    out.u16(EHDR_SIZE as u16);
    out.u16(PHDR_SIZE as u16);
    out.u16(phnum as u16);
    out.u16(SHDR_SIZE as u16);
    out.u16(sections_count(image) as u16);
    out.u16(sections_count(image) as u16 - 1); // .shstrtab, the last
}

/// A PT_LOAD per piece (r-x) and the rw- page, in address order: loaders
/// (Valgrind's among them) refuse PT_LOADs out of address order, and the
/// rw- page may lie below the code.
fn program_headers(out: &mut Out, image: &Image, layout: &Layout) {
    let mut loads: Vec<(u32, u64, u64, u64)> = image
        .pieces
        .iter()
        .zip(&layout.piece_offsets)
        .map(|(p, &offset)| (PF_R | PF_X, offset, p.addr, p.bytes.len() as u64))
        .collect();
    if let (Some(addr), Some(offset)) = (image.rw_addr, layout.rw_offset) {
        loads.push((PF_R | PF_W, offset, addr, image.page));
    }
    loads.sort_by_key(|&(_, _, addr, _)| addr);
    for (flags, offset, addr, size) in loads {
        out.u32(PT_LOAD);
        out.u32(flags);
        out.u64(offset);
        out.u64(addr); // vaddr
        out.u64(addr); // paddr
        out.u64(size); // in the file
        out.u64(size); // in memory
        out.u64(image.page);
    }
}

/// The null symbol, then a global function symbol each, in the `.text`
/// section of the piece holding it.
fn symbols(out: &mut Out, image: &Image, names: &[u32]) {
    out.bytes(&[0; SYM_SIZE as usize]);
    for (s, &name) in image.symbols.iter().zip(names) {
        // Section i + 1 holds piece i.
        let piece = image.pieces.partition_point(|p| p.addr <= s.addr);
        let section = match image.pieces.is_empty() {
            true => 0,
            false => piece.max(1) as u16,
        };
        out.u32(name);
        out.bytes(&[STB_GLOBAL_FUNC, 0]);
        out.u16(section);
        out.u64(s.addr);
        out.u64(s.size);
    }
}

mod sections;
use sections::{section_headers, Names};

#[cfg(test)]
mod reference;
#[cfg(test)]
mod tests;
