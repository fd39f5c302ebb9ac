//! The fast lane's name lines: `ob=`, `fl=`, `fi=`/`fe=` and
//! `fn=` of native code, copied as they are where the output's state
//! equals the input's. Only their effect on both reader states is applied
//! here; the driver copies the bytes. Whatever is unsure gives `None`,
//! and the rewriter sees the line.

use crate::callgrind::format::quick::IdKey;
use crate::callgrind::rewrite::ids::Sym;
use crate::callgrind::rewrite::reader::Sets;
use crate::callgrind::rewrite::reentry::Who;
use crate::callgrind::rewrite::state::Block;
use crate::callgrind::rewrite::{FnKind, Rewriter, Space};

/// What the fast path did with a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Pass {
    /// Handled: the output line is the input line.
    Copied,
    /// A position line copied (undecoded): the driver notes where the
    /// input's position was forgotten.
    CopiedPosition,
    /// A call's `cob=`/`cfi=`/`cfn=`/`calls=` line, held until the callee
    /// is known to be native (then copied as it is).
    Held,
    /// Not for the lane: the rewriter must see it, after the held lines.
    Declined,
}

/// A name line in its id form (`key=(id)`, the common one once names are
/// defined), without parsing the value again: `fn=` (`line` whole), `ob=`,
/// `fl=`, `fi=`/`fe=`.
pub(super) fn pass_name_id(
    rw: &mut Rewriter<'_>,
    key: IdKey,
    id: u64,
    line: &[u8],
) -> Option<Pass> {
    let (which, space) = match key {
        IdKey::Fn => return pass_function(rw, &line[3..], Some(id)),
        IdKey::Ob => (Sets::Object, Space::Objects),
        IdKey::Fl => (Sets::FunctionFile, Space::Files),
        IdKey::Fi => (Sets::File, Space::Files),
        IdKey::Cob | IdKey::Cfi | IdKey::Cfn => return None,
    };
    set_name(rw, which, written_id(rw, space, id)?)
}

/// `ob=`, `fl=` or `fi=`/`fe=` (`which`): kept as written where the
/// value can be (a definition, marked as written; a plain name; an id
/// the output has defined).
pub(super) fn pass_name(rw: &mut Rewriter<'_>, which: Sets, value: &[u8]) -> Option<Pass> {
    let space = which.space();
    let (sym, defines) = known_name(rw, space, value)?;
    if let Some(id) = defines {
        mark_written(rw, space, id)?;
    }
    set_name(rw, which, sym)
}

/// `fn=` of a native function, when no object or file line is owed;
/// `id` if the value is only that.
pub(super) fn pass_function(rw: &mut Rewriter<'_>, value: &[u8], id: Option<u64>) -> Option<Pass> {
    if !rw.same_function_names() {
        return None;
    }
    let object = rw.reader.current.ob;
    let written = id.filter(|&id| rw.writer.native_written.contains(id));
    let name = match written {
        Some(id) => rw.reader.fn_under(id, object)?,
        None => native_fn(rw, value, object)?,
    };
    rw.part.who = Some(Who::Named { name, object });
    rw.part.block = Block::Native;
    rw.writer.absolute_next = false;
    Some(Pass::Copied)
}

/// Resolves a `fn`-space value that names a native function and can be
/// written as it is, marking it as written; its name.
fn native_fn(rw: &mut Rewriter<'_>, value: &[u8], object: Sym) -> Option<Sym> {
    let f = rw.resolve_fn(value, object).ok()?;
    if f.kind != FnKind::Native || f.rekinded {
        return None;
    }
    let Some(id) = f.id else { return Some(f.name) };
    rw.reader.fns.get(id)?;
    if !(rw.writer.defined.fns.contains(id) || f.defines) {
        return None;
    }
    rw.writer.defined.fns.insert(id);
    rw.writer.native_written.insert(id);
    Some(f.name)
}

/// Both readers' state after a copied `ob=`, `fl=` or `fi=`/`fe=` line
/// setting `which` to `sym`.
#[inline(always)]
fn set_name(rw: &mut Rewriter<'_>, which: Sets, sym: Sym) -> Option<Pass> {
    rw.reader.current.set(which, sym);
    rw.writer.current.set(which, sym);
    rw.part.block = Block::Native;
    Some(Pass::Copied)
}

/// Marks object or file id `id`, defined by a line copied as it is, as
/// defined in the output too; `None` if the input has no such id.
#[inline(always)]
pub(super) fn mark_written(rw: &mut Rewriter<'_>, space: Space, id: u64) -> Option<()> {
    rw.reader.name_of(space, id)?;
    rw.writer.defined.space_mut(space).insert(id);
    Some(())
}

/// The name of an id the output has defined.
#[inline(always)]
pub(super) fn written_id(rw: &Rewriter<'_>, space: Space, id: u64) -> Option<Sym> {
    let sym = rw.reader.name_of(space, id)?;
    rw.writer.defined.space(space).contains(id).then_some(sym)
}

/// The name of a value that can be copied, and the id it defines
/// (bare ids take [`written_id`]).
pub(super) fn known_name(
    rw: &mut Rewriter<'_>,
    space: Space,
    value: &[u8],
) -> Option<(Sym, Option<u64>)> {
    let (sym, nr) = rw.name_value(space, value).ok()?;
    match (nr.id, nr.name) {
        (Some(id), None) if written_id(rw, space, id).is_none() => None,
        (Some(id), Some(_)) => Some((sym, Some(id))),
        _ => Some((sym, None)),
    }
}
