//! Name compression tables: one per id space (objects; files; functions),
//! cleared at each part, plus an interner so names compare by number.

use std::collections::HashMap;
use std::hash::BuildHasher;

use hashbrown::HashTable;

/// A hash map keyed by names or ids: rustc's Fx hash, as names are short
/// and trusted not to be adversarial about collisions here (a slow map
/// would only be slow), where SipHash showed up as the rewriter's top
/// cost.
pub type FastMap<K, V> = rustc_hash::FxHashMap<K, V>;

/// An interned name: names compare by this number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Sym(u32);

impl Sym {
    fn index(self) -> usize {
        self.0 as usize
    }
}

/// Maps names to small numbers; lives across parts. Each name is stored
/// once, its bytes after the last one's, and hashed once when met.
#[derive(Debug, Default)]
pub struct Interner {
    /// The number of each name, found by the name's hash.
    table: HashTable<Sym>,
    /// The names, one after the other.
    bytes: Vec<u8>,
    /// Where each name ends in `bytes`, by number.
    ends: Vec<usize>,
}

impl Interner {
    /// The number of `name`, allocating one the first time.
    pub fn intern(&mut self, name: &[u8]) -> Sym {
        let hash = hash_of(name);
        let Interner { table, bytes, ends } = self;
        if let Some(&sym) = table.find(hash, |&sym| name_in(bytes, ends, sym) == name) {
            return sym;
        }
        let sym = Sym(ends.len() as u32);
        bytes.extend_from_slice(name);
        ends.push(bytes.len());
        table.insert_unique(hash, sym, |&sym| hash_of(name_in(bytes, ends, sym)));
        sym
    }

    /// The name of `sym`.
    pub fn name(&self, sym: Sym) -> &[u8] {
        name_in(&self.bytes, &self.ends, sym)
    }

    /// Every name interned, in the order first met.
    pub fn names(&self) -> impl Iterator<Item = &[u8]> {
        (0..self.ends.len()).map(|i| self.name(Sym(i as u32)))
    }
}

/// The name numbered `sym` in an [`Interner`]'s `bytes` and `ends`.
fn name_in<'a>(bytes: &'a [u8], ends: &[usize], sym: Sym) -> &'a [u8] {
    let i = sym.index();
    let start = if i == 0 { 0 } else { ends[i - 1] };
    &bytes[start..ends[i]]
}

/// A name's hash in the interner's table.
fn hash_of(name: &[u8]) -> u64 {
    rustc_hash::FxBuildHasher.hash_one(name)
}

/// Ids up to this go in a vector; larger ones (rare, or hostile) in a map.
const DENSE_LIMIT: u64 = 1 << 20;

/// A table indexed by compressed id.
#[derive(Debug)]
pub struct IdMap<T> {
    dense: Vec<Option<T>>,
    sparse: HashMap<u64, T>,
}

impl<T> Default for IdMap<T> {
    fn default() -> Self {
        IdMap {
            dense: Vec::new(),
            sparse: HashMap::new(),
        }
    }
}

impl<T> IdMap<T> {
    /// The entry of `id`.
    pub fn get(&self, id: u64) -> Option<&T> {
        if id < DENSE_LIMIT {
            self.dense.get(id as usize)?.as_ref()
        } else {
            self.sparse.get(&id)
        }
    }

    /// Sets the entry of `id` (a definition or redefinition).
    pub fn insert(&mut self, id: u64, value: T) {
        if id < DENSE_LIMIT {
            let i = id as usize;
            if self.dense.len() <= i {
                self.dense.resize_with(i + 1, || None);
            }
            self.dense[i] = Some(value);
        } else {
            self.sparse.insert(id, value);
        }
    }
}

/// A set of ids: one bit each for those a dense [`IdMap`] holds (small
/// enough to stay in the fastest cache), a hash set for larger ones.
#[derive(Debug, Default)]
pub struct IdSet {
    dense: Vec<u64>,
    sparse: FastSet<u64>,
}

type FastSet<T> = rustc_hash::FxHashSet<T>;

impl IdSet {
    /// Whether `id` is in the set.
    #[inline(always)]
    pub fn contains(&self, id: u64) -> bool {
        if id >= DENSE_LIMIT {
            return self.sparse.contains(&id);
        }
        self.dense
            .get((id / 64) as usize)
            .is_some_and(|w| w >> (id % 64) & 1 == 1)
    }

    /// Adds `id`; true if it was not in the set.
    #[inline(always)]
    pub fn insert(&mut self, id: u64) -> bool {
        if id >= DENSE_LIMIT {
            return self.sparse.insert(id);
        }
        let word = (id / 64) as usize;
        if self.dense.len() <= word {
            self.dense.resize(word + 1, 0);
        }
        let bit = 1 << (id % 64);
        let new = self.dense[word] & bit == 0;
        self.dense[word] |= bit;
        new
    }

    /// Removes `id`.
    #[inline]
    pub fn remove(&mut self, id: u64) {
        if id >= DENSE_LIMIT {
            self.sparse.remove(&id);
        } else if let Some(w) = self.dense.get_mut((id / 64) as usize) {
            *w &= !(1 << (id % 64));
        }
    }
}

/// The object or file id space of one part, as the input defines it.
#[derive(Debug, Default)]
pub struct NameSpace {
    /// The name of each id.
    pub ids: IdMap<Sym>,
    /// The first id defined for each name (indexed by [`Sym`]: names are
    /// numbered densely), to refer to it again.
    first_ids: Vec<Option<u64>>,
}

impl NameSpace {
    /// Records a definition from the input.
    #[inline]
    pub fn define(&mut self, id: u64, sym: Sym) {
        self.ids.insert(id, sym);
        let i = sym.index();
        if self.first_ids.len() <= i {
            self.first_ids.resize(i + 1, None);
        }
        self.first_ids[i].get_or_insert(id);
    }

    /// The first id the input defined for `sym`.
    #[inline]
    pub fn first_id(&self, sym: Sym) -> Option<u64> {
        self.first_ids.get(sym.index()).copied().flatten()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{HashMap, HashSet};

    use super::*;

    /// Ids on both sides of the dense limit, and at its edges.
    fn ids() -> Vec<u64> {
        let mut ids = vec![
            0,
            1,
            63,
            64,
            65,
            1000,
            DENSE_LIMIT - 1,
            DENSE_LIMIT,
            DENSE_LIMIT + 1,
        ];
        ids.extend([u64::MAX - 1, u64::MAX, 7, 1000, DENSE_LIMIT]);
        ids
    }

    #[test]
    fn names_are_numbered_in_the_order_first_met() {
        let mut interner = Interner::default();
        let mut reference: HashMap<Vec<u8>, Sym> = HashMap::new();
        // Prefixes of each other, the empty name, repeats, and enough
        // names for the table to grow several times.
        let mut names: Vec<Vec<u8>> = vec![b"".to_vec(), b"a".to_vec(), b"ab".to_vec()];
        names.extend((0..500).map(|i| format!("f{}", i % 300).into_bytes()));
        names.extend([b"a".to_vec(), b"".to_vec(), b"abc".to_vec()]);
        for name in &names {
            let next = Sym(reference.len() as u32);
            let want = *reference.entry(name.clone()).or_insert(next);
            assert_eq!(interner.intern(name), want, "{name:?}");
        }
        for (name, &sym) in &reference {
            assert_eq!(interner.name(sym), &name[..]);
        }
        let met: Vec<&[u8]> = interner.names().collect();
        assert_eq!(met.len(), reference.len());
        for (i, name) in met.into_iter().enumerate() {
            assert_eq!(reference[name], Sym(i as u32));
        }
    }

    #[test]
    fn an_id_map_answers_as_a_hash_map() {
        let (mut map, mut reference) = (IdMap::default(), HashMap::new());
        for (i, id) in ids().into_iter().enumerate() {
            map.insert(id, i);
            reference.insert(id, i);
            if let Some(&v) = map.get(id / 2) {
                map.insert(id / 2, v + 100);
            }
            if let Some(v) = reference.get_mut(&(id / 2)) {
                *v += 100;
            }
        }
        for id in ids().into_iter().chain([2, 3, DENSE_LIMIT / 2, 99]) {
            assert_eq!(map.get(id), reference.get(&id), "id {id}");
        }
    }

    #[test]
    fn an_id_set_answers_as_a_hash_set() {
        let (mut set, mut reference) = (IdSet::default(), HashSet::new());
        for id in ids() {
            assert_eq!(set.insert(id), reference.insert(id), "id {id}");
        }
        // Ids in the set, in each word position and beyond the dense
        // range, and one never added.
        for id in [63, 64, 65, u64::MAX, 5] {
            set.remove(id);
            reference.remove(&id);
        }
        for id in ids().into_iter().chain([2, 128, DENSE_LIMIT - 2]) {
            assert_eq!(set.contains(id), reference.contains(&id), "id {id}");
        }
    }

    #[test]
    fn names_are_numbered_once_and_ids_remember_their_first_definition() {
        let mut names = Interner::default();
        let (a, b) = (names.intern(b"a"), names.intern(b"b"));
        assert_eq!((names.intern(b"a"), names.name(b)), (a, &b"b"[..]));
        assert_ne!(a, b);
        let mut space = NameSpace::default();
        space.define(5, a);
        space.define(9, a);
        space.define(DENSE_LIMIT + 3, b);
        assert_eq!(
            (space.first_id(a), space.first_id(b)),
            (Some(5), Some(DENSE_LIMIT + 3))
        );
        assert_eq!(space.ids.get(9), Some(&a));
    }
}
