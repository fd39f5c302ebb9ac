//! The meaning of the rewrite: reads a profile line by line and writes it
//! back with every JIT pseudo-function renamed, consistently for both
//! readers.
//!
//! Two views of the reader state are kept side by side: what a reader of
//! the *input* sees ([`reader`]) and what a reader of the *output* sees
//! ([`writer`], which also holds the output).
//! Lines are copied verbatim while the two agree; where they differ
//! (inside JIT blocks, and right after them) lines are re-encoded and
//! `ob=`/`fl=`/`cob=`/`cfi=` lines are added so every function resolves
//! to one (name, file, object) triple everywhere.
//!
//! One function per kind of line ([`Rewriter::line`] dispatches):
//!
//! | line | function | file |
//! |---|---|---|
//! | `version:` `events:` `positions:` `totals:` … | `header` | header.rs |
//! | `ob=` `fl=` `fi=` `fe=` | `spec` | function.rs |
//! | `fn=` | `function` | function.rs |
//! | `cob=` `cfi=` `cfn=` `calls=` `jfi=` `jfn=` `jump=` `jcnd=` | `group_line` (buffered in the `Reader`'s `Group`) | here |
//! | the position line after `calls=`/`jump=`/`jcnd=` | `finish_group` → `write_group` | call.rs (a jump's names: jump.rs; a target read back: recall.rs) |
//! | a cost line | `cost_line` | cost.rs (runs at one place: jit_run.rs) |
//! | blank, `#` comment | copied | here |
//!
//! The three parts, each a type of its own: [`reader`] (the input's id
//! tables, current names and position),
//! [`naming`] (what a name stands for: native code, a JIT range, an
//! address-named stub; and the object, file and line JIT code is written
//! under; no reader or output state) and [`writer`] (the output, its
//! state, and the functions that write names and positions). A name value
//! is resolved here (`name_value`, `resolve_fn`), where all three meet: the
//! input's ids are defined, the output's forgotten, and a function's kind
//! asked of the naming. The fast path (`fast/`) calls the same functions
//! for the lines it does not copy itself.

mod call;
mod cost;
mod escape;
mod fail;
mod function;
mod header;
pub(in crate::callgrind) mod ids;
mod jit_costs;
mod jit_run;
mod jump;
pub(in crate::callgrind) mod naming;
mod owner;
pub(in crate::callgrind) mod reader;
mod recall;
pub(in crate::callgrind) mod reentry;
mod site;
pub(in crate::callgrind) mod state;
#[cfg(test)]
mod tests;
pub(in crate::callgrind) mod writer;

use super::format::line::{classify, name_ref, Key, Line, NameRef};
use super::format::position::{Column, Columns};
use super::stats::{Ending, Stats};
use super::stream::out::Out;
use super::stream::shared::ReadAgain;
use crate::symbols::SymbolTable;
use escape::IdSpace;
use ids::Sym;
use jit_costs::JitCosts;
use naming::Named;
use reader::{FnEntry, Reader};
pub(in crate::callgrind) use recall::Recall;
use state::{Block, Part, Tracking};
use writer::Writer;

pub(in crate::callgrind) use fail::{lines_before, Fail, Res};
pub(in crate::callgrind) use naming::FnKind;
pub(in crate::callgrind) use reader::{FnRef, Space};

/// The rewriter: the part's reader states, the name tables, the JIT
/// names, the output and the counts.
pub(in crate::callgrind) struct Rewriter<'t> {
    /// What names stand for, and the names JIT code is written under.
    pub naming: naming::Naming<'t>,
    /// The input reader's state in the current part.
    pub reader: Reader,
    /// The output, and its reader's state in the current part.
    pub writer: Writer,
    /// The part's position columns.
    pub cols: Columns,
    pub part: Part,
    stats: Stats,
    /// Self cost per JIT symbol (on the hot path).
    jit_costs: JitCosts,
    tracking: Tracking,
    totals: header::Totals,
    /// A line without its newline was read (the input's last).
    cut_line: bool,
    /// Re-entry: noted in the first pass, taken out in the second.
    reentry: reentry::State,
    /// The input, to read back a stretch whose positions went undecoded.
    pub recall: Recall<'t>,
    /// JIT blocks' plain lines may go to [`jit_run`](Self::jit_run).
    pub jit_runs: bool,
}

impl<'t> Rewriter<'t> {
    pub(in crate::callgrind) fn new(
        table: &'t SymbolTable,
        image: Option<&'t str>,
        out: Out,
        tracking: Tracking,
        reentry: reentry::State,
        input: &'t dyn ReadAgain,
    ) -> Self {
        let mut naming = naming::Naming::new(table, image);
        let none = naming.names.intern(b"");
        Rewriter {
            naming,
            reader: Reader::new(none),
            writer: Writer::new(out, none),
            cols: Columns::default(),
            part: Part::default(),
            stats: Stats::default(),
            jit_costs: JitCosts::new(table.len()),
            tracking,
            totals: header::Totals::default(),
            cut_line: false,
            reentry,
            recall: Recall::new(input),
            jit_runs: true,
        }
    }

    /// True once the part's `events:` line was read (cost lines may come).
    pub(in crate::callgrind) fn in_body(&self) -> bool {
        self.totals.events_seen
    }

    /// Handles one line (without its line end); `terminated` is false for
    /// a last line without a newline.
    pub(in crate::callgrind) fn line(&mut self, raw: &[u8], terminated: bool) -> Res {
        self.cut_line |= !terminated && !raw.is_empty();
        let parsed = classify(raw)?;
        match parsed {
            Line::Spec { key, value } if reader::is_group_key(key) => {
                self.group_line(key, raw, value)
            }
            Line::Position(text) if self.reader.group.awaits_position() => {
                self.finish_group(raw, text, terminated)
            }
            _ if self.reader.group.awaits_position() => {
                Err("expected a position line after calls=/jump=/jcnd=".into())
            }
            _ if !self.reader.group.is_empty() => {
                Err("a call (cfn=/calls=) or jump (jump=/jcnd=) is not finished".into())
            }
            Line::Blank | Line::Comment => Ok(self.writer.out.verbatim(raw, terminated)?),
            Line::Header { key, value } => self.header(raw, key, value, terminated),
            Line::Spec { key, value } => self.spec(raw, key, value, terminated),
            Line::Position(text) => self.cost_line(raw, text, terminated),
        }
    }

    /// True inside a JIT block, or one named by address, whose plain lines
    /// may go to [`jit_run`](Self::jit_run).
    #[inline]
    pub(in crate::callgrind) fn takes_jit_runs(&self) -> bool {
        self.jit_runs && matches!(self.part.block, Block::Jit(_) | Block::Unnamed(_))
    }

    /// True for an LF position line that [`line`](Self::line) would hand
    /// to [`cost_line`](Self::cost_line) as it is (no call or jump open).
    #[inline]
    pub(in crate::callgrind) fn takes_position(&self, line: &[u8]) -> bool {
        super::format::line::starts_position(line)
            && line.last() != Some(&b'\r')
            && self.reader.group.is_empty()
    }

    /// Ends the rewrite: the counts, and the work of a second pass where
    /// re-entries are to be taken out of arcs (see `reentry`).
    pub(in crate::callgrind) fn finish(mut self) -> Res<(Stats, Option<reentry::Plan>)> {
        if !self.reader.group.is_empty() {
            return Err("file ends inside a call or jump".into());
        }
        self.end_block()?;
        self.stats.ending = match (self.cut_line, self.totals.part_complete) {
            (true, _) => Ending::CutLine,
            (false, false) => Ending::NoTotals,
            (false, true) => Ending::Complete,
        };
        self.close_part_totals();
        if let Some(why) = self.naming.symbols.take_failure() {
            return Err(Fail::Symbol(why));
        }
        self.writer.out.finish()?;
        self.stats.jit_cost = self.jit_costs.charged().collect();
        self.stats.has_instr = self.cols.index(Column::Instr).is_some();
        self.stats.has_line = self.cols.index(Column::Line).is_some();
        self.stats.live_images = self
            .naming
            .names
            .names()
            .filter(|n| naming::is_live_image(n))
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .collect();
        let plan = match &self.reentry.plan {
            Some(taken) => {
                (self.stats.reentry.unplaced, self.stats.reentry.resumed) = taken.unplaced();
                self.stats.reentry.entry_points = taken.entry_points();
                None
            }
            None => {
                let instr = self.cols.index(Column::Instr).is_some();
                let outside = self.naming.symbols.outside();
                self.reentry.noted.settle_ran();
                self.reentry.noted.plan(&self.naming.names, instr, outside)
            }
        };
        if let Some(plan) = &plan {
            (self.stats.reentry.unplaced, self.stats.reentry.resumed) = plan.unplaced();
        }
        Ok((self.stats, plan))
    }

    /// The current function is native code (neither JIT code nor an
    /// address-named stub that may jump into it): its lines are copied.
    pub(super) fn in_native_code(&self) -> bool {
        self.part.block == Block::Native
    }

    /// The one rule for copying an input line as it is, without decoding
    /// it: lazy tracking, the output's position state the input's
    /// (`synced`), and native code (none of its lines moves). The fast
    /// lane ([`lane_open`](Self::lane_open)), a call group in copied native
    /// code and a cost line all ask this.
    pub(in crate::callgrind) fn copies_verbatim(&self) -> bool {
        self.tracking == Tracking::Lazy && self.writer.synced && self.in_native_code()
    }

    /// True while the fast lane (`fast/`) may take lines: they are copied
    /// as they are ([`copies_verbatim`](Self::copies_verbatim)), no call or
    /// jump is being rewritten, and cost lines may come.
    #[inline]
    pub(in crate::callgrind) fn lane_open(&self) -> bool {
        self.copies_verbatim() && self.reader.group.is_empty() && self.in_body()
    }

    /// The output's object and function file are the input's: a `fn=`
    /// line means the same function in both.
    pub(in crate::callgrind) fn same_function_names(&self) -> bool {
        let (input, output) = (&self.reader.current, &self.writer.current);
        output.ob == input.ob && output.fl == input.fl
    }

    /// The output's object and current file are the input's: a call's
    /// `cob=`/`cfi=` defaults mean the same in both.
    pub(in crate::callgrind) fn same_call_defaults(&self) -> bool {
        let (input, output) = (&self.reader.current, &self.writer.current);
        output.ob == input.ob && output.file == input.file
    }

    /// Resolves an `ob`/`fl`-like value, recording a definition.
    pub(in crate::callgrind) fn name_value<'v>(
        &mut self,
        space: Space,
        value: &'v [u8],
    ) -> Res<(Sym, NameRef<'v>)> {
        let nr = name_ref(value)?;
        let sym = match (nr.id, nr.name) {
            (Some(id), Some(name)) => {
                let sym = self.naming.names.intern(name);
                self.reader.space_mut(space).define(id, sym);
                self.writer.defined.space_mut(space).remove(id);
                self.writer.escapes.defined(space.ids(), id)?;
                sym
            }
            (Some(id), None) => self
                .reader
                .name_of(space, id)
                .ok_or_else(|| format!("undefined {} id ({id})", space_word(space)))?,
            (None, name) => self.naming.names.intern(name.unwrap_or_default()),
        };
        Ok((sym, nr))
    }

    /// Resolves a `fn`-space value under object `object`.
    pub(in crate::callgrind) fn resolve_fn(&mut self, value: &[u8], object: Sym) -> Res<FnRef> {
        let nr = name_ref(value)?;
        match (nr.id, nr.name) {
            (Some(id), None) => {
                let e = *self
                    .reader
                    .fns
                    .get(id)
                    .ok_or_else(|| format!("undefined function id ({id})"))?;
                if e.object != object {
                    return Ok(self.rekind(id, e, object));
                }
                Ok(FnRef {
                    id: Some(id),
                    name: e.name,
                    kind: e.kind,
                    defines: false,
                    rekinded: false,
                })
            }
            (id, name) => {
                let name = name.unwrap_or_default();
                let (sym, kind) = (
                    self.naming.names.intern(name),
                    self.classify_fn(name, object),
                );
                if let Some(id) = id {
                    self.writer.escapes.defined(IdSpace::Functions, id)?;
                    self.writer.native_written.remove(id);
                    self.writer.defined.fns.remove(id);
                    let entry = FnEntry {
                        name: sym,
                        kind,
                        object,
                    };
                    self.reader.fns.insert(id, entry);
                }
                Ok(FnRef {
                    id,
                    name: sym,
                    kind,
                    defines: id.is_some(),
                    rekinded: false,
                })
            }
        }
    }

    /// Function id `id` (defined as `e`) referred to under `object`,
    /// another object than its definition's: classified again. Where that
    /// gives another kind (BEAM's JIT address names, which callgrind also
    /// puts under the runtime's object), the output's id means the other
    /// function, so this one is written by name.
    #[cold]
    fn rekind(&mut self, id: u64, e: FnEntry, object: Sym) -> FnRef {
        let name = self.naming.names.name(e.name).to_vec();
        let kind = self.classify_fn(&name, object);
        let rekinded = kind != e.kind;
        FnRef {
            id: (!rekinded).then_some(id),
            name: e.name,
            kind,
            defines: false,
            rekinded,
        }
    }

    /// The kind of function name `name` under `object` (see
    /// [`Naming::kind`](super::naming::Naming::kind)), a JIT function's
    /// name as the re-entry plan has it.
    fn classify_fn(&mut self, name: &[u8], object: Sym) -> FnKind {
        let jit = match self.naming.kind(name, object) {
            Named::Kind(kind) => return kind,
            Named::Jit(jit) => self.as_planned(jit),
        };
        if jit.ambiguous {
            self.stats.ambiguous.insert(jit.symbol);
        }
        let name = self.leveled_name(&jit);
        let name = self.naming.names.intern(&name);
        self.naming.jit_kind(&jit, name)
    }

    /// A line of a call or jump group: `raw`, whose value is `value`.
    pub(super) fn group_line(&mut self, key: Key, raw: &[u8], value: &[u8]) -> Res {
        if self.reader.group.awaits_position() {
            return Err("expected a position line after calls=/jump=/jcnd=".into());
        }
        if key == Key::Calls && !self.reader.group.has(Key::Cfn) {
            return Err("calls= without a cfn= before it".into());
        }
        self.reader.group.push(key, raw, value);
        Ok(())
    }
}

fn space_word(space: Space) -> &'static str {
    match space {
        Space::Objects => "object",
        Space::Files => "file",
    }
}
