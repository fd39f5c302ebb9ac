//! QEMU's user mode names a translated block after the guest address it
//! translates, `guest-0x401622`, where it was built without libdw (as
//! Debian's is). The guest program's own symbol table names it here by
//! the function it lies in, `collatz`, so that a function's blocks add up
//! to one function: the program is the first word after QEMU's options on
//! the profile's `cmd:` line.

use object::{Object, ObjectSymbol, SymbolKind};
use std::path::Path;

/// QEMU's options that take a value (`qemu-x86_64 -h`).
const WITH_VALUE: &[&str] = &[
    "-L", "-s", "-cpu", "-B", "-R", "-E", "-U", "-0", "-r", "-d", "-D", "-p", "-seed", "-trace",
    "-plugin", "-g",
];

/// A guest program's functions, by address.
#[derive(Debug, Default)]
pub struct GuestSymbols {
    /// (start, size, name), sorted by start.
    functions: Vec<(u64, u64, String)>,
}

impl GuestSymbols {
    /// The guest program's symbols where `cmd` runs it under QEMU's user
    /// mode (`qemu-x86_64 [options] PROGRAM ...`).
    pub fn of_command(cmd: &str) -> Option<GuestSymbols> {
        let mut words = cmd.split_whitespace();
        let qemu = Path::new(words.next()?).file_name()?.to_str()?;
        if !qemu.starts_with("qemu-") {
            return None;
        }
        let mut guest = None;
        while let Some(word) = words.next() {
            match word {
                w if WITH_VALUE.contains(&w) => _ = words.next(),
                w if w.starts_with('-') => {}
                w => {
                    guest = Some(w);
                    break;
                }
            }
        }
        GuestSymbols::of_file(Path::new(guest?))
    }

    /// Symbols given as (start, size, name), sorted by start (tests).
    #[cfg(test)]
    pub(crate) fn of_functions(functions: Vec<(u64, u64, String)>) -> GuestSymbols {
        GuestSymbols { functions }
    }

    /// The function symbols of ELF file `path`.
    pub fn of_file(path: &Path) -> Option<GuestSymbols> {
        let data = std::fs::read(path).ok()?;
        let file = object::File::parse(&*data).ok()?;
        let mut functions: Vec<(u64, u64, String)> = file
            .symbols()
            .filter(|s| s.kind() == SymbolKind::Text && s.address() != 0)
            .filter_map(|s| Some((s.address(), s.size(), s.name().ok()?.to_string())))
            .collect();
        // Of aliases (one start), the first name: `__free` before `free`.
        functions.sort_by(|a, b| (a.0, &a.2).cmp(&(b.0, &b.2)));
        functions.dedup_by_key(|f| f.0);
        (!functions.is_empty()).then_some(GuestSymbols { functions })
    }

    /// The guest function a QEMU block name `guest-0xADDR` lies in;
    /// `None` for any other name.
    pub fn name(&self, raw: &str) -> Option<String> {
        let addr = u64::from_str_radix(raw.strip_prefix("guest-0x")?, 16).ok()?;
        let i = self
            .functions
            .partition_point(|f| f.0 <= addr)
            .checked_sub(1)?;
        let (start, size, name) = &self.functions[i];
        (addr < start + (*size).max(1)).then(|| name.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_is_named_by_the_guest_function_holding_it() {
        let guest = GuestSymbols {
            functions: vec![
                (0x401615, 0x58, "collatz".into()),
                (0x401670, 0x30, "walk".into()),
            ],
        };
        assert_eq!(guest.name("guest-0x401615").as_deref(), Some("collatz"));
        assert_eq!(guest.name("guest-0x401622").as_deref(), Some("collatz"));
        assert_eq!(guest.name("guest-0x40166d"), None); // between functions
        assert_eq!(guest.name("guest-0x401000"), None);
        assert_eq!(guest.name("collatz"), None);
    }

    #[test]
    fn a_files_functions_are_its_text_symbols_as_nm_lists_them() {
        // This test binary, read by binutils' nm as well (gcc brings it).
        let me = std::env::current_exe().unwrap();
        let guest = GuestSymbols::of_file(&me).unwrap();
        let nm = std::process::Command::new("nm")
            .arg("--defined-only")
            .arg(&me)
            .output()
            .expect("nm (binutils) runs");
        let listed = String::from_utf8(nm.stdout).unwrap();
        let (mut text, mut data) = (Vec::new(), Vec::new());
        for line in listed.lines() {
            let mut words = line.split_whitespace();
            let (Some(addr), Some(kind)) = (words.next(), words.next()) else {
                continue;
            };
            let addr = u64::from_str_radix(addr, 16).unwrap();
            match kind {
                "T" | "t" if addr != 0 => text.push(addr),
                "D" | "d" | "B" | "b" => data.push(addr),
                _ => {}
            }
        }
        assert!(text.len() > 1000, "{} functions", text.len());
        let starts: std::collections::BTreeSet<u64> = guest.functions.iter().map(|f| f.0).collect();
        text.sort_unstable();
        text.dedup();
        assert_eq!(starts.iter().copied().collect::<Vec<_>>(), text);
        assert!(
            data.iter().any(|a| !starts.contains(a)),
            "data symbols are no functions"
        );
    }

    #[test]
    fn the_guest_is_the_first_word_after_qemus_options() {
        // This test binary stands in for a guest: it has symbols.
        let me = std::env::current_exe().unwrap();
        let cmd = format!("qemu-x86_64 -jitdump -L /usr -cpu max {} 10", me.display());
        assert!(GuestSymbols::of_command(&cmd).is_some());
        assert!(GuestSymbols::of_command(&format!("node {}", me.display())).is_none());
        assert!(GuestSymbols::of_command("qemu-x86_64 -jitdump").is_none());
    }
}
