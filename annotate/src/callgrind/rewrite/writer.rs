//! The output's side: the lines written (`Out`), and what a reader of the
//! output has as its state: its current object and files, its position,
//! and which ids the output has defined. Kept beside the input reader's
//! state (`reader.rs`): where the two agree, a line means the same in
//! both and is copied as it is; where our own lines made them differ,
//! lines are re-encoded until they agree again.

use super::escape::{reads_as_id, Escapes, IdSpace};
use super::ids::{IdSet, Interner, Sym};
use super::naming::FnKind;
use super::reader::{Current, FnRef, Reader, Space};
use super::{Res, Rewriter};
use crate::callgrind::format::line::{CountLine, NameRef};
use crate::callgrind::format::position::{Columns, Pos};
use crate::callgrind::stream::out::Out;

/// The output, and its reader's state in the current part.
pub(in crate::callgrind) struct Writer {
    pub out: Out,
    /// Scratch space for composed lines.
    pub buf: Vec<u8>,
    /// The current object and files.
    pub current: Current,
    /// The position.
    pub pos: Pos,
    /// The position means the same as the input's: a relative position
    /// line may be copied as it is.
    pub synced: bool,
    /// The next position written must be absolute (the state is not one a
    /// relative line could follow).
    pub absolute_next: bool,
    /// Ids the output has defined as the input defines them.
    pub defined: Defined,
    /// Function ids of native functions the output has defined: the fast
    /// lane copies their references without looking further.
    pub native_written: IdSet,
    /// Ids given to names that read as ids.
    pub escapes: Escapes,
}

/// Ids the output has defined, per space (cleared where the input
/// defines an id again).
#[derive(Default)]
pub(in crate::callgrind) struct Defined {
    pub obs: IdSet,
    pub files: IdSet,
    pub fns: IdSet,
}

impl Defined {
    /// The object or file ids defined.
    pub fn space_mut(&mut self, space: Space) -> &mut IdSet {
        match space {
            Space::Objects => &mut self.obs,
            Space::Files => &mut self.files,
        }
    }

    /// The object or file ids defined.
    pub fn space(&self, space: Space) -> &IdSet {
        match space {
            Space::Objects => &self.obs,
            Space::Files => &self.files,
        }
    }
}

impl Writer {
    /// Writes to `out`; `none` is the empty name.
    pub fn new(out: Out, none: Sym) -> Self {
        Writer {
            out,
            buf: Vec::with_capacity(256),
            current: Current::new(none),
            pos: [0; 3],
            synced: true,
            absolute_next: false,
            defined: Defined::default(),
            native_written: IdSet::default(),
            escapes: Escapes::default(),
        }
    }

    /// A new part: its reader's state starts afresh.
    pub fn new_part(&mut self, none: Sym) {
        self.current = Current::new(none);
        (self.pos, self.synced, self.absolute_next) = ([0; 3], true, false);
        self.defined = Defined::default();
        self.native_written = IdSet::default();
        self.escapes = Escapes::default();
    }

    /// A position line was copied as it is: the output is at the input's
    /// position `pos`.
    #[inline]
    pub fn copied_position(&mut self, pos: Pos) {
        (self.pos, self.synced, self.absolute_next) = (pos, true, false);
    }

    /// We wrote a position line for `pos`, after the input's position was
    /// set to `input` (the line's own, decoded).
    #[inline]
    pub fn wrote(&mut self, pos: Pos, input: &Pos) {
        self.pos = pos;
        self.absolute_next = false;
        self.synced = *input == pos;
    }
}

/// The writer at work: the output, and what writing a line reads of the
/// rest of the rewrite (the input reader's ids and position, the names,
/// the part's position columns). Made by [`Rewriter::emit`].
pub(in crate::callgrind) struct Emit<'a> {
    writer: &'a mut Writer,
    reader: &'a Reader,
    names: &'a Interner,
    cols: &'a Columns,
}

impl Rewriter<'_> {
    /// The writer, to write lines with.
    #[inline]
    pub fn emit(&mut self) -> Emit<'_> {
        Emit {
            writer: &mut self.writer,
            reader: &self.reader,
            names: &self.naming.names,
            cols: &self.cols,
        }
    }
}

/// Writing lines: names as the output's id tables have them, positions
/// against the output's state.
impl Emit<'_> {
    /// Writes an input `ob`/`fl`-like line, turning a reference into a
    /// definition where the output has not defined the id yet.
    #[inline]
    pub fn input_name(&mut self, space: Space, raw: &[u8], nr: NameRef, terminated: bool) -> Res {
        let Some(id) = nr.id else {
            return Ok(self.writer.out.verbatim(raw, terminated)?);
        };
        let sym = self.reader.name_of(space, id).expect("resolved before");
        let first = self.writer.defined.space_mut(space).insert(id);
        if first && nr.name.is_none() {
            let key = std::str::from_utf8(&raw[..raw.iter().position(|&b| b == b'=').unwrap_or(0)])
                .unwrap_or("fl");
            let name = self.names.name(sym);
            return Ok(self.writer.out.spec_id(key, id, Some(name))?);
        }
        Ok(self.writer.out.verbatim(raw, terminated)?)
    }

    /// Writes `key=` naming `sym`: by an id the input defined for that
    /// name if any (defining it if needed), else as a plain string.
    #[inline]
    pub fn sym(&mut self, key: &str, space: Space, sym: Sym) -> Res {
        let Some(id) = self.reader.space(space).first_id(sym) else {
            return self.plain(key, space.ids(), sym);
        };
        let first = self.writer.defined.space_mut(space).insert(id);
        let name = first.then(|| self.names.name(sym));
        Ok(self.writer.out.spec_id(key, id, name)?)
    }

    /// Writes `key=` naming `sym` where the input has no id for it: as a
    /// plain string, or with an id of its own where the string would read
    /// as an id (see `escape`).
    fn plain(&mut self, key: &str, space: IdSpace, sym: Sym) -> Res {
        let name = self.names.name(sym);
        if !reads_as_id(name) {
            return Ok(self.writer.out.spec(key, name)?);
        }
        let (id, first) = self.writer.escapes.id_for(space, sym);
        Ok(self.writer.out.spec_id(key, id, first.then_some(name))?)
    }

    /// `cob=`/`cfi=` of a JIT callee whose object and file are `ident`,
    /// each where the output's current one differs.
    pub fn callee_ident(&mut self, ident: super::naming::Ident) -> Res {
        self.name_if_changed("cob", Space::Objects, ident.object, |c| c.ob)?;
        self.name_if_changed("cfi", Space::Files, ident.file, |c| c.file)
    }

    /// Writes a `fn`-space line for `f`: the JIT name for JIT functions,
    /// else the input line (a reference becomes a definition if needed).
    #[inline]
    pub fn function(&mut self, key: &str, raw: &[u8], f: FnRef, terminated: bool) -> Res {
        if f.renamed() {
            return self.fn_ref(key, f);
        }
        let first = f.id.is_some_and(|id| self.first_use(id));
        match f.id {
            Some(id) if first && !f.defines => {
                let name = self.names.name(f.name);
                Ok(self.writer.out.spec_id(key, id, Some(name))?)
            }
            _ => Ok(self.writer.out.verbatim(raw, terminated)?),
        }
    }

    /// Writes a `fn`-space line for `f` by its id where it has one (the
    /// name too where the output has not defined it), else by the name it
    /// is written under: a JIT function's or a renamed native one's new
    /// name, anything else's own.
    #[inline]
    pub fn fn_ref(&mut self, key: &str, f: FnRef) -> Res {
        let name = match f.kind {
            FnKind::Jit { name, .. } | FnKind::Renamed(name) => name,
            FnKind::Native | FnKind::Unnamed(_) => f.name,
        };
        match f.id {
            Some(id) => {
                let name = self.first_use(id).then(|| self.names.name(name));
                Ok(self.writer.out.spec_id(key, id, name)?)
            }
            None => self.plain(key, IdSpace::Functions, name),
        }
    }

    /// Writes a `fn`-space line naming `name` without an id of the input's.
    pub fn named_fn(&mut self, key: &str, name: Sym) -> Res {
        self.plain(key, IdSpace::Functions, name)
    }

    /// Marks function id `id` as written; true the first time.
    fn first_use(&mut self, id: u64) -> bool {
        debug_assert!(self.reader.fns.get(id).is_some(), "resolved before");
        self.writer.defined.fns.insert(id)
    }

    /// Switches the output's current file with `fi=`/`fe=`.
    pub fn switch_file(&mut self, file: Sym) -> Res {
        if file == self.writer.current.file {
            return Ok(());
        }
        let key = if file == self.writer.current.fl {
            "fe"
        } else {
            "fi"
        };
        self.sym(key, Space::Files, file)?;
        self.writer.current.file = file;
        Ok(())
    }

    /// Writes a position line for `pos` (relative to the output state,
    /// absolute where that is unknown) followed by `costs`.
    #[inline]
    pub fn position(&mut self, pos: Pos, costs: &[u8]) -> Res {
        let (cols, prev, absolute) = (self.cols, &self.writer.pos, self.writer.absolute_next);
        self.writer.out.composed(|buf| {
            cols.encode(buf, &pos, prev, absolute);
            if !costs.is_empty() {
                buf.push(b' ');
                buf.extend_from_slice(costs);
            }
        })?;
        self.writer.wrote(pos, self.reader.last_pos());
        Ok(())
    }

    /// Writes `key=` naming `want` where the output's current name
    /// (`current` picks which) is another.
    pub fn name_if_changed(
        &mut self,
        key: &str,
        space: Space,
        want: Sym,
        current: impl Fn(&Current) -> Sym,
    ) -> Res {
        if want != current(&self.writer.current) {
            self.sym(key, space, want)?;
        }
        Ok(())
    }

    /// The `calls=`/`jump=` line: as it was, or with its target written
    /// out (absolutely where the output's state is not known).
    pub fn count_line(&mut self, line: CountLine, target: Pos, unchanged: bool) -> Res {
        if unchanged {
            return Ok(self.writer.out.verbatim(line.raw, true)?);
        }
        let mut text = std::mem::take(&mut self.writer.buf);
        text.clear();
        text.extend_from_slice(line.count);
        text.push(b' ');
        let absolute = self.reader.pos().is_none() || self.writer.absolute_next;
        self.cols
            .encode(&mut text, &target, &self.writer.pos, absolute);
        let result = self.writer.out.spec(line.key, &text);
        self.writer.buf = text;
        Ok(result?)
    }
}
