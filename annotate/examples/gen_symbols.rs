//! Writes symbol files of the size large services write, and a profile
//! that touches a few of their functions, for the scale measurements
//! (scripts/bench-symbols.sh).
//!
//! Usage: gen_symbols FUNCTIONS TOUCHED OUT_DIR
//! Writes into OUT_DIR:
//! - jit-4242.dump: FUNCTIONS functions of 240 code bytes, each with a
//!   DEBUG_INFO of 8 line entries, as V8 writes them (one record per
//!   function, in load order, 256 bytes apart);
//! - perf-4242.map: the same functions as V8-style perf map lines;
//! - callgrind.out.4242: a profile with instruction positions whose JIT
//!   code lies in TOUCHED of those functions, spread evenly over the file.

use std::fs::File;
use std::io::{BufWriter, Write};

use jitdump::write;
use jitdump::{CodeLoad, DebugEntry};

const PID: u32 = 4242;
const BASE: u64 = 0x7f00_0000_0000;
const STRIDE: u64 = 256;
const CODE_SIZE: u64 = 240;
const LINES: u64 = 8;

fn file_of(i: u64) -> String {
    format!("/app/m{:04}.js", i % 5000)
}

fn name_of(i: u64) -> String {
    format!("JS:*fn_{i} {}:{}:5", file_of(i), 10 + i % 90)
}

/// Code objdump reads as x86-64: `add rax,1` over and over, then `ret`.
fn code() -> Vec<u8> {
    let mut code: Vec<u8> = [0x48, 0x83, 0xc0, 0x01].repeat(CODE_SIZE as usize / 4);
    *code.last_mut().unwrap() = 0xc3;
    code
}

fn jitdump(n: u64, path: &std::path::Path) -> std::io::Result<()> {
    let mut out = BufWriter::with_capacity(1 << 20, File::create(path)?);
    let mut buf = Vec::new();
    write::header(&mut buf, 62, PID, 1);
    let code = code();
    for i in 0..n {
        let addr = BASE + i * STRIDE;
        let file = file_of(i);
        let entries = (0..LINES).map(|k| DebugEntry {
            addr: addr + 0x40 + k * (CODE_SIZE / LINES),
            line: (10 + i % 90 + k) as u32,
            discrim: 1,
            file: file.as_bytes(),
        });
        write::debug_info(&mut buf, i, addr, entries);
        let name = name_of(i);
        let load = CodeLoad {
            pid: PID,
            tid: PID,
            code_addr: addr,
            code_size: CODE_SIZE,
            code_index: i,
            name: name.as_bytes(),
            code: None,
        };
        write::code_load_head(&mut buf, i, &load);
        buf.extend_from_slice(&code);
        out.write_all(&buf)?;
        buf.clear();
    }
    out.flush()
}

fn perf_map(n: u64, path: &std::path::Path) -> std::io::Result<()> {
    let mut out = BufWriter::with_capacity(1 << 20, File::create(path)?);
    for i in 0..n {
        writeln!(
            out,
            "{:x} {:x} {}",
            BASE + i * STRIDE,
            CODE_SIZE,
            name_of(i)
        )?;
    }
    out.flush()
}

/// `main` calls each touched function once; each runs 4 of its lines.
fn profile(n: u64, touched: u64, path: &std::path::Path) -> std::io::Result<()> {
    let mut out = BufWriter::new(File::create(path)?);
    let step = (n / touched.max(1)).max(1);
    let picked: Vec<u64> = (0..n)
        .step_by(step as usize)
        .take(touched as usize)
        .collect();
    writeln!(
        out,
        "# callgrind format\nversion: 1\ncreator: gen_symbols\npid: {PID}"
    )?;
    writeln!(
        out,
        "cmd: ./service\npart: 1\n\npositions: instr line\nevents: Ir\n"
    )?;
    let mut total = 0u64;
    for (k, &i) in picked.iter().enumerate() {
        let addr = BASE + i * STRIDE;
        writeln!(out, "ob=(1) ???\nfl=(1) ???\nfn=({}) 0x{addr:016x}", k + 2)?;
        for line in 0..4u64 {
            writeln!(out, "0x{:x} 0 {}", addr + 0x40 + line * 30, 10 + line)?;
            total += 10 + line;
        }
        writeln!(out)?;
    }
    writeln!(
        out,
        "ob=(2) /usr/bin/service\nfl=(2) service.c\nfn=(1) main"
    )?;
    writeln!(out, "0x401000 10 5")?;
    total += 5;
    for (k, &i) in picked.iter().enumerate() {
        let addr = BASE + i * STRIDE;
        writeln!(out, "cob=(1)\ncfi=(1)\ncfn=({})", k + 2)?;
        writeln!(out, "calls=1 0x{addr:x} 0\n0x401004 11 {}", 46)?;
    }
    writeln!(out, "\ntotals: {total}")?;
    out.flush()
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let [_, n, touched, dir] = args.as_slice() else {
        eprintln!("usage: gen_symbols FUNCTIONS TOUCHED OUT_DIR");
        std::process::exit(2);
    };
    let n: u64 = n.parse().expect("FUNCTIONS: a number");
    let touched: u64 = touched.parse().expect("TOUCHED: a number");
    let dir = std::path::Path::new(dir);
    std::fs::create_dir_all(dir)?;
    jitdump(n, &dir.join(format!("jit-{PID}.dump")))?;
    perf_map(n, &dir.join(format!("perf-{PID}.map")))?;
    profile(n, touched, &dir.join(format!("callgrind.out.{PID}")))?;
    Ok(())
}
