//! The streaming rewriter: reads a profile line by line and writes it back
//! with every JIT pseudo-function renamed, consistently for both readers.
//!
//! Two views of the reader state are kept side by side: what a reader of
//! the *input* sees (`in_*`) and what a reader of the *output* sees
//! (`out_*`). Lines are copied verbatim while the two agree; where they
//! differ (inside JIT blocks, and right after them) lines are re-encoded
//! and `ob=`/`fl=`/`cob=`/`cfi=` lines are added so every function
//! resolves to one (name, file, object) triple everywhere.

use std::io;

use super::driver::Mode;
use super::emit::Out;
use super::ids::{IdMap, Interner, NameSpace, Sym};
use super::line::{classify, Key, Line};
use super::position::{Column, Columns, Pos};
use super::stats::Stats;
use crate::symbols::SymbolTable;

/// A failure inside one line's handling.
pub(super) enum Fail {
    /// The line is invalid.
    Line(String),
    /// Fast mode cannot place a relative position: use exact mode.
    NeedsExact,
    /// Writing failed.
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
        /// The address the pseudo-function was named after.
        addr: u64,
        /// The source line at `addr` (calls mostly target it).
        line: u32,
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
    /// The value was `(id) name`: it defines the id.
    pub defines: bool,
}

/// Reader state of one part (ids and positions restart at each part).
pub(super) struct Part {
    pub obs: NameSpace,
    pub files: NameSpace,
    pub fns: IdMap<FnEntry>,
    /// Function ids of native functions the output has defined: the fast
    /// lane copies their references without looking further.
    pub native_written: super::ids::IdSet,
    pub in_ob: Sym,
    pub in_fl: Sym,
    pub in_file: Sym,
    pub out_ob: Sym,
    pub out_fl: Sym,
    pub out_file: Sym,
    pub in_pos: Pos,
    pub out_pos: Pos,
    /// `in_pos` is tracked (always in exact mode; fast mode forgets it
    /// while it copies native cost lines).
    pub known: bool,
    /// The output's position state means the same as the input's.
    pub synced: bool,
    pub block: Block,
    /// The next position written must be absolute.
    pub absolute_next: bool,
}

impl Part {
    fn new(none: Sym) -> Self {
        Part {
            obs: NameSpace::default(),
            files: NameSpace::default(),
            fns: IdMap::default(),
            native_written: Default::default(),
            in_ob: none,
            in_fl: none,
            in_file: none,
            out_ob: none,
            out_fl: none,
            out_file: none,
            in_pos: [0; 3],
            out_pos: [0; 3],
            known: true,
            synced: true,
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

pub(super) struct Rewriter<'t> {
    pub table: &'t SymbolTable,
    pub out: Out,
    pub names: Interner,
    pub cols: Columns,
    pub part: Part,
    pub group: super::calls::Group,
    /// Call lines the fast lane holds back.
    pub held: super::lane::HeldCall,
    /// The last symbol table answer and the addresses it holds for.
    pub last_found: Option<super::costs::Located>,
    pub stats: Stats,
    pub unknown: Sym,
    pub buf: Vec<u8>,
    pub jit_ids: Vec<Option<(Sym, Sym)>>,
    /// Self cost per JIT symbol (a vector: this is on the hot path).
    pub jit_costs: Vec<Option<u64>>,
    pub file_syms: Vec<Option<Sym>>,
    mode: Mode,
    events_seen: bool,
    /// `totals:` of finished parts plus the current part's `totals:`/`summary:`.
    totals: (u64, Option<u64>),
}

impl<'t> Rewriter<'t> {
    pub(super) fn new(table: &'t SymbolTable, output: super::pipe::Sender, mode: Mode) -> Self {
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
            held: Default::default(),
            last_found: None,
            stats: Stats::default(),
            unknown,
            buf: Vec::with_capacity(256),
            jit_ids: vec![None; table.symbols().len()],
            jit_costs: vec![None; table.symbols().len()],
            file_syms: Vec::new(),
            mode,
            events_seen: false,
            totals: (0, None),
        }
    }

    /// Whether positions may be copied without decoding them.
    pub(super) fn fast(&self) -> bool {
        self.mode == Mode::Fast
    }

    /// True while the fast lane may take lines (see `lane`):
    /// fast mode, native code, output state equal to the input's, and no
    /// call or jump being rewritten.
    pub(super) fn lane_open(&self) -> bool {
        self.fast()
            && self.part.synced
            && self.part.block == Block::Native
            && (self.group.is_empty() || self.group.awaits_verbatim())
            && self.events_seen
    }

    pub(super) fn line(&mut self, raw: &[u8], terminated: bool) -> Res {
        let parsed = classify(raw)?;
        match parsed {
            Line::Spec { key, value } if super::calls::is_group_key(key) => {
                self.group_line(key, raw, value)
            }
            Line::Position(text) if self.group.awaits_position() => {
                self.finish_group(raw, text, terminated)
            }
            Line::Position(text) if self.group.awaits_verbatim() => {
                self.verbatim_group_position(raw, text, terminated)
            }
            _ if self.group.awaits_position() || self.group.awaits_verbatim() => {
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

    /// True for an LF position line that [`line`](Self::line) would hand
    /// to [`cost_line`](Self::cost_line) as it is (no call or jump open).
    #[inline]
    pub(super) fn takes_position(&self, line: &[u8]) -> bool {
        super::line::starts_position(line) && line.last() != Some(&b'\r') && self.group.is_empty()
    }

    pub(super) fn finish(mut self) -> Res<Stats> {
        if !self.group.is_empty() {
            return Err("file ends inside a call or jump".into());
        }
        self.end_block()?;
        self.close_part_totals();
        self.out.finish()?;
        let costs = self.jit_costs.iter().enumerate();
        self.stats.jit_cost = costs.filter_map(|(i, c)| Some((i as u32, (*c)?))).collect();
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
            self.close_part_totals();
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
            b"totals" | b"summary" => {
                self.end_block()?;
                let first = value
                    .split(|b| b.is_ascii_whitespace())
                    .next()
                    .unwrap_or_default();
                let value = super::line::parse_u64(first)
                    .ok_or("expected a number after totals:/summary:")?;
                // totals: wins over summary: (it is exactly the self cost).
                if key == b"totals" || self.totals.1.is_none() {
                    self.totals.1 = Some(value);
                }
            }
            _ => {}
        }
        Ok(self.out.verbatim(raw, terminated)?)
    }

    fn close_part_totals(&mut self) {
        self.totals.0 += self.totals.1.take().unwrap_or(0);
        self.stats.total = self.totals.0;
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
        self.part.absolute_next = !self.part.synced;
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
}
