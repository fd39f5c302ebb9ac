//! Symbol files too large to hold: the one-pass scan held to the whole-file
//! reader, only the touched ranges decoded, and the code image written
//! beside each output.

use std::path::Path;
use std::process::Command;

use annotate::symbols::{BiasMode, SymbolTable};
use jitdump::scan::{self, Item};
use jitdump::write;
use jitdump::{self, Record};
use jitdump::{CodeLoad, DebugEntry};

use crate::util;

/// What a scan of `data` hands over, in the reference reader's terms.
fn scanned(data: &[u8]) -> Result<(Vec<String>, Vec<jitdump::Problem>), String> {
    let file = tempfile(data);
    let mut items = Vec::new();
    let scan = scan::scan(&file, |offset, item| {
        items.push(format!("{offset} {item:?}"))
    });
    scan.map(|s| (items, s.problems)).map_err(|e| e.to_string())
}

/// The same from [`jitdump::read`]: DEBUG_INFO entries summed up as the
/// scan sums them.
fn read(data: &[u8]) -> Result<(Vec<String>, Vec<jitdump::Problem>), String> {
    let dump = jitdump::read(data).map_err(|e| e.to_string())?;
    let items = dump.records.iter().map(|(offset, record)| {
        let item = Item::from(record);
        format!("{offset} {item:?}")
    });
    Ok((items.collect(), dump.problems))
}

fn tempfile(data: &[u8]) -> std::fs::File {
    use std::io::Write;
    let dir = util::scratch("scan-file");
    let path = dir.join("x.dump");
    std::fs::File::create(&path)
        .unwrap()
        .write_all(data)
        .unwrap();
    std::fs::File::open(&path).unwrap()
}

#[test]
fn the_scan_hands_over_what_the_whole_file_reader_reads() {
    let dir = util::scratch("scan-fixtures");
    let dumps: Vec<_> = crate::every_fixture::all_fixtures(&dir)
        .into_iter()
        .flat_map(|(_, sources)| sources)
        .filter(|p| p.to_string_lossy().ends_with(".dump"))
        .collect();
    assert!(dumps.len() >= 6, "{dumps:?}");
    for path in dumps {
        let data = std::fs::read(&path).unwrap();
        assert_eq!(scanned(&data), read(&data), "{}", path.display());
        // Cut anywhere, and with a byte broken anywhere: the same damage.
        let step = (data.len() / 29).max(1);
        for at in (0..data.len()).step_by(step) {
            assert_eq!(
                scanned(&data[..at]),
                read(&data[..at]),
                "{} cut at {at}",
                path.display()
            );
            let mut broken = data.clone();
            broken[at] ^= 0xa5;
            assert_eq!(
                scanned(&broken),
                read(&broken),
                "{} broken at {at}",
                path.display()
            );
        }
    }
}

/// A jitdump of `n` functions 0x100 apart at 0x10000, each with a line
/// table, as V8 writes them (one DEBUG_INFO before each load).
pub fn many_functions(n: u64) -> Vec<u8> {
    let mut buf = Vec::new();
    write::header(&mut buf, 62, 77, 0);
    for i in 0..n {
        let addr = 0x10000 + i * 0x100;
        let entries = (0..4).map(|k| DebugEntry {
            addr: addr + k * 0x20,
            line: 10 + k as u32,
            discrim: 0,
            file: b"big.js",
        });
        write::debug_info(&mut buf, i, addr, entries);
        let name = format!("f{i}");
        let load = CodeLoad {
            pid: 77,
            tid: 77,
            code_addr: addr,
            code_size: 0x80,
            code_index: i,
            name: name.as_bytes(),
            code: None,
        };
        write::code_load_head(&mut buf, i, &load);
        buf.extend(std::iter::repeat_n(0x90, 0x80));
    }
    buf
}

/// A profile whose JIT code lies in the functions numbered `touched`.
fn profile_touching(touched: &[u64]) -> String {
    let mut p = String::from("version: 1\npid: 77\npositions: instr line\nevents: Ir\n");
    for (k, i) in touched.iter().enumerate() {
        let addr = 0x10000 + i * 0x100;
        p += &format!("ob=(1) ???\nfl=(1) ???\nfn=({}) 0x{addr:016x}\n", k + 1);
        p += &format!("0x{:x} 0 5\n0x{:x} 0 7\n", addr + 0x20, addr + 0x40);
    }
    p + "totals: 0\n"
}

#[test]
fn only_the_ranges_a_profile_touches_are_decoded() {
    let mut table = SymbolTable::builder();
    let dump = many_functions(20_000);
    table
        .add_jitdump("jit-77.dump".into(), &dump, BiasMode::Detect)
        .unwrap();
    let table = table.build();
    assert_eq!(table.len(), 20_000);
    assert_eq!(table.decoded().count(), 0, "nothing decoded by building");
    let touched = [0, 7, 8_191, 19_999];
    let mut out = Vec::new();
    let profile = profile_touching(&touched);
    let stats =
        annotate::callgrind::rewrite(std::io::Cursor::new(profile), &mut out, &table).unwrap();
    let decoded: Vec<String> = table.decoded().map(|(_, s)| s.name.clone()).collect();
    assert_eq!(decoded, ["f0", "f7", "f8191", "f19999"]);
    // The touched ones carry their lines: 0x20 is line 11, 0x40 line 12.
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("fn=(1) f0\n0x10020 11 5\n+32 +1 7\n"),
        "{text}"
    );
    assert_eq!(stats.jit_cost.len(), 4);
}

/// Runs objdump on the image, from `start` for `len` bytes.
fn disassemble(image: &Path, start: u64, len: u64) -> String {
    let out = util::run_ok(
        Command::new("objdump")
            .args([
                "-d",
                &format!("--start-address={start:#x}"),
                &format!("--stop-address={:#x}", start + len),
            ])
            .arg(image),
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The instruction bytes objdump lists, in order.
fn listed_bytes(listing: &str) -> Vec<u8> {
    listing
        .lines()
        .filter_map(|l| l.split('\t').nth(1))
        .flat_map(|hex| {
            hex.split_whitespace()
                .map(|b| u8::from_str_radix(b, 16).unwrap())
        })
        .collect()
}

#[test]
fn the_code_image_holds_each_named_functions_own_code_at_its_address() {
    let dir = util::scratch("code-image");
    for f in ["callgrind.out.9747", "jit-9747.dump"] {
        std::fs::copy(util::fixture("c-demo").join(f), dir.join(f)).unwrap();
    }
    let out = util::annotate(&dir, &["callgrind.out.9747", "jit-9747.dump"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let image = dir.join("jit-code.callgrind.jit.out.9747.elf");
    let summary = String::from_utf8_lossy(&out.stderr);
    assert!(
        summary.contains("machine code of 2 JIT functions"),
        "{summary}"
    );
    // The JIT functions' object is the image.
    let annotated = std::fs::read_to_string(dir.join("callgrind.jit.out.9747")).unwrap();
    let object = format!("{}\n", image.display());
    assert!(annotated.contains(&object), "{annotated}");
    assert!(!annotated.contains("jit-9747.dump\n"));
    // Each function's bytes, from the jitdump, at its own address.
    let data = std::fs::read(dir.join("jit-9747.dump")).unwrap();
    let dump = jitdump::read(&data).unwrap();
    let mut seen = 0;
    for (_, record) in &dump.records {
        let Record::Load(load) = record else { continue };
        let name = String::from_utf8_lossy(load.name);
        let listing = disassemble(&image, load.code_addr, load.code_size);
        assert!(listing.contains(&format!("<{name}>:")), "{listing}");
        assert_eq!(listed_bytes(&listing), load.code.unwrap(), "{name}");
        seen += 1;
    }
    assert_eq!(seen, 2);
    // And the line table: objdump -l names the source line.
    let lined = util::run_ok(Command::new("objdump").args(["-d", "-l"]).arg(&image));
    assert!(String::from_utf8_lossy(&lined.stdout).contains("sum.calc:"));
    // callgrind_annotate still reads the output.
    let report = util::callgrind_annotate(&dir.join("callgrind.jit.out.9747"), &[]);
    assert!(report.contains("sum.calc:sum_to"), "{report}");
}

#[test]
fn a_foreign_file_where_the_image_goes_is_refused_and_nothing_is_written() {
    let dir = util::scratch("code-image-foreign");
    for f in ["callgrind.out.9747", "jit-9747.dump"] {
        std::fs::copy(util::fixture("c-demo").join(f), dir.join(f)).unwrap();
    }
    let image = dir.join("jit-code.callgrind.jit.out.9747.elf");
    std::fs::write(&image, b"someone's notes").unwrap();
    let out = util::annotate(&dir, &["callgrind.out.9747", "jit-9747.dump"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not a code image callgrind-jit wrote"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(std::fs::read(&image).unwrap(), b"someone's notes");
    assert!(!dir.join("callgrind.jit.out.9747").exists());
    // An image of ours is replaced; --no-code writes none.
    std::fs::remove_file(&image).unwrap();
    let twice = [1, 2].map(|_| util::annotate(&dir, &["callgrind.out.9747", "jit-9747.dump"]));
    assert!(twice.iter().all(|o| o.status.success()));
    let dir2 = util::scratch("code-image-none");
    for f in ["callgrind.out.9747", "jit-9747.dump"] {
        std::fs::copy(util::fixture("c-demo").join(f), dir2.join(f)).unwrap();
    }
    let out = util::annotate(&dir2, &["--no-code", "callgrind.out.9747", "jit-9747.dump"]);
    assert!(out.status.success());
    assert!(util::file_starting(&dir2, "jit-code.").is_none());
}

#[test]
fn a_perf_map_larger_than_the_reading_window_is_indexed_whole() {
    // 100,000 lines (about 4 MB): lines cross every 1 MiB step of the pass.
    let mut map = String::new();
    for i in 0..100_000u64 {
        map += &format!(
            "{:x} 40 JS:*f{i} /app/m{}.js:{}:3\n",
            0x100000 + i * 0x40,
            i % 7,
            i % 90 + 1
        );
    }
    map += "zz not a line\n7fff 10 cut";
    let mut table = SymbolTable::builder();
    table.add_perf_map("perf-1.map".into(), map.as_bytes());
    let table = table.build();
    assert_eq!(table.len(), 100_001);
    for i in (0..100_000u64).step_by(997) {
        let hit = table.lookup(0x100000 + i * 0x40 + 0x3f).unwrap();
        let symbol = table.symbol(hit.symbol);
        assert_eq!(
            (symbol.name.as_str(), symbol.line),
            (format!("f{i}").as_str(), (i % 90 + 1) as u32)
        );
        let file = table.file(symbol.file.unwrap());
        assert_eq!(&*file, format!("/app/m{}.js", i % 7));
    }
    assert_eq!(
        table.symbol(table.lookup(0x7fff).unwrap().symbol).name,
        "cut"
    );
    let problems: Vec<_> = table
        .report
        .problems
        .iter()
        .map(|(_, what, n)| (what.as_str(), *n))
        .collect();
    assert_eq!(
        problems,
        [
            ("perf map lines skipped (unparsable or size 0)", 1),
            ("last line has no newline", 1)
        ]
    );
}

/// A jitdump of `n` functions laid back to back at 0x10000 (one module
/// block, as a JIT that emits code in one arena writes it).
fn back_to_back(n: u64) -> Vec<u8> {
    let mut buf = Vec::new();
    write::header(&mut buf, 62, 77, 0);
    for i in 0..n {
        let name = format!("f{i}");
        let load = CodeLoad {
            pid: 77,
            tid: 77,
            code_addr: 0x10000 + i * 0x40,
            code_size: 0x40,
            code_index: i,
            name: name.as_bytes(),
            code: None,
        };
        write::code_load_head(&mut buf, i, &load);
        buf.extend(std::iter::repeat_n(0xc3, 0x40));
    }
    buf
}

#[test]
fn functions_back_to_back_are_not_all_decoded() {
    let mut table = SymbolTable::builder();
    table
        .add_jitdump(
            "jit-77.dump".into(),
            &back_to_back(50_000),
            BiasMode::Detect,
        )
        .unwrap();
    let table = table.build();
    assert_eq!(table.len(), 50_000);
    assert_eq!(table.decoded().count(), 0, "one block: no name can collide");
}

#[test]
fn out_of_memory_is_one_line_and_leaves_no_file() {
    let dir = util::scratch("scale-oom");
    std::fs::write(dir.join("jit-77.dump"), back_to_back(100_000)).unwrap();
    std::fs::write(
        dir.join("callgrind.out.77"),
        profile_touching(&[0, 1, 99_999]),
    )
    .unwrap();
    // Less and less memory, until annotate cannot do with it.
    let mut limit_kb = 400_000u64;
    let failed = loop {
        let script = format!(
            "ulimit -v {limit_kb}; exec \"$0\" annotate callgrind.out.77 jit-77.dump -o out.{limit_kb} -q"
        );
        let out = Command::new("bash")
            .args(["-c", &script])
            .arg(util::cli())
            .current_dir(&dir)
            .output()
            .unwrap();
        if !out.status.success() {
            break (limit_kb, out);
        }
        assert!(limit_kb > 1_000, "annotate ran in 1 MB of address space?");
        limit_kb = limit_kb * 7 / 10;
    };
    let (limit_kb, out) = failed;
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "at {limit_kb} kB: {said}");
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(said.starts_with("callgrind-jit: out of memory"), "{said}");
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.contains(&format!("out.{limit_kb}")))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
