//! The input's reader state: what a reader of the input has as its id
//! tables, its current object and files, and its position; and names
//! resolved against it (`name_value`, `resolve_fn`, what a function id
//! stands for from [`naming`](super::naming)). Lines of the input change
//! it, whether they are copied or rewritten; the output's state
//! (`writer.rs`) is kept beside it, and where the two agree a line means
//! the same in both.

use super::escape::IdSpace;
use super::ids::{IdMap, NameSpace, Sym};
use super::naming::{FnKind, Named};
use super::state::Current;
use super::{Res, Rewriter};
use crate::callgrind::format::line::{name_ref, NameRef};
use crate::callgrind::format::position::Pos;

/// The input reader's state in one part (ids restart at each part).
pub(in crate::callgrind) struct Reader {
    /// Object ids: their names.
    pub obs: NameSpace,
    /// File ids: their names.
    pub files: NameSpace,
    /// Function ids: their names and kinds.
    pub fns: IdMap<FnEntry>,
    /// The current object and files.
    pub current: Current,
    /// The position, where `pos_known` (see [`pos`](Self::pos)).
    pos: Pos,
    /// False where lines were copied without decoding them (lazy
    /// tracking).
    pos_known: bool,
}

impl Reader {
    /// The state at a part's start; `none` is the empty name.
    pub fn new(none: Sym) -> Self {
        Reader {
            obs: NameSpace::default(),
            files: NameSpace::default(),
            fns: IdMap::default(),
            current: Current::new(none),
            pos: [0; 3],
            pos_known: true,
        }
    }

    /// The ids of an object- or file-like name space.
    pub fn space_mut(&mut self, space: Space) -> &mut NameSpace {
        match space {
            Space::Objects => &mut self.obs,
            Space::Files => &mut self.files,
        }
    }

    /// The name of object or file id `id`, if defined.
    #[inline]
    pub fn name_of(&self, space: Space, id: u64) -> Option<Sym> {
        let names = match space {
            Space::Objects => &self.obs,
            Space::Files => &self.files,
        };
        names.ids.get(id).copied()
    }

    /// The position; `None` where lines were copied without decoding them.
    #[inline]
    pub fn pos(&self) -> Option<&Pos> {
        self.pos_known.then_some(&self.pos)
    }

    /// The position last decoded, known or not.
    pub fn last_pos(&self) -> &Pos {
        &self.pos
    }

    /// The reader moved to `pos`.
    #[inline]
    pub fn set_pos(&mut self, pos: Pos) {
        (self.pos, self.pos_known) = (pos, true);
    }

    /// A position line was copied without decoding it.
    pub fn forget_pos(&mut self) {
        self.pos_known = false;
    }
}

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
    pub(super) fn ids(self) -> IdSpace {
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
}

fn space_word(space: Space) -> &'static str {
    match space {
        Space::Objects => "object",
        Space::Files => "file",
    }
}
