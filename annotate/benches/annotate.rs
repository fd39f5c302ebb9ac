//! Throughput of the jitdump reader, the symbol lookup and the whole
//! rewrite (fast and exact mode), on the project's real fixtures.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;

use annotate::callgrind::Rewrite;
use annotate::symbols::{BiasMode, SymbolTable};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(path)
}

/// node's V8 jitdump (2.2 MB), decompressed with gzip.
fn node_dump() -> Vec<u8> {
    let out = Command::new("gzip")
        .arg("-dc")
        .arg(fixture("node-fib/jit-13064.dump.gz"))
        .output()
        .expect("gzip");
    out.stdout
}

fn jitdump(c: &mut Criterion) {
    let data = node_dump();
    let mut g = c.benchmark_group("jitdump");
    g.throughput(Throughput::Bytes(data.len() as u64));
    g.bench_function("read node dump", |b| {
        b.iter(|| jitdump::read(black_box(&data)).unwrap())
    });
    g.bench_function("symbol table from node dump", |b| {
        b.iter(|| {
            let mut t = SymbolTable::builder();
            t.add_jitdump("jit.dump".into(), &data, BiasMode::Detect)
                .unwrap();
            t.build()
        })
    });
    g.finish();
}

fn lookup(c: &mut Criterion) {
    let data = node_dump();
    let mut table = SymbolTable::builder();
    table
        .add_jitdump("jit.dump".into(), &data, BiasMode::Detect)
        .unwrap();
    let table = table.build();
    let addrs: Vec<u64> = table
        .ids()
        .map(|id| table.symbol(id))
        .map(|s| s.start + s.size / 2)
        .collect();
    let mut g = c.benchmark_group("symbols");
    g.throughput(Throughput::Elements(addrs.len() as u64));
    g.bench_function("lookup + row", |b| {
        b.iter(|| {
            addrs
                .iter()
                .filter_map(|&a| table.lookup(a).map(|h| table.symbol(h.symbol).row_at(a)))
                .count()
        })
    });
    g.finish();
}

fn rewrite_profile(c: &mut Criterion) {
    let profile = std::fs::read(fixture("moarvm-words/callgrind.out.2422")).unwrap();
    let mut table = SymbolTable::builder();
    table.add_perf_map(
        "perf.map".into(),
        &std::fs::read(fixture("moarvm-words/perf-2422.map")).unwrap(),
    );
    let table = table.build();
    let mut g = c.benchmark_group("rewrite moarvm-words");
    g.throughput(Throughput::Bytes(profile.len() as u64));
    g.bench_function("lazy", |b| {
        b.iter(|| {
            let input = std::io::Cursor::new(&profile[..]);
            Rewrite::new(&table).run(input, std::io::sink()).unwrap()
        })
    });
    g.bench_function("exact", |b| {
        b.iter(|| {
            let input = std::io::Cursor::new(&profile[..]);
            let exact = Rewrite::new(&table).every_position();
            exact.run(input, std::io::sink()).unwrap()
        })
    });
    g.finish();
}

criterion_group!(benches, jitdump, lookup, rewrite_profile);
criterion_main!(benches);
