//! Code in a mapped file is the file's, not the JIT's. A runtime may list
//! its own compiled-in code in its symbol files (V8 lists the builtins
//! embedded in the `node` binary, 2,182 of 2,482 ranges in a Node 20
//! jitdump): the profile has that code under the binary's own object and
//! names, and moving it to a JIT function would put the same instructions
//! under two functions. Ranges inside the executable segments of the run's
//! program are left out of the table. Only a program linked at fixed
//! addresses (ELF type EXEC, as Debian's `node` is) tells where its code
//! was without the process: a position-independent one was placed by the
//! loader, so its ranges are kept.

use std::ops::Range;
use std::path::{Path, PathBuf};

/// The executable segments of a program linked at fixed addresses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MappedCode {
    /// The program file.
    pub file: PathBuf,
    /// Its executable PT_LOAD segments, by address.
    pub segments: Vec<Range<u64>>,
}

impl MappedCode {
    /// The program a profile's `cmd:` line ran (its first word, looked up
    /// in `$PATH` unless it holds a `/`), if it is a 64-bit little-endian
    /// ELF executable linked at fixed addresses.
    pub fn of_command(cmd: &str) -> Option<MappedCode> {
        let program = cmd.split_whitespace().next()?;
        let file = match program.contains('/') {
            true => PathBuf::from(program),
            false => std::env::split_paths(&std::env::var_os("PATH")?)
                .map(|dir| dir.join(program))
                .find(|p| p.is_file())?,
        };
        MappedCode::of_file(&file)
    }

    /// The program of a profile's `cmd:` line (see
    /// [`of_command`](Self::of_command)), the profile open as `profile`.
    pub fn of_profile(profile: &std::fs::File) -> Option<MappedCode> {
        MappedCode::of_command(&crate::input::profile_command(profile)?)
    }

    /// The executable segments of `file`, if it is an ELF executable
    /// linked at fixed addresses.
    pub fn of_file(file: &Path) -> Option<MappedCode> {
        let mut head = [0u8; 64];
        let f = std::fs::File::open(file).ok()?;
        read_at(&f, &mut head, 0)?;
        let is_exec = head.starts_with(b"\x7fELF")
            && head[4] == 2 // 64-bit
            && head[5] == 1 // little-endian
            && u16::from_le_bytes([head[16], head[17]]) == 2; // ET_EXEC
        if !is_exec {
            return None;
        }
        let phoff = u64::from_le_bytes(head[32..40].try_into().ok()?);
        let phentsize = u64::from(u16::from_le_bytes([head[54], head[55]]));
        let phnum = u64::from(u16::from_le_bytes([head[56], head[57]]));
        let mut segments = Vec::new();
        for i in 0..phnum.min(256) {
            let mut ph = [0u8; 56];
            read_at(&f, &mut ph, phoff + i * phentsize)?;
            let p_type = u32::from_le_bytes(ph[0..4].try_into().ok()?);
            let p_flags = u32::from_le_bytes(ph[4..8].try_into().ok()?);
            let vaddr = u64::from_le_bytes(ph[16..24].try_into().ok()?);
            let memsz = u64::from_le_bytes(ph[40..48].try_into().ok()?);
            const PT_LOAD: u32 = 1;
            const PF_X: u32 = 1;
            if p_type == PT_LOAD && p_flags & PF_X != 0 {
                segments.push(vaddr..vaddr.saturating_add(memsz));
            }
        }
        segments.sort_by_key(|s| s.start);
        (!segments.is_empty()).then(|| MappedCode {
            file: file.to_path_buf(),
            segments,
        })
    }

    /// True where `[start, start+size)` lies inside one segment.
    pub fn holds(&self, start: u64, size: u64) -> bool {
        let end = start.saturating_add(size);
        self.segments
            .iter()
            .any(|s| s.start <= start && end <= s.end)
    }
}

fn read_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> Option<()> {
    use std::os::unix::fs::FileExt;
    file.read_exact_at(buf, offset).ok()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn a_position_independent_program_tells_nothing() {
        // This test binary is position-independent (Rust's default).
        let me = std::env::current_exe().unwrap();
        assert_eq!(MappedCode::of_file(&me), None);
        assert_eq!(MappedCode::of_file(Path::new("/nonexistent")), None);
    }

    /// A program header: type, flags, address, size in memory.
    type Ph = (u32, u32, u64, u64);

    /// An ELF file's bytes: class (2: 64-bit), data (1: little-endian),
    /// type (2: EXEC), and program headers `entry` bytes apart.
    pub(crate) fn elf(class: u8, data: u8, kind: u16, entry: u16, phs: &[Ph]) -> Vec<u8> {
        let mut bytes = vec![0u8; 64];
        bytes[..4].copy_from_slice(b"\x7fELF");
        (bytes[4], bytes[5]) = (class, data);
        bytes[16..18].copy_from_slice(&kind.to_le_bytes());
        bytes[32..40].copy_from_slice(&64u64.to_le_bytes());
        bytes[54..56].copy_from_slice(&entry.to_le_bytes());
        bytes[56..58].copy_from_slice(&(phs.len() as u16).to_le_bytes());
        for &(p_type, flags, vaddr, memsz) in phs {
            let mut ph = vec![0u8; usize::from(entry)];
            ph[0..4].copy_from_slice(&p_type.to_le_bytes());
            ph[4..8].copy_from_slice(&flags.to_le_bytes());
            ph[16..24].copy_from_slice(&vaddr.to_le_bytes());
            ph[40..48].copy_from_slice(&memsz.to_le_bytes());
            bytes.extend(ph);
        }
        bytes
    }

    /// What `of_file` reads from `bytes` written to a file.
    fn segments_of(bytes: &[u8]) -> Option<Vec<Range<u64>>> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("prog");
        std::fs::write(&path, bytes).unwrap();
        let code = MappedCode::of_file(&path)?;
        assert_eq!(code.file, path);
        Some(code.segments)
    }

    const LOAD: u32 = 1;
    const NOTE: u32 = 4;
    const X: u32 = 1;
    const RW: u32 = 6;

    #[test]
    fn a_fixed_address_program_gives_its_executable_loads_in_address_order() {
        let phs = [
            (LOAD, X | 4, 0x40_0000, 0x1000),
            (LOAD, RW, 0x60_0000, 0x1000),
            (NOTE, X, 0x70_0000, 0x10),
            (LOAD, X, 0x20_0000, 0x800),
        ];
        let want = vec![0x20_0000..0x20_0800, 0x40_0000..0x40_1000];
        // Entries of 56 bytes, and of 64 (a larger entry size is read by it).
        for entry in [56, 64] {
            assert_eq!(segments_of(&elf(2, 1, 2, entry, &phs)), Some(want.clone()));
        }
        // Position-independent, 32-bit, big-endian, not ELF, no executable
        // load, or program headers past the file's end: nothing.
        for other in [
            elf(2, 1, 3, 56, &phs),
            elf(1, 1, 2, 56, &phs),
            elf(2, 2, 2, 56, &phs),
            [b"\x7fELG", &elf(2, 1, 2, 56, &phs)[4..]].concat(),
            elf(2, 1, 2, 56, &phs[1..3]),
            elf(2, 1, 2, 56, &phs)[..64 + 56 + 20].to_vec(),
        ] {
            assert_eq!(segments_of(&other), None);
        }
    }

    #[test]
    fn the_program_is_the_first_word_of_the_profile_s_command() {
        let dir = tempfile::tempdir().unwrap();
        let prog = dir.path().join("prog");
        std::fs::write(&prog, elf(2, 1, 2, 56, &[(LOAD, X, 0x1000, 0x100)])).unwrap();
        let cmd = format!("{} --flag script.js", prog.display());
        let code = MappedCode::of_command(&cmd).unwrap();
        assert_eq!(code.file, prog);
        assert_eq!(code.segments.first(), Some(&(0x1000..0x1100)));
        assert_eq!(code.segments.len(), 1);
        let profile = dir.path().join("callgrind.out.1");
        std::fs::write(&profile, format!("version: 1\ncmd: {cmd}\nevents: Ir\n")).unwrap();
        let profile = std::fs::File::open(&profile).unwrap();
        assert_eq!(MappedCode::of_profile(&profile).map(|c| c.file), Some(prog));
        assert_eq!(MappedCode::of_command("no-such-program-of-ours x"), None);
        assert_eq!(MappedCode::of_command(""), None);
    }

    #[test]
    fn a_range_is_held_only_whole() {
        let code = MappedCode {
            file: PathBuf::from("p"),
            segments: vec![0x1000..0x2000, 0x8000..0x9000],
        };
        assert!(code.holds(0x1000, 0x1000));
        assert!(!code.holds(0x1ff0, 0x20));
        assert!(!code.holds(0x3000, 1));
    }
}
