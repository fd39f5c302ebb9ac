//! Callgrind's names for code without symbols, and their JIT names.
//!
//! Callgrind names such code after the address of its first block:
//! `0x000000000483c000`, plus a recursion level (`'2`) and, with
//! `--separate-callers`, caller names (`'0x...c100'main`).

use crate::symbols::SymbolTable;

/// The address a pseudo-function name starts with (`0x` + 8 to 16
/// lowercase hex digits, then the end or a `'`), and the base's length.
pub fn address(name: &[u8]) -> Option<(u64, usize)> {
    let hex = name.strip_prefix(b"0x")?;
    let len = hex
        .iter()
        .take_while(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        .count();
    if !(8..=16).contains(&len) || !matches!(hex.get(len), None | Some(b'\'')) {
        return None;
    }
    let value = u64::from_str_radix(std::str::from_utf8(&hex[..len]).ok()?, 16).ok()?;
    Some((value, len + 2))
}

/// A pseudo-function renamed after the JIT range its address falls in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JitName {
    /// Index of the symbol.
    pub symbol: u32,
    /// The new full name, suffixes kept (`fib'2`).
    pub name: Vec<u8>,
    /// The address is the range's start (a call here is a real call).
    pub entry: bool,
    /// Another range with another name also covered the address.
    pub ambiguous: bool,
}

/// Renames `name` if its base address lies in a known JIT range. Caller
/// components that are JIT addresses are renamed too.
pub fn rename(name: &[u8], table: &SymbolTable) -> Option<JitName> {
    let (addr, base_len) = address(name)?;
    let hit = table.lookup(addr)?;
    let symbol = table.symbol(hit.symbol);
    let mut new = symbol.name.as_bytes().to_vec();
    for component in name[base_len..].split(|&b| b == b'\'').skip(1) {
        new.push(b'\'');
        match address(component).and_then(|(a, len)| (len == component.len()).then_some(a)) {
            Some(a) => match table.lookup(a) {
                Some(h) => new.extend_from_slice(table.symbol(h.symbol).name.as_bytes()),
                None => new.extend_from_slice(component),
            },
            None => new.extend_from_slice(component),
        }
    }
    Some(JitName {
        symbol: hit.symbol,
        name: new,
        entry: addr == symbol.start,
        ambiguous: hit.ambiguous,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_callgrind_addresses() {
        assert_eq!(address(b"0x000000000483c000"), Some((0x483c000, 18)));
        assert_eq!(address(b"0x000000000483c300'2"), Some((0x483c300, 18)));
        assert_eq!(address(b"0x483c"), None);
        assert_eq!(address(b"0x000000000483C000"), None);
        assert_eq!(address(b"0x000000000483c000 [PLT]"), None);
        assert_eq!(address(b"main"), None);
    }

    #[test]
    fn keeps_suffixes_and_renames_jit_callers() {
        let mut table = SymbolTable::new();
        table.add_perf_map(
            "m".into(),
            b"1000 100 fib(f.toy:3)\n2000 10 main(f.toy:9)\n",
        );
        table.finish();
        let r = rename(b"0x0000000000001000'2", &table).unwrap();
        assert_eq!((r.name.as_slice(), r.entry), (&b"fib'2"[..], true));
        let r = rename(b"0x0000000000001010'0x0000000000002000'below", &table).unwrap();
        assert_eq!(
            (r.name.as_slice(), r.entry),
            (&b"fib'main'below"[..], false)
        );
        assert_eq!(rename(b"0x0000000000003000", &table), None);
    }
}
