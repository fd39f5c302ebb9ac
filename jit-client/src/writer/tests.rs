//! The writer's files read back with the format's reader, and its limits.

use super::*;

/// A writer of both files into a folder of its own.
fn writer() -> (tempfile::TempDir, Writer) {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options::default()
        .jitdump_dir(dir.path())
        .perf_map_dir(dir.path());
    let (writer, problems) = Writer::create(&opts);
    assert_eq!(problems, Vec::<String>::new());
    (dir, writer)
}

#[test]
fn each_load_is_a_record_and_a_line_and_close_ends_the_dump() {
    let (_dir, mut w) = writer();
    assert!(w.is_open());
    assert_eq!(
        w.open_paths(),
        [w.jitdump_path.as_path(), w.perf_map_path.as_path()]
    );
    let (f, g) = (vec![0x90u8; 24], vec![0xc3u8; 3]);
    // Lines in falling order, the first past the code's end.
    let lines = [
        LineEntry::new(24, 9, 0, "past.js"),
        LineEntry::new(8, 4, 2, "a.js"),
        LineEntry::new(0, 3, 1, "a.js"),
    ];
    w.code_loaded(&f, b"fib", &lines).unwrap();
    w.code_loaded(&g, b"", &[]).unwrap();
    let (dump_path, map_path) = (w.jitdump_path.clone(), w.perf_map_path.clone());
    w.close().unwrap();
    let bytes = std::fs::read(&dump_path).unwrap();
    let dump = jitdump::read(&bytes).unwrap();
    assert_eq!(dump.problems, []);
    assert_eq!(dump.header.pid, sys::pid());
    let records: Vec<&jitdump::Record> = dump.records.iter().map(|(_, r)| r).collect();
    let (fa, ga) = (f.as_ptr() as u64, g.as_ptr() as u64);
    let entry = |addr, line, discrim, file| DebugEntry {
        addr,
        line,
        discrim,
        file,
    };
    let debug = jitdump::Record::DebugInfo {
        code_addr: fa,
        entries: vec![
            entry(fa, 3, 1, &b"a.js"[..]),
            entry(fa + 8, 4, 2, b"a.js"),
            // The sentinel that ends the last line's range.
            entry(fa + 24, 0, 0, b""),
        ],
    };
    assert_eq!(records[0], &debug);
    let load = |addr, size, index, name: &'static [u8], code| CodeLoad {
        pid: sys::pid(),
        tid: sys::tid(),
        code_addr: addr,
        code_size: size,
        code_index: index,
        name,
        code,
    };
    let g_name = format!("jit_{ga:x}").into_bytes().leak();
    assert_eq!(
        records[1],
        &jitdump::Record::Load(load(fa, 24, 0, b"fib", Some(&f[..])))
    );
    // No lines: no DEBUG_INFO; no name: named after the address.
    assert_eq!(
        records[2],
        &jitdump::Record::Load(load(ga, 3, 1, g_name, Some(&g[..])))
    );
    assert_eq!(records[3], &jitdump::Record::Close);
    assert_eq!(records.len(), 4);
    let map = std::fs::read_to_string(&map_path).unwrap();
    assert_eq!(map, format!("{fa:x} 18 fib\n{ga:x} 3 jit_{ga:x}\n"));
}

#[test]
fn an_epoch_ends_at_the_files_lengths_before_the_load() {
    let (_dir, mut w) = writer();
    let code = vec![0x90u8; 16];
    let name = |p: &PathBuf| p.file_name().unwrap().to_string_lossy().into_owned();
    let (dump, map) = (name(&w.jitdump_path), name(&w.perf_map_path));
    assert_eq!(
        w.epoch_end(),
        format!("{} {dump}@40 {map}@0", epochs::DESC_PREFIX)
    );
    w.code_loaded(&code, b"f", &[LineEntry::new(0, 1, 0, "f.c")])
        .unwrap();
    let a = code.as_ptr() as u64;
    assert!(!w.epochs.load(a + 16, a + 17), "past the code just loaded");
    assert!(w.epochs.load(a + 8, a + 9), "inside it");
    assert!(
        !w.epochs.load(a + 9, a + 16),
        "the rest was forgotten by the load"
    );
    let dump_len = std::fs::metadata(&w.jitdump_path).unwrap().len();
    let map_len = std::fs::metadata(&w.perf_map_path).unwrap().len();
    assert!(dump_len > 40 && map_len > 0);
    let want = format!("{} {dump}@{dump_len} {map}@{map_len}", epochs::DESC_PREFIX);
    assert_eq!(w.epoch_end(), want);
    // Code unloaded before an epoch ends is forgotten at its end; code
    // after it is not.
    w.epochs.load(a, a + 16);
    assert!(!w.epochs.load(a + 32, a + 48));
    assert!(!w.epochs.load(0x10, 0x20));
    w.code_unloaded(a, 16);
    assert!(w.epochs.load(0x10, 0x20), "over live code: the epoch ends");
    assert!(!w.epochs.load(a, a + 16), "unloaded before it ended");
    assert!(w.epochs.load(a + 32, a + 48), "never unloaded");
    w.abandon();
}

#[test]
fn a_writer_without_a_perf_map_writes_the_jitdump_alone() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options::default().jitdump_dir(dir.path()).perf_map(false);
    let (mut w, problems) = Writer::create(&opts);
    assert!(problems.is_empty());
    assert_eq!(w.open_paths(), [w.jitdump_path.as_path()]);
    w.code_loaded(&[0xc3], b"f", &[]).unwrap();
    assert!(!w.perf_map_path.exists());
    // A jitdump folder that does not exist: the perf map alone.
    let gone = dir.path().join("gone");
    let opts = Options::default()
        .jitdump_dir(&gone)
        .perf_map_dir(dir.path());
    let (w, problems) = Writer::create(&opts);
    assert_eq!(problems.len(), 1);
    assert!(problems[0].starts_with(&format!("cannot create {}", w.jitdump_path.display())));
    assert_eq!(w.open_paths(), [w.perf_map_path.as_path()]);
    assert!(w.is_open());
    let opts = Options::default().jitdump_dir(&gone).perf_map(false);
    assert!(!Writer::create(&opts).0.is_open());
}

#[test]
fn records_fit_up_to_the_formats_4_gib_and_no_further() {
    let limit = u64::from(u32::MAX) as usize;
    // The load: its fixed part, the name (with room for `jit_ADDR`), the
    // code.
    let name = b"f";
    let most = limit - format::CODE_LOAD_FIXED_SIZE - (name.len() + 32);
    assert!(records_fit(most, name, &[]));
    assert!(!records_fit(most + 1, name, &[]));
    // The DEBUG_INFO: its fixed part and padding, each entry with its
    // file name and NUL, and the sentinel; only lines inside the code
    // count. 4,095 entries of a 1 MiB name and one of 978,887 bytes reach
    // the limit exactly.
    let file = vec![b'f'; 1 << 20];
    let entry = |offset, len: usize| LineEntry::new(offset, 1, 0, &file[..len]);
    let lines = |last: usize, past: bool| {
        let mut lines: Vec<LineEntry> = (0..4095).map(|i| entry(i, 1 << 20)).collect();
        lines.push(entry((1 << 20) - 1, last));
        if past {
            lines.push(entry(1 << 20, 1 << 20));
        }
        lines
    };
    assert!(records_fit(1 << 20, name, &lines(978_887, false)));
    assert!(!records_fit(1 << 20, name, &lines(978_888, false)));
    assert!(
        records_fit(1 << 20, name, &lines(978_887, true)),
        "a line past the code"
    );
}

#[test]
fn empty_names_get_the_address() {
    assert_eq!(&*function_name(b"", 0x1f), b"jit_1f");
    assert_eq!(&*function_name(b"f", 0x1f), b"f");
}
