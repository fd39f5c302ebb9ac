//! Call groups (`cob= cfi= cfn= calls=` + position line) and jump groups
//! (`jfi= jfn= jump=|jcnd=` + position line). A group is buffered up to its
//! position line and written as one unit (`call.rs`): file switches
//! first, then the callee's names, then the call and its position.

use super::ids::Sym;
use super::reader::{FnRef, Space};
use super::{Res, Rewriter};
use crate::callgrind::format::line::{CountLine, Key, NameRef};

/// True for the keys that belong to a call or jump group.
pub(super) fn is_group_key(key: Key) -> bool {
    matches!(
        key,
        Key::Cob | Key::Cfi | Key::Cfn | Key::Calls | Key::Jump | Key::Jcnd | Key::Jfi | Key::Jfn
    )
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

    /// Buffers line `raw` whose value (a suffix of it) is `value`.
    fn push(&mut self, key: Key, raw: &[u8], value: &[u8]) {
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

/// One group line as input: the raw line and its name.
pub(super) struct Named<'a> {
    pub raw: &'a [u8],
    pub sym: Sym,
    pub nr: NameRef<'a>,
}

/// A parsed group.
#[derive(Default)]
pub(super) struct Parsed<'a> {
    pub ob: Option<Named<'a>>,
    pub file: Option<Named<'a>>,
    pub func: Option<(&'a [u8], &'a [u8])>,
    /// The `calls=`/`jump=`/`jcnd=` line, its count and its target text.
    pub count: Option<CountLine<'a>>,
    pub is_call: bool,
}

impl Rewriter<'_> {
    /// A line of a call or jump group: `raw`, whose value is `value`.
    pub(super) fn group_line(&mut self, key: Key, raw: &[u8], value: &[u8]) -> Res {
        if self.group.awaits_position() {
            return Err("expected a position line after calls=/jump=/jcnd=".into());
        }
        if key == Key::Calls && !self.group.lines.iter().any(|l| l.0 == Key::Cfn) {
            return Err("calls= without a cfn= before it".into());
        }
        self.group.push(key, raw, value);
        Ok(())
    }

    pub(super) fn finish_group(&mut self, raw: &[u8], text: &[u8], terminated: bool) -> Res {
        let group = std::mem::take(&mut self.group);
        let result = self.write_group(&group, raw, text, terminated);
        self.group = group;
        self.group.clear();
        result
    }

    pub(super) fn group_callee(&mut self, parsed: &Parsed) -> Res<Option<FnRef>> {
        let object = self.group_callee_object(parsed);
        parsed
            .func
            .map(|(_, value)| self.resolve_fn(value, object))
            .transpose()
    }

    /// The object of a group's callee: a call's `cob=`, else the input's.
    pub(super) fn group_callee_object(&self, parsed: &Parsed) -> Sym {
        match (&parsed.ob, parsed.is_call) {
            (Some(n), true) => n.sym,
            _ => self.reader.current.ob,
        }
    }

    pub(super) fn parse_group<'g>(&mut self, group: &'g Group) -> Res<Parsed<'g>> {
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
}
