//! toyjit: a small language compiled at run time with Cranelift; every
//! function is registered with jit-client, so callgrind-jit can name it.
//!
//! Usage: `toyjit FILE.toy...` compiles all functions of all files and
//! runs `main()`. Under Valgrind (or with CALLGRIND_JIT=1) it writes
//! jit-PID.dump with each function's code and line table.

mod codegen;
mod lexer;
mod parser;

use std::process::ExitCode;

use jit_client::LineEntry;

fn main() -> ExitCode {
    match run() {
        Ok(code) => ExitCode::from(code as u8),
        Err(e) => {
            eprintln!("toyjit: {e}");
            ExitCode::from(1)
        }
    }
}

fn run() -> Result<i64, String> {
    let files: Vec<String> = std::env::args().skip(1).collect();
    if files.is_empty() {
        return Err("usage: toyjit FILE.toy...".into());
    }
    let mut functions = Vec::new();
    for file in &files {
        let src = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
        let path = std::fs::canonicalize(file)
            .map_err(|e| format!("{file}: {e}"))?
            .display()
            .to_string();
        let parsed = parser::parse(lexer::lex(&src).map_err(|e| format!("{file}:{e}"))?)
            .map_err(|e| format!("{file}:{e}"))?;
        functions.extend(parsed.into_iter().map(|f| (f, path.clone())));
    }
    let (module, compiled) = codegen::compile(&functions)?;
    register(&module, &compiled);
    let main = compiled
        .iter()
        .find(|c| c.name == "main")
        .ok_or("no function 'main'")?;
    // SAFETY: `main` was compiled with the signature fn() -> i64.
    let entry: extern "C" fn() -> i64 =
        unsafe { std::mem::transmute(module.get_finalized_function(main.id)) };
    Ok(entry())
}

/// Tells jit-client (and so Valgrind and perf) about every function.
fn register(module: &cranelift_jit::JITModule, compiled: &[codegen::Compiled]) {
    let session = jit_client::global();
    for c in compiled {
        let addr = module.get_finalized_function(c.id);
        // SAFETY: Cranelift finalized `size` bytes of code at `addr`.
        let code = unsafe { std::slice::from_raw_parts(addr, c.size) };
        let lines: Vec<LineEntry> = c
            .lines
            .iter()
            .map(|&(offset, line, col)| LineEntry::new(offset, line, col, &c.file))
            .collect();
        let _ = session.code_loaded(code, c.name.as_bytes(), &lines);
    }
}
