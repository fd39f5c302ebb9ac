//! Writes symbol files of the size large services write, and a profile
//! that touches a few of their functions, for the scale measurements
//! (scripts/bench-symbols.sh).
//!
//! Usage: gen_symbols FUNCTIONS TOUCHED OUT_DIR [ordered|interleaved]
//! Writes into OUT_DIR:
//! - jit-4242.dump: FUNCTIONS functions of 240 code bytes, each with a
//!   DEBUG_INFO of 8 line entries, as V8 writes them (one record per
//!   function, 256 bytes apart);
//! - perf-4242.map: the same functions as V8-style perf map lines;
//! - callgrind.out.4242: a profile with instruction positions whose JIT
//!   code lies in TOUCHED of those functions, spread evenly over the file.
//!
//! The functions are loaded in address order (`ordered`, the default), or
//! (`interleaved`) from two code spaces by turns, a run of 1 to 11 from
//! one then from the other, each space in its own address order: the
//! order real V8 and HotSpot files have (node's map in tests/fixtures goes
//! back to a lower address at one line in eleven).

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

/// The functions' numbers (their address order) in load order.
fn load_order(n: u64, interleaved: bool) -> Vec<u64> {
    if !interleaved {
        return (0..n).collect();
    }
    let (mut low, mut high) = (0..n / 2, n / 2..n);
    let mut order = Vec::with_capacity(n as usize);
    let mut seed = 7u64;
    let mut turn = false;
    while !(low.is_empty() && high.is_empty()) {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let run = 1 + (seed >> 33) % 11;
        let space = match (turn, low.is_empty(), high.is_empty()) {
            (false, false, _) | (true, _, true) => &mut low,
            _ => &mut high,
        };
        order.extend(space.by_ref().take(run as usize));
        turn = !turn;
    }
    order
}

fn jitdump(order: &[u64], path: &std::path::Path) -> std::io::Result<()> {
    let mut out = BufWriter::with_capacity(1 << 20, File::create(path)?);
    let mut buf = Vec::new();
    write::header(&mut buf, 62, PID, 1);
    let code = code();
    for (seq, &i) in (0u64..).zip(order) {
        let addr = BASE + i * STRIDE;
        let file = file_of(i);
        let entries = (0..LINES).map(|k| DebugEntry {
            addr: addr + 0x40 + k * (CODE_SIZE / LINES),
            line: (10 + i % 90 + k) as u32,
            discrim: 1,
            file: file.as_bytes(),
        });
        write::debug_info(&mut buf, seq, addr, entries);
        let name = name_of(i);
        let load = CodeLoad {
            pid: PID,
            tid: PID,
            code_addr: addr,
            code_size: CODE_SIZE,
            code_index: seq,
            name: name.as_bytes(),
            code: None,
        };
        write::code_load_head(&mut buf, seq, &load);
        buf.extend_from_slice(&code);
        out.write_all(&buf)?;
        buf.clear();
    }
    out.flush()
}

fn perf_map(order: &[u64], path: &std::path::Path) -> std::io::Result<()> {
    let mut out = BufWriter::with_capacity(1 << 20, File::create(path)?);
    for &i in order {
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
    let (n, touched, dir, order) = match args.as_slice() {
        [_, n, touched, dir] => (n, touched, dir, "ordered"),
        [_, n, touched, dir, order] => (n, touched, dir, order.as_str()),
        _ => usage(),
    };
    let interleaved = match order {
        "ordered" => false,
        "interleaved" => true,
        _ => usage(),
    };
    let n: u64 = n.parse().expect("FUNCTIONS: a number");
    let touched: u64 = touched.parse().expect("TOUCHED: a number");
    let dir = std::path::Path::new(dir);
    std::fs::create_dir_all(dir)?;
    let order = load_order(n, interleaved);
    jitdump(&order, &dir.join(format!("jit-{PID}.dump")))?;
    perf_map(&order, &dir.join(format!("perf-{PID}.map")))?;
    profile(n, touched, &dir.join(format!("callgrind.out.{PID}")))?;
    Ok(())
}

fn usage() -> ! {
    eprintln!("usage: gen_symbols FUNCTIONS TOUCHED OUT_DIR [ordered|interleaved]");
    std::process::exit(2);
}
