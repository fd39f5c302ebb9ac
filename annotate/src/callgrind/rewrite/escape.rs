//! Names that read as ids. In a profile written without string
//! compression, a JIT name such as `(7) looks_like_id` would be taken by
//! both readers for a reference to id 7 (KCachegrind: `(` and a digit;
//! callgrind_annotate: `(digits)`). Such a name gets an id of its own,
//! `fn=(N) (7) looks_like_id`, which both readers read back whole. Its ids
//! lie above every id the input defined before; the input defining one of
//! them later is an error, as it would rename our function.

use super::ids::{FastMap, Sym};

/// The name spaces ids live in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(in crate::callgrind) enum IdSpace {
    Objects,
    Files,
    Functions,
}

/// The ids given to names that read as ids, in one part.
#[derive(Debug, Default)]
pub(in crate::callgrind) struct Escapes {
    given: FastMap<(IdSpace, Sym), u64>,
    /// Per space: the largest id defined so far (by the input or by us).
    highest: [u64; 3],
    /// Per space: our smallest id (`u64::MAX` while there is none).
    ours_from: Option<[u64; 3]>,
}

/// True for a name both readers would take for an id reference.
pub(in crate::callgrind) fn reads_as_id(name: &[u8]) -> bool {
    name.first() == Some(&b'(') && name.get(1).is_some_and(u8::is_ascii_digit)
}

impl Escapes {
    /// The input defines `id` in `space`.
    #[inline]
    pub fn defined(&mut self, space: IdSpace, id: u64) -> Result<(), String> {
        let s = space as usize;
        self.highest[s] = self.highest[s].max(id);
        match self.ours_from {
            Some(from)
                if id >= from[s] && self.given.iter().any(|(k, &v)| k.0 == space && v == id) =>
            {
                Err(format!(
                "id ({id}) is defined after callgrind-jit gave it to a name that reads as an id \
                 (a profile that mixes compressed and uncompressed names)"
            ))
            }
            _ => Ok(()),
        }
    }

    /// The id for `sym` in `space`, and whether this is its first use
    /// (the name is written with it then).
    pub fn id_for(&mut self, space: IdSpace, sym: Sym) -> (u64, bool) {
        if let Some(&id) = self.given.get(&(space, sym)) {
            return (id, false);
        }
        let s = space as usize;
        self.highest[s] += 1;
        let id = self.highest[s];
        let from = self.ours_from.get_or_insert([u64::MAX; 3]);
        from[s] = from[s].min(id);
        self.given.insert((space, sym), id);
        (id, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_paren_and_a_digit_read_as_an_id() {
        assert!(reads_as_id(b"(7) looks_like_id"));
        assert!(reads_as_id(b"(7x"));
        assert!(!reads_as_id(b"(below main)"));
        assert!(!reads_as_id(b"fib (7)"));
        assert!(!reads_as_id(b"("));
    }
}
