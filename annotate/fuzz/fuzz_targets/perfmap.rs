//! The perf map reader, the name splitters and the symbol table.
#![no_main]

use annotate::symbols::SymbolTable;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut table = SymbolTable::builder();
    table.add_perf_map("perf-1.map".into(), data);
    let table = table.build();
    for id in table.ids().take(64) {
        let _ = table.lookup(table.symbol(id).start);
    }
});
