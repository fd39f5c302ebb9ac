//! A call as the re-entry plan sees it (see the parent module). In the
//! first pass, a call into a JIT range is noted: what the calls into each
//! of its names held, for the levels (`levels`) and for the continuations
//! the range calls back (`Noted::into`). In the second, the position line
//! of a call into a function that called continuations back is written
//! less its share of them (`Plan::called_back`).

use super::called_back::gives_back;
use super::levels::Named;
use crate::callgrind::format::position::{add_costs, first_cost};
use crate::callgrind::rewrite::naming::FnKind;
use crate::callgrind::rewrite::{FnRef, Res, Rewriter};
use crate::symbols::SymbolId;

impl Rewriter<'_> {
    /// In the first pass, a call from the current block (from `caller`'s
    /// code, where JIT code holds it) to `callee` whose position line is
    /// `text`, where it calls a JIT range: where under another name than
    /// the block's, its first cost noted for the levels (see `levels`), by
    /// the name called and, at a continuation, by the address; and its
    /// costs, by the address called, as what that name's callers called
    /// it with (`Noted::into`; from the range's own blocks, `own_into`,
    /// since their names may still be lowered).
    pub(in crate::callgrind::rewrite) fn note_call(
        &mut self,
        callee: Option<FnRef>,
        caller: Option<SymbolId>,
        text: &[u8],
    ) -> Res {
        let Some((named, addr, entry)) = self.first_pass_jit(callee) else {
            return Ok(());
        };
        let own = self.part.jit_block_at().filter(|&(b, ..)| b == named.0);
        if let Some((b, _, entered)) = own {
            let from_own = (self.stats.parts, b, entered, (addr, entry));
            self.reentry.noted.from_own.insert(from_own);
        }
        let costs = self.cols.skip(text)?;
        // (under the block's own name: no call in, for the levels)
        if own.is_none_or(|(_, name, _)| name != named.1) {
            let levels = &mut self.reentry.noted.levels;
            let level_sum = match entry {
                true => levels.called.entry(named).or_default(),
                false => levels.resumed_cost.entry((named, addr)).or_default(),
            };
            *level_sum += first_cost(costs)?;
        }
        let key = (self.stats.parts, named.0, named.1);
        let noted = &mut self.reentry.noted;
        let into = match own {
            Some((_, block, at)) => noted.own_into.entry((key, block, at)).or_default(),
            None => noted.into.entry(key).or_default(),
        };
        let calls = into.entry(((addr, entry), caller)).or_default();
        Ok(add_costs(calls, costs)?)
    }

    /// In the first pass, a block begins (its function's `fn=`, or an
    /// `ob=`/`fl=` that leaves it): what a JIT block runs is noted from
    /// now on (`Noted::ran`).
    pub(in crate::callgrind::rewrite) fn note_block(&mut self) {
        if self.reentry.plan.is_none() {
            let jit = self.part.jit_block_at();
            let block =
                jit.map(|(symbol, name, (_, entry))| (self.stats.parts, symbol, name, entry));
            self.reentry.noted.block_begins(block);
        }
    }

    /// `cost` (first event) that the current JIT block ran, noted in the
    /// first pass: a cost line, or a call it made that stays one. Code of
    /// another function it jumped into counts: the block is written with
    /// a call to it.
    #[inline]
    pub(in crate::callgrind::rewrite) fn note_ran(&mut self, cost: u64) {
        self.reentry.noted.add_ran(cost);
    }

    /// [`note_ran`](Self::note_ran) of a call that stays one, its costs
    /// `costs` (read only while a block is noted: not in the second pass).
    pub(in crate::callgrind::rewrite) fn note_call_ran(&mut self, costs: &[u8]) -> Res {
        if self.reentry.noted.noting_block() {
            self.note_ran(first_cost(costs)?);
        }
        Ok(())
    }

    /// In the first pass, a JIT callee's range and name, the address
    /// called, and whether it is an entry.
    fn first_pass_jit(&self, callee: Option<FnRef>) -> Option<(Named, u64, bool)> {
        match (&self.reentry.plan, callee.map(|f| f.kind)) {
            (
                None,
                Some(FnKind::Jit {
                    symbol,
                    name,
                    entry,
                    addr,
                    ..
                }),
            ) => Some(((symbol, name), addr, entry)),
            _ => None,
        }
    }

    /// The position line of a call to `callee` from `caller`'s code,
    /// copied as `copy_position` copies it (an address-named block's
    /// tracked), its costs less the callee's called-back share.
    pub(in crate::callgrind::rewrite) fn copy_call_position(
        &mut self,
        callee: Option<FnRef>,
        caller: Option<SymbolId>,
        (raw, text, terminated): (&[u8], &[u8], bool),
    ) -> Res {
        let less = self.called_back_line(callee, caller, text)?;
        let (raw, text) = less.as_deref().map_or((raw, text), |l| (l, l));
        match self.in_native_code() {
            true => self.copy_position(raw, text, terminated),
            false => self.copy_tracked(raw, text, terminated),
        }
    }

    /// [`called_back_costs`](Self::called_back_costs) for the position
    /// line `text`: its positions as they are, its costs less the share.
    pub(in crate::callgrind::rewrite) fn called_back_line(
        &mut self,
        callee: Option<FnRef>,
        caller: Option<SymbolId>,
        text: &[u8],
    ) -> Res<Option<Vec<u8>>> {
        let plan = self.reentry.plan.as_ref();
        if callee.is_none() || plan.is_none_or(|plan| !plan.gives_back_into()) {
            return Ok(None); // the line is not split: the common case
        }
        let Some(costs) = self.called_back_costs(callee, caller, self.cols.skip(text)?)? else {
            return Ok(None);
        };
        let mut line = self.cols.positions_only(text)?.to_vec();
        line.push(b' ');
        line.extend_from_slice(&costs);
        Ok(Some(line))
    }

    /// A call into a JIT function's entry (`callee`) from `caller`'s code
    /// (where JIT code holds it) with `costs`, in the second pass: the
    /// costs less its share of the continuations the callee called back
    /// (`None`: unchanged; see `Plan::called_back`).
    pub(in crate::callgrind::rewrite) fn called_back_costs(
        &mut self,
        callee: Option<FnRef>,
        caller: Option<SymbolId>,
        costs: &[u8],
    ) -> Res<Option<Vec<u8>>> {
        let Some(plan) = self.reentry.plan.as_mut() else {
            return Ok(None);
        };
        let Some(FnKind::Jit {
            symbol,
            name,
            entry: true,
            ..
        }) = callee.map(|f| f.kind)
        else {
            return Ok(None);
        };
        if !plan.gives_back_into() || self.part.jit_block() == Some((symbol, name)) {
            return Ok(None);
        }
        let (part, name) = (self.stats.parts, self.naming.names.name(name));
        // A call from the callee's own code under another name: its share
        // of the continuations between levels where the plan gave one
        // (the callee's arcs then give back its own, so none of what it
        // called back comes out of this call); else, as any caller's, of
        // what it called back.
        let own = match caller == Some(symbol) {
            true => plan.own_levels.get_mut(&(part, symbol)),
            false => None,
        };
        if let Some(share) = own.and_then(|by_name| by_name.get_mut(name)) {
            let (out, taken, held) = share.take_out(costs)?;
            self.stats.reentry.between_levels += taken;
            self.stats.reentry.between_levels_held += held;
            return Ok(Some(out));
        }
        let named = plan.called_back.get_mut(&(part, symbol));
        let Some(back) = named.and_then(|by_name| by_name.get_mut(name)) else {
            return Ok(None);
        };
        let gives_own = |c: SymbolId| plan.shares.contains_key(&(part, c));
        if !gives_back(caller, &back.resumed, gives_own) {
            return Ok(None);
        }
        let (out, taken, held) = back.share.take_out(costs)?;
        self.stats.reentry.called_back += taken;
        self.stats.reentry.called_back_held += held;
        Ok(Some(out))
    }
}
