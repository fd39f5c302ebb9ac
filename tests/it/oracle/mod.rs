//! An oracle for the rewrite, independent of the rewriter's code: the
//! input and the output are expanded into absolute records by the test
//! reader (expand.rs); every input record is mapped through the symbol
//! files by a separate, simple lookup; the output's records must then be
//! exactly the mapped input's, per event, self and call costs alike, call
//! targets and counts included.
//!
//! The jitdumps are read with linux-perf-data, not with annotate's reader.
//! Perf map names are split into name, file and line by annotate's
//! `runtime_names::split` (name conventions, not rewriting).
//!
//! The rules, each stated once:
//! 1. A function callgrind named by address (`0x` + 8 to 16 hex digits)
//!    under object `???` whose address lies in a JIT range is that range's
//!    function: its name (with callgrind's suffix, `'2`, kept; but a
//!    name made of an address inside the range, a continuation, keeps its
//!    recursion level, which counts re-entries of that address, only
//!    where the range's start is named with that level and the calls into
//!    the start at that level hold the calls into each address of the
//!    range's middle named at that level (each from anything but that
//!    level of the range, first event); else the highest such level below,
//!    else none), its object
//!    (the symbol file), its declared file as its function file (a call's
//!    callee too, whatever range its target lies in), and, per record,
//!    the file of its line.
//! 2. Lines and functions come from where the instruction is: a record of
//!    a JIT function at an instruction of another JIT range (code entered
//!    by a jump, which callgrind charges to the jumper) belongs to that
//!    range's function (its name with the suffix of the function callgrind
//!    charged, `'2` and callers; its object and declared file). The
//!    range holding the instruction gives file and line by its line table entry
//!    with the greatest address at or below it; before the first entry or
//!    without a line table, that range's declared file and line (the
//!    name's, else the first entry's). An instruction in no range keeps its
//!    line, under its function's declared file. Without an instruction
//!    column, every line of a JIT function is its declared line.
//!    The same holds for a function named by address under `???` whose
//!    address lies in no range (a stub no symbol file lists, as QEMU's
//!    TCG prologue): its records at instructions of a JIT range belong to
//!    that range's function, with the stub's suffix.
//!    The function callgrind charged then calls that function (callgrind
//!    takes a jump into another object's code for a call; so do we): per
//!    pair, as often as the first record of each run of moved records
//!    ran (a call's count, where a call comes first), with the moved
//!    records' costs and their calls' costs (a call rule 4 folds into the
//!    middle of the range its code is in, a jump within that code seen as
//!    a call, is one of them: its callee's lines are that function's);
//!    unless the two are one function (one name, object and file).
//!    A jump from a JIT function's record to code of no JIT range is a
//!    jump within that function: the format names no object for a jump,
//!    so it cannot name the target's from there.
//!    A jump within one function names no function: its target's file
//!    is the file of the target's line (KCachegrind reads `jfi=` so).
//! 3. Caller components of a name (`--separate-callers`) that are JIT
//!    addresses are renamed the same way, in any object.
//! 4. Folding: a call (not a jump) to an address of a JIT range other than
//!    its start (the address callgrind named the pseudo-function after) is
//!    not a new activation (from inside the range, a jump seen as a call;
//!    from anywhere else, a return into the middle of a function): the call
//!    record is dropped, its target's cost lines stay where they are;
//!    except in a range that is a table of entry points (.NET's precode
//!    blocks: a name `stub<N> …` with `AllocateTemporaryEntryPoints` or
//!    `Precode` in it), where every address is a way in, and at an entry
//!    point: an address a call from another function's code reaches
//!    where positions have instruction addresses and no call site of the
//!    range lies at most 15 bytes (the longest instruction) below it, so
//!    that no call of the range's own returns there (HotSpot's verified
//!    entries). The range's call sites are those of its calls that go
//!    anywhere but into the middle of a range (at a start, in a table),
//!    made by JIT code: a call in a record of a native function (V8's
//!    interpreter trampoline, which jumped into baseline code and is
//!    charged with it) returns into that function's frame, not the
//!    range's.
//!    Except between levels: a call from a range's code into its own
//!    middle where the call's place (rule 2's name for moved code) and
//!    the callee have different names (recursion levels; HotSpot's
//!    compiled code jumped into from the interpreter at `'2` reaching its
//!    own continuation named at level 1) stays a call, as callgrind
//!    recorded it: folded, the callee's lines would be one level's cost
//!    and its callers' arcs another's. Such a call is none of rule 8's
//!    arcs. A name made of an entry point keeps its level, as a start's. A
//!    cost line of zeros means nothing (the rewriter may keep a folded
//!    call's position that way).
//! 5. When ranges overlap, a jitdump's range beats a perf map's (it has
//!    lines), and of one kind the range loaded last wins (an address
//!    reused).
//! 6. V8's jitdumps (function names tagged `JS:`): line addresses are
//!    0x40 past the code (V8 counts an ELF header in), and a line table
//!    whose file names are not text, or whose entries do not fill their
//!    record (more than zero padding under 8 bytes after them), is
//!    dropped (a known V8 bug writes both).
//! 7. Where a code image was written beside the output, a jitdump's
//!    functions are under it as their object, not under the jitdump.
//! 8. Re-entry: a call folded by rule 4 from another function `x` into
//!    the middle of JIT function `f` at address `c` is `f` resumed;
//!    callgrind counted its cost in the call it returns from too: the arcs
//!    made from `f`'s code at its greatest call site below `c` (with an
//!    instruction column; without one, the arcs from `f`'s code to `x`).
//!    Those arcs, summed, lose the folded calls' cost, summed (per event,
//!    at most what they hold); each keeps its count and loses at most its
//!    own cost. With an instruction column, what they cannot hold, summed
//!    per `f`, comes out the same way of the arcs charged to `f` made at
//!    sites in no JIT range (code of the runtime that callgrind charged to
//!    `f`, under whose calls it nested what followed), but those at sites
//!    a continuation of `f` returns to. Where `x` is JIT code and the
//!    record's function is `x`'s pseudo-function at an entry, the calls
//!    into `x` under that name (from code other than its own under it,
//!    and not from `f`'s code) held the continuation too: summed, they
//!    lose the folded calls' cost the same way, unless the arcs at `f`'s
//!    site (without an instruction column: `f`'s arcs to `x`) are calls
//!    into `x`, which give it back already. Where the record's function
//!    is a pseudo-function of `x` at another address (a continuation of
//!    `x`), the same holds of the calls into `x` if they all call it
//!    under one name and no continuation of `x` calls `x` (those calls
//!    would be inside an activation of `x` as well: BEAM's shared stubs).
//!    Where they call it under several names (recursion levels), and no
//!    call of the profile enters a range at an entry point in its middle,
//!    the calls into each name lose what they hold over what `x` ran
//!    under that name (the cost records of its blocks written under it,
//!    and the calls they made that stay calls, less each such call's
//!    part, rounded down, of what rule 8's first part takes out of the
//!    arcs it is among), all of it where the continuations cost as much;
//!    else what the continuations do not cover stays with the names in
//!    proportion to what `x` ran under each, rounded up.
//!    A continuation is written at the level rule 1 gives it, not always
//!    that of the activation it resumed. So where `f` is called under
//!    several names, its arcs give back its own continuations but none
//!    out of arcs at sites in no range, and no call enters a range at an
//!    entry point in its middle, the calls into each of `f`'s names from
//!    `f`'s own code under another name lose what the calls into that name
//!    hold over what `f` ran under it (as above, less what those calls
//!    lose already), at most what rule 8's first part takes out of the
//!    calls made by `f`'s blocks under that name and at most what they
//!    hold; per event in proportion to what they hold, rounded down.
//! 9. Everything else is copied as it is.
//! 10. Every position the output gives an instruction of a JIT range
//!     under that range's object, a call site included (also the site of
//!     rule 2's call, which no input record holds), has the line rule 2
//!     gives that instruction.
//! 11. A range that lies in the executable code of the run's program
//!     (the `cmd:` line's first word, through `$PATH`), where that program
//!     is linked at fixed addresses (`readelf` says EXEC), is not JIT code:
//!     the profile has it under the program's own names (V8's builtins
//!     embedded in `node`).
//! 12. Where the run's program is QEMU's user mode (`qemu-*`), a range
//!     named `guest-0xADDR` is named after the guest program's function
//!     symbol with the nearest start at or below ADDR (of aliases, the
//!     first name in byte order), where it holds ADDR; the guest is the
//!     first word after the program that names a file (`readelf -s`).
//! 13. Modules: in one symbol file, in load order, a run of two or more
//!     ranges each starting where the one before ended, or less than 64
//!     bytes (alignment) after it, is a module; modules count from 1. A
//!     name without a source file that ranges of two modules have is
//!     filed under `<jit module N>` in module N (two wasm modules' `fib`
//!     are two functions). Not in the files of runtimes that compile a
//!     function at a time: a jitdump with V8's names (`JS:`), a perf map
//!     whose first line is V8's (a name `Builtin:`, `JS:`, `Stub:`... as
//!     rule 6 lists) or HotSpot's (address and size as `0x` and 16 digits).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use linux_perf_data::jitdump::{JitDumpReader, JitDumpRecord};

use crate::expand::{self, Record};

mod called_back;
mod expected;
mod jumps;
mod levels;
mod program;
mod symbol_files;
mod symbols;

pub use expected::*;
pub use jumps::*;
use program::*;
pub use symbol_files::*;
pub use symbols::*;

/// A record's place: object, the function's file as callgrind_annotate
/// keys it (current at `fn=`), file of the line, function, position.
pub(super) type Place = (String, String, String, String, Vec<u64>);

/// A call's or jump's kind, target (object, file, function) and position.
pub(super) type Transfer = (String, [String; 3], Vec<u64>);

/// What a summed record is keyed by.
pub(super) type Key = (Place, Option<Transfer>);

/// What the output must hold, summed: costs per event, and for calls the
/// count as the first number.
#[derive(Default, Debug, PartialEq, Eq)]
pub struct Sums(BTreeMap<Key, Vec<u64>>);

impl Sums {
    pub(super) fn add(&mut self, key: Key, values: Vec<u64>) {
        let sum = self.0.entry(key).or_default();
        if sum.len() < values.len() {
            sum.resize(values.len(), 0);
        }
        for (s, v) in sum.iter_mut().zip(values) {
            *s += v;
        }
    }
}

pub(super) fn numbers(text: &str) -> Vec<u64> {
    let mut v: Vec<u64> = text
        .split_whitespace()
        .map(|t| t.parse().unwrap())
        .collect();
    while v.last() == Some(&0) {
        v.pop();
    }
    v
}

/// What the output holds, summed the same way: no symbols, so nothing is
/// mapped or folded.
pub fn actual(output: &str) -> Sums {
    expected(
        output,
        &Symbols {
            ranges: Vec::new(),
            by_start: Default::default(),
            entered: Default::default(),
            held: Default::default(),
            entry_points: Default::default(),
        },
    )
    .0
}

/// Rule 8: takes each pair's arcs out of `want` and `got` and holds
/// them to it; the differences, if any.
pub(super) fn take_out_reentries(want: &mut Sums, got: &mut Sums, reentries: &[Reentry]) -> String {
    let mut report = String::new();
    for r in reentries {
        let (mut held, mut left) = (Vec::new(), Vec::new());
        for key in &r.arcs {
            let (w, g) = (
                want.0.remove(key).unwrap_or_default(),
                got.0.remove(key).unwrap_or_default(),
            );
            let lost_more = w
                .iter()
                .skip(1)
                .zip(g.iter().skip(1).chain(std::iter::repeat(&0)))
                .any(|(w, g)| g > w);
            if w.first() != g.first() || g.len() > w.len() || lost_more {
                report.push_str(&format!(
                    "rule 8: arc {key:?} was {w:?}, output has {g:?}\n"
                ));
            }
            add_to(&mut held, w.into_iter().skip(1).collect());
            add_to(&mut left, g.into_iter().skip(1).collect());
        }
        let want_left: Vec<u64> = held
            .iter()
            .enumerate()
            .map(|(e, &h)| h - r.continuation.get(e).copied().unwrap_or(0).min(h))
            .collect();
        let trim = |mut v: Vec<u64>| {
            while v.last() == Some(&0) {
                v.pop();
            }
            v
        };
        if trim(want_left.clone()) != trim(left.clone()) {
            report.push_str(&format!(
                "rule 8: arcs {:?} held {held:?}, continuation {:?}: want {want_left:?} left, output has {left:?}\n",
                r.arcs, r.continuation
            ));
        }
    }
    report
}

/// The `positions:` columns (the last header wins; default `line`).
pub(super) fn columns_of(text: &str) -> Vec<&str> {
    text.lines()
        .filter_map(|l| l.strip_prefix("positions:"))
        .next_back()
        .map_or(vec!["line"], |v| v.split_whitespace().collect())
}

/// Panics with the first differences if `output` is not the rewrite of
/// `input` the rules give.
pub fn check(what: &str, input: &str, output: &str, symbols: &Symbols) {
    let outside = outside_program(symbols, input);
    let symbols = outside.as_ref().unwrap_or(symbols);
    let guest = guest_named(symbols, input);
    let symbols = guest.as_ref().unwrap_or(symbols);
    let ((mut want, reentries), mut got) = (expected(input, symbols), actual(output));
    let mut report = lines_of_positions(output, symbols);
    report.push_str(&take_out_reentries(&mut want, &mut got, &reentries));
    let jumps = jump_calls(input, symbols, &reentries);
    report.push_str(&take_out_jump_calls(&mut want, &mut got, &jumps));
    if want == got && report.is_empty() {
        return;
    }
    let missing = want.0.iter().filter(|(k, v)| got.0.get(*k) != Some(v));
    for (k, v) in missing.take(8) {
        report.push_str(&format!(
            "expected {k:?} = {v:?}, output has {:?}\n",
            got.0.get(k)
        ));
    }
    let extra = got.0.iter().filter(|(k, _)| !want.0.contains_key(*k));
    for (k, v) in extra.take(8) {
        report.push_str(&format!("output has {k:?} = {v:?}, not expected\n"));
    }
    panic!("{what}: the output is not the input's meaning under the rules:\n{report}");
}

/// Rule 10 over the output: the positions whose line is not the one
/// their instruction has, if any (the first few).
pub(super) fn lines_of_positions(output: &str, symbols: &Symbols) -> String {
    let columns = columns_of(output);
    let (Some(instr), Some(line)) = (
        columns.iter().position(|c| *c == "instr"),
        columns.iter().position(|c| *c == "line"),
    ) else {
        return String::new();
    };
    let mut report = String::new();
    let mut wrong = 0;
    for record in expand::expand(output) {
        let (at, pos, what) = match &record {
            Record::Cost { at, pos, .. } => (at, pos, "cost line"),
            Record::Transfer { at, pos, kind, .. } => (at, pos, kind.as_str()),
        };
        let Some(range) = symbols.at(pos[instr]).filter(|r| r.object == at[0]) else {
            continue;
        };
        let (_, want) = range.line_at(pos[instr]);
        if pos[line] != want {
            wrong += 1;
            if wrong <= 5 {
                report.push_str(&format!(
                    "rule 10: {what} of {} at {:#x} has line {}, its instruction line {want}\n",
                    at[3], pos[instr], pos[line]
                ));
            }
        }
    }
    if wrong > 5 {
        report.push_str(&format!("rule 10: {wrong} positions in all\n"));
    }
    report
}

/// Holds the oracle to every profile `record` annotated in `dir`: each
/// `callgrind.out.PID…` against its `callgrind.jit.out.PID…`, with the
/// symbol files of its pid (the jitdump in `dir`, the perf map in /tmp).
pub fn check_recording(dir: &Path) {
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix("callgrind.out.") else {
            continue;
        };
        let output = dir.join(format!("callgrind.jit.out.{rest}"));
        let pid: String = rest.chars().take_while(char::is_ascii_digit).collect();
        // The jitdump beside the profile (JavaScriptCore's is
        // `jit-TID-PID.dump`), else in /tmp (where BEAM writes its own),
        // as annotate looks for it; the perf map in /tmp.
        let jsc = std::fs::read_dir(dir).unwrap().find_map(|e| {
            let path = e.unwrap().path();
            let name = path.file_name()?.to_str()?;
            let tid_pid = name.strip_prefix("jit-")?.strip_suffix(".dump")?;
            (tid_pid.split_once('-')?.1 == pid).then_some(path)
        });
        let jitdump = [
            Some(dir.join(format!("jit-{pid}.dump"))),
            jsc,
            Some(PathBuf::from(format!("/tmp/jit-{pid}.dump"))),
        ]
        .into_iter()
        .flatten()
        .find(|p| p.exists());
        let sources: Vec<PathBuf> = jitdump
            .into_iter()
            .chain([PathBuf::from(format!("/tmp/perf-{pid}.map"))])
            .filter(|p| p.exists())
            .collect();
        if sources.is_empty() || !output.exists() {
            continue; // a process with nothing to name (a shell, say)
        }
        let input = std::fs::read_to_string(&path).unwrap();
        let symbols = Symbols::read(&sources).for_output(&output);
        let output = std::fs::read_to_string(&output).unwrap();
        check(&name, &input, &output, &symbols);
        checked += 1;
    }
    assert!(checked > 0, "no annotated recording in {}", dir.display());
}
