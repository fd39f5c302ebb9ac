//! Call groups (`cob= cfi= cfn= calls=` + position line) and jump groups
//! (`jfi= jfn= jump=|jcnd=` + position line). A group is buffered until its
//! position line arrives, then written back as one unit: file switches
//! first, then the callee's names, then the call and its position.

use std::io::Write;

use super::ids::Sym;
use super::line::{classify, Key, Line, NameRef};
use super::position::{first_cost, Column, Pos};
use super::rewrite::{check_count, Block, FnKind, FnRef, Res, Rewriter, Space};

/// True for the keys that belong to a call or jump group.
pub fn is_group_key(key: Key) -> bool {
    matches!(
        key,
        Key::Cob | Key::Cfi | Key::Cfn | Key::Calls | Key::Jump | Key::Jcnd | Key::Jfi | Key::Jfn
    )
}

/// The buffered lines of one group.
#[derive(Debug, Default)]
pub struct Group {
    bytes: Vec<u8>,
    lines: Vec<(Key, usize, usize, bool)>,
    awaiting: bool,
}

impl Group {
    /// No line buffered.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// The `calls=`/`jump=`/`jcnd=` line was seen: a position line is next.
    pub fn awaits_position(&self) -> bool {
        self.awaiting
    }

    fn push(&mut self, key: Key, raw: &[u8], terminated: bool) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(raw);
        self.lines.push((key, start, self.bytes.len(), terminated));
        self.awaiting = matches!(key, Key::Calls | Key::Jump | Key::Jcnd);
    }

    fn clear(&mut self) {
        self.bytes.clear();
        self.lines.clear();
        self.awaiting = false;
    }
}

/// One group line as input: the raw line and its name, if any.
struct Named<'a> {
    raw: &'a [u8],
    terminated: bool,
    sym: Sym,
    nr: NameRef<'a>,
}

/// A `calls=`/`jump=`/`jcnd=` line: raw, terminated, count, target text.
#[derive(Clone, Copy)]
struct CountLine<'a>(&'a [u8], bool, &'a [u8], &'a [u8]);

/// A parsed group.
#[derive(Default)]
struct Parsed<'a> {
    ob: Option<Named<'a>>,
    file: Option<Named<'a>>,
    func: Option<(&'a [u8], bool, &'a [u8])>,
    count: Option<CountLine<'a>>,
    is_call: bool,
}

impl<W: Write> Rewriter<'_, W> {
    pub(super) fn group_line(&mut self, key: Key, raw: &[u8], _value: &[u8]) -> Res {
        if self.group.awaits_position() {
            return Err("expected a position line after calls=/jump=/jcnd=".into());
        }
        let calls_without_cfn =
            key == Key::Calls && !self.group.lines.iter().any(|l| l.0 == Key::Cfn);
        if calls_without_cfn {
            return Err("calls= without a cfn= before it".into());
        }
        // The terminator of a buffered line is restored when it is written.
        self.group.push(key, raw, true);
        Ok(())
    }

    pub(super) fn finish_group(&mut self, raw: &[u8], text: &[u8], terminated: bool) -> Res {
        let group = std::mem::take(&mut self.group);
        let result = self.write_group(&group, raw, text, terminated);
        self.group = group;
        self.group.clear();
        result
    }

    fn write_group(&mut self, group: &Group, raw: &[u8], text: &[u8], terminated: bool) -> Res {
        let parsed = self.parse_group(group)?;
        let CountLine(count_raw, count_term, count, target_text) =
            parsed.count.ok_or("group without calls=/jump=")?;
        check_count(count)?;
        let before = self.part.in_pos;
        let (target, _) = self.cols.decode(target_text, &before)?;
        let (pos, costs) = self.cols.decode(text, &before)?;
        first_cost(costs)?;
        self.part.in_pos = pos;
        let object = parsed.ob.as_ref().map_or(self.part.in_ob, |n| n.sym);
        let callee = match parsed.func {
            Some((_, _, value)) => Some(self.resolve_fn(
                value,
                if parsed.is_call {
                    object
                } else {
                    self.part.in_ob
                },
            )?),
            None => None,
        };
        let site = Site {
            raw,
            terminated,
            pos,
            before,
            costs,
            target,
            count,
            count_raw,
            count_term,
        };
        if parsed.is_call {
            self.write_call(parsed, callee.ok_or("calls= without cfn=")?, site)
        } else {
            self.write_jump(parsed, callee, site)
        }
    }

    fn parse_group<'g>(&mut self, group: &'g Group) -> Res<Parsed<'g>> {
        let mut parsed = Parsed::default();
        for &(key, start, end, terminated) in &group.lines {
            let raw = &group.bytes[start..end];
            let Line::Spec { value, .. } = classify(raw)? else {
                unreachable!("only spec lines are buffered")
            };
            match key {
                Key::Cob => parsed.ob = Some(self.named(Space::Objects, raw, value, terminated)?),
                Key::Cfi | Key::Jfi => {
                    parsed.file = Some(self.named(Space::Files, raw, value, terminated)?)
                }
                Key::Cfn | Key::Jfn => parsed.func = Some((raw, terminated, value)),
                _ => {
                    parsed.is_call = key == Key::Calls;
                    let value = super::line::trim_start(value);
                    let end = value
                        .iter()
                        .position(|&b| b == b' ' || b == b'\t')
                        .unwrap_or(value.len());
                    parsed.count = Some(CountLine(raw, terminated, &value[..end], &value[end..]));
                }
            }
        }
        Ok(parsed)
    }

    fn named<'a>(
        &mut self,
        space: Space,
        raw: &'a [u8],
        value: &'a [u8],
        terminated: bool,
    ) -> Res<Named<'a>> {
        let (sym, nr) = self.name_value(space, value)?;
        Ok(Named {
            raw,
            terminated,
            sym,
            nr,
        })
    }

    fn write_call(&mut self, parsed: Parsed, callee: FnRef, site: Site) -> Res {
        let block = self.part.block;
        if let (
            Block::Jit(caller),
            FnKind::Jit {
                symbol,
                entry: false,
                ..
            },
        ) = (block, callee.kind)
        {
            if caller == symbol {
                self.stats.folded_calls += 1; // a jump into itself, seen as a call
                return Ok(());
            }
        }
        let out_pos = self.caller_position(&site)?;
        let callee_file = parsed.file.as_ref().map_or(self.part.in_file, |n| n.sym);
        match callee.kind {
            FnKind::Jit { symbol, .. } => {
                let (ob, fl) = self.jit_ident(symbol);
                self.name_if_changed("cob", Space::Objects, ob, self.part.out_ob)?;
                self.name_if_changed("cfi", Space::Files, fl, self.part.out_file)?;
            }
            _ => {
                self.keep_or_name(
                    "cob",
                    Space::Objects,
                    parsed.ob,
                    self.part.in_ob,
                    self.part.out_ob,
                )?;
                self.keep_or_name(
                    "cfi",
                    Space::Files,
                    parsed.file,
                    callee_file,
                    self.part.out_file,
                )?;
            }
        }
        let (fn_raw, fn_term, _) = parsed.func.expect("checked by the caller");
        self.emit_fn("cfn", fn_raw, callee, fn_term)?;
        self.write_count("calls", &site, callee)?;
        self.write_site(&site, block, out_pos)
    }

    fn write_jump(&mut self, parsed: Parsed, target_fn: Option<FnRef>, site: Site) -> Res {
        let block = self.part.block;
        let internal = match (block, target_fn.map(|f| f.kind)) {
            (Block::Jit(s), Some(FnKind::Jit { symbol, .. })) => s == symbol,
            _ => false,
        };
        let out_pos = self.caller_position(&site)?;
        let key = if site.count_raw.starts_with(b"jcnd") {
            "jcnd"
        } else {
            "jump"
        };
        if let Block::Jit(symbol) = block {
            let (file, _) = self.locate(symbol, site.target);
            let target_file = match target_fn.map(|f| f.kind) {
                Some(FnKind::Jit { symbol: t, .. }) if !internal => self.jit_ident(t).1,
                _ => file,
            };
            self.name_if_changed("jfi", Space::Files, target_file, self.part.out_file)?;
        } else if let Some(named) = parsed.file {
            self.emit_input_name(Space::Files, named.raw, named.nr, named.terminated)?;
        }
        if let (Some(f), Some((raw, term, _)), false) = (target_fn, parsed.func, internal) {
            self.emit_fn("jfn", raw, f, term)?;
        }
        self.write_count(
            key,
            &site,
            target_fn.unwrap_or(FnRef {
                id: None,
                name: 0,
                kind: FnKind::Native,
            }),
        )?;
        self.write_site(&site, block, out_pos)
    }

    /// In a JIT block: the call site's output position, after switching
    /// the output's file to the site's source file.
    fn caller_position(&mut self, site: &Site) -> Res<Option<Pos>> {
        let Block::Jit(symbol) = self.part.block else {
            return Ok(None);
        };
        let (file, out) = self.locate(symbol, site.pos);
        self.switch_file(file)?;
        Ok(Some(out))
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
        given: Option<Named>,
        want: Sym,
        current: Sym,
    ) -> Res {
        match given {
            Some(named) => self.emit_input_name(space, named.raw, named.nr, named.terminated),
            None => self.name_if_changed(key, space, want, current),
        }
    }

    /// The `calls=`/`jump=` line, its target re-encoded where needed.
    fn write_count(&mut self, key: &str, site: &Site, target_fn: FnRef) -> Res {
        let mut target = site.target;
        let jit_target = match (target_fn.kind, self.part.block) {
            (FnKind::Jit { symbol, .. }, _) | (_, Block::Jit(symbol)) => Some(symbol),
            _ => None,
        };
        if let (Some(symbol), Some(_)) = (jit_target, self.cols.index(Column::Instr)) {
            target = self.locate(symbol, site.target).1;
        }
        if target == site.target && self.part.out_pos == site.before {
            return Ok(self.out.verbatim(site.count_raw, site.count_term)?);
        }
        self.buf.clear();
        self.buf.extend_from_slice(site.count);
        self.buf.push(b' ');
        let prev = self.part.out_pos;
        self.cols.encode(&mut self.buf, &target, &prev, false);
        let line = std::mem::take(&mut self.buf);
        self.out.spec(key, &line)?;
        self.buf = line;
        Ok(())
    }

    fn write_site(&mut self, site: &Site, block: Block, out_pos: Option<Pos>) -> Res {
        match (block, out_pos) {
            (Block::Jit(_), Some(pos)) => self.write_position(pos, site.costs),
            _ => self.copy_position(site.raw, site.pos, site.before, site.costs, site.terminated),
        }
    }
}

/// The position parts of a group.
struct Site<'a> {
    raw: &'a [u8],
    terminated: bool,
    pos: Pos,
    before: Pos,
    costs: &'a [u8],
    target: Pos,
    count: &'a [u8],
    count_raw: &'a [u8],
    count_term: bool,
}
