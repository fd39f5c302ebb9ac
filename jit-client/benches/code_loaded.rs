//! Cost of one `code_loaded` (1 KiB of code, 16 line entries, files written
//! per record), beside the naive writer some runtimes use (one `write`
//! syscall per field), and the cost of a call when the session is off.
//!
//! Each sample starts fresh files, so the numbers describe a JIT's
//! realistic file sizes rather than one ever-growing multi-GB file.

use std::fs::File;
use std::io::Write;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use jit_client::{Activation, LineEntry, Options, Session};

const NAME: &[u8] = b"bench_function(bench.toy:10)";

fn lines() -> Vec<LineEntry<'static>> {
    (0..16)
        .map(|i| LineEntry::new(i * 64, 10 + i, 1, "bench/source.toy"))
        .collect()
}

fn fresh_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("cgjit-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Times `iters` loads into a new session's files.
fn time_session(iters: u64, perf_map: bool) -> Duration {
    let dir = fresh_dir();
    let options = Options::default()
        .activation(Activation::On)
        .jitdump_dir(&dir)
        .perf_map_dir(&dir);
    let session = Session::open(options.perf_map(perf_map));
    let (code, lines) = (vec![0xc3u8; 1024], lines());
    let start = Instant::now();
    for _ in 0..iters {
        session.code_loaded(&code, NAME, &lines).unwrap();
    }
    start.elapsed()
}

fn enabled(c: &mut Criterion) {
    c.bench_function("code_loaded/jitdump+perf map", |b| {
        b.iter_custom(|n| time_session(n, true))
    });
    c.bench_function("code_loaded/jitdump only", |b| {
        b.iter_custom(|n| time_session(n, false))
    });
}

/// The same records written field by field, one syscall each.
fn naive_write(file: &mut File, map: &mut File, code: &[u8], lines: &[LineEntry], index: u64) {
    let addr = code.as_ptr() as u64;
    let w = |f: &mut File, b: &[u8]| f.write_all(b).unwrap();
    w(file, &2u32.to_ne_bytes());
    w(file, &0u32.to_ne_bytes());
    w(file, &0u64.to_ne_bytes());
    w(file, &addr.to_ne_bytes());
    w(file, &(lines.len() as u64).to_ne_bytes());
    for l in lines {
        w(file, &(addr + u64::from(l.offset)).to_ne_bytes());
        w(file, &l.line.to_ne_bytes());
        w(file, &l.column.to_ne_bytes());
        w(file, l.file);
        w(file, b"\0");
    }
    for v in [0u32, 0, 1, 1] {
        w(file, &v.to_ne_bytes());
    }
    for v in [0u64, addr, addr, code.len() as u64, index] {
        w(file, &v.to_ne_bytes());
    }
    w(file, NAME);
    w(file, b"\0");
    w(file, code);
    write!(map, "{addr:x} {:x} ", code.len()).unwrap();
    map.write_all(NAME).unwrap();
    map.write_all(b"\n").unwrap();
}

fn naive(c: &mut Criterion) {
    c.bench_function("naive writer (a write per field)", |b| {
        b.iter_custom(|iters| {
            let dir = fresh_dir();
            let mut file = File::create(dir.join("naive.dump")).unwrap();
            let mut map = File::create(dir.join("naive.map")).unwrap();
            let (code, lines) = (vec![0xc3u8; 1024], lines());
            let start = Instant::now();
            for i in 0..iters {
                naive_write(&mut file, &mut map, &code, &lines, i);
            }
            start.elapsed()
        })
    });
}

/// The floor: one plain `write` of a record-sized buffer per load.
fn floor(c: &mut Criterion) {
    c.bench_function("floor: one write() of the same bytes", |b| {
        b.iter_custom(|iters| {
            let dir = fresh_dir();
            let mut file = File::create(dir.join("floor.dump")).unwrap();
            let record = vec![0u8; 1024 + 56 + NAME.len() + 1 + 32 + 16 * (16 + 17) + 16];
            let start = Instant::now();
            for _ in 0..iters {
                file.write_all(&record).unwrap();
            }
            start.elapsed()
        })
    });
}

fn disabled(c: &mut Criterion) {
    let session = Session::open(Options::default().activation(Activation::Off));
    let (code, lines) = (vec![0xc3u8; 1024], lines());
    c.bench_function("code_loaded/disabled", |b| {
        b.iter(|| {
            session
                .code_loaded(std::hint::black_box(&code), NAME, &lines)
                .unwrap()
        })
    });
}

criterion_group!(benches, enabled, floor, naive, disabled);
criterion_main!(benches);
