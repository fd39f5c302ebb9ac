//! The reader state of one part, twice: what a reader of the *input* has
//! as its current object, file and position, and what a reader of the
//! *output* has. Where the two agree, a line means the same in both and
//! is copied as it is; where our own lines made them differ, lines are
//! re-encoded until they agree again.

use super::ids::{IdSet, NameSpace, Sym};
use super::names::{FnEntry, FnRef};
use super::naming::FnKind;
use super::reentry::Who;
use crate::callgrind::format::position::Pos;

use super::escape::Escapes;
use super::ids::IdMap;
use crate::symbols::SymbolId;

/// How much of the input's position state the rewriter tracks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::callgrind) enum Tracking {
    /// Position lines are copied undecoded while the two states agree
    /// (the input's position is then forgotten). Relies on callgrind's
    /// habit of writing the first position of each function absolutely;
    /// stops with `Fail::NeedsExact` where the input breaks it.
    Lazy,
    /// Every position line is decoded (any valid input).
    Every,
}

/// The names a reader has as current: `ob=`, `fl=` (the function's file)
/// and `fi=`/`fe=` (the file of the cost lines).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::callgrind) struct Current {
    pub ob: Sym,
    pub fl: Sym,
    pub file: Sym,
}

impl Current {
    fn new(none: Sym) -> Self {
        Current {
            ob: none,
            fl: none,
            file: none,
        }
    }
}

/// The two readers' positions, and whether they mean the same.
#[derive(Clone, Copy, Debug)]
pub(in crate::callgrind) struct Positions {
    /// The input reader's position, where `input_known` (see
    /// [`input`](Self::input)).
    input: Pos,
    /// False where lines were copied without decoding them
    /// ([`Tracking::Lazy`]).
    input_known: bool,
    /// The output reader's position.
    pub output: Pos,
    /// The output's position state means the same as the input's: a
    /// relative position line may be copied as it is.
    pub synced: bool,
    /// The next position written must be absolute (the output's state is
    /// not one a relative line could follow).
    pub absolute_next: bool,
}

impl Default for Positions {
    fn default() -> Self {
        Positions {
            input: [0; 3],
            input_known: true,
            output: [0; 3],
            synced: true,
            absolute_next: false,
        }
    }
}

impl Positions {
    /// The input reader's position; `None` where lines were copied without
    /// decoding them ([`Tracking::Lazy`]).
    #[inline]
    pub fn input(&self) -> Option<&Pos> {
        self.input_known.then_some(&self.input)
    }

    /// The input reader moved to `pos`.
    #[inline]
    pub fn set_input(&mut self, pos: Pos) {
        (self.input, self.input_known) = (pos, true);
    }

    /// A position line was copied without decoding it.
    pub fn forget_input(&mut self) {
        self.input_known = false;
    }

    /// We wrote a position line for `pos`, after the input's position was
    /// set (the line's own, decoded).
    #[inline]
    pub fn wrote(&mut self, pos: Pos) {
        debug_assert!(self.input_known);
        self.output = pos;
        self.absolute_next = false;
        self.synced = self.input == pos;
    }
}

/// Code of another JIT function the current block jumped into: written
/// under that function, and as a call to it from the block's function
/// (callgrind itself takes a jump into another object's code for a call),
/// so that the function jumped into has a caller and its cost is inside
/// the jumper's, as it ran.
#[derive(Debug)]
pub(in crate::callgrind) struct Stretch {
    pub owner: SymbolId,
    /// The block's last position before the jump (the call's site).
    pub site: Pos,
    /// The first position written under `owner` (the call's target), and
    /// its first cost (how often it ran: the call's count).
    pub entry: Option<(Pos, u64)>,
    /// Cost lines and calls written under `owner`, per event.
    pub costs: Vec<u64>,
}

/// Which function the current cost lines belong to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::callgrind) enum Block {
    /// Not a JIT function (or no function yet).
    Native,
    /// An address-named function under `???` outside every JIT range.
    Unnamed(u64),
    /// A renamed JIT function: the symbol's index.
    Jit(SymbolId),
}

/// The name tables of one part (ids restart at each part).
#[derive(Default)]
pub(in crate::callgrind) struct Tables {
    pub obs: NameSpace,
    pub files: NameSpace,
    pub fns: IdMap<FnEntry>,
    /// Function ids of native functions the output has defined: the fast
    /// lane copies their references without looking further.
    pub native_written: IdSet,
    /// Ids given to names that read as ids.
    pub escapes: Escapes,
}

/// Reader state of one part.
pub(in crate::callgrind) struct Part {
    pub tables: Tables,
    pub input: Current,
    pub output: Current,
    pub pos: Positions,
    pub block: Block,
    /// The `fn=` of the current JIT block, to write it again (see `owner`).
    pub block_fn: Option<FnRef>,
    /// The JIT function the output's current `fn=` names where it is not
    /// the block's own (code the block jumped into; see `owner`).
    pub charged: Option<SymbolId>,
    /// The current function outside JIT blocks, as calls name it (see
    /// `reentry`).
    pub who: Option<Who>,
    /// The code of another JIT function the block jumped into, while
    /// `charged` (see `owner`).
    pub stretch: Option<Stretch>,
    /// The last position written for the JIT block's own code (a call
    /// site for code it jumps into; see `owner`).
    pub last_own: Option<Pos>,
}

impl Part {
    /// The range and name of the current block where it is JIT code.
    pub fn jit_block(&self) -> Option<(SymbolId, Sym)> {
        match (self.block, self.block_fn.map(|f| f.kind)) {
            (Block::Jit(symbol), Some(FnKind::Jit { name, .. })) => Some((symbol, name)),
            _ => None,
        }
    }

    pub fn new(none: Sym) -> Self {
        Part {
            tables: Tables::default(),
            input: Current::new(none),
            output: Current::new(none),
            pos: Positions::default(),
            block: Block::Native,
            block_fn: None,
            charged: None,
            who: None,
            stretch: None,
            last_own: None,
        }
    }

    /// The output's object and function file are the input's: a `fn=`
    /// line means the same function in both.
    pub fn same_function_names(&self) -> bool {
        self.output.ob == self.input.ob && self.output.fl == self.input.fl
    }

    /// The output's object and current file are the input's: a call's
    /// `cob=`/`cfi=` defaults mean the same in both.
    pub fn same_call_defaults(&self) -> bool {
        self.output.ob == self.input.ob && self.output.file == self.input.file
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_position_is_in_sync_only_where_it_equals_the_input_one() {
        let mut pos = Positions::default();
        pos.set_input([5, 7, 0]);
        pos.wrote([5, 7, 0]);
        assert!(pos.synced && !pos.absolute_next && pos.output == [5, 7, 0]);
        pos.wrote([5, 9, 0]);
        assert!(!pos.synced);
    }
}
