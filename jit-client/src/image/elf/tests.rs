use super::*;
use crate::image::dwarf::{self, Function};
use crate::writer::LineEntry;
use object::read::elf::{ElfFile64, FileHeader as _, ProgramHeader as _, SectionHeader as _};
use object::{Object, ObjectSection, ObjectSymbol};

/// What a reader gets from a file: its type and machine, the program
/// headers (flags, offset modulo the page, address, sizes, bytes), the
/// sections (name, address, flags, length and digest of the bytes; none
/// for the string and symbol tables, whose layout is the writer's
/// choice; and the header's type, alignment, entry size and info) and
/// the symbols (name, address, size, section name and address, global
/// or not).
type Read = (
    (u16, u16),
    Vec<(u32, u64, u64, u64, u64, u64)>,
    Vec<((String, u64, u64, usize, u64), (u32, u64, u64, u32))>,
    Vec<(String, u64, u64, String, bool)>,
);

/// The bytes in a number a failed assertion can print.
fn digest(bytes: &[u8]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut h);
    h.finish()
}

fn read(bytes: &[u8], page: u64) -> Read {
    let file = ElfFile64::<object::Endianness>::parse(bytes).unwrap();
    let e = file.endian();
    let header = file.elf_header();
    let kind = (header.e_type(e), header.e_machine(e));
    let loads = file
        .elf_program_headers()
        .iter()
        .map(|p| {
            let data = digest(p.data(e, bytes).unwrap());
            let (offset, vaddr) = (p.p_offset(e), p.p_vaddr(e));
            (
                p.p_flags(e),
                offset % page,
                vaddr,
                p.p_filesz(e),
                p.p_memsz(e),
                data,
            )
        })
        .collect();
    let sections = file
        .sections()
        .map(|s| {
            let flags = match s.flags() {
                object::SectionFlags::Elf { sh_flags } => sh_flags,
                _ => 0,
            };
            let name = s.name().unwrap().to_string();
            let data = match name.as_str() {
                ".symtab" | ".strtab" | ".shstrtab" => &[][..],
                _ => s.data().unwrap(),
            };
            let h = s.elf_section_header();
            let header = (
                h.sh_type(e),
                h.sh_addralign(e),
                h.sh_entsize(e),
                h.sh_info(e),
            );
            ((name, s.address(), flags, data.len(), digest(data)), header)
        })
        .collect();
    let symbols = file
        .symbols()
        .map(|s| {
            let section = s
                .section_index()
                .map(|i| {
                    let section = file.section_by_index(i).unwrap();
                    // Pieces' sections share a name: told by address.
                    format!("{} {:#x}", section.name().unwrap(), section.address())
                })
                .unwrap_or_default();
            (
                s.name().unwrap().to_string(),
                s.address(),
                s.size(),
                section,
                s.is_global(),
            )
        })
        .collect();
    (kind, loads, sections, symbols)
}

fn check(image: &Image) {
    let ours = write(image);
    let theirs = reference::write(image).unwrap();
    assert_eq!(read(&ours.bytes(), image.page), read(&theirs, image.page));
    // No larger than it needs to be.
    let bytes = ours.bytes().len() as u64;
    assert!(
        bytes <= theirs.len() as u64 + 2 * image.page,
        "{bytes} {}",
        theirs.len()
    );
    // The pieces lie where the program headers say, in both.
    let file = ElfFile64::<object::Endianness>::parse(&theirs[..]).unwrap();
    let offsets: Vec<u64> = file
        .elf_program_headers()
        .iter()
        .filter(|p| p.p_flags(file.endian()) & PF_X != 0)
        .map(|p| p.p_offset(file.endian()))
        .collect();
    assert_eq!(ours.piece_offsets, offsets);
}

#[test]
fn a_live_mode_image_reads_as_objects_writes_it() {
    let code: Vec<u8> = (0..4096u32).map(|i| (i % 251) as u8).collect();
    let lines = [LineEntry::new(0, 3, 1, "many.calc")];
    let functions = [
        Function {
            name: b"f0",
            addr: 0x483c000,
            size: 6,
            lines: &lines,
        },
        Function {
            name: b"f1",
            addr: 0x483c100,
            size: 40,
            lines: &[],
        },
    ];
    let symbols: Vec<Symbol> = functions
        .iter()
        .map(|f| Symbol {
            name: f.name,
            addr: f.addr,
            size: f.size,
        })
        .collect();
    let dwarf = dwarf::sections(&functions, b"test");
    let pieces = [Piece {
        addr: 0x483c000,
        bytes: &code,
    }];
    for rw_addr in [Some(0x4000000), Some(0x5000000), None] {
        check(&Image {
            symbols: &symbols,
            pieces: &pieces,
            rw_addr,
            page: 4096,
            dwarf: &dwarf,
            comment: b"callgrind-jit test\0",
        });
    }
}

#[test]
fn a_code_image_of_many_pieces_reads_as_objects_writes_it() {
    let a = vec![0x90u8; 100];
    let b = vec![0xc3u8; 7];
    let pieces = [
        Piece {
            addr: 0x1000_0010,
            bytes: &a,
        },
        Piece {
            addr: 0x2000_0fff,
            bytes: &b,
        },
    ];
    let symbols = [
        Symbol {
            name: b"first",
            addr: 0x1000_0010,
            size: 100,
        },
        Symbol {
            name: b"_ZN4core3fmt5write17h0123456789abcdefE",
            addr: 0x2000_0fff,
            size: 7,
        },
    ];
    check(&Image {
        symbols: &symbols,
        pieces: &pieces,
        rw_addr: None,
        page: 16,
        dwarf: &[],
        comment: b"callgrind-jit annotate\0",
    });
}

#[test]
fn the_file_written_holds_the_bytes_with_the_code_from_memory() {
    let code = vec![0xccu8; 300];
    let pieces = [Piece {
        addr: 0x7000_0100,
        bytes: &code,
    }];
    let symbols = [Symbol {
        name: b"f",
        addr: 0x7000_0100,
        size: 300,
    }];
    let elf = write(&Image {
        symbols: &symbols,
        pieces: &pieces,
        rw_addr: Some(0x6000_0000),
        page: 4096,
        dwarf: &[],
        comment: b"test\0",
    });
    let path = std::env::temp_dir().join(format!("elf-write-{}", std::process::id()));
    let file = File::create_new(&path).unwrap();
    elf.write_to(&file).unwrap();
    let written = std::fs::read(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(written, elf.bytes());
    let at = elf.piece_offsets[0] as usize;
    assert_eq!(&written[at..at + 300], &code[..]);
    let rw = elf.rw_offset.unwrap() as usize;
    assert!(written[rw..rw + 4096].iter().all(|&b| b == 0));
}
