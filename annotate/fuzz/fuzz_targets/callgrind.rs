//! The callgrind rewriter on arbitrary input, with the C demo's symbols so
//! JIT blocks are exercised too: errors are fine, panics and hangs are not.
#![no_main]

use std::sync::OnceLock;

use annotate::callgrind::passes;
use annotate::symbols::{BiasMode, SymbolTable};
use libfuzzer_sys::fuzz_target;

static DUMP: &[u8] = include_bytes!("../../../tests/fixtures/c-demo/jit-9747.dump");

fn table() -> &'static SymbolTable {
    static TABLE: OnceLock<SymbolTable> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = SymbolTable::builder();
        t.add_jitdump("jit-9747.dump".into(), DUMP, BiasMode::Detect)
            .expect("fixture");
        t.build()
    })
}

fuzz_target!(|data: &[u8]| {
    let _ = passes::lazy(std::io::Cursor::new(data), std::io::sink(), table());
    let _ = passes::exact(std::io::Cursor::new(data), std::io::sink(), table());
});
