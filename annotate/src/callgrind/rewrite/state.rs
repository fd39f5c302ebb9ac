//! The rewrite's own state beside the two readers' (`reader.rs`: the
//! input's; `writer.rs`: the output's): how positions are tracked, and
//! which function the current lines belong to.

use super::ids::Sym;
use super::naming::FnKind;
use super::reader::FnRef;
use super::reentry::{Entered, Who};
use crate::callgrind::format::position::Pos;
use crate::symbols::SymbolId;

/// How much of the input's position state the rewriter tracks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::callgrind) enum Tracking {
    /// Position lines are copied undecoded while the two states agree
    /// (the input's position is then forgotten). Relies on callgrind's
    /// habit of writing the first position of each function absolutely;
    /// where the input breaks it, the lines since the position was last
    /// known are read again (`recall.rs`).
    Lazy,
    /// Every position line is decoded (any valid input).
    Every,
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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(in crate::callgrind) enum Block {
    /// Not a JIT function (or no function yet).
    #[default]
    Native,
    /// An address-named function under `???` outside every JIT range.
    Unnamed(u64),
    /// A renamed JIT function: the symbol's index.
    Jit(SymbolId),
}

/// What the rewrite knows of the current function, in one part: which
/// block the lines belong to, and the JIT code it jumped into (see
/// `owner`).
#[derive(Default)]
pub(in crate::callgrind) struct Part {
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
    /// The current JIT block's range, name, and the address it was
    /// named after with whether that is the range's start.
    pub fn jit_block_at(&self) -> Option<(SymbolId, Sym, Entered)> {
        match (self.block, self.block_fn.map(|f| f.kind)) {
            (
                Block::Jit(symbol),
                Some(FnKind::Jit {
                    name, entry, addr, ..
                }),
            ) => Some((symbol, name, (addr, entry))),
            _ => None,
        }
    }

    /// The range and name of the current block where it is JIT code.
    pub fn jit_block(&self) -> Option<(SymbolId, Sym)> {
        self.jit_block_at().map(|(symbol, name, _)| (symbol, name))
    }
}
