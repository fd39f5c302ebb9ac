//! The input's reader state: what a reader of the input has as its id
//! tables, its current object and files, and its position. Lines of the
//! input change it, whether they are copied or rewritten; the output's
//! state (`writer.rs`) is kept beside it, and where the two agree a line
//! means the same in both.

use super::ids::{IdMap, NameSpace, Sym};
use super::names::{FnEntry, Space};
use super::state::Current;
use crate::callgrind::format::position::Pos;

/// The input reader's state in one part (ids restart at each part).
pub(in crate::callgrind) struct Reader {
    /// Object ids: their names.
    pub obs: NameSpace,
    /// File ids: their names.
    pub files: NameSpace,
    /// Function ids: their names and kinds.
    pub fns: IdMap<FnEntry>,
    /// The current object and files.
    pub current: Current,
    /// The position, where `pos_known` (see [`pos`](Self::pos)).
    pos: Pos,
    /// False where lines were copied without decoding them (lazy
    /// tracking).
    pos_known: bool,
}

impl Reader {
    /// The state at a part's start; `none` is the empty name.
    pub fn new(none: Sym) -> Self {
        Reader {
            obs: NameSpace::default(),
            files: NameSpace::default(),
            fns: IdMap::default(),
            current: Current::new(none),
            pos: [0; 3],
            pos_known: true,
        }
    }

    /// The ids of an object- or file-like name space.
    pub fn space_mut(&mut self, space: Space) -> &mut NameSpace {
        match space {
            Space::Objects => &mut self.obs,
            Space::Files => &mut self.files,
        }
    }

    /// The name of object or file id `id`, if defined.
    #[inline]
    pub fn name_of(&self, space: Space, id: u64) -> Option<Sym> {
        let names = match space {
            Space::Objects => &self.obs,
            Space::Files => &self.files,
        };
        names.ids.get(id).copied()
    }

    /// The position; `None` where lines were copied without decoding them.
    #[inline]
    pub fn pos(&self) -> Option<&Pos> {
        self.pos_known.then_some(&self.pos)
    }

    /// The position last decoded, known or not.
    pub fn last_pos(&self) -> &Pos {
        &self.pos
    }

    /// The reader moved to `pos`.
    #[inline]
    pub fn set_pos(&mut self, pos: Pos) {
        (self.pos, self.pos_known) = (pos, true);
    }

    /// A position line was copied without decoding it.
    pub fn forget_pos(&mut self) {
        self.pos_known = false;
    }
}
