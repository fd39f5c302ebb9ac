//! The bodies of jitdump records, parsed: CODE_LOAD, CODE_MOVE,
//! DEBUG_INFO and UNWINDING_INFO (the framing is `read`'s).

use nom::bytes::complete::take;
use nom::number::complete::{u32 as nom_u32, u64 as nom_u64};
use nom::number::Endianness;
use nom::IResult;

use crate::records::{Move, ProblemKind, Record};
use crate::{format, CodeLoad, DebugEntry};

/// A NUL-terminated string (found with memchr: nom's `take_until`
/// searched for a substring, a tenth of indexing a large jitdump).
fn c_string(i: &[u8]) -> IResult<&[u8], &[u8]> {
    match memchr::memchr(0, i) {
        Some(end) => Ok((&i[end + 1..], &i[..end])),
        None => Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::TakeUntil,
        ))),
    }
}

pub(crate) fn code_load(i: &[u8], e: Endianness) -> IResult<&[u8], CodeLoad<'_>> {
    let (i, pid) = nom_u32(e)(i)?;
    let (i, tid) = nom_u32(e)(i)?;
    let (i, _vma) = nom_u64(e)(i)?;
    let (i, code_addr) = nom_u64(e)(i)?;
    let (i, code_size) = nom_u64(e)(i)?;
    let (i, code_index) = nom_u64(e)(i)?;
    let (i, name) = c_string(i)?;
    if code_addr.checked_add(code_size).is_none() {
        return Err(nom::Err::Failure(nom::error::Error::new(
            i,
            nom::error::ErrorKind::Verify,
        )));
    }
    // Code bytes are optional (jvmti, .NET may leave them out).
    let code = usize::try_from(code_size)
        .ok()
        .and_then(|n| i.get(..n))
        .filter(|c| !c.is_empty());
    Ok((
        i,
        CodeLoad {
            pid,
            tid,
            code_addr,
            code_size,
            code_index,
            name,
            code,
        },
    ))
}

pub(crate) fn code_move(i: &[u8], e: Endianness) -> IResult<&[u8], Move> {
    let (i, _pid) = nom_u32(e)(i)?;
    let (i, _tid) = nom_u32(e)(i)?;
    let (i, _vma) = nom_u64(e)(i)?;
    let (i, old_code_addr) = nom_u64(e)(i)?;
    let (i, new_code_addr) = nom_u64(e)(i)?;
    let (i, code_size) = nom_u64(e)(i)?;
    let (i, code_index) = nom_u64(e)(i)?;
    Ok((
        i,
        Move {
            old_code_addr,
            new_code_addr,
            code_size,
            code_index,
        },
    ))
}

/// A DEBUG_INFO whose entries do not parse exactly (leftover bytes that are
/// not zero padding) keeps its address but loses its entries.
pub(crate) fn debug_info(body: &[u8], e: Endianness) -> Result<Record<'_>, ProblemKind> {
    let head = |i| -> IResult<&[u8], (u64, u64)> {
        let (i, addr) = nom_u64(e)(i)?;
        let (i, n) = nom_u64(e)(i)?;
        Ok((i, (addr, n)))
    };
    let (rest, (code_addr, n)) = head(body).map_err(|_| ProblemKind::CorruptRecord)?;
    let max_entries = (rest.len() / format::DEBUG_ENTRY_FIXED_SIZE) as u64;
    if n > max_entries {
        return Err(ProblemKind::CorruptDebugInfo);
    }
    let mut entries = Vec::with_capacity(n as usize);
    let mut i = rest;
    for _ in 0..n {
        let (next, entry) = debug_entry(i, e).map_err(|_| ProblemKind::CorruptDebugInfo)?;
        entries.push(entry);
        i = next;
    }
    if i.len() >= 8 || i.iter().any(|&b| b != 0) {
        return Err(ProblemKind::CorruptDebugInfo);
    }
    Ok(Record::DebugInfo { code_addr, entries })
}

fn debug_entry(i: &[u8], e: Endianness) -> IResult<&[u8], DebugEntry<'_>> {
    let (i, addr) = nom_u64(e)(i)?;
    let (i, line) = nom_u32(e)(i)?;
    let (i, discrim) = nom_u32(e)(i)?;
    let (i, file) = c_string(i)?;
    Ok((
        i,
        DebugEntry {
            addr,
            line,
            discrim,
            file,
        },
    ))
}

pub(crate) fn unwinding_info(i: &[u8], e: Endianness) -> Result<(), ProblemKind> {
    let sizes = |i| -> IResult<&[u8], (u64, u64)> {
        let (i, unwind) = nom_u64(e)(i)?;
        let (i, hdr) = nom_u64(e)(i)?;
        let (i, _mapped) = nom_u64(e)(i)?;
        let (i, _) = take(0usize)(i)?;
        Ok((i, (unwind, hdr)))
    };
    let (rest, (unwind, hdr)) = sizes(i).map_err(|_| ProblemKind::CorruptRecord)?;
    if hdr > unwind || unwind > rest.len() as u64 {
        return Err(ProblemKind::CorruptRecord);
    }
    Ok(())
}
