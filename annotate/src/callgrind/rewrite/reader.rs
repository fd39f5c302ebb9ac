//! The input's reader state: what a reader of the input has as its id
//! tables, its current object and files, its position, and the call or
//! jump group it is reading (buffered up to its position line, then
//! written as one unit by `call.rs`); and names resolved against it
//! (`name_value`, `resolve_fn`; what a function name stands for comes
//! from [`naming`](super::naming)). Lines of the input change it, whether
//! they are copied or rewritten; the output's state (`writer.rs`) is kept
//! beside it, and where the two agree a line means the same in both.

use super::escape::IdSpace;
use super::ids::{IdMap, NameSpace, Sym};
use super::naming::{FnKind, Named};
use super::{Res, Rewriter};
use crate::callgrind::format::line::{name_ref, Key, NameRef};
use crate::callgrind::format::position::Pos;

/// The names a reader has as current: `ob=`, `fl=` (the function's file)
/// and `fi=`/`fe=` (the file of the cost lines).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::callgrind) struct Current {
    pub ob: Sym,
    pub fl: Sym,
    pub file: Sym,
}

impl Current {
    pub fn new(none: Sym) -> Self {
        Current {
            ob: none,
            fl: none,
            file: none,
        }
    }

    /// The names after a line setting `which` to `sym`.
    #[inline(always)]
    pub fn set(&mut self, which: Sets, sym: Sym) {
        match which {
            Sets::Object => self.ob = sym,
            Sets::FunctionFile => (self.fl, self.file) = (sym, sym),
            Sets::File => self.file = sym,
        }
    }
}

/// Which current name an `ob=`, `fl=` or `fi=`/`fe=` line sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::callgrind) enum Sets {
    /// `ob=`: the object.
    Object,
    /// `fl=`: the function's file (and so the current file).
    FunctionFile,
    /// `fi=`/`fe=`: the file of the cost lines.
    File,
}

impl Sets {
    /// The id space of the names it sets.
    pub fn space(self) -> Space {
        match self {
            Sets::Object => Space::Objects,
            Sets::FunctionFile | Sets::File => Space::Files,
        }
    }
}

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
    /// The position, where `pos_known` (see [`pos`](Self::pos)); else
    /// the last one known.
    pos: Pos,
    /// False where lines were copied without decoding them (lazy
    /// tracking).
    pos_known: bool,
    /// Where `pos_known` is false: the input offset from which position
    /// lines went undecoded.
    forgotten_at: u64,
    /// The call or jump group being read, up to its position line.
    pub group: Group,
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
            forgotten_at: 0,
            group: Group::default(),
        }
    }

    /// The ids of an object- or file-like name space.
    #[inline]
    pub fn space(&self, space: Space) -> &NameSpace {
        match space {
            Space::Objects => &self.obs,
            Space::Files => &self.files,
        }
    }

    /// [`space`](Self::space), to define ids in.
    pub fn space_mut(&mut self, space: Space) -> &mut NameSpace {
        match space {
            Space::Objects => &mut self.obs,
            Space::Files => &mut self.files,
        }
    }

    /// The name of object or file id `id`, if defined.
    #[inline]
    pub fn name_of(&self, space: Space, id: u64) -> Option<Sym> {
        self.space(space).ids.get(id).copied()
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

    /// Position lines from input offset `at` on are copied without
    /// decoding them.
    #[inline]
    pub fn forget_pos(&mut self, at: u64) {
        if self.pos_known {
            (self.pos_known, self.forgotten_at) = (false, at);
        }
    }

    /// Where position lines went undecoded (see
    /// [`forget_pos`](Self::forget_pos)).
    pub fn forgotten_at(&self) -> u64 {
        self.forgotten_at
    }
}

/// A function id's entry.
#[derive(Clone, Copy, Debug)]
pub(in crate::callgrind) struct FnEntry {
    pub name: Sym,
    pub kind: FnKind,
    /// The object `kind` was found under. Callgrind numbers function
    /// names, not functions: the id of a name may come back under
    /// another object (a call's `cob=` is the object of the code the call
    /// lands in), and there name another function.
    pub object: Sym,
}

/// A resolved `fn=`/`cfn=`/`jfn=` value.
#[derive(Clone, Copy, Debug)]
pub(in crate::callgrind) struct FnRef {
    pub id: Option<u64>,
    pub name: Sym,
    pub kind: FnKind,
    /// The value was `(id) name`: it defines the id.
    pub defines: bool,
    /// The id names another kind of function in the output (the same name
    /// under another object): the value is written by name, not by id.
    pub rekinded: bool,
}

impl FnRef {
    /// True where the output names this function otherwise than the input
    /// (a JIT function, a native one renamed after its JIT callers, or an
    /// id that means another function there): written by its new name.
    pub fn renamed(&self) -> bool {
        self.rekinded || matches!(self.kind, FnKind::Jit { .. } | FnKind::Renamed(_))
    }
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

/// The buffered lines of one group.
#[derive(Debug, Default)]
pub(in crate::callgrind) struct Group {
    bytes: Vec<u8>,
    /// Each line's key, and where it and its value start and where it ends
    /// in `bytes`.
    lines: Vec<(Key, usize, usize, usize)>,
}

impl Group {
    /// Nothing buffered.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// The `calls=`/`jump=`/`jcnd=` line was seen: a position line is next.
    pub fn awaits_position(&self) -> bool {
        let last = self.lines.last().map(|l| l.0);
        matches!(last, Some(Key::Calls | Key::Jump | Key::Jcnd))
    }

    /// Whether a line of `key` is buffered.
    pub fn has(&self, key: Key) -> bool {
        self.lines.iter().any(|l| l.0 == key)
    }

    /// The buffered lines: key, whole line and value.
    pub fn lines(&self) -> impl ExactSizeIterator<Item = (Key, &[u8], &[u8])> {
        let line = |&(key, start, value, end): &(Key, usize, usize, usize)| {
            (key, &self.bytes[start..end], &self.bytes[value..end])
        };
        self.lines.iter().map(line)
    }

    /// Buffers line `raw` whose value (a suffix of it) is `value`.
    pub(super) fn push(&mut self, key: Key, raw: &[u8], value: &[u8]) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(raw);
        let end = self.bytes.len();
        self.lines.push((key, start, end - value.len(), end));
    }

    /// Forgets the group.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.lines.clear();
    }
}

/// True for the keys that belong to a call or jump group.
pub(super) fn is_group_key(key: Key) -> bool {
    matches!(
        key,
        Key::Cob | Key::Cfi | Key::Cfn | Key::Calls | Key::Jump | Key::Jcnd | Key::Jfi | Key::Jfn
    )
}
