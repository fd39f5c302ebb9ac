//! Writing a call or jump group, as the reader buffered it (`reader.rs`),
//! at its position line: its lines parsed, then written here in native
//! code whose lines are copied, else with its position decoded
//! (`site.rs`). Here: the callee's names (a JIT callee's own object and
//! file; a jump's, `jump.rs`), the `calls=`/`jump=` line with its target
//! (placed against the input's state, read back by `recall.rs` where the
//! lazy pass forgot it, and given its source line in JIT code: the line
//! of the address a callee was named after, which its kind holds, else
//! the naming's line table), and the position line (a call into a JIT
//! function less the continuations it called back, see `reentry/`; a
//! call into its middle folded into self cost).

use super::ids::Sym;
use super::naming::{FnKind, Ident};
use super::reader::{Current, FnRef, Group, Space};
use super::{lines_before, Fail, Res, Rewriter};
use crate::callgrind::format::line::{CountLine, Key, NameRef};
use crate::callgrind::format::position::{Column, Pos};
use crate::callgrind::format::quick;
use crate::symbols::SymbolId;

/// One group line as input: the raw line and its name.
pub(super) struct NameLine<'a> {
    pub raw: &'a [u8],
    pub sym: Sym,
    pub nr: NameRef<'a>,
}

/// A parsed group.
#[derive(Default)]
pub(super) struct Parsed<'a> {
    pub ob: Option<NameLine<'a>>,
    pub file: Option<NameLine<'a>>,
    pub func: Option<(&'a [u8], &'a [u8])>,
    /// The `calls=`/`jump=`/`jcnd=` line, its count and its target text.
    pub count: Option<CountLine<'a>>,
    pub is_call: bool,
}

impl Rewriter<'_> {
    /// The position line after the group the reader buffered: the group
    /// written, the reader's buffer emptied.
    pub(super) fn finish_group(&mut self, raw: &[u8], text: &[u8], terminated: bool) -> Res {
        let group = std::mem::take(&mut self.reader.group);
        let result = self.write_group(&group, raw, text, terminated);
        self.reader.group = group;
        self.reader.group.clear();
        result
    }

    /// The group's callee, resolved under its object.
    pub(super) fn group_callee(&mut self, parsed: &Parsed) -> Res<Option<FnRef>> {
        let object = self.group_callee_object(parsed);
        parsed
            .func
            .map(|(_, value)| self.resolve_fn(value, object))
            .transpose()
    }

    /// The object of a group's callee: a call's `cob=`, else the input's.
    pub(super) fn group_callee_object(&self, parsed: &Parsed) -> Sym {
        match (&parsed.ob, parsed.is_call) {
            (Some(n), true) => n.sym,
            _ => self.reader.current.ob,
        }
    }

    /// The group's lines, their names resolved against the reader's ids;
    /// a line's failure is its own, not the position line's (the count
    /// line's target, decoded later, is the line before it).
    pub(super) fn parse_group<'g>(&mut self, group: &'g Group) -> Res<Parsed<'g>> {
        let mut parsed = Parsed::default();
        let lines = group.lines();
        let count = lines.len();
        for (i, line) in lines.enumerate() {
            lines_before(self.parse_group_line(&mut parsed, line), count - i)?;
        }
        Ok(parsed)
    }

    /// One line of a group into `parsed`.
    fn parse_group_line<'g>(
        &mut self,
        parsed: &mut Parsed<'g>,
        (key, raw, value): (Key, &'g [u8], &'g [u8]),
    ) -> Res {
        match key {
            Key::Cob => parsed.ob = Some(self.named(Space::Objects, raw, value)?),
            Key::Cfi | Key::Jfi => parsed.file = Some(self.named(Space::Files, raw, value)?),
            Key::Cfn | Key::Jfn => parsed.func = Some((raw, value)),
            _ => {
                parsed.is_call = key == Key::Calls;
                let name = match key {
                    Key::Calls => "calls",
                    Key::Jump => "jump",
                    _ => "jcnd",
                };
                parsed.count = Some(CountLine::parse(name, raw)?);
            }
        }
        Ok(())
    }

    fn named<'a>(&mut self, space: Space, raw: &'a [u8], value: &'a [u8]) -> Res<NameLine<'a>> {
        let (sym, nr) = self.name_value(space, value)?;
        Ok(NameLine { raw, sym, nr })
    }

    /// Native code whose lines are copied (`copies_verbatim`): the
    /// positions stay undecoded, the position line is copied after the
    /// group. The names are rewritten where the callee is JIT code (with
    /// the target's source line), the rest is copied; a call into a JIT
    /// function's middle is folded, its position line kept without costs
    /// (see [`folds`]).
    fn write_copied_group(
        &mut self,
        parsed: &Parsed,
        line: CountLine,
        (raw, text, terminated): (&[u8], &[u8], bool),
    ) -> Res {
        let callee = self.group_callee(parsed)?;
        self.cols.check(text)?;
        if parsed.is_call {
            self.note_call(callee, None, text)?;
        }
        if parsed.is_call && folds(callee) {
            self.stats.folded_calls += 1;
            self.forget_pos();
            let costs = self.cols.skip(text)?;
            self.note_continuation(resumed(callee), (self.part.who, None), costs)?;
            // Its position columns alone (a cost line of zeros): the
            // positions after it mean the same in input and output.
            let positions = self.cols.positions_only(text)?;
            return Ok(self.writer.out.verbatim(positions, true)?);
        }
        if parsed.is_call {
            self.write_callee_names(parsed, callee.ok_or("calls= without cfn=")?)?;
        } else {
            self.write_jump_names(parsed, callee, None)?;
        }
        match callee.map(|f| f.kind) {
            Some(kind @ FnKind::Jit { .. }) => {
                let target = lines_before(self.jit_target(line.target, kind), 1)?;
                self.emit().count_line(line, target, false)?;
            }
            _ => self.writer.out.verbatim(line.raw, true)?,
        }
        // The target was written against the input's state before the
        // position line, which is copied undecoded.
        self.forget_pos();
        let call = callee.filter(|_| parsed.is_call);
        let less = self.called_back_line(call, None, text)?;
        Ok(self
            .writer
            .out
            .verbatim(less.as_deref().unwrap_or(raw), terminated)?)
    }

    /// `cob=`/`cfi=` where the output's defaults are not the JIT
    /// function's own (`ident`), and its `cfn=`.
    fn write_jit_callee_names(&mut self, ident: Ident, callee: FnRef) -> Res {
        self.emit().callee_ident(ident)?;
        self.emit().fn_ref("cfn", callee)
    }

    /// A call or jump group, at its position line: the one place groups
    /// are written. In native code whose lines are copied, see
    /// [`write_copied_group`](Self::write_copied_group); anywhere else the
    /// positions are decoded (`site.rs`).
    pub(super) fn write_group(
        &mut self,
        group: &Group,
        raw: &[u8],
        text: &[u8],
        terminated: bool,
    ) -> Res {
        let parsed = self.parse_group(group)?;
        let line = parsed.count.ok_or("group without calls=/jump=")?;
        match self.copies_verbatim() {
            true => self.write_copied_group(&parsed, line, (raw, text, terminated)),
            false => self.write_decoded_group(&parsed, line, (raw, text, terminated)),
        }
    }

    /// `cob=`/`cfi=`/`cfn=` for the callee: a JIT callee's own object and
    /// file where the output's defaults differ; the input's lines (or
    /// explicit names where the defaults changed) for anything else.
    pub(super) fn write_callee_names(&mut self, parsed: &Parsed, callee: FnRef) -> Res {
        match callee.kind {
            FnKind::Jit { ident, .. } => return self.write_jit_callee_names(ident, callee),
            _ => {
                let file = parsed
                    .file
                    .as_ref()
                    .map_or(self.reader.current.file, |n| n.sym);
                self.keep_or_name(
                    "cob",
                    Space::Objects,
                    parsed.ob.as_ref(),
                    self.reader.current.ob,
                )?;
                self.keep_or_name("cfi", Space::Files, parsed.file.as_ref(), file)?;
            }
        }
        let (raw, _) = parsed.func.expect("a call has a cfn=");
        self.emit().function("cfn", raw, callee, true)
    }

    /// Keeps the input's `cob=`/`cfi=` line, or names the callee's
    /// object/file (`want`) where the output's default no longer fits.
    fn keep_or_name(&mut self, key: &str, space: Space, line: Option<&NameLine>, want: Sym) -> Res {
        let current = |c: &Current| match space {
            Space::Objects => c.ob,
            Space::Files => c.file,
        };
        match line {
            Some(named) => self.emit().input_name(space, named.raw, named.nr, true),
            None => self.emit().name_if_changed(key, space, want, current),
        }
    }

    /// The target of a call into JIT code from native code: decoded if it
    /// can be without reading back, else the pseudo-function's own address
    /// (callgrind names each one after its call target), with its source
    /// line: the line callgrind gave is replaced either way.
    pub(super) fn jit_target(&mut self, text: &[u8], callee: FnKind) -> Res<Pos> {
        let target = self.placed_target(text)?.unwrap_or_default();
        Ok(self.target_line(target, callee))
    }

    /// A call target in JIT pseudo-function `callee` with its source line:
    /// the line its kind holds where the target is the address it was
    /// named after (an unknown address is that one), else the line table's
    /// (`Naming::locate`).
    pub(super) fn target_line(&mut self, mut target: Pos, callee: FnKind) -> Pos {
        let FnKind::Jit {
            symbol, addr, line, ..
        } = callee
        else {
            unreachable!("a JIT callee")
        };
        if let Some(i) = self.cols.index(Column::Instr) {
            if target[i] == 0 {
                target[i] = addr;
            }
            if let (true, Some(li)) = (target[i] == addr, self.cols.index(Column::Line)) {
                target[li] = u64::from(line);
                return target;
            }
        }
        self.naming.locate(&self.cols, symbol, target).2
    }

    /// A call or jump target, where it can be placed without reading
    /// back: `None` for a relative one after the position was forgotten.
    pub(super) fn placed_target(&self, text: &[u8]) -> Res<Option<Pos>> {
        if let Some(pos) = self.quick_target(text) {
            return Ok(Some(pos));
        }
        if let Some(state) = self.reader.pos() {
            return Ok(Some(self.cols.decode(text, state)?.0));
        }
        match self.cols.decode_absolute(text) {
            Ok(decoded) => Ok(Some(decoded.0)),
            Err(Some(e)) => Err(Fail::Line(e)),
            Err(None) => Ok(None),
        }
    }

    /// A target of the common `instr line` form, after one blank, read in
    /// one pass (see [`quick::instr_line`]); `None` for any other, which
    /// [`decode_target`](Self::decode_target) reads.
    #[inline]
    fn quick_target(&self, text: &[u8]) -> Option<Pos> {
        if !self.cols.is_instr_line() {
            return None;
        }
        let text = text.strip_prefix(b" ")?;
        let (mut pos, (addr, line, _)) = match self.reader.pos().copied() {
            Some(state) => (state, quick::instr_line(text, &state)?),
            None => (Pos::default(), quick::absolute_instr_line(text)?),
        };
        (pos[0], pos[1]) = (addr, line);
        Some(pos)
    }
}

/// A call to a JIT range's address other than its start is not a new
/// activation: from inside the function, a jump callgrind saw as a call;
/// from elsewhere, a return into the middle of the function (V8's
/// out-of-line prologue, HotSpot's adapters) seen as a call. Either way the
/// callee's lines are already its self cost, and the arc would count an
/// activation twice.
pub(super) fn folds(callee: Option<FnRef>) -> bool {
    matches!(
        callee.map(|f| f.kind),
        Some(FnKind::Jit { entry: false, .. })
    )
}

/// The JIT function a folded call resumes, and the address.
pub(super) fn resumed(callee: Option<FnRef>) -> (SymbolId, u64) {
    match callee.map(|f| f.kind) {
        Some(FnKind::Jit { symbol, addr, .. }) => (symbol, addr),
        _ => unreachable!("a folded call's callee is JIT code"),
    }
}
