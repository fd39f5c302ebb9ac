//! Cost goes where the code is. Callgrind charges code entered by a jump
//! (not a call) to the function that jumped: HotSpot's adapters jump into
//! compiled methods, a trampoline jumps into the function it stands for.
//! Inside a JIT block, a cost line or call site at an address of another
//! JIT function is written under that function: its `fn=` before the
//! line, the block's own `fn=` again where the block's code resumes. Both
//! readers add up the repeated blocks of one function, and the calls made
//! from those lines move with them. The jumper then calls the function it
//! jumped into ([`Stretch`]): the cost moved is still inside the jumper's
//! inclusive cost, and the function jumped into has a caller (without
//! one, KCachegrind and callgrind_annotate take its self cost plus its
//! calls for its inclusive cost, which recursion inflates).
//!
//! An address-named function outside every JIT range (a stub no symbol
//! file lists, as QEMU's TCG prologue) is treated the same way: what it
//! jumps into is written under the JIT functions whose code it is, and the
//! stub calls them (tests/c/tail_jump.c `unnamed`).
//!
//! Native code needs none of this: callgrind takes a jump into another
//! object (from a program or library into the JIT's anonymous memory) for
//! a call, so JIT code entered from native code is its own function
//! already (tests/c/native_tail.c).

use super::ids::Sym;
use super::naming::FnKind;
use super::reader::{FnRef, Space};
use super::state::{Block, Stretch};
use super::{Res, Rewriter};
use crate::callgrind::format::line::parse_u64;
use crate::callgrind::format::pos::Pos;
use crate::callgrind::format::position::{add_costs, first_cost, push_costs, push_decimal, Column};
use crate::symbols::SymbolId;

/// A call site in JIT code: the function whose code holds it, the source
/// file of its line (where that is not the current one), its position as
/// written, and its costs as read.
pub(super) struct Site<'t> {
    pub owner: SymbolId,
    pub file: Option<Sym>,
    pub out: Pos,
    pub costs: &'t [u8],
}

impl Rewriter<'_> {
    /// Makes `owner`'s function the output's current one (see the module
    /// doc); `None` is the block's own code. `cost` is counted as moved
    /// when it is not the block's.
    #[cold]
    pub(super) fn charge_to(&mut self, owner: Option<SymbolId>, cost: u64) -> Res {
        let block = match self.part.block {
            Block::Jit(block) => Some(block),
            Block::Unnamed(_) => None,
            Block::Native => return Ok(()),
        };
        // Another version of the block's own function (a higher tier, code
        // entered on-stack) is the same function: nothing moves.
        let owner = match (owner, block) {
            (Some(o), Some(b)) if o == b || self.same_function(o, b) => None,
            (owner, _) => owner,
        };
        if owner.is_some() {
            self.stats.moved_cost += cost;
        }
        if owner == self.part.charged {
            return Ok(());
        }
        // Back in the block's own function, the call to the code it
        // jumped into written.
        self.end_block()?;
        let Some(owner) = owner else {
            return Ok(());
        };
        let site = self.part.last_own.unwrap_or_else(|| self.block_entry());
        let name = self.owner_name(owner);
        self.switch_function(owner, name)?;
        self.part.charged = Some(owner);
        self.part.stretch = Some(Stretch {
            owner,
            site,
            entry: None,
            costs: Vec::new(),
        });
        Ok(())
    }

    /// An address-named block's own code again: its function current,
    /// with the input's file.
    pub(super) fn back_home(&mut self) -> Res {
        self.charge_to(None, 0)?;
        let file = self.reader.current.file;
        self.emit().switch_file(file)
    }

    /// A cost line or call of the stretch (see [`Stretch`]) at `pos` with
    /// `costs`, run `runs` times (a cost line's first cost, a call's
    /// count): the first one's count is the jumper's call's.
    pub(super) fn add_to_stretch(&mut self, pos: Pos, costs: &[u8], runs: u64) -> Res {
        let Some(stretch) = self.part.stretch.as_mut() else {
            return Ok(());
        };
        stretch.entry.get_or_insert((pos, runs));
        Ok(add_costs(&mut stretch.costs, costs)?)
    }

    /// A call from `site`'s code into its own middle, folded, where a
    /// block runs another function's code (a jump within that code seen
    /// as a call): one of that code's lines (see [`Stretch`]), its cost
    /// the callee's, whose lines are that function's self cost. The
    /// jumper's call holds it, as callgrind's call did (HotSpot's call
    /// stub, entering the interpreter, lost 10,488,608 Ir of 122,379,988
    /// without it).
    pub(super) fn fold_in_stretch(&mut self, site: &Site, calls: &[u8]) -> Res {
        if self.part.block == Block::Jit(site.owner) {
            return Ok(()); // the block's own code
        }
        self.charge_to(Some(site.owner), 0)?;
        let calls = parse_u64(calls).ok_or("bad count")?;
        self.add_to_stretch(site.out, site.costs, calls)
    }

    /// Ends a stretch: the block's own function again, and its call to
    /// the function it jumped into.
    pub(super) fn close_stretch(&mut self) -> Res {
        let Some(stretch) = self.part.stretch.take() else {
            return Ok(());
        };
        self.part.charged = None;
        let Some(own) = self.part.block_fn else {
            return Ok(());
        };
        match self.part.block {
            Block::Jit(block) => self.switch_to(block, |rw| rw.emit().fn_ref("fn", own))?,
            Block::Unnamed(_) => self.switch_home(own)?,
            Block::Native => return Ok(()),
        }
        let Some((target, count)) = stretch.entry else {
            return Ok(()); // nothing was moved
        };
        let ident = self.naming.jit_ident(stretch.owner);
        self.emit().callee_ident(ident)?;
        let name = self.owner_name(stretch.owner);
        self.emit().named_fn("cfn", name)?;
        let cols = &self.cols;
        self.writer.out.composed(|buf| {
            buf.extend_from_slice(b"calls=");
            push_decimal(buf, count.max(1));
            buf.push(b' ');
            cols.encode(buf, &target, &Pos::default(), true);
        })?;
        let mut costs = Vec::new();
        push_costs(&mut costs, &stretch.costs);
        self.emit().position(stretch.site, &costs)
    }

    /// The name `owner`'s code is written under in the current block:
    /// the block's own where it is the block's function (or a version of
    /// it), else [`owner_name`](Self::owner_name)'s.
    pub(super) fn written_name(&mut self, owner: SymbolId) -> Sym {
        match self.part.jit_block() {
            Some((block, name)) if block == owner || self.same_function(owner, block) => name,
            _ => self.owner_name(owner),
        }
    }

    /// True where `a` and `b` are written as one function: one name, one
    /// object and one file (versions of a function loaded one after
    /// another).
    fn same_function(&mut self, a: SymbolId, b: SymbolId) -> bool {
        self.naming.jit_ident(a) == self.naming.jit_ident(b)
            && self.naming.symbols.get(a).name == self.naming.symbols.get(b).name
    }

    /// The position of the block's first instruction: a JIT block's
    /// [`entry_of`](Self::entry_of), an address-named one's address.
    fn block_entry(&mut self) -> Pos {
        match self.part.block {
            Block::Jit(block) => self.entry_of(block),
            Block::Unnamed(addr) => {
                let mut pos = Pos::default();
                if let Some(i) = self.cols.index(Column::Instr) {
                    pos[i] = addr;
                }
                pos
            }
            Block::Native => Pos::default(),
        }
    }

    /// The position of `symbol`'s first instruction, at its line: the
    /// line table's there (as a cost line at that address gets), else the
    /// declared line; without an instruction column, the declared line.
    fn entry_of(&mut self, symbol: SymbolId) -> Pos {
        let s = self.naming.symbols.get(symbol);
        let mut pos = Pos::default();
        let mut line = s.line;
        if let Some(i) = self.cols.index(Column::Instr) {
            pos[i] = s.start;
            line = s
                .row_at(s.start)
                .filter(|r| r.line != 0)
                .map_or(s.line, |r| r.line);
        }
        if let Some(i) = self.cols.index(Column::Line) {
            pos[i] = u64::from(line);
        }
        pos
    }

    /// Back to an address-named block's own function `own`, under the
    /// input's object and files (its lines are the input's again).
    fn switch_home(&mut self, own: FnRef) -> Res {
        let (ob, fl) = (self.reader.current.ob, self.reader.current.fl);
        self.emit()
            .name_if_changed("ob", Space::Objects, ob, |c| c.ob)?;
        self.emit()
            .name_if_changed("fl", Space::Files, fl, |c| c.fl)?;
        (
            self.writer.current.ob,
            self.writer.current.fl,
            self.writer.current.file,
        ) = (ob, fl, fl);
        self.emit().fn_ref("fn", own)?;
        self.writer.absolute_next = true;
        Ok(())
    }

    /// Writes `owner`'s object, file and `fn=` (its `name`).
    fn switch_function(&mut self, owner: SymbolId, name: super::ids::Sym) -> Res {
        self.switch_to(owner, |rw| rw.emit().named_fn("fn", name))
    }

    /// `ob=`/`fl=` of `symbol` where they change, then `fn` (written by
    /// `write_fn`); the next position absolute.
    fn switch_to(&mut self, symbol: SymbolId, write_fn: impl FnOnce(&mut Self) -> Res) -> Res {
        let ident = self.naming.jit_ident(symbol);
        if self.writer.current.ob != ident.object {
            self.emit().sym("ob", Space::Objects, ident.object)?;
            self.writer.current.ob = ident.object;
        }
        if self.writer.current.fl != ident.file {
            self.emit().sym("fl", Space::Files, ident.file)?;
            (self.writer.current.fl, self.writer.current.file) = (ident.file, ident.file);
        }
        write_fn(self)?;
        self.writer.absolute_next = true;
        Ok(())
    }

    /// The name `owner`'s code is written under: its own, with the block's
    /// suffix (`'2`, callgrind's recursion level, and caller context), so
    /// that nested activations stay apart as callgrind keeps them apart;
    /// an address-named block's suffix too (a stub's `0x...'2`).
    fn owner_name(&mut self, owner: SymbolId) -> Sym {
        let mut name = self.naming.symbols.get(owner).name.as_bytes().to_vec();
        match self.part.block_fn.map(|f| (f.kind, f.name)) {
            Some((
                FnKind::Jit {
                    name: full, symbol, ..
                },
                _,
            )) => {
                let base = self.naming.symbols.get(symbol).name.len();
                name.extend_from_slice(
                    self.naming.names.name(full).get(base..).unwrap_or_default(),
                );
            }
            Some((FnKind::Unnamed(_), stub)) => self.naming.append_address_suffix(&mut name, stub),
            _ => {}
        }
        self.naming.names.intern(&name)
    }

    /// The site of a call in an address-named block where JIT code holds
    /// it (as in a JIT block); else `None`, the block's own function
    /// current again and the line left undecoded for the copy.
    pub(super) fn unnamed_site<'t>(&mut self, text: &'t [u8]) -> Res<Option<Site<'t>>> {
        let (pos, costs) = self.decode(text)?;
        first_cost(costs)?;
        let Some((owner, file, out)) = self.naming.jit_at(&self.cols, pos) else {
            self.back_home()?;
            return Ok(None);
        };
        self.reader.set_pos(pos);
        Ok(Some(Site {
            owner,
            file,
            out,
            costs,
        }))
    }
}
