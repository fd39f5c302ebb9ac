//! The input's reader state: what a reader of the input has as its id
//! tables, its current object and files, its position, and the call or
//! jump group it is reading (buffered up to its position line, then
//! written as one unit by `call.rs`). Lines of the input change it,
//! whether they are copied or rewritten; the output's state (`writer.rs`)
//! is kept beside it, and where the two agree a line means the same in
//! both. Names are resolved against it by the rewriter (`mod.rs`), which
//! holds both states and the naming.

use super::escape::IdSpace;
use super::ids::{IdMap, NameSpace, Sym};
use super::naming::FnKind;
use crate::callgrind::format::line::Key;
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

    /// The name of function id `id` where `object` is the one it was
    /// defined under (else the id may name another function there: see
    /// [`FnEntry::object`]).
    #[inline(always)]
    pub fn fn_under(&self, id: u64, object: Sym) -> Option<Sym> {
        let e = self.fns.get(id)?;
        (e.object == object).then_some(e.name)
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
