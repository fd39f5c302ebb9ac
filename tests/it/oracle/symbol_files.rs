//! The oracle's own reading of jitdumps (with linux-perf-data, not the
//! annotator's reader) and perf maps into JIT ranges, with rule 6's
//! dropped line tables.

use super::*;

/// The line tables of a jitdump that rule 6 drops (read independently).
pub fn dropped_tables(path: &Path) -> usize {
    let mut reader = JitDumpReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let mut dropped = 0;
    while let Ok(Some(raw)) = reader.next_record() {
        if let Ok(JitDumpRecord::CodeDebugInfo(d)) = raw.parse() {
            dropped += usize::from(dropped_table(&raw.body.as_slice(), &d));
        }
    }
    dropped
}

/// Rule 6: a line table whose file names are not text, or whose entries
/// do not fill its record (more than zero padding of under 8 bytes after
/// them): V8 writes both.
fn dropped_table(body: &[u8], d: &linux_perf_data::jitdump::JitCodeDebugInfoRecord) -> bool {
    let files = d.entries.iter().map(|e| e.file_path.as_slice());
    let used = 16 + files.clone().map(|f| 16 + f.len() + 1).sum::<usize>();
    let rest = body.get(used..).unwrap_or_default();
    let filled = rest.len() < 8 && rest.iter().all(|&b| b == 0);
    !filled
        || !files
            .into_iter()
            .all(|f| is_text(&String::from_utf8_lossy(&f)))
}

/// Reads a jitdump's ranges into `ranges`; true where V8 wrote it (rule
/// 13: a runtime that compiles a function at a time).
pub(super) fn read_jitdump(path: &Path, object: &str, ranges: &mut Vec<Range>) -> bool {
    let mut reader = JitDumpReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let mut debug: BTreeMap<u64, Vec<(u64, u64, String)>> = BTreeMap::new();
    let mut loads = Vec::new();
    while let Ok(Some(raw)) = reader.next_record() {
        match raw.parse() {
            Ok(JitDumpRecord::CodeDebugInfo(d)) if !dropped_table(&raw.body.as_slice(), &d) => {
                let entries: Vec<_> = d
                    .entries
                    .iter()
                    .map(|e| {
                        let file = String::from_utf8_lossy(&e.file_path.as_slice()).into_owned();
                        (e.code_addr, u64::from(e.line), file)
                    })
                    .collect();
                debug.insert(d.code_addr, entries);
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
    v8
}

/// Reads a perf map's ranges into `ranges`; true where V8 or HotSpot wrote
/// it, as its first line shows (rule 13).
pub(super) fn read_perf_map(data: &[u8], object: &str, ranges: &mut Vec<Range>) -> bool {
    let text = String::from_utf8_lossy(data);
    for line in text.lines() {
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
    text.lines().next().is_some_and(by_v8_or_hotspot)
}

/// A perf map line as V8 writes it (its name tagged with what the code
/// is, one colon after the tag) or HotSpot (`0x` and 16 digits twice).
/// The tags are the oracle's own list, written from V8's log tags, not
/// read from the annotator's (`perfmap::writer`), which it checks.
fn by_v8_or_hotspot(line: &str) -> bool {
    const TAGS: [&str; 12] = [
        "Builtin",
        "BytecodeHandler",
        "Callback",
        "Eval",
        "Function",
        "Handler",
        "JS",
        "LazyCompile",
        "RegExp",
        "Script",
        "Stub",
        "Wasm",
    ];
    let words: Vec<&str> = line.split_whitespace().collect();
    let wide = |w: &&str| w.len() == 18 && w.starts_with("0x");
    if words.len() >= 2 && words[..2].iter().all(wide) {
        return true;
    }
    let name = line.splitn(3, ' ').nth(2).unwrap_or_default();
    name.split_once(':')
        .is_some_and(|(tag, rest)| TAGS.contains(&tag) && !rest.starts_with(':'))
}

pub(super) fn range(
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
