//! A call or jump group (`cob=`, `cfi=`, `cfn=`, then `calls=` or
//! `jump=`): its lines buffered by the reader until the position line,
//! then resolved against the reader's state for the writer.

use super::ids::Sym;
use super::reader::{FnRef, Group, Space};
use super::{Res, Rewriter};
use crate::callgrind::format::line::{CountLine, Key, NameRef};

/// True for the keys that belong to a call or jump group.
pub(super) fn is_group_key(key: Key) -> bool {
    matches!(
        key,
        Key::Cob | Key::Cfi | Key::Cfn | Key::Calls | Key::Jump | Key::Jcnd | Key::Jfi | Key::Jfn
    )
}

/// One group line as input: the raw line and its name.
pub(super) struct NameLine<'a> {
    pub raw: &'a [u8],
    pub sym: Sym,
    pub nr: NameRef<'a>,
}

/// A parsed group.
#[derive(Default)]
pub(super) struct Parsed<'a> {
    pub ob: Option<NameLine<'a>>,
    pub file: Option<NameLine<'a>>,
    pub func: Option<(&'a [u8], &'a [u8])>,
    /// The `calls=`/`jump=`/`jcnd=` line, its count and its target text.
    pub count: Option<CountLine<'a>>,
    pub is_call: bool,
}

impl Rewriter<'_> {
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

    pub(super) fn finish_group(&mut self, raw: &[u8], text: &[u8], terminated: bool) -> Res {
        let group = std::mem::take(&mut self.reader.group);
        let result = self.write_group(&group, raw, text, terminated);
        self.reader.group = group;
        self.reader.group.clear();
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
        for (key, raw, value) in group.lines() {
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

    fn named<'a>(&mut self, space: Space, raw: &'a [u8], value: &'a [u8]) -> Res<NameLine<'a>> {
        let (sym, nr) = self.name_value(space, value)?;
        Ok(NameLine { raw, sym, nr })
    }
}
