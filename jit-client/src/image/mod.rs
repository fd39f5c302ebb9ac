//! ELF images of JIT code: the code at its own addresses, a symbol per
//! function, and DWARF line tables from the JIT's line entries. Live mode
//! maps one over a JIT's pages; `callgrind-jit annotate` writes one per
//! profile for the disassembly views of profilers (objdump reads it).

pub mod dwarf;
pub mod elf;
