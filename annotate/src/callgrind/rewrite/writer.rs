//! The output's side: the lines written (`Out`), and what a reader of the
//! output has as its state: its current object and files, its position,
//! and which ids the output has defined. Kept beside the input reader's
//! state (`reader.rs`): where the two agree, a line means the same in
//! both and is copied as it is; where our own lines made them differ,
//! lines are re-encoded until they agree again.

use super::escape::Escapes;
use super::ids::{IdSet, Sym};
use super::names::Space;
use super::state::Current;
use crate::callgrind::format::position::Pos;
use crate::callgrind::stream::out::Out;

/// The output, and its reader's state in the current part.
pub(in crate::callgrind) struct Writer {
    pub out: Out,
    /// Scratch space for composed lines.
    pub buf: Vec<u8>,
    /// The current object and files.
    pub current: Current,
    /// The position.
    pub pos: Pos,
    /// The position means the same as the input's: a relative position
    /// line may be copied as it is.
    pub synced: bool,
    /// The next position written must be absolute (the state is not one a
    /// relative line could follow).
    pub absolute_next: bool,
    /// Ids the output has defined as the input defines them.
    pub defined: Defined,
    /// Function ids of native functions the output has defined: the fast
    /// lane copies their references without looking further.
    pub native_written: IdSet,
    /// Ids given to names that read as ids.
    pub escapes: Escapes,
}

/// Ids the output has defined, per space (cleared where the input
/// defines an id again).
#[derive(Default)]
pub(in crate::callgrind) struct Defined {
    pub obs: IdSet,
    pub files: IdSet,
    pub fns: IdSet,
}

impl Defined {
    /// The object or file ids defined.
    pub fn space_mut(&mut self, space: Space) -> &mut IdSet {
        match space {
            Space::Objects => &mut self.obs,
            Space::Files => &mut self.files,
        }
    }

    /// The object or file ids defined.
    pub fn space(&self, space: Space) -> &IdSet {
        match space {
            Space::Objects => &self.obs,
            Space::Files => &self.files,
        }
    }
}

impl Writer {
    /// Writes to `out`; `none` is the empty name.
    pub fn new(out: Out, none: Sym) -> Self {
        Writer {
            out,
            buf: Vec::with_capacity(256),
            current: Current::new(none),
            pos: [0; 3],
            synced: true,
            absolute_next: false,
            defined: Defined::default(),
            native_written: IdSet::default(),
            escapes: Escapes::default(),
        }
    }

    /// A new part: its reader's state starts afresh.
    pub fn new_part(&mut self, none: Sym) {
        self.current = Current::new(none);
        (self.pos, self.synced, self.absolute_next) = ([0; 3], true, false);
        self.defined = Defined::default();
        self.native_written = IdSet::default();
        self.escapes = Escapes::default();
    }

    /// We wrote a position line for `pos`, after the input's position was
    /// set to `input` (the line's own, decoded).
    #[inline]
    pub fn wrote(&mut self, pos: Pos, input: &Pos) {
        self.pos = pos;
        self.absolute_next = false;
        self.synced = *input == pos;
    }
}
