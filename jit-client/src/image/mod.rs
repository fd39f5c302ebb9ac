//! ELF images of JIT code: the code at its own addresses, a symbol per
//! function, and DWARF line tables from the JIT's line entries. Live mode
//! maps one over a JIT's pages; `callgrind-jit annotate` writes one per
//! profile for the disassembly views of profilers (objdump reads it).

pub mod dwarf;
pub mod elf;

/// The image of `functions` (sorted by address, each inside one of
/// `pieces`): their symbols, their line tables as DWARF (`writer` names
/// the producer), and `writer` again as the `.comment`. `rw_addr` adds the
/// rw- page live mode needs.
pub fn build<'a>(
    functions: &[dwarf::Function],
    pieces: &'a [elf::Piece<'a>],
    rw_addr: Option<u64>,
    page: u64,
    writer: &[u8],
) -> elf::Elf<'a> {
    let symbols: Vec<elf::Symbol> = functions
        .iter()
        .map(|f| elf::Symbol {
            name: f.name,
            addr: f.addr,
            size: f.size,
        })
        .collect();
    let producer = writer.strip_suffix(b"\0").unwrap_or(writer);
    let dwarf = dwarf::sections(functions, producer);
    let image = elf::Image {
        symbols: &symbols,
        pieces,
        rw_addr,
        page,
        dwarf: &dwarf,
        comment: writer,
    };
    elf::write(&image)
}
