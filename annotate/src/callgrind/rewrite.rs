//! The streaming rewriter: reads a profile line by line and writes it back
//! with every JIT pseudo-function renamed, consistently for both readers.
//!
//! Two views of the reader state are kept side by side: what a reader of
//! the *input* sees (`in_*`) and what a reader of the *output* sees
//! (`out_*`). Lines are copied verbatim while the two agree; where they
//! differ (inside JIT blocks, and right after them) lines are re-encoded
//! and `ob=`/`fl=`/`cob=`/`cfi=` lines are added so every function
//! resolves to one (name, file, object) triple everywhere.

use std::io::{self, BufRead, Read, Write};

use super::emit::Out;
use super::fnname;
use super::ids::{IdMap, Interner, NameSpace, Sym};
use super::line::{self, classify, name_ref, Key, Line, NameRef};
use super::position::{first_cost, Column, Columns, Pos};
use super::stats::Stats;
use crate::symbols::SymbolTable;

/// Longest line accepted; longer ones are an error, not an allocation.
const MAX_LINE: u64 = 16 << 20;

/// Why a rewrite stopped. Nothing it wrote should be kept.
#[derive(Debug)]
pub enum RewriteError {
    /// The input is not a valid callgrind profile at this line.
    Parse {
        /// 1-based line number.
        line: u64,
        /// What was wrong.
        message: String,
    },
    /// Reading or writing failed.
    Io(io::Error),
}

impl std::fmt::Display for RewriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RewriteError::Parse { line, message } => write!(f, "line {line}: {message}"),
            RewriteError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for RewriteError {}

/// A failure inside one line's handling.
pub(super) enum Fail {
    Line(String),
    Io(io::Error),
}

impl From<String> for Fail {
    fn from(s: String) -> Self {
        Fail::Line(s)
    }
}

impl From<&str> for Fail {
    fn from(s: &str) -> Self {
        Fail::Line(s.to_string())
    }
}

impl From<io::Error> for Fail {
    fn from(e: io::Error) -> Self {
        Fail::Io(e)
    }
}

pub(super) type Res<T = ()> = Result<T, Fail>;

/// Rewrites one profile from `input` to `output` with the symbols of
/// `table`; returns what it did. With an empty table the output equals
/// the input byte for byte (CRLF line ends become LF).
pub fn rewrite<R: BufRead, W: Write>(
    mut input: R,
    output: W,
    table: &SymbolTable,
) -> Result<Stats, RewriteError> {
    let mut rw = Rewriter::new(table, output);
    let mut buf = Vec::with_capacity(256);
    let mut line_no = 0;
    loop {
        buf.clear();
        let n = (&mut input)
            .take(MAX_LINE + 1)
            .read_until(b'\n', &mut buf)
            .map_err(RewriteError::Io)?;
        if n == 0 {
            break;
        }
        line_no += 1;
        let at = |message: String| RewriteError::Parse {
            line: line_no,
            message,
        };
        if n as u64 > MAX_LINE {
            return Err(at(format!("line longer than {} MiB", MAX_LINE >> 20)));
        }
        let terminated = buf.last() == Some(&b'\n');
        let content = buf.strip_suffix(b"\n").unwrap_or(&buf);
        let content = content.strip_suffix(b"\r").unwrap_or(content);
        rw.line(content, terminated).map_err(|f| match f {
            Fail::Line(m) => at(m),
            Fail::Io(e) => RewriteError::Io(e),
        })?;
    }
    let end = |f| match f {
        Fail::Line(message) => RewriteError::Parse {
            line: line_no,
            message,
        },
        Fail::Io(e) => RewriteError::Io(e),
    };
    rw.finish().map_err(end)
}

/// Which function the current cost lines belong to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Block {
    /// Not a JIT function (or no function yet).
    Native,
    /// An address-named function under `???` outside every JIT range.
    Unnamed(u64),
    /// A renamed JIT function: the symbol's index.
    Jit(u32),
}

/// What a function id stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum FnKind {
    Native,
    /// A native function whose caller context names JIT code.
    Renamed(Sym),
    Unnamed(u64),
    Jit {
        symbol: u32,
        name: Sym,
        entry: bool,
    },
}

/// A function id's entry.
#[derive(Clone, Copy, Debug)]
pub(super) struct FnEntry {
    pub name: Sym,
    pub kind: FnKind,
    pub emitted: bool,
}

/// A resolved `fn=`/`cfn=`/`jfn=` value.
#[derive(Clone, Copy, Debug)]
pub(super) struct FnRef {
    pub id: Option<u64>,
    pub name: Sym,
    pub kind: FnKind,
}

/// Reader state of one part (ids and positions restart at each part).
pub(super) struct Part {
    pub obs: NameSpace,
    pub files: NameSpace,
    pub fns: IdMap<FnEntry>,
    pub in_ob: Sym,
    pub in_fl: Sym,
    pub in_file: Sym,
    pub out_ob: Sym,
    pub out_fl: Sym,
    pub out_file: Sym,
    pub in_pos: Pos,
    pub out_pos: Pos,
    pub block: Block,
    pub absolute_next: bool,
}

impl Part {
    fn new(none: Sym) -> Self {
        Part {
            obs: NameSpace::default(),
            files: NameSpace::default(),
            fns: IdMap::default(),
            in_ob: none,
            in_fl: none,
            in_file: none,
            out_ob: none,
            out_fl: none,
            out_file: none,
            in_pos: [0; 3],
            out_pos: [0; 3],
            block: Block::Native,
            absolute_next: false,
        }
    }
}

/// Which name space an `ob`/`fl`-like line uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Space {
    Objects,
    Files,
}

pub(super) struct Rewriter<'t, W: Write> {
    pub table: &'t SymbolTable,
    pub out: Out<W>,
    pub names: Interner,
    pub cols: Columns,
    pub part: Part,
    pub group: super::calls::Group,
    pub stats: Stats,
    pub unknown: Sym,
    pub buf: Vec<u8>,
    jit_ids: Vec<Option<(Sym, Sym)>>,
    file_syms: Vec<Option<Sym>>,
    events_seen: bool,
}

impl<'t, W: Write> Rewriter<'t, W> {
    fn new(table: &'t SymbolTable, output: W) -> Self {
        let mut names = Interner::default();
        let none = names.intern(b"");
        let unknown = names.intern(b"???");
        Rewriter {
            table,
            out: Out::new(output),
            names,
            cols: Columns::default(),
            part: Part::new(none),
            group: Default::default(),
            stats: Stats::default(),
            unknown,
            buf: Vec::with_capacity(256),
            jit_ids: vec![None; table.symbols().len()],
            file_syms: Vec::new(),
            events_seen: false,
        }
    }

    fn line(&mut self, raw: &[u8], terminated: bool) -> Res {
        let parsed = classify(raw)?;
        match parsed {
            Line::Spec { key, value } if super::calls::is_group_key(key) => {
                self.group_line(key, raw, value)
            }
            Line::Position(text) if self.group.awaits_position() => {
                self.finish_group(raw, text, terminated)
            }
            _ if self.group.awaits_position() => {
                Err("expected a position line after calls=/jump=/jcnd=".into())
            }
            _ if !self.group.is_empty() => {
                Err("a call (cfn=/calls=) or jump (jump=/jcnd=) is not finished".into())
            }
            Line::Blank | Line::Comment => Ok(self.out.verbatim(raw, terminated)?),
            Line::Header { key, value } => self.header(raw, key, value, terminated),
            Line::Spec { key, value } => self.spec(raw, key, value, terminated),
            Line::Position(text) => self.cost_line(raw, text, terminated),
        }
    }

    fn finish(mut self) -> Res<Stats> {
        if !self.group.is_empty() {
            return Err("file ends inside a call or jump".into());
        }
        self.end_block()?;
        self.out.finish()?;
        self.stats.has_instr = self.cols.index(Column::Instr).is_some();
        self.stats.has_line = self.cols.index(Column::Line).is_some();
        Ok(self.stats)
    }

    fn header(&mut self, raw: &[u8], key: &[u8], value: &[u8], terminated: bool) -> Res {
        const PART_START: [&[u8]; 7] = [
            b"version",
            b"creator",
            b"pid",
            b"cmd",
            b"part",
            b"thread",
            b"positions",
        ];
        if self.events_seen && (PART_START.contains(&key) || key == b"events") {
            self.end_block()?;
            self.part = Part::new(self.part_none());
            self.cols = Columns::default();
            self.events_seen = false;
        }
        match key {
            b"positions" => self.cols = Columns::parse(value)?,
            b"events" => {
                self.events_seen = true;
                self.stats.parts += 1;
                let names = value
                    .split(|b| b.is_ascii_whitespace())
                    .filter(|w| !w.is_empty());
                self.stats.events = names
                    .map(|w| String::from_utf8_lossy(w).into_owned())
                    .collect();
            }
            b"totals" | b"summary" => self.end_block()?,
            _ => {}
        }
        Ok(self.out.verbatim(raw, terminated)?)
    }

    fn part_none(&mut self) -> Sym {
        self.names.intern(b"")
    }

    fn spec(&mut self, raw: &[u8], key: Key, value: &[u8], terminated: bool) -> Res {
        match key {
            Key::Ob | Key::Fl => {
                self.end_block()?;
                self.part.block = Block::Native;
                let space = if key == Key::Ob {
                    Space::Objects
                } else {
                    Space::Files
                };
                let (sym, nr) = self.name_value(space, value)?;
                self.emit_input_name(space, raw, nr, terminated)?;
                if key == Key::Ob {
                    (self.part.in_ob, self.part.out_ob) = (sym, sym);
                } else {
                    (
                        self.part.in_fl,
                        self.part.in_file,
                        self.part.out_fl,
                        self.part.out_file,
                    ) = (sym, sym, sym, sym);
                }
                Ok(())
            }
            Key::Fi | Key::Fe => {
                let (sym, nr) = self.name_value(Space::Files, value)?;
                self.part.in_file = sym;
                if let Block::Jit(_) = self.part.block {
                    return Ok(()); // JIT blocks get their files from the line table
                }
                self.emit_input_name(Space::Files, raw, nr, terminated)?;
                self.part.out_file = sym;
                Ok(())
            }
            Key::Fn => self.function(raw, value, terminated),
            _ => {
                self.stats.unknown_lines += 1;
                Ok(self.out.verbatim(raw, terminated)?)
            }
        }
    }

    /// Resolves an `ob`/`fl`-like value, recording a definition.
    pub(super) fn name_value<'v>(
        &mut self,
        space: Space,
        value: &'v [u8],
    ) -> Res<(Sym, NameRef<'v>)> {
        let nr = name_ref(value)?;
        let table = match space {
            Space::Objects => &mut self.part.obs,
            Space::Files => &mut self.part.files,
        };
        let sym = match (nr.id, nr.name) {
            (Some(id), Some(name)) => {
                let sym = self.names.intern(name);
                table.define(id, sym);
                sym
            }
            (Some(id), None) => {
                table
                    .ids
                    .get(id)
                    .ok_or_else(|| format!("undefined {} id ({id})", space_word(space)))?
                    .sym
            }
            (None, name) => self.names.intern(name.unwrap_or_default()),
        };
        Ok((sym, nr))
    }

    /// Writes an input `ob`/`fl`-like line, turning a reference into a
    /// definition where the output has not defined the id yet.
    pub(super) fn emit_input_name(
        &mut self,
        space: Space,
        raw: &[u8],
        nr: NameRef,
        terminated: bool,
    ) -> Res {
        let Some(id) = nr.id else {
            return Ok(self.out.verbatim(raw, terminated)?);
        };
        let table = self.space_mut(space);
        let entry = table.ids.get_mut(id).expect("resolved before");
        let first = !std::mem::replace(&mut entry.emitted, true);
        let sym = entry.sym;
        if first && nr.name.is_none() {
            let key = std::str::from_utf8(&raw[..raw.iter().position(|&b| b == b'=').unwrap_or(0)])
                .unwrap_or("fl");
            let name = self.names.name(sym).to_vec();
            return Ok(self.out.spec_id(key, id, Some(&name))?);
        }
        Ok(self.out.verbatim(raw, terminated)?)
    }

    /// Writes `key=` naming `sym`: by an id the input defined for that
    /// name if any (defining it if needed), else as a plain string.
    pub(super) fn emit_sym(&mut self, key: &str, space: Space, sym: Sym) -> Res {
        let table = self.space_mut(space);
        let Some(&id) = table.first_id.get(&sym) else {
            let name = self.names.name(sym).to_vec();
            return Ok(self.out.spec(key, &name)?);
        };
        let entry = table
            .ids
            .get_mut(id)
            .expect("first_id points at a defined id");
        let first = !std::mem::replace(&mut entry.emitted, true);
        let name = first.then(|| self.names.name(sym).to_vec());
        Ok(self.out.spec_id(key, id, name.as_deref())?)
    }

    fn space_mut(&mut self, space: Space) -> &mut NameSpace {
        match space {
            Space::Objects => &mut self.part.obs,
            Space::Files => &mut self.part.files,
        }
    }

    /// Resolves a `fn`-space value under object `object`.
    pub(super) fn resolve_fn(&mut self, value: &[u8], object: Sym) -> Res<FnRef> {
        let nr = name_ref(value)?;
        match (nr.id, nr.name) {
            (Some(id), None) => {
                let e = self
                    .part
                    .fns
                    .get(id)
                    .ok_or_else(|| format!("undefined function id ({id})"))?;
                Ok(FnRef {
                    id: Some(id),
                    name: e.name,
                    kind: e.kind,
                })
            }
            (id, name) => {
                let name = name.unwrap_or_default();
                let (sym, kind) = (self.names.intern(name), self.classify_fn(name, object));
                if let Some(id) = id {
                    self.part.fns.insert(
                        id,
                        FnEntry {
                            name: sym,
                            kind,
                            emitted: false,
                        },
                    );
                }
                Ok(FnRef {
                    id,
                    name: sym,
                    kind,
                })
            }
        }
    }

    fn classify_fn(&mut self, name: &[u8], object: Sym) -> FnKind {
        if object != self.unknown {
            return match fnname::rename_callers(name, self.table) {
                Some(new) => FnKind::Renamed(self.names.intern(&new)),
                None => FnKind::Native,
            };
        }
        if let Some(jit) = fnname::rename(name, self.table) {
            if jit.ambiguous {
                self.stats.ambiguous.insert(jit.symbol);
            }
            let name = self.names.intern(&jit.name);
            return FnKind::Jit {
                symbol: jit.symbol,
                name,
                entry: jit.entry,
            };
        }
        match fnname::address(name) {
            Some((addr, _)) => FnKind::Unnamed(addr),
            None => FnKind::Native,
        }
    }

    /// Writes a `fn`-space line for `f`: the JIT name for JIT functions,
    /// else the input line (a reference becomes a definition if needed).
    pub(super) fn emit_fn(&mut self, key: &str, raw: &[u8], f: FnRef, terminated: bool) -> Res {
        let first = match f.id {
            Some(id) => {
                let entry = self.part.fns.get_mut(id).expect("resolved before");
                !std::mem::replace(&mut entry.emitted, true)
            }
            None => false,
        };
        match (f.kind, f.id) {
            (FnKind::Jit { name, .. } | FnKind::Renamed(name), Some(id)) => {
                let name = first.then(|| self.names.name(name).to_vec());
                Ok(self.out.spec_id(key, id, name.as_deref())?)
            }
            (FnKind::Jit { name, .. } | FnKind::Renamed(name), None) => {
                let name = self.names.name(name).to_vec();
                Ok(self.out.spec(key, &name)?)
            }
            (_, Some(id)) if first && name_ref(&raw[key.len() + 1..])?.name.is_none() => {
                let name = self.names.name(f.name).to_vec();
                Ok(self.out.spec_id(key, id, Some(&name))?)
            }
            _ => Ok(self.out.verbatim(raw, terminated)?),
        }
    }

    fn function(&mut self, raw: &[u8], value: &[u8], terminated: bool) -> Res {
        self.end_block()?;
        let f = self.resolve_fn(value, self.part.in_ob)?;
        let (ob, fl) = match f.kind {
            FnKind::Jit { symbol, .. } => self.jit_ident(symbol),
            _ => (self.part.in_ob, self.part.in_fl),
        };
        if self.part.out_ob != ob {
            self.emit_sym("ob", Space::Objects, ob)?;
            self.part.out_ob = ob;
        }
        if self.part.out_fl != fl {
            self.emit_sym("fl", Space::Files, fl)?;
            (self.part.out_fl, self.part.out_file) = (fl, fl);
        }
        self.emit_fn("fn", raw, f, terminated)?;
        // Callgrind starts every function with absolute positions; so do we
        // wherever our own lines made the output's state differ.
        self.part.absolute_next = self.part.out_pos != self.part.in_pos;
        self.part.block = match f.kind {
            FnKind::Jit { symbol, .. } => {
                self.part.absolute_next = true;
                Block::Jit(symbol)
            }
            FnKind::Unnamed(addr) => Block::Unnamed(addr),
            FnKind::Native | FnKind::Renamed(_) => Block::Native,
        };
        Ok(())
    }

    /// Leaves a JIT block with the output's file back at the function's.
    fn end_block(&mut self) -> Res {
        if matches!(self.part.block, Block::Jit(_)) && self.part.out_file != self.part.out_fl {
            self.emit_sym("fe", Space::Files, self.part.out_fl)?;
            self.part.out_file = self.part.out_fl;
        }
        Ok(())
    }

    /// (object, file) names of a JIT symbol.
    pub(super) fn jit_ident(&mut self, symbol: u32) -> (Sym, Sym) {
        if let Some(ids) = self.jit_ids[symbol as usize] {
            return ids;
        }
        let s = self.table.symbol(symbol);
        let object = self
            .names
            .intern(self.table.sources()[s.source].object.as_bytes());
        let file = match s.file {
            Some(f) => self.file_sym(f),
            None => self.names.intern(b"<jit>"),
        };
        self.jit_ids[symbol as usize] = Some((object, file));
        (object, file)
    }

    fn file_sym(&mut self, file: u32) -> Sym {
        let i = file as usize;
        if self.file_syms.len() <= i {
            self.file_syms.resize(i + 1, None);
        }
        *self.file_syms[i]
            .get_or_insert_with(|| self.names.intern(self.table.file(file).as_bytes()))
    }

    /// The output file and position for a position inside JIT block
    /// `symbol`: the line table's row for the address, else the
    /// function's declaration line.
    pub(super) fn locate(&mut self, symbol: u32, pos: Pos) -> (Sym, Pos) {
        let own = self.jit_ident(symbol).1;
        let Some(li) = self.cols.index(Column::Line) else {
            return (self.part.out_file, pos);
        };
        let mut out = pos;
        let Some(addr) = self.cols.index(Column::Instr).map(|i| pos[i]) else {
            out[li] = u64::from(self.table.symbol(symbol).line);
            return (own, out);
        };
        let Some(hit) = self.table.lookup(addr) else {
            return (own, pos);
        };
        let s = self.table.symbol(hit.symbol);
        match s.row_at(addr) {
            Some(row) => {
                out[li] = u64::from(row.line);
                (self.file_sym(row.file), out)
            }
            None => {
                out[li] = u64::from(s.line);
                (self.jit_ident(hit.symbol).1, out)
            }
        }
    }

    /// Switches the output's current file with `fi=`/`fe=`.
    pub(super) fn switch_file(&mut self, file: Sym) -> Res {
        if file == self.part.out_file {
            return Ok(());
        }
        let key = if file == self.part.out_fl { "fe" } else { "fi" };
        self.emit_sym(key, Space::Files, file)?;
        self.part.out_file = file;
        Ok(())
    }

    /// Writes a position line for `pos` (relative to the output state)
    /// followed by `costs`, and moves the output state.
    pub(super) fn write_position(&mut self, pos: Pos, costs: &[u8]) -> Res {
        self.buf.clear();
        self.cols.encode(
            &mut self.buf,
            &pos,
            &self.part.out_pos,
            self.part.absolute_next,
        );
        if !costs.is_empty() {
            self.buf.push(b' ');
            self.buf.extend_from_slice(costs);
        }
        self.out.raw_line(&self.buf)?;
        self.part.out_pos = pos;
        self.part.absolute_next = false;
        Ok(())
    }

    fn cost_line(&mut self, raw: &[u8], text: &[u8], terminated: bool) -> Res {
        let before = self.part.in_pos;
        let (pos, costs) = self.cols.decode(text, &before)?;
        let cost = first_cost(costs)?;
        self.part.in_pos = pos;
        self.stats.total += cost;
        match self.part.block {
            Block::Jit(symbol) => {
                *self.stats.jit_cost.entry(symbol).or_default() += cost;
                let (file, out) = self.locate(symbol, pos);
                self.switch_file(file)?;
                self.write_position(out, costs)
            }
            block => {
                if let Block::Unnamed(addr) = block {
                    *self.stats.unnamed_cost.entry(addr).or_default() += cost;
                }
                self.copy_position(raw, pos, before, costs, terminated)
            }
        }
    }

    /// Copies a position line outside JIT blocks: verbatim while the
    /// output's position state agrees with the input's, else re-encoded.
    pub(super) fn copy_position(
        &mut self,
        raw: &[u8],
        pos: Pos,
        before: Pos,
        costs: &[u8],
        terminated: bool,
    ) -> Res {
        if self.part.out_pos == before && !self.part.absolute_next {
            self.part.out_pos = pos;
            return Ok(self.out.verbatim(raw, terminated)?);
        }
        self.write_position(pos, costs)
    }
}

fn space_word(space: Space) -> &'static str {
    match space {
        Space::Objects => "object",
        Space::Files => "file",
    }
}

/// Checks a count field (`calls=` count, `jcnd=` taken/executed).
pub(super) fn check_count(token: &[u8]) -> Res {
    let ok = token
        .split(|&b| b == b'/')
        .all(|n| line::parse_u64(n).is_some());
    if ok {
        Ok(())
    } else {
        Err(format!("bad count '{}'", String::from_utf8_lossy(token)).into())
    }
}
