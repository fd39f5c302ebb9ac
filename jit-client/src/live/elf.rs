//! A minimal ELF shared object for the functions on some JIT pages (object
//! writes it): an r-x PT_LOAD holding the pages at their own address, an
//! rw- PT_LOAD page Valgrind needs to see before it reads the file,
//! `.text`, a symbol per function, and the DWARF sections.

use object::elf;
use object::write::elf::{FileHeader, ProgramHeader, SectionHeader, Sym, Writer};

use super::dwarf::Section;

/// A function symbol.
pub struct Symbol<'a> {
    /// Its name.
    pub name: &'a [u8],
    /// Its address.
    pub addr: u64,
    /// Its size.
    pub size: u64,
}

/// What goes into the file.
pub struct Image<'a> {
    /// The functions on the pages.
    pub symbols: &'a [Symbol<'a>],
    /// Address of the first page.
    pub addr: u64,
    /// The whole pages, as they are in memory.
    pub pages: &'a [u8],
    /// Address reserved for the rw- page.
    pub rw_addr: u64,
    /// Page size.
    pub page: u64,
    /// `.debug_*` sections.
    pub dwarf: &'a [Section],
}

/// The file's bytes and where the two loadable parts start in it.
pub struct Elf {
    pub bytes: Vec<u8>,
    pub text_offset: u64,
    pub rw_offset: u64,
}

/// Lays out and writes the file.
pub fn write(image: &Image) -> object::write::Result<Elf> {
    let mut bytes = Vec::new();
    let mut w = Writer::new(object::Endianness::default(), true, &mut bytes);
    let page = image.page as usize;
    w.reserve_file_header();
    w.reserve_program_headers(2);
    let text_offset = w.reserve(image.pages.len(), page);
    let rw_offset = w.reserve(page, page);
    w.reserve_null_section_index();
    let text_name = w.add_section_name(b".text");
    let text_index = w.reserve_section_index();
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
    for _ in image.symbols {
        w.reserve_symbol_index(Some(text_index));
    }
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
        e_machine: crate::jitdump::format::elf_machine() as u16,
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
        p_align: image.page,
    };
    w.write_program_header(&load(
        elf::PF_R | elf::PF_X,
        text_offset as u64,
        image.addr,
        image.pages.len() as u64,
    ));
    w.write_program_header(&load(
        elf::PF_R | elf::PF_W,
        rw_offset as u64,
        image.rw_addr,
        image.page,
    ));
    w.pad_until(text_offset);
    w.write(image.pages);
    w.pad_until(rw_offset);
    w.write(&vec![0; page]);
    for (offset, (_, _, data)) in debug_offsets.iter().zip(&debug) {
        w.pad_until(*offset);
        w.write(data);
    }
    w.write_null_symbol();
    for (symbol, name) in image.symbols.iter().zip(names) {
        w.write_symbol(&Sym {
            name: Some(name),
            section: Some(text_index),
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
    w.write_section_header(&SectionHeader {
        name: Some(text_name),
        sh_type: elf::SHT_PROGBITS,
        sh_flags: u64::from(elf::SHF_ALLOC | elf::SHF_EXECINSTR),
        sh_addr: image.addr,
        sh_offset: text_offset as u64,
        sh_size: image.pages.len() as u64,
        sh_link: 0,
        sh_info: 0,
        sh_addralign: 16,
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
    Ok(Elf {
        bytes,
        text_offset: text_offset as u64,
        rw_offset: rw_offset as u64,
    })
}
