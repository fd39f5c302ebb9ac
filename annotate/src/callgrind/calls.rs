//! Call groups (`cob= cfi= cfn= calls=` + position line) and jump groups
//! (`jfi= jfn= jump=|jcnd=` + position line). A group is buffered up to its
//! `calls=`/`jump=` line. In native code whose positions are copied as they
//! are, it is written right there and its position line follows verbatim;
//! elsewhere it waits for the position line and is written as one unit:
//! file switches first, then the callee's names, then the call and its
//! position.

use super::ids::Sym;
use super::line::{Key, NameRef};
use super::position::{self, first_cost, Column, Pos};
use super::rewrite::{Block, Fail, FnKind, FnRef, Res, Rewriter, Space};

/// True for the keys that belong to a call or jump group.
pub fn is_group_key(key: Key) -> bool {
    matches!(
        key,
        Key::Cob | Key::Cfi | Key::Cfn | Key::Calls | Key::Jump | Key::Jcnd | Key::Jfi | Key::Jfn
    )
}

/// What the group waits for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Await {
    /// More group lines.
    #[default]
    Lines,
    /// The position line, to write the whole group then.
    Position,
    /// The position line, to copy it as it is (the group is written).
    Verbatim,
}

/// The buffered lines of one group.
#[derive(Debug, Default)]
pub struct Group {
    bytes: Vec<u8>,
    /// Each line's key, and where it and its value start and where it ends
    /// in `bytes`.
    lines: Vec<(Key, usize, usize, usize)>,
    awaiting: Await,
}

impl Group {
    /// Nothing buffered or awaited.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty() && self.awaiting == Await::Lines
    }

    /// The `calls=`/`jump=`/`jcnd=` line was seen: a position line is next.
    pub fn awaits_position(&self) -> bool {
        self.awaiting == Await::Position
    }

    /// The group is written; its position line is copied as it is.
    pub fn awaits_verbatim(&self) -> bool {
        self.awaiting == Await::Verbatim
    }

    /// Buffers line `raw` whose value (a suffix of it) is `value`.
    fn push(&mut self, key: Key, raw: &[u8], value: &[u8]) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(raw);
        let end = self.bytes.len();
        self.lines.push((key, start, end - value.len(), end));
    }

    /// The group was written by the fast lane; its position line is next.
    pub(super) fn await_verbatim(&mut self) {
        self.clear();
        self.awaiting = Await::Verbatim;
    }

    /// Forgets the group.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.lines.clear();
        self.awaiting = Await::Lines;
    }
}

/// One group line as input: the raw line and its name.
struct Named<'a> {
    raw: &'a [u8],
    sym: Sym,
    nr: NameRef<'a>,
}

/// A `calls=`/`jump=`/`jcnd=` line in parts.
#[derive(Clone, Copy)]
pub(super) struct CountLine<'a> {
    pub key: &'static str,
    pub raw: &'a [u8],
    pub count: &'a [u8],
    pub target: &'a [u8],
}

impl<'a> CountLine<'a> {
    /// Splits `raw` (`key=COUNT TARGET`), checking the count.
    pub fn parse(key: &'static str, raw: &'a [u8]) -> Res<Self> {
        let value = super::line::trim_start(&raw[key.len() + 1..]);
        let end = value
            .iter()
            .position(|&b| b == b' ' || b == b'\t')
            .unwrap_or(value.len());
        super::costs::check_count(&value[..end])?;
        Ok(CountLine {
            key,
            raw,
            count: &value[..end],
            target: &value[end..],
        })
    }
}

/// A parsed group.
#[derive(Default)]
struct Parsed<'a> {
    ob: Option<Named<'a>>,
    file: Option<Named<'a>>,
    func: Option<(&'a [u8], &'a [u8])>,
    /// The `calls=`/`jump=`/`jcnd=` line, its count and its target text.
    count: Option<CountLine<'a>>,
    is_call: bool,
}

impl Rewriter<'_> {
    /// A line of a call or jump group: `raw`, whose value is `value`.
    pub(super) fn group_line(&mut self, key: Key, raw: &[u8], value: &[u8]) -> Res {
        if !matches!(self.group.awaiting, Await::Lines) {
            return Err("expected a position line after calls=/jump=/jcnd=".into());
        }
        if key == Key::Calls && !self.group.lines.iter().any(|l| l.0 == Key::Cfn) {
            return Err("calls= without a cfn= before it".into());
        }
        self.group.push(key, raw, value);
        if !matches!(key, Key::Calls | Key::Jump | Key::Jcnd) {
            return Ok(());
        }
        if !(self.fast() && self.part.synced && !self.in_jit()) {
            self.group.awaiting = Await::Position;
            return Ok(());
        }
        let group = std::mem::take(&mut self.group);
        let result = self.write_group_early(&group);
        self.group = group;
        self.group.clear();
        self.group.awaiting = Await::Verbatim;
        result
    }

    fn in_jit(&self) -> bool {
        matches!(self.part.block, Block::Jit(_))
    }

    /// The position line of a group already written: copied as it is.
    pub(super) fn verbatim_group_position(
        &mut self,
        raw: &[u8],
        text: &[u8],
        terminated: bool,
    ) -> Res {
        self.cols.check(text)?;
        self.part.known = false;
        self.group.clear();
        Ok(self.out.verbatim(raw, terminated)?)
    }

    pub(super) fn finish_group(&mut self, raw: &[u8], text: &[u8], terminated: bool) -> Res {
        let group = std::mem::take(&mut self.group);
        let result = self.write_group(&group, raw, text, terminated);
        self.group = group;
        self.group.clear();
        result
    }

    /// Native code, output state equal to the input's: the names are
    /// rewritten where the callee is JIT code, the rest is copied.
    fn write_group_early(&mut self, group: &Group) -> Res {
        let parsed = self.parse_group(group)?;
        let line = parsed.count.ok_or("group without calls=/jump=")?;
        let callee = self.group_callee(&parsed)?;
        if parsed.is_call {
            let callee = callee.ok_or("calls= without cfn=")?;
            if let FnKind::Jit { .. } = callee.kind {
                return self.write_jit_call(callee, line);
            }
            self.write_callee_names(&parsed, callee)?;
        } else {
            self.write_jump_names(&parsed, callee, None)?;
            if let Some(kind @ FnKind::Jit { .. }) = callee.map(|f| f.kind) {
                let target = self.jit_target(line.target, kind)?;
                return self.write_count_line(line, target, false);
            }
        }
        Ok(self.out.verbatim(line.raw, true)?)
    }

    /// A call from native code into JIT code where the output's state
    /// equals the input's: the callee's own object and file, its name, and
    /// the target with its source line.
    pub(super) fn write_jit_call(&mut self, callee: FnRef, line: CountLine) -> Res {
        let FnKind::Jit { symbol, .. } = callee.kind else {
            unreachable!("a JIT callee")
        };
        self.write_jit_callee_names(symbol, callee)?;
        let target = self.jit_target(line.target, callee.kind)?;
        self.write_count_line(line, target, false)
    }

    /// `cob=`/`cfi=` where the output's defaults are not the JIT
    /// function's own, and its `cfn=`.
    fn write_jit_callee_names(&mut self, symbol: u32, callee: FnRef) -> Res {
        let (ob, fl) = self.jit_ident(symbol);
        self.name_if_changed("cob", Space::Objects, ob, self.part.out_ob)?;
        self.name_if_changed("cfi", Space::Files, fl, self.part.out_file)?;
        self.emit_jit_fn("cfn", callee)
    }

    /// Anywhere else: positions decoded, the site's line mapped in JIT
    /// code, calls inside one JIT function folded away.
    fn write_group(&mut self, group: &Group, raw: &[u8], text: &[u8], terminated: bool) -> Res {
        let parsed = self.parse_group(group)?;
        let line = parsed.count.ok_or("group without calls=/jump=")?;
        let target = self.decode_target(line.target)?;
        let callee = self.group_callee(&parsed)?;
        if parsed.is_call && self.folds(callee) {
            // Self cost already holds it: a jump inside one function.
            self.stats.folded_calls += 1;
            let (pos, costs) = self.decode(text)?;
            first_cost(costs)?;
            self.part.in_pos = pos;
            self.part.synced = false;
            return Ok(());
        }
        let site = match self.part.block {
            Block::Jit(symbol) => {
                let (pos, costs) = self.decode(text)?;
                first_cost(costs)?;
                self.part.in_pos = pos;
                let (file, out) = self.locate(symbol, pos);
                self.switch_file(file)?;
                Some((out, costs))
            }
            _ => None,
        };
        if parsed.is_call {
            self.write_callee_names(&parsed, callee.ok_or("calls= without cfn=")?)?;
        } else {
            let internal = matches!(
                (self.part.block, callee.map(|f| f.kind)),
                (Block::Jit(s), Some(FnKind::Jit { symbol, .. })) if s == symbol
            );
            self.write_jump_names(&parsed, callee.filter(|_| !internal), Some(target))?;
        }
        let mapped = self.map_target(target, callee);
        let unchanged = mapped == target && self.part.synced && site.is_none();
        self.write_count_line(line, mapped, unchanged)?;
        match site {
            Some((out, costs)) => self.write_position(out, costs),
            None => self.copy_position(raw, text, terminated),
        }
    }

    /// A call from JIT code to another pseudo-function of the same range
    /// that is not its entry: callgrind saw a jump as a call.
    fn folds(&self, callee: Option<FnRef>) -> bool {
        match (self.part.block, callee.map(|f| f.kind)) {
            (
                Block::Jit(caller),
                Some(FnKind::Jit {
                    symbol,
                    entry: false,
                    ..
                }),
            ) => caller == symbol,
            _ => false,
        }
    }

    fn group_callee(&mut self, parsed: &Parsed) -> Res<Option<FnRef>> {
        let object = match (&parsed.ob, parsed.is_call) {
            (Some(n), true) => n.sym,
            _ => self.part.in_ob,
        };
        parsed
            .func
            .map(|(_, value)| self.resolve_fn(value, object))
            .transpose()
    }

    fn parse_group<'g>(&mut self, group: &'g Group) -> Res<Parsed<'g>> {
        let mut parsed = Parsed::default();
        for &(key, start, value_start, end) in &group.lines {
            let (raw, value) = (&group.bytes[start..end], &group.bytes[value_start..end]);
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
        }
        Ok(parsed)
    }

    fn named<'a>(&mut self, space: Space, raw: &'a [u8], value: &'a [u8]) -> Res<Named<'a>> {
        let (sym, nr) = self.name_value(space, value)?;
        Ok(Named { raw, sym, nr })
    }

    /// `cob=`/`cfi=`/`cfn=` for the callee: a JIT callee's own object and
    /// file where the output's defaults differ; the input's lines (or
    /// explicit names where the defaults changed) for anything else.
    fn write_callee_names(&mut self, parsed: &Parsed, callee: FnRef) -> Res {
        match callee.kind {
            FnKind::Jit { symbol, .. } => return self.write_jit_callee_names(symbol, callee),
            _ => {
                let file = parsed.file.as_ref().map_or(self.part.in_file, |n| n.sym);
                self.keep_or_name(
                    "cob",
                    Space::Objects,
                    parsed.ob.as_ref(),
                    self.part.in_ob,
                    self.part.out_ob,
                )?;
                self.keep_or_name(
                    "cfi",
                    Space::Files,
                    parsed.file.as_ref(),
                    file,
                    self.part.out_file,
                )?;
            }
        }
        let (raw, _) = parsed.func.expect("a call has a cfn=");
        self.emit_fn("cfn", raw, callee, true)
    }

    /// `jfi=`/`jfn=` for a jump. In JIT code the target's file comes from
    /// the line table (`target` given); a jump into another JIT function
    /// names that function's file.
    fn write_jump_names(
        &mut self,
        parsed: &Parsed,
        target_fn: Option<FnRef>,
        target: Option<Pos>,
    ) -> Res {
        let jit_file = match target_fn.map(|f| f.kind) {
            Some(FnKind::Jit { symbol, .. }) => Some(self.jit_ident(symbol).1),
            _ => None,
        };
        match (self.part.block, target) {
            (Block::Jit(symbol), Some(target)) => {
                let file = jit_file.unwrap_or_else(|| self.locate(symbol, target).0);
                self.name_if_changed("jfi", Space::Files, file, self.part.out_file)?;
            }
            _ => match (jit_file, parsed.file.as_ref()) {
                (Some(file), _) => {
                    self.name_if_changed("jfi", Space::Files, file, self.part.out_file)?
                }
                (None, Some(named)) => {
                    self.emit_input_name(Space::Files, named.raw, named.nr, true)?
                }
                (None, None) => {}
            },
        }
        match (target_fn, parsed.func) {
            (Some(f), Some((raw, _))) => self.emit_fn("jfn", raw, f, true),
            _ => Ok(()),
        }
    }

    fn name_if_changed(&mut self, key: &str, space: Space, want: Sym, current: Sym) -> Res {
        if want != current {
            self.emit_sym(key, space, want)?;
        }
        Ok(())
    }

    /// Keeps the input's `cob=`/`cfi=` line, or names the callee's
    /// object/file explicitly where the output's default no longer fits.
    fn keep_or_name(
        &mut self,
        key: &str,
        space: Space,
        given: Option<&Named>,
        want: Sym,
        current: Sym,
    ) -> Res {
        match given {
            Some(named) => self.emit_input_name(space, named.raw, named.nr, true),
            None => self.name_if_changed(key, space, want, current),
        }
    }

    /// A call or jump target relative to the input's state (targets never
    /// move the state).
    fn decode_target(&mut self, text: &[u8]) -> Res<Pos> {
        if let Some(pos) = self.quick_target(text) {
            return Ok(pos);
        }
        if self.part.known {
            return Ok(self.cols.decode(text, &self.part.in_pos)?.0);
        }
        self.cols
            .decode_absolute(text)
            .map(|d| d.0)
            .map_err(|e| e.map_or(Fail::NeedsExact, Fail::Line))
    }

    /// A target of the common `instr line` form, after one blank, read in
    /// one pass (see [`position::instr_line`]); `None` for any other, which
    /// [`decode_target`](Self::decode_target) reads.
    #[inline]
    fn quick_target(&self, text: &[u8]) -> Option<Pos> {
        if !self.cols.is_instr_line() {
            return None;
        }
        let text = text.strip_prefix(b" ")?;
        let (mut pos, (addr, line, _)) = if self.part.known {
            (
                self.part.in_pos,
                position::instr_line(text, &self.part.in_pos)?,
            )
        } else {
            (Pos::default(), position::absolute_instr_line(text)?)
        };
        (pos[0], pos[1]) = (addr, line);
        Some(pos)
    }

    /// A target inside JIT code gets its source line (a JIT callee's, or
    /// any target of a jump in a JIT block).
    fn map_target(&mut self, target: Pos, callee: Option<FnRef>) -> Pos {
        if let Some(kind @ FnKind::Jit { .. }) = callee.map(|f| f.kind) {
            return self.jit_target_pos(target, kind);
        }
        match (self.part.block, self.cols.index(Column::Instr)) {
            (Block::Jit(symbol), Some(_)) => self.locate(symbol, target).1,
            _ => target,
        }
    }

    /// The target of a call into JIT code from native code: decoded if it
    /// can be, else the pseudo-function's own address (callgrind names each
    /// one after its call target), with its source line.
    fn jit_target(&mut self, text: &[u8], callee: FnKind) -> Res<Pos> {
        let target = match self.decode_target(text) {
            Ok(t) => t,
            Err(Fail::NeedsExact) => [0; 3],
            Err(e) => return Err(e),
        };
        Ok(self.jit_target_pos(target, callee))
    }

    /// A target in JIT pseudo-function `callee` with its source line: the
    /// line table's where addresses are known, else the function's own
    /// line.
    fn jit_target_pos(&mut self, mut target: Pos, callee: FnKind) -> Pos {
        let FnKind::Jit {
            symbol, addr, line, ..
        } = callee
        else {
            unreachable!("a JIT callee")
        };
        match (
            self.cols.index(Column::Instr),
            self.cols.index(Column::Line),
        ) {
            (Some(i), li) => {
                if target[i] == 0 {
                    target[i] = addr;
                }
                match li {
                    Some(li) if target[i] == addr => target[li] = u64::from(line),
                    _ => target = self.locate(symbol, target).1,
                }
                target
            }
            (None, Some(li)) => {
                target[li] = u64::from(self.table.symbol(symbol).line);
                target
            }
            (None, None) => target,
        }
    }

    /// The `calls=`/`jump=` line: as it was, or with its target written
    /// out (absolutely where the output's state is not known).
    fn write_count_line(&mut self, line: CountLine, target: Pos, unchanged: bool) -> Res {
        if unchanged {
            return Ok(self.out.verbatim(line.raw, true)?);
        }
        let mut text = std::mem::take(&mut self.buf);
        text.clear();
        text.extend_from_slice(line.count);
        text.push(b' ');
        let absolute = !self.part.known || self.part.absolute_next;
        self.cols
            .encode(&mut text, &target, &self.part.out_pos, absolute);
        let result = self.out.spec(line.key, &text);
        self.buf = text;
        Ok(result?)
    }
}
