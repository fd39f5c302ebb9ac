//! A call or jump group whose position line is decoded (see
//! `call::write_group`): in JIT code, in an address-named block that JIT
//! code holds, or anywhere with every position decoded. The site's line
//! is mapped in JIT code, the function whose code holds the site gets the
//! call, and a call into a JIT function's middle is folded into its self
//! cost (but between two of its recursion levels, `reentry/levels.rs`).

use super::call::{folds, resumed, Parsed};
use super::naming::FnKind;
use super::owner::Site;
use super::reader::FnRef;
use super::reentry::Who;
use super::state::Block;
use super::{Res, Rewriter};
use crate::callgrind::format::line::{parse_u64, CountLine};
use crate::callgrind::format::position::{first_cost, Column, Pos};
use crate::symbols::SymbolId;

impl Rewriter<'_> {
    /// The group `parsed` (its count line `line`) at its position line
    /// `(raw, text, terminated)`, decoded.
    pub(super) fn write_decoded_group(
        &mut self,
        parsed: &Parsed,
        line: CountLine,
        (raw, text, terminated): (&[u8], &[u8], bool),
    ) -> Res {
        let target = super::lines_before(self.decode_target(line.target), 1)?;
        let callee = self.group_callee(parsed)?;
        let site = self.decoded_site(text)?;
        let owner = site.as_ref().map(|s| s.owner);
        let at = site
            .as_ref()
            .and_then(|s| Some(s.out[self.cols.index(Column::Instr)?]));
        if parsed.is_call {
            self.note_call(callee, owner, text)?;
        }
        let into_middle = parsed.is_call && folds(callee);
        let across = into_middle && self.between_names(owner, callee);
        self.stats.level_calls += u64::from(across);
        if into_middle && !across {
            if let Some(site) = site.as_ref().filter(|s| s.owner == resumed(callee).0) {
                self.fold_in_stretch(site, line.count)?;
            }
            let costs = site.map(|s| s.costs);
            return self.fold_call(callee, (owner, at), costs, text);
        }
        if let Some(site) = &site {
            self.charge_to(Some(site.owner), 0)?;
            if let Some(file) = site.file {
                self.emit().switch_file(file)?;
            }
        }
        self.write_decoded_names(parsed, callee, owner, target)?;
        let mapped = self.map_target(target, callee);
        let unchanged = mapped == target && self.writer.synced && site.is_none();
        self.emit().count_line(line, mapped, unchanged)?;
        let call = callee.filter(|_| parsed.is_call);
        match (site, call) {
            (Some(site), Some(callee)) => {
                let who = Who::of(callee, self.group_callee_object(parsed));
                self.write_arc_position(site, (callee, who), at, (line.count, !across))
            }
            (Some(site), None) => self.emit().position(site.out, site.costs),
            (None, _) => self.copy_call_position(call, owner, (raw, text, terminated)),
        }
    }

    /// The site of a call in JIT code: decoded, with its owner and line
    /// (see `owner`); `None` in native code, and in an address-named
    /// block where no JIT code holds it.
    fn decoded_site<'t>(&mut self, text: &'t [u8]) -> Res<Option<Site<'t>>> {
        match self.part.block {
            Block::Jit(symbol) => {
                let (pos, costs) = self.decode_tracked(text)?;
                let (owner, file, out) = self.naming.locate(&self.cols, symbol, pos);
                Ok(Some(Site {
                    owner,
                    file,
                    out,
                    costs,
                }))
            }
            Block::Unnamed(_) => self.unnamed_site(text),
            Block::Native => Ok(None),
        }
    }

    /// The position line `text` decoded (its first cost checked), its
    /// position the reader's from now on.
    fn decode_tracked<'t>(&mut self, text: &'t [u8]) -> Res<(Pos, &'t [u8])> {
        let (pos, costs) = self.decode(text)?;
        first_cost(costs)?;
        self.reader.set_pos(pos);
        Ok((pos, costs))
    }

    /// A call into `callee`'s middle, folded: the callee's lines are its
    /// self cost already. Noted for the re-entry plan, from `owner`'s
    /// code at the address `at` where JIT code holds the site; `costs`
    /// where the site was decoded already.
    fn fold_call(
        &mut self,
        callee: Option<FnRef>,
        (owner, at): (Option<SymbolId>, Option<u64>),
        costs: Option<&[u8]>,
        text: &[u8],
    ) -> Res {
        self.stats.folded_calls += 1;
        let costs = match costs {
            Some(costs) => costs,
            None => self.decode_tracked(text)?.1,
        };
        self.writer.synced = false;
        if let (Some(owner), Some(site)) = (owner, at) {
            self.note_folded_call(owner, site, resumed(callee), costs)?;
        }
        let caller = owner.map(Who::Jit).or(self.part.who);
        // The calls into the block held the continuation where the block
        // is the caller's own (see `reentry::Plan::called_back`).
        let block = self.part.jit_block_at().filter(|&(b, ..)| Some(b) == owner);
        let block = block.map(|(_, name, at)| (name, at));
        self.note_continuation(resumed(callee), (caller, block), costs)
    }

    /// The callee's names: a call's (see `write_callee_names`), or a
    /// jump's, where a jump inside the site's own JIT function names no
    /// callee.
    fn write_decoded_names(
        &mut self,
        parsed: &Parsed,
        callee: Option<FnRef>,
        owner: Option<SymbolId>,
        target: Pos,
    ) -> Res {
        if parsed.is_call {
            return self.write_callee_names(parsed, callee.ok_or("calls= without cfn=")?);
        }
        let internal = matches!(
            (owner, callee.map(|f| f.kind)),
            (Some(s), Some(FnKind::Jit { symbol, .. })) if s == symbol
        );
        self.write_jump_names(parsed, callee.filter(|_| !internal), Some(target))
    }

    /// The position line of a call from JIT code at `site` to `callee`
    /// (`who` for the re-entry plan), its costs less the continuations
    /// the arc held (`arcs`: not for a call between two levels) and less
    /// the callee's called-back share; added to the stretch being
    /// charged, if any, with the count `calls`.
    fn write_arc_position(
        &mut self,
        site: Site,
        (callee, who): (FnRef, Who),
        at: Option<u64>,
        (calls, arcs): (&[u8], bool),
    ) -> Res {
        let less = match arcs {
            true => self.arc_costs(site.owner, who, at, site.costs)?,
            false => None,
        };
        let costs = less.as_deref().unwrap_or(site.costs);
        let back = self.called_back_costs(Some(callee), Some(site.owner), costs)?;
        let costs = back.as_deref().unwrap_or(costs);
        self.note_call_ran(costs)?;
        if self.part.stretch.is_some() {
            let calls = parse_u64(calls).ok_or("bad count")?;
            self.add_to_stretch(site.out, costs, calls)?;
        }
        self.emit().position(site.out, costs)
    }

    /// A target inside JIT code gets its source line (a JIT callee's, or
    /// a target in a JIT block's own function; without addresses, the
    /// function's declared line, as its cost lines). A function of no JIT
    /// range keeps the position callgrind gave, wherever it lies: a
    /// callee (BEAM's threads enter JIT code under the name `clone`), or
    /// an address-named stub's own jump into JIT code.
    fn map_target(&mut self, target: Pos, callee: Option<FnRef>) -> Pos {
        match (callee.map(|f| f.kind), self.part.block) {
            (Some(kind @ FnKind::Jit { .. }), _) => self.target_line(target, kind),
            (None, Block::Jit(symbol)) => self.naming.locate(&self.cols, symbol, target).2,
            _ => target,
        }
    }
}
