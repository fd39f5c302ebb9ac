//! Rewriting as the command does, for tests: a symbol table from files,
//! fast mode with the exact-mode retry. Shared by the integration suite
//! and the package's fast tests (annotate/tests/fast.rs).

use std::io::BufReader;
use std::path::PathBuf;

use annotate::callgrind::{rewrite, Mode, RewriteError, Stats};
use annotate::symbols::{BiasMode, SymbolTable};

/// A symbol table from jitdump and perf map files.
pub fn table(sources: &[PathBuf]) -> SymbolTable {
    let mut table = SymbolTable::new();
    for path in sources {
        let data = std::fs::read(path).unwrap();
        if annotate::jitdump::is_jitdump(&data) {
            table
                .add_jitdump(path.clone(), &data, BiasMode::Detect)
                .unwrap();
        } else {
            table.add_perf_map(path.clone(), &data);
        }
    }
    table.finish();
    table
}

/// Rewrites in `mode`, reading through a `chunk`-byte buffer.
pub fn rewrite_mode(
    input: &[u8],
    table: &SymbolTable,
    chunk: usize,
    mode: Mode,
) -> (Vec<u8>, Stats) {
    let mut out = Vec::new();
    let stats = rewrite(
        BufReader::with_capacity(chunk, input),
        &mut out,
        table,
        mode,
    )
    .unwrap();
    (out, stats)
}

/// Rewrites as the command does: fast mode, exact where the input needs it.
pub fn rewrite_bytes(input: &[u8], table: &SymbolTable, chunk: usize) -> (Vec<u8>, Stats) {
    let mut out = Vec::new();
    let fast = rewrite(
        BufReader::with_capacity(chunk, input),
        &mut out,
        table,
        Mode::Fast,
    );
    match fast {
        Err(RewriteError::NeedsExactMode { .. }) => rewrite_mode(input, table, chunk, Mode::Exact),
        other => (out, other.unwrap()),
    }
}
