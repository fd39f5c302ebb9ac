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
//!    name made of an address inside the range, a continuation, drops its
//!    recursion level, which counts re-entries of that address), its object
//!    (the symbol file), its declared file as its function file, and, per
//!    record, the file of its line.
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
//!    ran, with the moved records' costs and their calls' costs; unless
//!    the two are one function (one name, object and file: versions of it).
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
//!    anywhere but into the middle of a range (at a start, in a table).
//!    A name made of an entry point keeps its level, as a start's. A
//!    cost line of zeros means nothing (the rewriter may keep a folded
//!    call's position that way).
//! 5. When ranges overlap, a jitdump's range beats a perf map's (it has
//!    lines), and of one kind the range loaded last wins (an address
//!    reused).
//! 6. V8's jitdumps (function names tagged `JS:`): line addresses are
//!    0x40 past the code (V8 counts an ELF header in), and a line table
//!    whose file names are not text (a known V8 bug) is dropped.
//! 7. Where a code image was written beside the output, a jitdump's
//!    functions are under it as their object, not under the jitdump.
//! 8. Re-entry: a call folded by rule 4 from another function `x` into
//!    the middle of JIT function `f` at address `c` is `f` resumed;
//!    callgrind counted its cost in the call it returns from too: the arcs
//!    made from `f`'s code at its greatest call site below `c` (with an
//!    instruction column; without one, the arcs from `f`'s code to `x`).
//!    Those arcs, summed, lose the folded calls' cost, summed (per event,
//!    at most what they hold); each keeps its count and loses at most its
//!    own cost.
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

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use linux_perf_data::jitdump::{JitDumpReader, JitDumpRecord};

use crate::expand::{self, Record};

/// One JIT function.
#[derive(Debug, Clone)]
struct Range {
    start: u64,
    end: u64,
    name: String,
    object: String,
    /// Rule 5: 1 for a jitdump's range, 0 for a perf map's.
    rank: u8,
    decl: (String, u64),
    /// (address, line, file), sorted by address.
    lines: Vec<(u64, u64, String)>,
}

impl Range {
    /// Rule 4: a call to `addr` is a new activation.
    fn entered_at(&self, addr: u64) -> bool {
        let table = self.name.starts_with("stub<")
            && (self.name.contains("AllocateTemporaryEntryPoints")
                || self.name.contains("Precode"));
        addr == self.start || table
    }

    /// Rule 2.
    fn line_at(&self, addr: u64) -> (String, u64) {
        let i = self.lines.partition_point(|(a, _, _)| *a <= addr);
        match i.checked_sub(1).map(|i| &self.lines[i]) {
            Some((_, line, file)) if *line != 0 => (file.clone(), *line),
            _ => self.decl.clone(),
        }
    }
}

/// The JIT ranges of some symbol files, in load order.
pub struct Symbols {
    ranges: Vec<Range>,
    /// The ranges by start, and the longest one's length: where to look
    /// (built on first use; the rule stays the linear one's).
    by_start: std::sync::OnceLock<(Vec<(u64, usize)>, u64)>,
    /// Rule 1: (range start, level) of every name made of a range's start
    /// in the input being mapped.
    entered: std::cell::RefCell<std::collections::BTreeSet<(u64, u32)>>,
    /// Rule 4: the addresses in the middle of a range that are entry
    /// points in the input being mapped.
    entry_points: std::cell::RefCell<std::collections::BTreeSet<u64>>,
}

impl Symbols {
    /// Reads jitdumps and perf maps (told apart by the jitdump magic).
    pub fn read(paths: &[PathBuf]) -> Symbols {
        let mut ranges = Vec::new();
        for path in paths {
            let object = std::path::absolute(path).unwrap().display().to_string();
            let data = std::fs::read(path).unwrap();
            if data.starts_with(b"DTiJ") || data.starts_with(b"JiTD") {
                read_jitdump(path, &object, &mut ranges);
            } else {
                read_perf_map(&data, &object, &mut ranges);
            }
        }
        Symbols {
            ranges,
            by_start: Default::default(),
            entered: Default::default(),
            entry_points: Default::default(),
        }
    }

    /// Rule 7: a jitdump's functions are written under the code image
    /// beside the output, where one was written.
    pub fn with_code_image(mut self, image: &Path) -> Symbols {
        let object = std::path::absolute(image).unwrap().display().to_string();
        for range in self.ranges.iter_mut().filter(|r| r.rank == 1) {
            range.object = object.clone();
        }
        self
    }

    /// The rules for the output `output` of a run that may have written a
    /// code image beside it.
    pub fn for_output(self, output: &Path) -> Symbols {
        let name = output.file_name().unwrap().to_string_lossy();
        let image = output.with_file_name(format!("jit-code.{name}.elf"));
        match image.exists() {
            true => self.with_code_image(&image),
            false => self,
        }
    }

    /// Rule 5: the range that wins at `addr`.
    fn at(&self, addr: u64) -> Option<&Range> {
        let (by_start, longest) = self.by_start.get_or_init(|| {
            let mut v: Vec<(u64, usize)> = self
                .ranges
                .iter()
                .enumerate()
                .map(|(i, r)| (r.start, i))
                .collect();
            v.sort();
            let longest = self
                .ranges
                .iter()
                .map(|r| r.end - r.start)
                .max()
                .unwrap_or(0);
            (v, longest)
        });
        // Only a range starting within `longest` below `addr` can hold it.
        let from = by_start.partition_point(|&(s, _)| s < addr.saturating_sub(*longest));
        let to = by_start.partition_point(|&(s, _)| s <= addr);
        by_start[from..to]
            .iter()
            .map(|&(_, i)| (i, &self.ranges[i]))
            .filter(|(_, r)| r.start <= addr && addr < r.end)
            .max_by_key(|(i, r)| (r.rank, *i))
            .map(|(_, r)| r)
    }
}

/// File names that are text (rule 6: V8 writes some that are not).
fn is_text(file: &str) -> bool {
    !file.chars().any(|c| c.is_control() || c == '\u{fffd}')
}

/// The line tables of a jitdump that rule 6 drops (read independently).
pub fn dropped_tables(path: &Path) -> usize {
    let mut reader = JitDumpReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let mut dropped = 0;
    while let Ok(Some(raw)) = reader.next_record() {
        if let Ok(JitDumpRecord::CodeDebugInfo(d)) = raw.parse() {
            let files = d
                .entries
                .iter()
                .map(|e| String::from_utf8_lossy(&e.file_path.as_slice()).into_owned());
            dropped += usize::from(!files.into_iter().all(|f| is_text(&f)));
        }
    }
    dropped
}

fn read_jitdump(path: &Path, object: &str, ranges: &mut Vec<Range>) {
    let mut reader = JitDumpReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let mut debug: BTreeMap<u64, Vec<(u64, u64, String)>> = BTreeMap::new();
    let mut loads = Vec::new();
    while let Ok(Some(raw)) = reader.next_record() {
        match raw.parse() {
            Ok(JitDumpRecord::CodeDebugInfo(d)) => {
                let entries: Vec<_> = d
                    .entries
                    .iter()
                    .map(|e| {
                        let file = String::from_utf8_lossy(&e.file_path.as_slice()).into_owned();
                        (e.code_addr, u64::from(e.line), file)
                    })
                    .collect();
                if entries.iter().all(|e| is_text(&e.2)) {
                    debug.insert(d.code_addr, entries);
                }
            }
            Ok(JitDumpRecord::CodeLoad(r)) => {
                let raw = String::from_utf8_lossy(&r.function_name.as_slice()).into_owned();
                let lines = debug.remove(&r.code_addr).unwrap_or_default();
                loads.push((r.code_addr, r.code_bytes.len() as u64, raw, lines));
            }
            _ => {}
        }
    }
    let v8 = loads.iter().any(|(_, _, name, _)| name.starts_with("JS:"));
    for (start, size, raw, mut lines) in loads {
        if v8 {
            for l in &mut lines {
                l.0 -= 0x40;
            }
        }
        lines.sort_by_key(|l| l.0);
        ranges.push(range(start, size, &raw, object, 1, lines));
    }
}

fn read_perf_map(data: &[u8], object: &str, ranges: &mut Vec<Range>) {
    for line in String::from_utf8_lossy(data).lines() {
        let mut parts = line.splitn(3, ' ');
        let (Some(start), Some(size), Some(name)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).ok();
        if let (Some(start), Some(size)) = (hex(start), hex(size)) {
            ranges.push(range(start, size, name, object, 0, Vec::new()));
        }
    }
}

fn range(
    start: u64,
    size: u64,
    raw: &str,
    object: &str,
    rank: u8,
    lines: Vec<(u64, u64, String)>,
) -> Range {
    let split = annotate::symbols::runtime_names::split(raw);
    let first = lines.iter().find(|l| l.1 != 0);
    let file = first
        .map(|l| l.2.clone())
        .or(split.file)
        .unwrap_or_else(|| "<jit>".into());
    let line = match split.line {
        0 => first.map_or(0, |l| l.1),
        n => u64::from(n),
    };
    Range {
        start,
        end: start + size,
        name: split.name,
        object: object.to_string(),
        rank,
        decl: (file, line),
        lines,
    }
}

/// `0x` + 8 to 16 lowercase hex digits.
fn address(s: &str) -> Option<u64> {
    let hex = s.strip_prefix("0x")?;
    let ok = (8..=16).contains(&hex.len())
        && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    ok.then(|| u64::from_str_radix(hex, 16).ok())?
}

/// What a function of the input is in the output.
struct Mapped<'a> {
    name: String,
    /// The JIT range of its base, if it is JIT code (rule 1).
    range: Option<&'a Range>,
    /// The address the pseudo-function was named after (JIT code only).
    addr: Option<u64>,
}

impl Symbols {
    /// Rules 1 and 3 for a function name under `object`.
    fn function(&self, object: &str, name: &str) -> Mapped<'_> {
        let mut parts = name.split('\'');
        let base = parts.next().unwrap_or_default();
        let range = (object == "???")
            .then(|| address(base).and_then(|a| self.at(a)))
            .flatten();
        let mut out = range.map_or_else(|| base.to_string(), |r| r.name.clone());
        // A continuation (named after an address inside its range) keeps
        // a level its range's start was named with, else the highest below.
        let continuation = range.is_some_and(|r| !address(base).is_some_and(|a| self.enters(r, a)));
        let mut parts = parts.peekable();
        let level = parts
            .peek()
            .filter(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            .map(|p| p.parse::<u32>().unwrap());
        if let (true, Some(level), Some(r)) = (continuation, level, range) {
            parts.next();
            let entered = self.entered.borrow();
            let kept = (2..=level).rev().find(|&l| entered.contains(&(r.start, l)));
            if let Some(l) = kept {
                out.push_str(&format!("'{l}"));
            }
        }
        for part in parts {
            out.push('\'');
            match address(part).and_then(|a| self.at(a)) {
                Some(r) => out.push_str(&r.name),
                None => out.push_str(part),
            }
        }
        let addr = range.and(address(base));
        Mapped {
            name: out,
            range,
            addr,
        }
    }
}

impl Symbols {
    /// Rule 4: a call to `addr` in `range` is a new activation.
    fn enters(&self, range: &Range, addr: u64) -> bool {
        range.entered_at(addr) || self.entry_points.borrow().contains(&addr)
    }

    /// Rule 4: notes the entry points of `input` (see the rule).
    fn note_entry_points(&self, input: &str) {
        self.entry_points.borrow_mut().clear();
        let columns = columns_of(input);
        let Some(instr) = columns.iter().position(|c| *c == "instr") else {
            return;
        };
        let calls: Vec<(u64, [String; 3])> = expand::expand(input)
            .into_iter()
            .filter_map(|r| match r {
                Record::Transfer {
                    kind, target, pos, ..
                } if kind == "calls" => Some((pos[instr], target)),
                _ => None,
            })
            .collect();
        let middle = |target: &[String; 3]| {
            let callee = self.function(&target[0], &target[2]);
            callee
                .range
                .zip(callee.addr)
                .filter(|(r, a)| !r.entered_at(*a))
        };
        let mut sites: BTreeMap<u64, std::collections::BTreeSet<u64>> = BTreeMap::new();
        for (site, target) in &calls {
            if let (Some(holder), None) = (self.at(*site), middle(target)) {
                sites.entry(holder.start).or_default().insert(*site);
            }
        }
        let mut points = std::collections::BTreeSet::new();
        for (site, target) in &calls {
            let Some((to, addr)) = middle(target) else {
                continue;
            };
            let internal = self.at(*site).is_some_and(|h| std::ptr::eq(h, to));
            let below = sites
                .get(&to.start)
                .and_then(|s| s.range(..addr).next_back());
            let returns_here = below.is_some_and(|&s| addr - s <= 15);
            if !internal && !returns_here {
                points.insert(addr);
            }
        }
        *self.entry_points.borrow_mut() = points;
    }

    /// Rule 1: notes the levels each range's start is named with.
    fn note_entries(&self, input: &str) {
        let mut entered = self.entered.borrow_mut();
        entered.clear();
        let mut note = |object: &str, name: &str| {
            let mut parts = name.split('\'');
            let base = parts.next().unwrap_or_default();
            let Some(addr) = address(base).filter(|_| object == "???") else {
                return;
            };
            if self.at(addr).is_some_and(|r| r.entered_at(addr)) {
                let level = parts.next().and_then(|p| p.parse().ok()).unwrap_or(1);
                entered.insert((addr, level));
            }
        };
        for record in expand::expand(input) {
            match record {
                Record::Cost { at, .. } => note(&at[0], &at[3]),
                Record::Transfer { at, target, .. } => {
                    note(&at[0], &at[3]);
                    note(&target[0], &target[2]);
                }
            }
        }
    }
}

/// A record's place: object, the function's file as callgrind_annotate
/// keys it (current at `fn=`), file of the line, function, position.
type Place = (String, String, String, String, Vec<u64>);

/// A call's or jump's kind, target (object, file, function) and position.
type Transfer = (String, [String; 3], Vec<u64>);

/// What a summed record is keyed by.
type Key = (Place, Option<Transfer>);

/// What the output must hold, summed: costs per event, and for calls the
/// count as the first number.
#[derive(Default, Debug, PartialEq, Eq)]
pub struct Sums(BTreeMap<Key, Vec<u64>>);

impl Sums {
    fn add(&mut self, key: Key, values: Vec<u64>) {
        let sum = self.0.entry(key).or_default();
        if sum.len() < values.len() {
            sum.resize(values.len(), 0);
        }
        for (s, v) in sum.iter_mut().zip(values) {
            *s += v;
        }
    }
}

fn numbers(text: &str) -> Vec<u64> {
    let mut v: Vec<u64> = text
        .split_whitespace()
        .map(|t| t.parse().unwrap())
        .collect();
    while v.last() == Some(&0) {
        v.pop();
    }
    v
}

/// Maps a position in JIT function `own` (rule 2): [instr, line], [line]
/// or [instr].
fn map_pos(symbols: &Symbols, own: &Range, pos: &[u64], columns: &[&str]) -> (String, Vec<u64>) {
    let instr = columns.iter().position(|c| *c == "instr").map(|i| pos[i]);
    let line_col = columns.iter().position(|c| *c == "line");
    let (file, line) = match instr {
        None => own.decl.clone(),
        Some(addr) => match symbols.at(addr) {
            Some(holder) => holder.line_at(addr),
            None => (own.decl.0.clone(), line_col.map_or(0, |i| pos[i])),
        },
    };
    let mut pos = pos.to_vec();
    if let Some(i) = line_col {
        pos[i] = line;
    }
    (file, pos)
}

/// The output a correct rewrite of `input` gives, summed (rules 1-7, 9),
/// and what rule 8 takes out of arcs.
pub fn expected(input: &str, symbols: &Symbols) -> (Sums, Vec<Reentry>) {
    let (sums, _, reentries) = expected_with_folds(input, symbols);
    (sums, reentries)
}

/// A function as rule 2 names it: (object, name).
type Caller = (String, String);

/// Rule 2's calls: (caller, callee) -> [count, costs...].
pub type JumpCalls = BTreeMap<(Caller, Caller), Vec<u64>>;

/// Rule 2's calls of `input`, and per pair the part of them that is
/// rule 8's arcs (which may lose a continuation's cost).
pub fn jump_calls(input: &str, symbols: &Symbols, reentries: &[Reentry]) -> (JumpCalls, JumpCalls) {
    let reducible_keys: std::collections::BTreeSet<&Key> =
        reentries.iter().flat_map(|r| &r.arcs).collect();
    let mut reducible = JumpCalls::new();
    let columns = columns_of(input);
    let mut calls = JumpCalls::new();
    let mut run: Option<(Caller, Caller, u64)> = None;
    let records = expand::expand(input)
        .into_iter()
        .filter(|r| !r.is_zero_cost());
    for record in records {
        let (at, pos, costs, is_cost, kind) = match &record {
            Record::Cost { at, pos, costs } => (at, pos, costs, true, ""),
            Record::Transfer {
                at,
                pos,
                costs,
                kind,
                ..
            } => (at, pos, costs, false, kind.as_str()),
        };
        let f = symbols.function(&at[0], &at[3]);
        let (place, holder) = place(symbols, at, pos, &columns);
        let moved = match (f.range, holder) {
            (Some(r), Some(h)) if !std::ptr::eq(r, h) => Some((
                (r.object.clone(), f.name.clone()),
                (h.object.clone(), place.3.clone()),
                h.start,
            )),
            (None, Some(h)) if is_stub(at) => Some((
                (at[0].clone(), f.name.clone()),
                (h.object.clone(), place.3.clone()),
                h.start,
            )),
            _ => None,
        };
        // A run is of one range (ranges may share a name); code of another
        // version of the same function is the function's own.
        let Some((caller, callee, range)) = moved.filter(|(a, b, _)| a != b) else {
            run = None;
            continue;
        };
        if let Record::Transfer {
            target, target_pos, ..
        } = &record
        {
            let callee = symbols.function(&target[0], &target[2]);
            let folded = callee
                .range
                .is_some_and(|to| !callee.addr.is_some_and(|a| symbols.enters(to, a)));
            if kind != "calls" || folded {
                continue;
            }
            let key = transfer_key(
                symbols,
                place.clone(),
                kind.into(),
                target,
                target_pos,
                &columns,
            );
            if reducible_keys.contains(&key) {
                let sum = reducible
                    .entry((caller.clone(), callee_name(&place, holder)))
                    .or_default();
                add_to_at(sum, 1, numbers(costs));
            }
        }
        let values = numbers(costs);
        let sum = calls.entry((caller.clone(), callee.clone())).or_default();
        if sum.is_empty() {
            sum.push(0);
        }
        let here = (caller, callee, range);
        if is_cost && run.as_ref() != Some(&here) {
            sum[0] += values.first().copied().unwrap_or(0).max(1);
        }
        add_to_at(sum, 1, values);
        run = Some(here);
    }
    (calls, reducible)
}

/// The callee of rule 2's call for a record at `place` held by `holder`.
fn callee_name(place: &Place, holder: Option<&Range>) -> (String, String) {
    (
        holder.map_or_else(String::new, |h| h.object.clone()),
        place.3.clone(),
    )
}

fn add_to_at(sum: &mut Vec<u64>, at: usize, values: Vec<u64>) {
    if sum.len() < at + values.len() {
        sum.resize(at + values.len(), 0);
    }
    for (s, v) in sum[at..].iter_mut().zip(values) {
        *s += v;
    }
}

/// Rule 2's calls: takes the calls between each pair out of `want` and
/// `got` and holds their sums to it; the differences, if any.
fn take_out_jump_calls(
    want: &mut Sums,
    got: &mut Sums,
    (calls, reducible): &(JumpCalls, JumpCalls),
) -> String {
    let mut report = String::new();
    // The call records of each pair, taken out of both sums in one pass.
    let take = |sums: &mut Sums| {
        let mut by_pair: JumpCalls = BTreeMap::new();
        sums.0.retain(|(place, transfer), values| {
            let Some((_, target, _)) = transfer.as_ref().filter(|t| t.0 == "calls") else {
                return true;
            };
            let pair = (
                (place.0.clone(), place.3.clone()),
                (target[0].clone(), target[2].clone()),
            );
            if !calls.contains_key(&pair) {
                return true;
            }
            add_to(by_pair.entry(pair).or_default(), values.clone());
            false
        });
        by_pair
    };
    let (mut wanted, mut held) = (take(want), take(got));
    for ((caller, callee), extra) in calls {
        let may_lose = reducible.get(&(caller.clone(), callee.clone()));
        let pair = (caller.clone(), callee.clone());
        let (mut w, g) = (
            wanted.remove(&pair).unwrap_or_default(),
            held.remove(&pair).unwrap_or_default(),
        );
        add_to(&mut w, extra.clone());
        let trim = |mut v: Vec<u64>| {
            while v.last() == Some(&0) {
                v.pop();
            }
            v
        };
        // Rule 8 may have taken up to its arcs' cost out of moved calls.
        let lost_ok = w.len() >= g.len()
            && w.first() == g.first()
            && w.iter().enumerate().skip(1).all(|(e, &want)| {
                let got = g.get(e).copied().unwrap_or(0);
                let limit = may_lose.and_then(|m| m.get(e)).copied().unwrap_or(0);
                got <= want && want - got <= limit
            });
        if trim(w.clone()) != trim(g.clone()) && !lost_ok {
            report.push_str(&format!(
                "rule 2: calls {caller:?} -> {callee:?}: want {w:?} (jumps: {extra:?}), output has {g:?}\n"
            ));
        }
    }
    report
}

/// How many call records rule 4 folds away in `input`.
pub fn folded_calls(input: &str, symbols: &Symbols) -> u64 {
    expected_with_folds(input, symbols).1
}

/// Rule 8 for one pair: the arcs from `f`'s code to `x`, and the cost per
/// event their sum loses.
#[derive(Debug, Default)]
pub struct Reentry {
    arcs: Vec<Key>,
    continuation: Vec<u64>,
}

/// A function as rule 8 tells them apart: a JIT range by its start, or a
/// name in an object.
type Who = (String, String);

fn who(range: Option<&Range>, object: &str, name: &str) -> Who {
    match range {
        Some(r) => ("jit".into(), r.start.to_string()),
        None => (object.to_string(), name.to_string()),
    }
}

/// [`expected`], the number of calls folded, and rule 8's pairs.
fn expected_with_folds(input: &str, symbols: &Symbols) -> (Sums, u64, Vec<Reentry>) {
    symbols.note_entry_points(input);
    symbols.note_entries(input);
    let mut folded = 0;
    let columns = columns_of(input);
    let mut sums = Sums::default();
    // Rule 8: folded calls by (f, address resumed, x); arcs by (f, site)
    // and by (f, callee).
    let mut resumed: BTreeMap<(u64, u64, Who), Vec<u64>> = BTreeMap::new();
    let mut by_site: BTreeMap<u64, BTreeMap<u64, Vec<Key>>> = BTreeMap::new();
    let mut by_callee: BTreeMap<(u64, Who), Vec<Key>> = BTreeMap::new();
    let instr = columns.iter().position(|c| *c == "instr");
    // Rule 4: a cost line of zeros means nothing.
    let records = expand::expand(input)
        .into_iter()
        .filter(|r| !r.is_zero_cost());
    for record in records {
        match record {
            Record::Cost { at, pos, costs } => {
                let values = numbers(&costs);
                let (place, _) = place(symbols, &at, &pos, &columns);
                sums.add((place, None), values);
            }
            Record::Transfer {
                at,
                kind,
                target,
                count,
                target_pos,
                pos,
                costs,
            } => {
                let site = instr.map(|i| pos[i]);
                let (place, from) = place(symbols, &at, &pos, &columns);
                let callee = symbols.function(&target[0], &target[2]);
                if let (_, Some(to), "calls") = (from, callee.range, kind.as_str()) {
                    // Callgrind names a pseudo-function after its call target.
                    if !callee.addr.is_some_and(|a| symbols.enters(to, a)) {
                        folded += 1;
                        if !from.is_some_and(|h| std::ptr::eq(h, to)) {
                            let x = who(from, &place.0, &place.3);
                            let addr = callee.addr.unwrap();
                            let sum = resumed.entry((to.start, addr, x)).or_default();
                            add_to(sum, numbers(&costs));
                        }
                        continue; // rule 4
                    }
                }
                let key = transfer_key(symbols, place, kind, &target, &target_pos, &columns);
                let mut values = counts(&count);
                values.extend(numbers(&costs));
                if let (Some(f), "calls") = (from, key.1.as_ref().unwrap().0.as_str()) {
                    let x = who(
                        callee.range,
                        &key.1.as_ref().unwrap().1[0],
                        &key.1.as_ref().unwrap().1[2],
                    );
                    if let Some(site) = site {
                        let sites = by_site.entry(f.start).or_default();
                        sites.entry(site).or_default().push(key.clone());
                    }
                    by_callee.entry((f.start, x)).or_default().push(key.clone());
                }
                sums.add(key, values);
            }
        }
    }
    let mut groups: BTreeMap<Vec<Key>, Vec<u64>> = BTreeMap::new();
    for ((f, addr, x), cost) in resumed {
        let arcs = match by_site.get(&f) {
            Some(sites) => sites.range(..addr).next_back().map(|(_, arcs)| arcs),
            None => by_callee.get(&(f, x)),
        };
        let Some(arcs) = arcs else { continue };
        let mut arcs = arcs.clone();
        arcs.sort();
        arcs.dedup();
        add_to(groups.entry(arcs).or_default(), cost);
    }
    let reentries = groups
        .into_iter()
        .map(|(arcs, continuation)| Reentry { arcs, continuation })
        .collect();
    (sums, folded, reentries)
}

fn add_to(sum: &mut Vec<u64>, values: Vec<u64>) {
    if sum.len() < values.len() {
        sum.resize(values.len(), 0);
    }
    for (s, v) in sum.iter_mut().zip(values) {
        *s += v;
    }
}

/// A call's or jump's record key: its place, and its target mapped.
fn transfer_key(
    symbols: &Symbols,
    place: Place,
    kind: String,
    target: &[String; 3],
    target_pos: &[u64],
    columns: &[&str],
) -> Key {
    let callee = symbols.function(&target[0], &target[2]);
    let (target, target_pos) = match callee.range {
        Some(r) => {
            let (file, tpos) = map_pos(symbols, r, target_pos, columns);
            ([r.object.clone(), file, callee.name], tpos)
        }
        None => (
            [target[0].clone(), target[1].clone(), callee.name],
            target_pos.to_vec(),
        ),
    };
    (place, Some((kind, target, target_pos)))
}

/// The input's self cost of the first event: in all, and in JIT ranges
/// (rule 1). A profile's `totals:` and the summary's figures must agree.
pub fn self_costs(input: &str, symbols: &Symbols) -> (u64, u64) {
    let columns = columns_of(input);
    let (mut total, mut jit) = (0, 0);
    for record in expand::expand(input) {
        if let Record::Cost { at, pos, costs } = record {
            let first = numbers(&costs).first().copied().unwrap_or(0);
            total += first;
            if place(symbols, &at, &pos, &columns).1.is_some() {
                jit += first;
            }
        }
    }
    (total, jit)
}

/// A call's count, or a conditional jump's `taken/executed`.
fn counts(count: &str) -> Vec<u64> {
    count.split('/').map(|c| c.parse().unwrap()).collect()
}

fn place<'a>(
    symbols: &'a Symbols,
    at: &[String; 5],
    pos: &[u64],
    columns: &[&str],
) -> (Place, Option<&'a Range>) {
    let f = symbols.function(&at[0], &at[3]);
    let instr = columns.iter().position(|c| *c == "instr").map(|i| pos[i]);
    let holder = instr.and_then(|addr| symbols.at(addr));
    let stub = f.range.is_none() && is_stub(at);
    match (f.range, holder) {
        (Some(r), Some(h)) if !std::ptr::eq(r, h) => {
            let (file, pos) = map_pos(symbols, h, pos, columns);
            // The suffix of the function callgrind charged (`'2`, callers).
            let name = format!("{}{}", h.name, &f.name[r.name.len()..]);
            (
                (h.object.clone(), h.decl.0.clone(), file, name, pos),
                Some(h),
            )
        }
        (None, Some(h)) if stub => {
            let (file, pos) = map_pos(symbols, h, pos, columns);
            let base = at[3].split('\'').next().unwrap_or_default();
            let name = format!("{}{}", h.name, &f.name[base.len()..]);
            (
                (h.object.clone(), h.decl.0.clone(), file, name, pos),
                Some(h),
            )
        }
        (Some(r), _) => {
            let (file, pos) = map_pos(symbols, r, pos, columns);
            (
                (r.object.clone(), r.decl.0.clone(), file, f.name, pos),
                Some(r),
            )
        }
        (None, _) => {
            let fn_file = at[4].clone();
            (
                (at[0].clone(), fn_file, at[2].clone(), f.name, pos.to_vec()),
                None,
            )
        }
    }
}

/// Rule 2: a function callgrind named by address under `???` (that the
/// address is in no range is the caller's to check).
fn is_stub(at: &[String; 5]) -> bool {
    at[0] == "???" && address(at[3].split('\'').next().unwrap_or_default()).is_some()
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
            entry_points: Default::default(),
        },
    )
    .0
}

/// Rule 8: takes each pair's arcs out of `want` and `got` and holds
/// them to it; the differences, if any.
fn take_out_reentries(want: &mut Sums, got: &mut Sums, reentries: &[Reentry]) -> String {
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
fn columns_of(text: &str) -> Vec<&str> {
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

/// Rule 12: the ranges with QEMU's block names replaced by the guest's
/// function names, where the run is QEMU's user mode.
fn guest_named(symbols: &Symbols, input: &str) -> Option<Symbols> {
    let cmd = input
        .lines()
        .take(64)
        .find_map(|l| l.strip_prefix("cmd:"))?;
    let mut words = cmd.split_whitespace();
    let program = Path::new(words.next()?)
        .file_name()?
        .to_string_lossy()
        .into_owned();
    if !program.starts_with("qemu-") {
        return None;
    }
    let guest = words.find(|w| !w.starts_with('-') && Path::new(w).is_file())?;
    let out = std::process::Command::new("readelf")
        .arg("-sW")
        .arg(guest)
        .output()
        .ok()?;
    let hex = |s: &str| u64::from_str_radix(s, 16).ok();
    // Num: Value Size Type Bind Vis Ndx Name
    let functions: Vec<(u64, u64, String)> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let func = f.len() == 8 && matches!(f[3], "FUNC" | "IFUNC") && f[6] != "UND";
            let size = |s: &str| s.parse().ok().or_else(|| hex(s.trim_start_matches("0x")));
            func.then(|| Some((hex(f[1])?, size(f[2])?, f[7].to_string())))?
        })
        .filter(|f| f.0 != 0)
        .collect();
    // The nearest start at or below; of aliases, the first name.
    let name_of = |addr: u64| {
        let start = functions.iter().map(|f| f.0).filter(|&s| s <= addr).max()?;
        functions
            .iter()
            .filter(|f| f.0 == start)
            .min_by(|a, b| a.2.cmp(&b.2))
            .filter(|f| addr < f.0 + f.1.max(1))
            .map(|f| f.2.clone())
    };
    let mut ranges = symbols.ranges.clone();
    for r in &mut ranges {
        let addr = r.name.strip_prefix("guest-0x").and_then(hex);
        if let Some(name) = addr.and_then(name_of) {
            r.name = name;
        }
    }
    Some(Symbols {
        ranges,
        by_start: Default::default(),
        entered: Default::default(),
        entry_points: Default::default(),
    })
}

/// Rule 11: the ranges without those in the program's own code, where
/// there are such.
fn outside_program(symbols: &Symbols, input: &str) -> Option<Symbols> {
    let segments = program_code(input)?;
    let inside = |r: &&Range| segments.iter().any(|s| s.0 <= r.start && r.end <= s.1);
    if !symbols.ranges.iter().any(|r| inside(&r)) {
        return None;
    }
    Some(Symbols {
        ranges: symbols
            .ranges
            .iter()
            .filter(|r| !inside(r))
            .cloned()
            .collect(),
        by_start: Default::default(),
        entered: Default::default(),
        entry_points: Default::default(),
    })
}

/// The executable LOAD segments of the run's program, by `readelf`, if it
/// is linked at fixed addresses.
fn program_code(input: &str) -> Option<Vec<(u64, u64)>> {
    let cmd = input
        .lines()
        .take(64)
        .find_map(|l| l.strip_prefix("cmd:"))?;
    let program = cmd.split_whitespace().next()?;
    let path = match program.contains('/') {
        true => PathBuf::from(program),
        false => std::env::split_paths(&std::env::var_os("PATH")?)
            .map(|d| d.join(program))
            .find(|p| p.is_file())?,
    };
    let out = std::process::Command::new("readelf")
        .arg("-lW")
        .arg(&path)
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !text.contains("Elf file type is EXEC") {
        return None;
    }
    let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).ok();
    let segments = text.lines().filter_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        // LOAD offset vaddr paddr filesz memsz FLAGS... align
        let executable =
            f.first() == Some(&"LOAD") && f.len() > 7 && f[6..f.len() - 1].contains(&"E");
        executable.then(|| Some((hex(f[2])?, hex(f[2])? + hex(f[5])?)))?
    });
    Some(segments.collect())
}

/// Rule 10 over the output: the positions whose line is not the one
/// their instruction has, if any (the first few).
fn lines_of_positions(output: &str, symbols: &Symbols) -> String {
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
        // The jitdump beside the profile, else in /tmp (where BEAM writes
        // its own), as annotate looks for it; the perf map in /tmp.
        let jitdump = [
            dir.join(format!("jit-{pid}.dump")),
            PathBuf::from(format!("/tmp/jit-{pid}.dump")),
        ]
        .into_iter()
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
