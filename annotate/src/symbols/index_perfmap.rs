//! Indexing a perf map in one pass: an entry per usable line, holding the
//! line's offset; the name is decoded only for the ranges a profile
//! touches. Lines that do not parse (or have size 0) are counted.

use std::fs::File;
use std::io;
use std::ops::Range;

use memchr::{memchr, memchr_iter};

use super::order::Order;
use super::room::{self, Filled, Room};
use super::{Entry, SymbolTable, Touched, NO_DEBUG};
use crate::perfmap::{self, MapWriter};
use jitdump::file_window::Window;

/// Bytes asked of the window at a time (lines are far shorter).
const STEP: usize = 1 << 20;

/// A map from this size on is read as two halves at once, one on a
/// thread of its own: parsing the lines is most of indexing a large map.
const SPLIT_FROM: u64 = 4 << 20;

/// A line is rarely shorter than this: room for the entries is reserved
/// from it, grown seldom, if ever.
const SHORT_LINE: u64 = 32;

/// What the pass skipped.
#[derive(Default)]
struct Skipped {
    lines: usize,
    unterminated_tail: bool,
    /// Usable lines whose range [`Keep`] left out.
    untouched: usize,
}

/// Indexes perf map `source`; says whether its entries are in address
/// order. With `touched`, a map written a function at a time keeps only
/// the ranges it keeps (see [`Touched`]).
pub fn add(table: &mut SymbolTable, source: usize, touched: Option<&Touched>) -> io::Result<Order> {
    add_splitting_from(table, source, SPLIT_FROM, touched)
}

/// [`add`], reading maps from `split_from` bytes on as two halves.
fn add_splitting_from(
    table: &mut SymbolTable,
    source: usize,
    split_from: u64,
    touched: Option<&Touched>,
) -> io::Result<Order> {
    let file = table.sources[source].file.try_clone()?;
    let len = Window::new(&file)?.len();
    let writer = writer_of(&file)?;
    let by_function = matches!(writer, MapWriter::V8 | MapWriter::HotSpot);
    let keep = Keep(touched.filter(|_| by_function));
    let mut skipped = Skipped::default();
    let order = match split_point(&file, len, split_from)? {
        Some(split) => add_halves(table, (source, keep), &file, split, &mut skipped)?,
        None => {
            table.reserve(usize::try_from(len / SHORT_LINE).unwrap_or(0));
            scan(&file, (source, keep), 0..len, &mut skipped, |e| {
                table.push(e)
            })?
        }
    };
    report(table, source, &skipped);
    table.sources[source].by_function = by_function;
    let path = table.sources[source].path.clone();
    table.report.map_writers.push((path, writer));
    Ok(order)
}

/// Which runtime wrote the map, told by its first line.
fn writer_of(file: &File) -> io::Result<MapWriter> {
    let mut head = [0; 4096];
    let len = std::os::unix::fs::FileExt::read_at(file, &mut head, 0)?;
    let first = head[..len]
        .split(|&b| b == b'\n')
        .next()
        .unwrap_or_default();
    Ok(perfmap::writer(first))
}

/// Which ranges are kept: all, or those [`Touched`] keeps.
#[derive(Clone, Copy)]
struct Keep<'t>(Option<&'t Touched>);

impl Keep<'_> {
    #[inline]
    fn keeps(&self, entry: &Entry) -> bool {
        self.0.is_none_or(|t| t.keeps(entry.start, entry.size))
    }
}

/// Where a large map is cut in two, and how many lines each half is
/// expected to hold.
struct Split {
    mid: u64,
    len: u64,
    front_lines: usize,
    back_lines: usize,
}

/// Cuts a map from `split_from` bytes on after the first line end from
/// its middle on; the halves' lines are estimated from its first
/// [`STEP`] bytes, with a quarter's margin: lines further on may be
/// shorter (node's map begins with its builtins, and a 1/32 margin let
/// both halves spill, their entries then copied again), and room left
/// untouched costs no memory.
fn split_point(file: &File, len: u64, split_from: u64) -> io::Result<Option<Split>> {
    if len < split_from {
        return Ok(None);
    }
    let mut window = Window::new(file)?;
    let sample = window.at(0, STEP)?;
    let sample = &sample[..sample.len().min(STEP)];
    let (lines, sampled) = (
        memchr_iter(b'\n', sample).count() as u64,
        sample.len() as u64,
    );
    let estimate = |bytes: u64| {
        let lines = bytes.saturating_mul(lines) / sampled.max(1);
        usize::try_from(lines + lines / 4 + 1024).unwrap_or(usize::MAX)
    };
    let middle = len / 2;
    let bytes = window.at(middle, STEP)?;
    Ok(memchr(b'\n', bytes).map(|at| {
        let mid = middle + at as u64 + 1;
        Split {
            mid,
            len,
            front_lines: estimate(mid),
            back_lines: estimate(len - mid),
        }
    }))
}

/// Indexes the two halves of a large map at once, each into its room of
/// the table's memory, the back one on a thread of its own (on this one
/// where no thread can be made).
fn add_halves(
    table: &mut SymbolTable,
    (source, keep): (usize, Keep),
    file: &File,
    split: Split,
    skipped: &mut Skipped,
) -> io::Result<Order> {
    table.reserve(split.front_lines.saturating_add(split.back_lines));
    let (mut front, back) = room::split(&mut table.entries, split.front_lines);
    let mut back = Half::Empty(back, Skipped::default());
    let (front, order) = std::thread::scope(|scope| -> io::Result<(Filled, Order)> {
        let read_back = || back.read(file, (source, keep), split.mid..split.len);
        let thread = crate::memory::helper_thread().spawn_scoped(scope, read_back);
        let order = scan(file, (source, keep), 0..split.mid, skipped, |e| {
            front.push(e)
        })?;
        if let Ok(thread) = thread {
            thread
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p))?;
        }
        Ok((front.filled(), order))
    })?;
    back.read(file, (source, keep), split.mid..split.len)?;
    let Half::Read(back, back_skipped, back_order) = back else {
        unreachable!("the back half is read above");
    };
    room::join(&mut table.entries, split.front_lines, front, back);
    skipped.lines += back_skipped.lines;
    skipped.unterminated_tail = back_skipped.unterminated_tail;
    skipped.untouched += back_skipped.untouched;
    Ok(order.then(back_order))
}

/// The back half: its room, then what was read into it.
enum Half<'a> {
    Empty(Room<'a>, Skipped),
    Read(Filled, Skipped, Order),
    Gone,
}

impl Half<'_> {
    /// Reads `part` into the room, if that has not been done.
    fn read(&mut self, file: &File, source: (usize, Keep), part: Range<u64>) -> io::Result<()> {
        *self = match std::mem::replace(self, Half::Gone) {
            Half::Empty(mut room, mut skipped) => {
                let order = scan(file, source, part, &mut skipped, |e| room.push(e))?;
                Half::Read(room.filled(), skipped, order)
            }
            done => done,
        };
        Ok(())
    }
}

/// Indexes the lines of the map's bytes `part` (starting at a line's
/// start), giving each usable line's entry that `keep` keeps to `push` in order; says
/// whether they are in address order.
fn scan(
    file: &File,
    (source, keep): (usize, Keep),
    part: Range<u64>,
    skipped: &mut Skipped,
    mut push: impl FnMut(Entry),
) -> io::Result<Order> {
    let mut order = Order::default();
    let cut = crate::newlines::each_line(file, part, |line, at| match entry(source, line, at) {
        Some(Some(entry)) if keep.keeps(&entry) => {
            order.note(&entry);
            push(entry)
        }
        Some(Some(_)) => skipped.untouched += 1,
        Some(None) => skipped.lines += 1,
        None => {}
    })?;
    skipped.unterminated_tail |= cut;
    Ok(order)
}

/// A line's entry: `None` for a blank line, `Some(None)` for one that
/// does not parse or has size 0.
fn entry(source: usize, line: &[u8], at: u64) -> Option<Option<Entry>> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    Some(match perfmap::fields(line) {
        Some((start, size, _)) if size > 0 => Some(Entry {
            start,
            size,
            record: at,
            debug: NO_DEBUG,
            source: source as u32,
        }),
        _ => None,
    })
}

fn report(table: &mut SymbolTable, source: usize, skipped: &Skipped) {
    table.sources[source].untouched = skipped.untouched;
    let path = table.sources[source].path.clone();
    if skipped.lines > 0 {
        let what = "perf map lines skipped (unparsable or size 0)".to_string();
        table
            .report
            .problems
            .push((path.clone(), what, skipped.lines));
    }
    if skipped.unterminated_tail {
        let what = "last line has no newline".to_string();
        table.report.problems.push((path, what, 1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symbols::SourceKind;

    /// Each entry's start, size and line offset, and the problems.
    type Indexed = (Vec<(u64, u64, u64)>, Vec<(String, usize)>);

    /// `map` indexed with halves from `split_from` bytes on.
    fn indexed(map: &[u8], split_from: u64) -> Indexed {
        let file = crate::output::file_holding(map).unwrap();
        let mut table = SymbolTable::default();
        let source = table.add_source("perf-1.map".into(), SourceKind::PerfMap, file);
        add_splitting_from(&mut table, source, split_from, None).unwrap();
        let entries = table.entries.iter().map(|e| (e.start, e.size, e.record));
        let problems = table.report.problems.iter().map(|p| (p.1.clone(), p.2));
        (entries.collect(), problems.collect())
    }

    /// A map of long lines and short ones (2.5 MB: read in several
    /// steps), bad, blank and CRLF lines among them, and a tail with no
    /// newline.
    fn mixed_map(long_first: bool) -> Vec<u8> {
        let mut map = Vec::new();
        for i in 0..30000u64 {
            let long = (i < 10000) == long_first;
            let name = if long { "n".repeat(200) } else { "s".into() };
            map.extend(format!("{:x} 10 {name}\n", 0x1000 + i * 16).as_bytes());
            match i % 97 {
                0 => map.extend(b"zz 10 bad\n"),
                1 => map.extend(b"\n  \r\n"),
                2 => map.extend(b"10 0 empty\r\n"),
                _ => {}
            }
        }
        map.extend(b"ffff 4 cut");
        map
    }

    #[test]
    fn halves_index_as_one_pass_does() {
        // Room for each half is sized from the whole map's lines per byte:
        // with the long lines first the back half runs out of it, with
        // the short ones first the front half does.
        for long_first in [true, false] {
            let map = mixed_map(long_first);
            let whole = indexed(&map, u64::MAX);
            assert_eq!(whole.0.len(), 30001);
            assert_eq!(whole.1.len(), 2);
            for split_from in [0, 1, 4096, map.len() as u64] {
                assert_eq!(indexed(&map, split_from), whole, "{split_from}");
            }
        }
    }

    #[test]
    fn a_large_map_is_cut_after_a_line_end_near_its_middle_with_room_for_each_half() {
        // Lines of 14 to 45 bytes, in a cycle: the first MiB has the
        // whole map's lines per byte.
        let map: Vec<u8> = (0..100_000u64)
            .flat_map(|i| {
                format!(
                    "{:08x} 10 {}\n",
                    0x1000 + i,
                    "n".repeat(1 + i as usize % 32)
                )
                .into_bytes()
            })
            .collect();
        let len = map.len() as u64;
        let file = crate::output::file_holding(&map).unwrap();
        assert!(split_point(&file, len, len + 1).unwrap().is_none());
        // No line is bad: nothing is reported.
        let (entries, problems) = indexed(&map, 0);
        assert_eq!((entries.len(), problems), (100_000, vec![]));
        for split_from in [0, len] {
            let split = split_point(&file, len, split_from).unwrap().unwrap();
            let mid = split.mid as usize;
            assert_eq!((map[mid - 1], split.len), (b'\n', len));
            assert!((len / 2..len / 2 + 46).contains(&split.mid));
            let lines = |bytes: &[u8]| memchr_iter(b'\n', bytes).count();
            for (want, got) in [
                (lines(&map[..mid]), split.front_lines),
                (lines(&map[mid..]), split.back_lines),
            ] {
                // Room for every line, and no more than a quarter's margin
                // (and 1,024) over the estimate of the first MiB.
                assert!(
                    (want..want + want / 3 + 1024).contains(&got),
                    "{want} {got}"
                );
            }
        }
    }

    #[test]
    fn crlf_blank_and_bad_lines_and_a_cut_tail() {
        let map = b"zz 10 f\n10 0 empty\n\n10 20\r\n100 20 ok\r\n  \n300 4 cut";
        let mut table = SymbolTable::builder();
        table.add_perf_map("perf-1.map".into(), map);
        let table = table.build();
        let names: Vec<_> = table
            .ids()
            .map(|id| table.symbol(id).name.clone())
            .collect();
        assert_eq!(names, ["ok", "cut"]);
        let problems: Vec<_> = table
            .report
            .problems
            .iter()
            .map(|p| (p.1.as_str(), p.2))
            .collect();
        assert_eq!(
            problems,
            [
                ("perf map lines skipped (unparsable or size 0)", 3),
                ("last line has no newline", 1)
            ]
        );
    }
}
