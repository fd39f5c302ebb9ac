//! The slow reference for the ELF writer: the same file written by
//! object's general writer (what live mode used before it wrote the file
//! itself), whole, as bytes.

use object::elf;
use object::write::elf::{FileHeader, ProgramHeader, SectionHeader, Sym, Writer};

use super::Image;

/// Lays out and writes the file.
pub fn write(image: &Image) -> object::write::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    let mut w = Writer::new(object::Endianness::default(), true, &mut bytes);
    let page = image.page;
    w.reserve_file_header();
    w.reserve_program_headers((image.pieces.len() + usize::from(image.rw_addr.is_some())) as u32);
    // Each piece's file offset is its address modulo the page size, as a
    // loader needs it.
    let piece_offsets: Vec<usize> = image
        .pieces
        .iter()
        .map(|p| {
            let skew = (p.addr % page) as usize;
            w.reserve(skew + p.bytes.len(), page as usize) + skew
        })
        .collect();
    let rw_offset = image
        .rw_addr
        .map(|_| w.reserve(page as usize, page as usize));
    w.reserve_null_section_index();
    let text_name = w.add_section_name(b".text");
    let text_indexes: Vec<_> = image
        .pieces
        .iter()
        .map(|_| w.reserve_section_index())
        .collect();
    let comment_name = w.add_section_name(b".comment");
    let comment_index = w.reserve_section_index();
    let debug: Vec<_> = image
        .dwarf
        .iter()
        .map(|(name, data)| {
            (
                w.add_section_name(name.as_bytes()),
                w.reserve_section_index(),
                data,
            )
        })
        .collect();
    w.reserve_symtab_section_index();
    w.reserve_strtab_section_index();
    w.reserve_shstrtab_section_index();
    let names: Vec<_> = image.symbols.iter().map(|s| w.add_string(s.name)).collect();
    w.reserve_null_symbol_index();
    let sections: Vec<_> = image
        .symbols
        .iter()
        .map(|s| {
            let piece = image
                .pieces
                .partition_point(|p| p.addr <= s.addr)
                .saturating_sub(1);
            text_indexes.get(piece).copied()
        })
        .collect();
    for section in &sections {
        w.reserve_symbol_index(*section);
    }
    let comment_offset = w.reserve(image.comment.len(), 1);
    let debug_offsets: Vec<usize> = debug
        .iter()
        .map(|(_, _, data)| w.reserve(data.len(), 1))
        .collect();
    w.reserve_symtab();
    w.reserve_strtab();
    w.reserve_shstrtab();
    w.reserve_section_headers();

    w.write_file_header(&FileHeader {
        os_abi: elf::ELFOSABI_NONE,
        abi_version: 0,
        e_type: elf::ET_DYN,
        e_machine: jitdump::format::elf_machine() as u16,
        e_entry: 0,
        e_flags: 0,
    })?;
    w.write_align_program_headers();
    let load = |p_flags, p_offset, p_vaddr, size| ProgramHeader {
        p_type: elf::PT_LOAD,
        p_flags,
        p_offset,
        p_vaddr,
        p_paddr: p_vaddr,
        p_filesz: size,
        p_memsz: size,
        p_align: page,
    };
    let mut headers: Vec<ProgramHeader> = image
        .pieces
        .iter()
        .zip(&piece_offsets)
        .map(|(piece, &offset)| {
            let size = piece.bytes.len() as u64;
            load(elf::PF_R | elf::PF_X, offset as u64, piece.addr, size)
        })
        .collect();
    if let (Some(addr), Some(offset)) = (image.rw_addr, rw_offset) {
        headers.push(load(elf::PF_R | elf::PF_W, offset as u64, addr, page));
    }
    // Loaders (Valgrind's among them) refuse PT_LOADs out of address
    // order; the rw- page may lie below the code.
    headers.sort_by_key(|h| h.p_vaddr);
    for header in &headers {
        w.write_program_header(header);
    }
    for (piece, &offset) in image.pieces.iter().zip(&piece_offsets) {
        w.pad_until(offset);
        w.write(piece.bytes);
    }
    if let Some(offset) = rw_offset {
        w.pad_until(offset);
        w.write(&vec![0; page as usize]);
    }
    w.pad_until(comment_offset);
    w.write(image.comment);
    for (offset, (_, _, data)) in debug_offsets.iter().zip(&debug) {
        w.pad_until(*offset);
        w.write(data);
    }
    w.write_null_symbol();
    for ((symbol, name), section) in image.symbols.iter().zip(names).zip(&sections) {
        w.write_symbol(&Sym {
            name: Some(name),
            section: *section,
            st_info: (elf::STB_GLOBAL << 4) | elf::STT_FUNC,
            st_other: elf::STV_DEFAULT,
            st_shndx: 0,
            st_value: symbol.addr,
            st_size: symbol.size,
        });
    }
    w.write_strtab();
    w.write_shstrtab();
    w.write_null_section_header();
    for (piece, &offset) in image.pieces.iter().zip(&piece_offsets) {
        w.write_section_header(&SectionHeader {
            name: Some(text_name),
            sh_type: elf::SHT_PROGBITS,
            sh_flags: u64::from(elf::SHF_ALLOC | elf::SHF_EXECINSTR),
            sh_addr: piece.addr,
            sh_offset: offset as u64,
            sh_size: piece.bytes.len() as u64,
            sh_link: 0,
            sh_info: 0,
            sh_addralign: 1,
            sh_entsize: 0,
        });
    }
    let _ = comment_index;
    w.write_section_header(&SectionHeader {
        name: Some(comment_name),
        sh_type: elf::SHT_PROGBITS,
        sh_flags: 0,
        sh_addr: 0,
        sh_offset: comment_offset as u64,
        sh_size: image.comment.len() as u64,
        sh_link: 0,
        sh_info: 0,
        sh_addralign: 1,
        sh_entsize: 0,
    });
    for (offset, (name, _, data)) in debug_offsets.iter().zip(&debug) {
        w.write_section_header(&SectionHeader {
            name: Some(*name),
            sh_type: elf::SHT_PROGBITS,
            sh_flags: 0,
            sh_addr: 0,
            sh_offset: *offset as u64,
            sh_size: data.len() as u64,
            sh_link: 0,
            sh_info: 0,
            sh_addralign: 1,
            sh_entsize: 0,
        });
    }
    w.write_symtab_section_header(1);
    w.write_strtab_section_header();
    w.write_shstrtab_section_header();
    Ok(bytes)
}
