//! Indexing a perf map in one pass: an entry per usable line, holding the
//! line's offset; the name is decoded only for the ranges a profile
//! touches. Lines that do not parse (or have size 0) are counted.

use memchr::memchr_iter;

use super::{Entry, SymbolTable, NO_DEBUG};
use crate::perfmap;
use jitdump::file_window::Window;

/// Bytes asked of the window at a time (lines are far shorter).
const STEP: usize = 1 << 20;

/// What the pass skipped.
#[derive(Default)]
struct Skipped {
    lines: usize,
    unterminated_tail: bool,
}

pub fn add(table: &mut SymbolTable, source: usize) -> std::io::Result<()> {
    let file = table.sources[source].file.try_clone()?;
    let mut window = Window::new(&file)?;
    let mut skipped = Skipped::default();
    let mut offset = 0u64;
    let len = window.len();
    // A line is rarely shorter than 32 bytes: grown seldom, if ever.
    table.reserve(usize::try_from(len / 32).unwrap_or(0));
    let mut want = STEP;
    while offset < len {
        let bytes = window.at(offset, want)?;
        let whole = match bytes.iter().rposition(|&b| b == b'\n') {
            Some(last) => &bytes[..=last],
            None if offset + bytes.len() as u64 >= len => {
                skipped.unterminated_tail = !bytes.is_empty();
                bytes
            }
            None => {
                want = bytes.len() * 2;
                continue;
            }
        };
        let mut line_start = 0;
        let ends =
            memchr_iter(b'\n', whole).chain((!whole.ends_with(b"\n")).then_some(whole.len()));
        for end in ends {
            let line = &whole[line_start..end];
            line_start = end + 1;
            let at = offset + (line.as_ptr() as usize - whole.as_ptr() as usize) as u64;
            add_line(table, source, line, at, &mut skipped);
        }
        offset += whole.len() as u64;
        want = STEP;
    }
    report(table, source, &skipped);
    Ok(())
}

fn add_line(table: &mut SymbolTable, source: usize, line: &[u8], at: u64, skipped: &mut Skipped) {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return;
    }
    match perfmap::fields(line) {
        Some((start, size, _)) if size > 0 => table.push(Entry {
            start,
            size,
            record: at,
            debug: NO_DEBUG,
            source: source as u32,
            module: 0,
        }),
        _ => skipped.lines += 1,
    }
}

fn report(table: &mut SymbolTable, source: usize, skipped: &Skipped) {
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
    use crate::symbols::SymbolTable;

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
