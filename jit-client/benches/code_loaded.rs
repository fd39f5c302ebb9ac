//! Cost of one `code_loaded` (1 KiB of code, 16 line entries, files written
//! per record), beside the naive writer some runtimes use (one `write`
//! syscall per field), and the cost of a call when the session is off.

use std::fs::File;
use std::io::Write;

use criterion::{criterion_group, criterion_main, Criterion};
use jit_client::{Activation, LineEntry, Options, Session};

fn lines() -> Vec<LineEntry<'static>> {
    (0..16)
        .map(|i| LineEntry::new(i * 64, 10 + i, 1, "bench/source.toy"))
        .collect()
}

fn bench_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("cgjit-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn enabled(c: &mut Criterion) {
    let dir = bench_dir();
    let session = Session::open(
        Options::default()
            .activation(Activation::On)
            .jitdump_dir(&dir)
            .perf_map_dir(&dir),
    );
    let code = vec![0xc3u8; 1024];
    let lines = lines();
    c.bench_function("code_loaded/1KiB+16 lines", |b| {
        b.iter(|| {
            session
                .code_loaded(&code, b"bench_function(bench.toy:10)", &lines)
                .unwrap()
        })
    });
    drop(session);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The same records written field by field, one syscall each.
fn naive_write(
    file: &mut File,
    map: &mut File,
    code: &[u8],
    name: &[u8],
    lines: &[LineEntry],
    index: u64,
) {
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
    w(file, name);
    w(file, b"\0");
    w(file, code);
    write!(map, "{addr:x} {:x} ", code.len()).unwrap();
    map.write_all(name).unwrap();
    map.write_all(b"\n").unwrap();
}

fn naive(c: &mut Criterion) {
    let dir = bench_dir();
    let mut file = File::create(dir.join("naive.dump")).unwrap();
    let mut map = File::create(dir.join("naive.map")).unwrap();
    let code = vec![0xc3u8; 1024];
    let lines = lines();
    let mut index = 0;
    c.bench_function("naive writer/1KiB+16 lines", |b| {
        b.iter(|| {
            naive_write(
                &mut file,
                &mut map,
                &code,
                b"bench_function(bench.toy:10)",
                &lines,
                index,
            );
            index += 1;
        })
    });
    let _ = std::fs::remove_dir_all(&dir);
}

fn disabled(c: &mut Criterion) {
    let session = Session::open(Options::default().activation(Activation::Off));
    let code = vec![0xc3u8; 1024];
    let lines = lines();
    c.bench_function("code_loaded/disabled", |b| {
        b.iter(|| {
            session
                .code_loaded(std::hint::black_box(&code), b"f", &lines)
                .unwrap()
        })
    });
}

criterion_group!(benches, enabled, naive, disabled);
criterion_main!(benches);
