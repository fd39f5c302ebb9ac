//! Symbols from a perf map: a name per range, a location only if the name
//! carries one.

use super::{Symbol, SymbolTable};
use crate::perfmap::PerfMap;

pub fn add(table: &mut SymbolTable, source: usize, map: &PerfMap) {
    for entry in &map.entries {
        let split = super::runtime_names::split(&entry.name);
        let file = split.file.as_deref().map(|f| table.intern_file(f));
        table.push(Symbol {
            name: split.name,
            file,
            line: split.line,
            start: entry.start,
            size: entry.size,
            rows: Vec::new(),
            source,
        });
    }
    let path = table.sources[source].path.clone();
    if !map.skipped.is_empty() {
        let what = "perf map lines skipped (unparsable or size 0)".to_string();
        table
            .report
            .problems
            .push((path.clone(), what, map.skipped.len()));
    }
    if map.unterminated_tail {
        table
            .report
            .problems
            .push((path, "last line has no newline".to_string(), 1));
    }
}
