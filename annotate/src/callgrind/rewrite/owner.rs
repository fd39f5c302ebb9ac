//! Cost goes where the code is. Callgrind charges code entered by a jump
//! (not a call) to the function that jumped: HotSpot's adapters jump into
//! compiled methods, a trampoline jumps into the function it stands for.
//! Inside a JIT block, a cost line or call site at an address of another
//! JIT function is written under that function: its `fn=` before the
//! line, the block's own `fn=` again where the block's code resumes. Both
//! readers add up the repeated blocks of one function, and the calls made
//! from those lines move with them.
//!
//! Native code needs none of this: callgrind takes a jump into another
//! object (from a program or library into the JIT's anonymous memory) for
//! a call, so JIT code entered from native code is its own function
//! already (tests/c/native_tail.c). Code under an address-named function
//! outside every JIT range (an unregistered stub) that jumps into JIT code
//! stays under that function.

use super::names::{FnKind, Space};
use super::state::Block;
use super::{Res, Rewriter};
use crate::symbols::SymbolId;

impl Rewriter<'_> {
    /// Makes `owner`'s function the output's current one (see the module
    /// doc); `cost` is counted as moved when it is not the block's.
    #[cold]
    pub(super) fn charge_to(&mut self, owner: SymbolId, cost: u64) -> Res {
        let Block::Jit(block) = self.part.block else {
            return Ok(());
        };
        if owner != block {
            self.stats.moved_cost += cost;
        }
        let current = self.part.charged.unwrap_or(block);
        if owner == current {
            return Ok(());
        }
        self.end_block()?;
        let ident = self.jit_ident(owner);
        if self.part.output.ob != ident.object {
            self.emit_sym("ob", Space::Objects, ident.object)?;
            self.part.output.ob = ident.object;
        }
        if self.part.output.fl != ident.file {
            self.emit_sym("fl", Space::Files, ident.file)?;
            (self.part.output.fl, self.part.output.file) = (ident.file, ident.file);
        }
        match self.part.block_fn.filter(|_| owner == block) {
            Some(own) => self.emit_jit_fn("fn", own)?,
            None => {
                let name = self.owner_name(owner);
                self.emit_named_fn("fn", name)?;
            }
        }
        self.part.charged = (owner != block).then_some(owner);
        self.part.pos.absolute_next = true;
        Ok(())
    }

    /// The name `owner`'s code is written under: its own, with the block's
    /// suffix (`'2`, callgrind's recursion level, and caller context), so
    /// that nested activations stay apart as callgrind keeps them apart.
    fn owner_name(&mut self, owner: SymbolId) -> super::ids::Sym {
        let mut name = self.table.symbol(owner).name.as_bytes().to_vec();
        if let Some(FnKind::Jit {
            name: full, symbol, ..
        }) = self.part.block_fn.map(|f| f.kind)
        {
            let base = self.table.symbol(symbol).name.len();
            name.extend_from_slice(self.names.name(full).get(base..).unwrap_or_default());
        }
        self.names.intern(&name)
    }
}
