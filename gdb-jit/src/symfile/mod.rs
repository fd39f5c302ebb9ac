//! The functions in one object a JIT registered with gdb: their absolute
//! addresses, sizes, names and source lines.
//!
//! LLVM's JITs register relocatable objects, and wasmtime shared objects,
//! whose sections' addresses are the code's addresses in memory while the
//! symbols' values count from their section: a symbol's address is its
//! section's plus its value, unless the value lies in the section already
//! (an image linked where it runs, whose symbols are absolute).

use object::{Object, ObjectSection, ObjectSymbol, SectionIndex, SymbolKind, SymbolSection};

use crate::lines::{self, Row};

/// One function of a registered object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    /// Its first instruction's address in the JIT's memory.
    pub addr: u64,
    /// Its size in bytes (never past the end of its section).
    pub size: u64,
    /// Its symbol, as the JIT wrote it (mangled names stay mangled).
    pub name: Vec<u8>,
    /// Source positions by address, sorted.
    pub lines: Vec<Row>,
}

/// The functions of `data`, an object file; an error names what is wrong.
pub fn functions(data: &[u8]) -> Result<Vec<Function>, String> {
    let file = object::File::parse(data).map_err(|e| format!("not an object file: {e}"))?;
    if file.format() != object::BinaryFormat::Elf {
        return Err(format!("a {:?} object, not ELF", file.format()));
    }
    let places = Places { file: &file };
    // Each function, and the end of its section (where one is known).
    let mut found: Vec<(Function, Option<u64>)> = Vec::new();
    for symbol in file.symbols() {
        if symbol.kind() != SymbolKind::Text || !symbol.is_definition() {
            continue;
        }
        let (Some(addr), Ok(name)) = (places.symbol(&symbol), symbol.name_bytes()) else {
            continue;
        };
        let bounds = symbol.section_index().and_then(|i| places.bounds(i));
        let size = match bounds {
            Some((_, end)) if addr < end => symbol.size().min(end - addr),
            Some(_) => 0,
            None => symbol.size(),
        };
        let function = Function {
            addr,
            size,
            name: name.to_vec(),
            lines: Vec::new(),
        };
        found.push((function, bounds.map(|(_, end)| end)));
    }
    found.sort_by_key(|(f, _)| f.addr);
    fill_unknown_sizes(&mut found);
    let mut found: Vec<Function> = found
        .into_iter()
        .map(|(f, _)| f)
        .filter(|f| f.size > 0)
        .collect();
    let rows = lines::rows(&file, &|target| places.target(target)).unwrap_or_default();
    for function in &mut found {
        function.lines = lines::within(&rows, function.addr, function.addr + function.size);
    }
    Ok(found)
}

/// A symbol of size 0 runs to the next symbol or its section's end.
fn fill_unknown_sizes(found: &mut [(Function, Option<u64>)]) {
    for i in 0..found.len() {
        let (function, section_end) = &found[i];
        if function.size != 0 {
            continue;
        }
        let addr = function.addr;
        let next = found[i + 1..]
            .iter()
            .map(|(f, _)| f.addr)
            .find(|&a| a > addr);
        let section_end = section_end.filter(|&e| e > addr);
        if let Some(end) = [next, section_end].into_iter().flatten().min() {
            found[i].0.size = end - addr;
        }
    }
}

/// Where a relocatable object's sections and symbols are in memory.
struct Places<'a, 'data> {
    file: &'a object::File<'data>,
}

impl Places<'_, '_> {
    /// A section's range in memory.
    fn bounds(&self, index: SectionIndex) -> Option<(u64, u64)> {
        let section = self.file.section_by_index(index).ok()?;
        let start = section.address();
        Some((start, start.checked_add(section.size())?))
    }

    /// A symbol's address in memory.
    fn symbol(&self, symbol: &object::Symbol) -> Option<u64> {
        let value = symbol.address();
        match symbol.section() {
            SymbolSection::Section(index) => {
                let (start, end) = self.bounds(index)?;
                if start != 0 && (start..end).contains(&value) {
                    Some(value)
                } else {
                    start.checked_add(value)
                }
            }
            SymbolSection::Undefined | SymbolSection::Unknown => None,
            _ => Some(value),
        }
    }

    /// The address a relocation's target stands for.
    fn target(&self, target: object::RelocationTarget) -> Option<u64> {
        match target {
            object::RelocationTarget::Symbol(index) => {
                let symbol = self.file.symbol_by_index(index).ok()?;
                match symbol.kind() {
                    SymbolKind::Section => self.bounds(symbol.section_index()?).map(|b| b.0),
                    _ => self.symbol(&symbol),
                }
            }
            object::RelocationTarget::Section(index) => self.bounds(index).map(|b| b.0),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests;
