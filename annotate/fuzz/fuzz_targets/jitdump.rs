//! The jitdump reader and the symbol table built from it.
#![no_main]

use annotate::symbols::{BiasMode, SymbolTable};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut table = SymbolTable::builder();
    if table
        .add_jitdump("f.dump".into(), data, BiasMode::Detect)
        .is_ok()
    {
        let table = table.build();
        for id in table.ids().take(64) {
            let s = table.symbol(id);
            let _ = table.lookup(s.start);
            let _ = s.row_at(s.start.wrapping_add(s.size / 2));
        }
    }
});
