//! The callgrind rewriter on arbitrary input, with the C demo's symbols so
//! JIT blocks are exercised too: errors are fine, panics and hangs are not.
#![no_main]

use annotate::callgrind::Rewrite;
use annotate::symbols::{BiasMode, SymbolTable};
use libfuzzer_sys::fuzz_target;

static DUMP: &[u8] = include_bytes!("../../../tests/fixtures/c-demo/jit-9747.dump");

thread_local! {
    /// The table is not `Sync` (it decodes ranges lazily): one a thread.
    static TABLE: SymbolTable = {
        let mut t = SymbolTable::builder();
        t.add_jitdump("jit-9747.dump".into(), DUMP, BiasMode::Detect)
            .expect("fixture");
        t.build()
    };
}

fuzz_target!(|data: &[u8]| {
    TABLE.with(|table| {
        let _ = Rewrite::new(table).run(std::io::Cursor::new(data), std::io::sink());
        let every = Rewrite::new(table).every_position();
        let _ = every.run(std::io::Cursor::new(data), std::io::sink());
    });
});
