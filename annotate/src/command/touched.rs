//! Whether a run's profiles are read once ahead of indexing its symbol
//! files, for the code they name (see `symbols::touched`): where its perf
//! maps are far larger than its profiles, reading the profiles costs less
//! than keeping an entry for every line of the maps.

use crate::input::{Input, Kind};
use crate::symbols::mapped::MappedCode;
use crate::symbols::Touched;

/// How many times the maps' size the profiles' must stay under: reading
/// a profile ahead takes about 11 times as long a byte as indexing a map
/// (docs/performance.md).
const LARGER: u64 = 16;

/// A map smaller than this is indexed whole: its entries cost little.
const SMALLEST_MAP: u64 = 4 << 20;

/// What `profiles` name, where it pays to read them ahead of indexing
/// `sources`: only perf maps (a jitdump's ranges are all kept, and a
/// range both give is told apart from the whole of both), and no
/// epochs (an epoch's code is settled from every range of the file).
/// The program's own code (`cmd`) is kept, to be counted as it is left
/// out.
pub fn ahead(
    profiles: &[Input],
    sources: &[Input],
    epochs: bool,
    cmd: Option<&str>,
) -> Option<Touched> {
    let size = |inputs: &[Input]| -> u64 {
        let sizes = inputs
            .iter()
            .map(|i| i.file.metadata().map_or(0, |m| m.len()));
        sizes.sum()
    };
    let only_maps = sources.iter().all(|s| s.kind == Kind::PerfMap);
    let maps = size(sources);
    if epochs || !only_maps || maps < SMALLEST_MAP || size(profiles) > maps / LARGER {
        return None;
    }
    let mut touched = Touched::default();
    let program = cmd.and_then(MappedCode::of_command);
    for segment in program.into_iter().flat_map(|p| p.segments) {
        touched.keep_within(segment);
    }
    let files: Vec<_> = profiles.iter().map(|p| &p.file).collect();
    crate::callgrind::touched::add(&files, touched)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An input of `kind` holding `bytes`, `len` bytes long (the rest
    /// zeros: the maps' size is all that is read of them).
    fn input(kind: Kind, bytes: &[u8], len: u64) -> Input {
        let file = crate::output::file_holding(bytes).unwrap();
        file.set_len(len).unwrap();
        Input {
            path: "input".into(),
            file,
            kind,
            mode: 0o644,
            spooled: false,
        }
    }

    /// Whether the profile of `profile_len` bytes is read ahead of maps
    /// (or other files) of `sources`.
    fn reads_ahead(profile_len: u64, sources: &[(Kind, u64)], epochs: bool) -> bool {
        // Made `profile_len` long by a comment.
        let mut text = b"events: Ir\nfn=0x0000000000401000\n0x401000 1\n#".to_vec();
        text.resize(profile_len as usize - 1, b'.');
        text.push(b'\n');
        let profiles = [input(Kind::Profile, &text, profile_len)];
        let sources: Vec<_> = sources.iter().map(|&(k, len)| input(k, b"", len)).collect();
        let touched = ahead(&profiles, &sources, epochs, None);
        if let Some(touched) = &touched {
            assert!(touched.keeps(0x401000, 1) && !touched.keeps(0x801000, 1));
        }
        touched.is_some()
    }

    #[test]
    fn a_profile_is_read_ahead_only_of_perf_maps_far_larger_than_it() {
        let map = |len| (Kind::PerfMap, len);
        assert!(reads_ahead(4 << 16, &[map(SMALLEST_MAP)], false));
        assert!(reads_ahead(4 << 16, &[map(4 * SMALLEST_MAP)], false));
        assert!(reads_ahead(4 << 16, &[map(2 << 20), map(2 << 20)], false));
        assert!(!reads_ahead(4 << 10, &[map(SMALLEST_MAP - 1)], false));
        // The profiles at most the maps' size over LARGER.
        let most = SMALLEST_MAP / LARGER;
        assert!(reads_ahead(most, &[map(SMALLEST_MAP)], false));
        assert!(!reads_ahead(most + 1, &[map(SMALLEST_MAP)], false));
        // No jitdump among the sources, no epochs.
        let dump = (Kind::Jitdump, 1 << 10);
        assert!(!reads_ahead(4 << 16, &[map(SMALLEST_MAP), dump], false));
        assert!(!reads_ahead(4 << 16, &[map(SMALLEST_MAP)], true));
    }

    #[test]
    fn the_programs_own_code_is_kept() {
        use crate::symbols::mapped::tests::elf;
        let dir = tempfile::tempdir().unwrap();
        let program = dir.path().join("prog");
        // A program linked at fixed addresses, its code at 0x40_0000.
        std::fs::write(&program, elf(2, 1, 2, 56, &[(1, 1, 0x40_0000, 0x1000)])).unwrap();
        let cmd = format!("{} script.js", program.display());
        let profile = || input(Kind::Profile, b"events: Ir\n", 11);
        let map = || input(Kind::PerfMap, b"", SMALLEST_MAP);
        let touched = ahead(&[profile()], &[map()], false, Some(&cmd)).unwrap();
        assert!(touched.keeps(0x40_0800, 0x10));
        assert!(!touched.keeps(0x40_1000, 0x10));
        let touched = ahead(&[profile()], &[map()], false, None).unwrap();
        assert!(!touched.keeps(0x40_0800, 0x10));
    }
}
