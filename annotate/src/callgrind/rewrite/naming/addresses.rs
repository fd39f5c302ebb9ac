//! Callgrind's names for code without symbols, and their JIT names.
//!
//! Callgrind names such code after the address of its first block:
//! `0x000000000483c000`, plus a recursion level (`'2`) and, with
//! `--separate-callers`, caller names (`'0x...c100'main`).

use super::symbols::Symbols;
use crate::symbols::{runtime_names, SymbolId};

/// True for an object that is a live-mode image of jit-client
/// (`…/callgrind-jit-PID/jit-N-ADDR.so`).
pub(in crate::callgrind) fn is_live_image(object: &[u8]) -> bool {
    // Every name met is asked at the end: most are no `.so` at all.
    if !object.ends_with(b".so") {
        return false;
    }
    let path = String::from_utf8_lossy(object);
    let mut parts = path.rsplit('/');
    let (Some(file), Some(folder)) = (parts.next(), parts.next()) else {
        return false;
    };
    let pid = jit_client::live_folder::pid_of_folder(folder);
    pid.is_some() && jit_client::live_folder::is_ours(file) && file.ends_with(".so")
}

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
    pub symbol: SymbolId,
    /// The new full name, suffixes kept (`fib'2`).
    pub name: Vec<u8>,
    /// Where callgrind's recursion level (`2` of `fib'2`) stands in
    /// `name`, if it has one.
    pub level: Option<std::ops::Range<usize>>,
    /// A call here is a real call: the address is the range's start, or
    /// the range is a table of entry points.
    pub entry: bool,
    /// The address the name was made of.
    pub addr: u64,
    /// Another range with another name also covered the address.
    pub ambiguous: bool,
}

/// Renames `name` if its base address lies in a known JIT range. Caller
/// components that are JIT addresses are renamed too.
pub fn rename(name: &[u8], table: &mut Symbols) -> Option<JitName> {
    let (addr, base_len) = address(name)?;
    let hit = table.lookup(addr)?;
    let symbol = table.get(hit.symbol);
    let entry = addr == symbol.start || runtime_names::is_entry_table(&symbol.name);
    let mut new = symbol.name.as_bytes().to_vec();
    let level = level_digits(&name[base_len..]).map(|r| r.start + new.len()..r.end + new.len());
    rename_suffix(&mut new, &name[base_len..], table);
    Some(JitName {
        symbol: hit.symbol,
        name: new,
        level,
        entry,
        addr,
        ambiguous: hit.ambiguous,
    })
}

/// Where the recursion level (`'2`: its digits) stands in a name's
/// suffix, if it has one.
fn level_digits(suffix: &[u8]) -> Option<std::ops::Range<usize>> {
    let rest = suffix.strip_prefix(b"'")?;
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    match rest.get(digits) {
        _ if digits == 0 => None,
        None | Some(b'\'') => Some(1..1 + digits),
        Some(_) => None,
    }
}

impl JitName {
    /// Callgrind's recursion level (1 where the name has none).
    pub fn level(&self) -> u32 {
        self.level
            .as_ref()
            .and_then(|r| {
                std::str::from_utf8(&self.name[r.clone()])
                    .ok()?
                    .parse()
                    .ok()
            })
            .unwrap_or(1)
    }

    /// The name at recursion level `level` (1: no level written).
    pub fn at_level(&self, level: u32) -> Vec<u8> {
        let Some(r) = self.level.clone() else {
            return self.name.clone();
        };
        let mut out = self.name[..r.start - 1].to_vec();
        if level > 1 {
            out.push(b'\'');
            out.extend_from_slice(level.to_string().as_bytes());
        }
        out.extend_from_slice(&self.name[r.end..]);
        out
    }
}

/// Appends `suffix` (`'2'0x...'main`) to `out`, caller components that
/// are JIT addresses replaced by their names; true if any was replaced.
fn rename_suffix(out: &mut Vec<u8>, suffix: &[u8], table: &mut Symbols) -> bool {
    let mut renamed = false;
    for component in suffix.split(|&b| b == b'\'').skip(1) {
        out.push(b'\'');
        let jit = address(component)
            .filter(|&(_, len)| len == component.len())
            .and_then(|(a, _)| table.lookup(a));
        match jit {
            Some(hit) => {
                out.extend_from_slice(table.get(hit.symbol).name.as_bytes());
                renamed = true;
            }
            None => out.extend_from_slice(component),
        }
    }
    renamed
}

/// Appends the suffix of address name `name` (`'2`, callers) to `out`,
/// JIT callers renamed; nothing where `name` is no address name.
pub fn append_suffix(out: &mut Vec<u8>, name: &[u8], table: &mut Symbols) {
    if let Some((_, base_len)) = address(name) {
        rename_suffix(out, &name[base_len..], table);
    }
}

/// A native function's name with JIT callers in its caller context
/// (`--separate-callers`): `f'0x...c040'main` becomes `f'report'main`.
pub fn rename_callers(name: &[u8], table: &mut Symbols) -> Option<Vec<u8>> {
    // A name is searched for its quotes first: most have none, and
    // node's C++ names run to hundreds of bytes.
    let mut quotes = memchr::memchr_iter(b'\'', name);
    let start = quotes.find(|&at| name[at + 1..].starts_with(b"0x"))?;
    let mut new = name[..start].to_vec();
    rename_suffix(&mut new, &name[start..], table).then_some(new)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symbols::SymbolTable;

    #[test]
    fn a_live_image_is_an_image_of_ours_in_a_folder_of_ours() {
        use jit_client::live_folder::{folder_name, image_name};
        let (folder, image) = (folder_name(4242), image_name(3, 0x7f00_0000_1000));
        let path = format!("/tmp/{folder}/{image}");
        assert!(is_live_image(path.as_bytes()));
        let others = [
            format!("/tmp/{folder}/libc.so"),
            format!("/tmp/other/{image}"),
            format!("/tmp/{folder}/{image}.txt"),
            image.clone(),
            "/usr/lib/x86_64-linux-gnu/libc.so.6".to_string(),
            "???".to_string(),
        ];
        for other in others {
            assert!(!is_live_image(other.as_bytes()), "{other}");
        }
    }

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
        let mut table = SymbolTable::builder();
        table.add_perf_map(
            "m".into(),
            b"1000 100 fib(f.toy:3)\n2000 10 main(f.toy:9)\n",
        );
        let table = table.build();
        let table = &mut Symbols::new(&table);
        let r = rename(b"0x0000000000001000'2", table).unwrap();
        assert_eq!((r.name.as_slice(), r.entry), (&b"fib'2"[..], true));
        assert_eq!((r.level(), r.at_level(1).as_slice()), (2, &b"fib"[..]));
        // A continuation keeps callgrind's level (the plan may lower it).
        let r = rename(b"0x0000000000001010'2", table).unwrap();
        assert_eq!((r.name.as_slice(), r.entry), (&b"fib'2"[..], false));
        let r = rename(b"0x0000000000001010'3'0x0000000000002000", table).unwrap();
        assert_eq!(r.name.as_slice(), &b"fib'3'main"[..]);
        assert_eq!(
            (r.level(), r.at_level(2).as_slice()),
            (3, &b"fib'2'main"[..])
        );
        assert_eq!(r.at_level(1).as_slice(), &b"fib'main"[..]);
        let r = rename(b"0x0000000000001010'0x0000000000002000'below", table).unwrap();
        assert_eq!(
            (r.name.as_slice(), r.entry, r.level()),
            (&b"fib'main'below"[..], false, 1)
        );
        assert_eq!(rename(b"0x0000000000003000", table), None);
        let native = rename_callers(b"print'0x0000000000002000'x", table);
        assert_eq!(native.as_deref(), Some(&b"print'main'x"[..]));
        assert_eq!(rename_callers(b"print'main", table), None);
        // The first quote before `0x` starts the callers; a name may end
        // in a quote.
        let native = rename_callers(b"print'2'0x0000000000002000'x", table);
        assert_eq!(native.as_deref(), Some(&b"print'2'main'x"[..]));
        assert_eq!(rename_callers(b"print'", table), None);
    }
}
