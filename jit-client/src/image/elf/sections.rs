//! The section headers and their names' table.

use super::*;

/// A section header's fields.
#[derive(Default)]
struct Shdr {
    name: u32,
    kind: u32,
    flags: u64,
    addr: u64,
    offset: u64,
    size: u64,
    link: u32,
    info: u32,
    align: u64,
    entsize: u64,
}

/// Section names: `.shstrtab`'s bytes and each name's offset in them.
pub(super) struct Names {
    pub(super) table: Vec<u8>,
    text: u32,
    comment: u32,
    debug: Vec<u32>,
    symtab: u32,
    strtab: u32,
    shstrtab: u32,
}

impl Names {
    pub(super) fn of(dwarf: &[Section]) -> Names {
        let mut table = Vec::with_capacity(128);
        table.push(0);
        let mut add = |name: &str| {
            let at = table.len() as u32;
            table.extend_from_slice(name.as_bytes());
            table.push(0);
            at
        };
        Names {
            text: add(".text"),
            comment: add(".comment"),
            debug: dwarf.iter().map(|(name, _)| add(name)).collect(),
            symtab: add(".symtab"),
            strtab: add(".strtab"),
            shstrtab: add(".shstrtab"),
            table,
        }
    }
}

pub(super) fn section_headers(
    out: &mut Out,
    image: &Image,
    names: &Names,
    at: &Layout,
    strtab: u64,
) {
    let mut header = |h: Shdr| {
        out.u32(h.name);
        out.u32(h.kind);
        out.u64(h.flags);
        out.u64(h.addr);
        out.u64(h.offset);
        out.u64(h.size);
        out.u32(h.link);
        out.u32(h.info);
        out.u64(h.align);
        out.u64(h.entsize);
    };
    header(Shdr::default());
    for (p, &offset) in image.pieces.iter().zip(&at.piece_offsets) {
        header(Shdr {
            name: names.text,
            kind: SHT_PROGBITS,
            flags: SHF_ALLOC | SHF_EXECINSTR,
            addr: p.addr,
            offset,
            size: p.bytes.len() as u64,
            align: 1,
            ..Shdr::default()
        });
    }
    let data = |name, offset, size| Shdr {
        name,
        kind: SHT_PROGBITS,
        offset,
        size,
        align: 1,
        ..Shdr::default()
    };
    header(data(names.comment, at.comment, image.comment.len() as u64));
    for (((_, bytes), &offset), &name) in image.dwarf.iter().zip(&at.debug).zip(&names.debug) {
        header(data(name, offset, bytes.len() as u64));
    }
    let count = sections_count(image) as u32;
    header(Shdr {
        name: names.symtab,
        kind: SHT_SYMTAB,
        offset: at.symtab,
        size: (image.symbols.len() as u64 + 1) * SYM_SIZE,
        link: count - 2, // .strtab
        info: 1,         // the first global symbol
        align: 8,
        entsize: SYM_SIZE,
        ..Shdr::default()
    });
    header(Shdr {
        name: names.strtab,
        kind: SHT_STRTAB,
        offset: at.strtab,
        size: strtab,
        align: 1,
        ..Shdr::default()
    });
    header(Shdr {
        name: names.shstrtab,
        kind: SHT_STRTAB,
        offset: at.shstrtab,
        size: names.table.len() as u64,
        align: 1,
        ..Shdr::default()
    });
}
