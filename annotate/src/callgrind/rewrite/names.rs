//! Names on the way through: id tables, JIT renames, and writing names so
//! that every function resolves to one identity in both readers.

use super::escape::{reads_as_id, IdSpace};
use super::ids::Sym;
use super::naming::{FnKind, Named};
use super::{Res, Rewriter};
use crate::callgrind::format::line::{name_ref, NameRef};

/// A function id's entry.
#[derive(Clone, Copy, Debug)]
pub(in crate::callgrind) struct FnEntry {
    pub name: Sym,
    pub kind: FnKind,
}

/// A resolved `fn=`/`cfn=`/`jfn=` value.
#[derive(Clone, Copy, Debug)]
pub(in crate::callgrind) struct FnRef {
    pub id: Option<u64>,
    pub name: Sym,
    pub kind: FnKind,
    /// The value was `(id) name`: it defines the id.
    pub defines: bool,
}

/// Which name space an `ob`/`fl`-like line uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::callgrind) enum Space {
    Objects,
    Files,
}

impl Space {
    /// The id space of its names.
    fn ids(self) -> IdSpace {
        match self {
            Space::Objects => IdSpace::Objects,
            Space::Files => IdSpace::Files,
        }
    }
}

impl Rewriter<'_> {
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

    /// Writes an input `ob`/`fl`-like line, turning a reference into a
    /// definition where the output has not defined the id yet.
    pub(in crate::callgrind) fn emit_input_name(
        &mut self,
        space: Space,
        raw: &[u8],
        nr: NameRef,
        terminated: bool,
    ) -> Res {
        let Some(id) = nr.id else {
            return Ok(self.writer.out.verbatim(raw, terminated)?);
        };
        let sym = self.reader.name_of(space, id).expect("resolved before");
        let first = self.writer.defined.space_mut(space).insert(id);
        if first && nr.name.is_none() {
            let key = std::str::from_utf8(&raw[..raw.iter().position(|&b| b == b'=').unwrap_or(0)])
                .unwrap_or("fl");
            let name = self.naming.names.name(sym);
            return Ok(self.writer.out.spec_id(key, id, Some(name))?);
        }
        Ok(self.writer.out.verbatim(raw, terminated)?)
    }

    /// Writes `key=` naming `sym`: by an id the input defined for that
    /// name if any (defining it if needed), else as a plain string.
    pub(in crate::callgrind) fn emit_sym(&mut self, key: &str, space: Space, sym: Sym) -> Res {
        let Some(id) = self.reader.space_mut(space).first_id(sym) else {
            return self.emit_plain(key, space.ids(), sym);
        };
        let first = self.writer.defined.space_mut(space).insert(id);
        let name = first.then(|| self.naming.names.name(sym));
        Ok(self.writer.out.spec_id(key, id, name)?)
    }

    /// Writes `key=` naming `sym` where the input has no id for it: as a
    /// plain string, or with an id of its own where the string would read
    /// as an id (see `escape`).
    fn emit_plain(&mut self, key: &str, space: IdSpace, sym: Sym) -> Res {
        let name = self.naming.names.name(sym);
        if !reads_as_id(name) {
            return Ok(self.writer.out.spec(key, name)?);
        }
        let (id, first) = self.writer.escapes.id_for(space, sym);
        Ok(self.writer.out.spec_id(key, id, first.then_some(name))?)
    }

    /// Resolves a `fn`-space value under object `object`.
    pub(in crate::callgrind) fn resolve_fn(&mut self, value: &[u8], object: Sym) -> Res<FnRef> {
        let nr = name_ref(value)?;
        match (nr.id, nr.name) {
            (Some(id), None) => {
                let e = self
                    .reader
                    .fns
                    .get(id)
                    .ok_or_else(|| format!("undefined function id ({id})"))?;
                Ok(FnRef {
                    id: Some(id),
                    name: e.name,
                    kind: e.kind,
                    defines: false,
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
                    self.reader.fns.insert(id, FnEntry { name: sym, kind });
                }
                Ok(FnRef {
                    id,
                    name: sym,
                    kind,
                    defines: id.is_some(),
                })
            }
        }
    }

    /// The kind of function name `name` under `object` (see
    /// [`Naming::kind`](super::naming::Naming::kind)), a JIT function's name as the re-entry plan
    /// has it.
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

    /// Writes a `fn`-space line for `f`: the JIT name for JIT functions,
    /// else the input line (a reference becomes a definition if needed).
    pub(in crate::callgrind) fn emit_fn(
        &mut self,
        key: &str,
        raw: &[u8],
        f: FnRef,
        terminated: bool,
    ) -> Res {
        if let FnKind::Jit { .. } | FnKind::Renamed(_) = f.kind {
            return self.emit_fn_ref(key, f);
        }
        let first = f.id.is_some_and(|id| self.first_use(id));
        match f.id {
            Some(id) if first && !f.defines => {
                let name = self.naming.names.name(f.name);
                Ok(self.writer.out.spec_id(key, id, Some(name))?)
            }
            _ => Ok(self.writer.out.verbatim(raw, terminated)?),
        }
    }

    /// Writes a `fn`-space line for `f` by its id where it has one (the
    /// name too where the output has not defined it), else by the name it
    /// is written under: a JIT function's or a renamed native one's new
    /// name, anything else's own.
    pub(in crate::callgrind) fn emit_fn_ref(&mut self, key: &str, f: FnRef) -> Res {
        let name = match f.kind {
            FnKind::Jit { name, .. } | FnKind::Renamed(name) => name,
            FnKind::Native | FnKind::Unnamed(_) => f.name,
        };
        match f.id {
            Some(id) => {
                let name = self.first_use(id).then(|| self.naming.names.name(name));
                Ok(self.writer.out.spec_id(key, id, name)?)
            }
            None => self.emit_plain(key, IdSpace::Functions, name),
        }
    }

    /// Writes a `fn`-space line naming `name` without an id of the input's.
    pub(super) fn emit_named_fn(&mut self, key: &str, name: Sym) -> Res {
        self.emit_plain(key, IdSpace::Functions, name)
    }

    /// Marks function id `id` as written; true the first time.
    fn first_use(&mut self, id: u64) -> bool {
        debug_assert!(self.reader.fns.get(id).is_some(), "resolved before");
        self.writer.defined.fns.insert(id)
    }
}

fn space_word(space: Space) -> &'static str {
    match space {
        Space::Objects => "object",
        Space::Files => "file",
    }
}
