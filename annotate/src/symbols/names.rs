//! The names of many entries of one source, read in file order, and
//! their hashes (to tell overlapping ranges' names apart, and modules'
//! functions of one name).

use std::io;

use rustc_hash::FxHashMap;

use super::decode::{from_perf_map, jitdump_identity, perf_map_name, perf_map_symbol, unnamed};
use super::{FileId, SourceKind, SymbolId, SymbolTable};
use jitdump::file_window::Window;

/// The names of many entries of one source, read in file order through
/// one window (a positioned read per entry made a million-function file
/// cost seconds): each entry's name and whether it has a source file.
pub struct Names<'t> {
    table: &'t SymbolTable,
    window: Window<'t>,
    /// Perf map names already hashed, by spelling; dropped where they
    /// do not pay.
    spellings: Option<Spellings>,
}

/// Perf map names' hashes (and whether they have a file) by their
/// spelling's hash: V8's maps give a name again at each address its
/// code moves to. Where most names are new, the lookups cost more than
/// they save: then they stop.
#[derive(Default)]
struct Spellings {
    hashes: FxHashMap<u128, (u128, bool)>,
    asked: u32,
    found: u32,
}

impl Spellings {
    /// How many lookups tell whether they pay (at least half found).
    const TRIAL: u32 = 4096;
    /// How many spellings are kept at most (then it starts afresh).
    const KEPT: usize = 1 << 16;

    /// The hashes of `raw`, from `decode` where not known already.
    fn of(&mut self, raw: &[u8], decode: impl FnOnce() -> (u128, bool)) -> (u128, bool) {
        let spelling = hash_128(raw);
        self.asked += 1;
        if let Some(&hashed) = self.hashes.get(&spelling) {
            self.found += 1;
            return hashed;
        }
        let hashed = decode();
        if self.hashes.len() >= Self::KEPT {
            self.hashes.clear();
        }
        self.hashes.insert(spelling, hashed);
        hashed
    }

    /// False once a trial found fewer than half of the names asked for.
    fn pay(&self) -> bool {
        self.asked < Self::TRIAL || self.found >= self.asked / 2
    }
}

impl<'t> Names<'t> {
    /// Names of entries of source number `source`.
    pub fn new(table: &'t SymbolTable, source: usize) -> io::Result<Self> {
        let window = Window::new(&table.sources[source].file)?;
        Ok(Names {
            table,
            window,
            spellings: Some(Spellings::default()),
        })
    }

    /// Entry `id`'s name, and whether it has a source file, as
    /// [`super::decode::symbol`] gives them (for a file unchanged since it was indexed;
    /// else the address name, without).
    pub fn of(&mut self, id: SymbolId) -> (String, bool) {
        let (table, entry) = (self.table, self.table.entries[id.index()]);
        let identity = match table.sources[entry.source as usize].kind {
            SourceKind::Jitdump => jitdump_identity(table, &entry, &mut self.window),
            SourceKind::PerfMap => from_perf_map(table, &entry, &mut self.window, |_| FileId(0))
                .map(|symbol| (symbol.name, symbol.file.is_some())),
        };
        identity.unwrap_or_else(|_| (unnamed(&entry).name, false))
    }

    /// [`Names::of`] with the name as its [`name_hash`]: in a perf map,
    /// decoded once per spelling while that pays.
    pub fn hashed(&mut self, id: SymbolId) -> (u128, bool) {
        let (table, entry) = (self.table, self.table.entries[id.index()]);
        let perf_map = table.sources[entry.source as usize].kind == SourceKind::PerfMap;
        if let (true, Some(spellings)) = (perf_map, &mut self.spellings) {
            if let Ok(raw) = perf_map_name(&entry, &mut self.window) {
                let hashed = spellings.of(raw, || {
                    let symbol = perf_map_symbol(table, &entry, raw, |_| FileId(0));
                    (name_hash(&symbol.name), symbol.file.is_some())
                });
                if !spellings.pay() {
                    self.spellings = None;
                }
                return hashed;
            }
        }
        let (name, has_file) = self.of(id);
        (name_hash(&name), has_file)
    }
}

/// A name's 128-bit hash (two SipHash keys): equal names hash alike,
/// two names one hash about never.
pub fn name_hash(name: &str) -> u128 {
    hash_128(name)
}

/// `value`'s 128-bit hash, as [`name_hash`]'s.
fn hash_128<T: std::hash::Hash + ?Sized>(value: &T) -> u128 {
    use std::hash::{BuildHasher, RandomState};
    thread_local!(static KEYS: [RandomState; 2] = [RandomState::new(), RandomState::new()]);
    KEYS.with(|[a, b]| u128::from(a.hash_one(value)) << 64 | u128::from(b.hash_one(value)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A perf map of `names`, 16 bytes apart, and each name's
    /// [`Names::hashed`] in file order, held to [`Names::of`]'s; with
    /// whether the spellings were still kept at the end.
    fn hashed_in_order(names: &[String]) -> (Vec<(u128, bool)>, bool) {
        let map: String = (0u64..)
            .zip(names)
            .map(|(i, name)| format!("{:x} 10 {name}\n", 0x1000 + i * 0x10))
            .collect();
        let mut table = SymbolTable::builder();
        table.add_perf_map("perf-1.map".into(), map.as_bytes());
        let table = table.build();
        let mut read = Names::new(&table, 0).unwrap();
        let hashed: Vec<(u128, bool)> = table.ids().map(|id| read.hashed(id)).collect();
        let kept = read.spellings.is_some();
        let mut read = Names::new(&table, 0).unwrap();
        let of: Vec<(u128, bool)> = table
            .ids()
            .map(|id| read.of(id))
            .map(|(name, file)| (name_hash(&name), file))
            .collect();
        assert_eq!(hashed, of);
        (hashed, kept)
    }

    #[test]
    fn a_perf_map_name_is_hashed_as_it_decodes_each_time_it_is_spelt() {
        // V8 names a function again wherever its code moves; two
        // spellings may decode alike (Rust's hash suffix is dropped), and
        // one spelling decodes alike each time.
        let spellings = [
            "JS:~f /a/b.js:3:5",
            "_ZN3foo3bar17h0123456789abcdefE",
            "JS:~f /a/b.js:3:5",
            "JS:~g /a/b.js:7:1",
            "_ZN3foo3bar17hfedcba9876543210E",
            "plain",
            "JS:~f /a/b.js:3:5",
            "plain",
        ];
        let (hashed, kept) = hashed_in_order(&spellings.map(String::from));
        assert!(kept);
        let files: Vec<bool> = hashed.iter().map(|h| h.1).collect();
        assert_eq!(files, [true, false, true, true, false, false, true, false]);
        let same = |a: usize, b: usize| hashed[a].0 == hashed[b].0;
        assert!(same(0, 2) && same(0, 6) && same(1, 4) && same(5, 7));
        assert!(!same(0, 3) && !same(0, 1) && !same(1, 5));
    }

    #[test]
    fn spellings_are_kept_only_while_most_names_come_again() {
        let trial = Spellings::TRIAL as usize;
        // Ten names by turns: found nine times in ten.
        let again: Vec<String> = (0..2 * trial).map(|i| format!("f{}", i % 10)).collect();
        assert!(hashed_in_order(&again).1);
        // Names of their own, then the first ones again: dropped after
        // the trial, the hashes unchanged.
        let mut new: Vec<String> = (0..trial + 10).map(|i| format!("f{i}")).collect();
        new.extend((0..10).map(|i| format!("f{i}")));
        assert!(!hashed_in_order(&new).1);
        // Half found: kept.
        let half: Vec<String> = (0..trial).map(|i| format!("f{}", i / 2)).collect();
        assert!(hashed_in_order(&half).1);
    }
}
