//! jit-client: what it writes, read back by our reader and by
//! linux-perf-data, under threads, and from C under the real Valgrind.

use std::collections::HashSet;
use std::process::Command;

use jit_client::{Activation, LineEntry, Options, Session};
use jitdump::{self, Record};

use crate::util::{self, session_in};

fn dump_path(dir: &std::path::Path) -> std::path::PathBuf {
    dir.join(format!("jit-{}.dump", std::process::id()))
}

/// Two functions, the second with lines in two files.
fn write_sample(session: &Session) -> (Vec<u8>, Vec<u8>) {
    let f = vec![0x90u8; 40];
    let g = vec![0xc3u8; 24];
    session.code_loaded(&f, b"f", &[]).unwrap();
    let lines = [
        LineEntry::new(0, 3, 1, "a.toy"),
        LineEntry::new(8, 4, 7, "b.toy"),
        LineEntry::new(16, 5, 0, "a.toy"),
    ];
    session.code_loaded(&g, b"g(a.toy:3)", &lines).unwrap();
    session.close().unwrap();
    (f, g)
}

#[test]
fn round_trip_gives_the_same_records() {
    let dir = util::scratch("round-trip");
    let (f, g) = write_sample(&session_in(&dir));
    let data = std::fs::read(dump_path(&dir)).unwrap();
    let dump = jitdump::read(&data).unwrap();
    assert!(dump.problems.is_empty(), "{:?}", dump.problems);
    assert_eq!(
        (dump.header.version, dump.header.pid),
        (1, std::process::id())
    );
    let records: Vec<_> = dump.records.iter().map(|(_, r)| r).collect();
    let [Record::Load(lf), Record::DebugInfo { code_addr, entries }, Record::Load(lg), Record::Close] =
        records[..]
    else {
        panic!("unexpected records {records:?}")
    };
    assert_eq!(
        (lf.name, lf.code, lf.code_index),
        (&b"f"[..], Some(&f[..]), 0)
    );
    assert_eq!(
        (lg.name, lg.code, lg.code_index),
        (&b"g(a.toy:3)"[..], Some(&g[..]), 1)
    );
    assert_eq!(*code_addr, g.as_ptr() as u64);
    let rows: Vec<_> = entries
        .iter()
        .map(|e| (e.addr - *code_addr, e.line, e.discrim, e.file))
        .collect();
    assert_eq!(
        rows,
        [
            (0, 3, 1, &b"a.toy"[..]),
            (8, 4, 7, b"b.toy"),
            (16, 5, 0, b"a.toy"),
            (24, 0, 0, b"")
        ]
    );
    let map =
        std::fs::read_to_string(dir.join(format!("perf-{}.map", std::process::id()))).unwrap();
    assert_eq!(
        map,
        format!(
            "{:x} 28 f\n{:x} 18 g(a.toy:3)\n",
            f.as_ptr() as u64,
            g.as_ptr() as u64
        )
    );
}

#[test]
fn linux_perf_data_reads_the_same_records() {
    use linux_perf_data::jitdump::{JitDumpReader, JitDumpRecord};
    let dir = util::scratch("perf-data");
    let (f, g) = write_sample(&session_in(&dir));
    let mut reader = JitDumpReader::new(std::fs::File::open(dump_path(&dir)).unwrap()).unwrap();
    assert_eq!(reader.header().pid, std::process::id());
    let mut seen = Vec::new();
    while let Some(raw) = reader.next_record().unwrap() {
        match raw.parse().unwrap() {
            JitDumpRecord::CodeLoad(r) => seen.push(format!(
                "load {} {:x} {}",
                String::from_utf8_lossy(&r.function_name.as_slice()),
                r.code_addr,
                r.code_bytes.len()
            )),
            JitDumpRecord::CodeDebugInfo(d) => {
                let lines: Vec<_> = d
                    .entries
                    .iter()
                    .map(|e| (e.code_addr - d.code_addr, e.line))
                    .collect();
                seen.push(format!("debug {:x} {lines:?}", d.code_addr));
            }
            JitDumpRecord::CodeClose => seen.push("close".into()),
            other => panic!("unexpected {other:?}"),
        }
    }
    let (fa, ga) = (f.as_ptr() as u64, g.as_ptr() as u64);
    assert_eq!(
        seen,
        [
            format!("load f {fa:x} 40"),
            format!("debug {ga:x} [(0, 3), (8, 4), (16, 5), (24, 0)]"),
            format!("load g(a.toy:3) {ga:x} 24"),
            "close".to_string()
        ]
    );
}

#[test]
fn eight_threads_of_ten_thousand_loads_never_interleave() {
    let dir = util::scratch("threads");
    let session = session_in(&dir);
    let code: Vec<Vec<u8>> = (0..8).map(|t| vec![t as u8; 64 + t]).collect();
    std::thread::scope(|s| {
        for (t, code) in code.iter().enumerate() {
            let session = &session;
            s.spawn(move || {
                for i in 0..10_000 {
                    let name = format!("t{t}_f{i}");
                    let lines = [LineEntry::new(0, i, 1, "threads.toy")];
                    session.code_loaded(code, name.as_bytes(), &lines).unwrap();
                }
            });
        }
    });
    session.close().unwrap();
    let data = std::fs::read(dump_path(&dir)).unwrap();
    let dump = jitdump::read(&data).unwrap();
    assert!(dump.problems.is_empty(), "{:?}", dump.problems);
    let loads: Vec<_> = dump
        .records
        .iter()
        .filter_map(|(_, r)| {
            if let Record::Load(l) = r {
                Some(l)
            } else {
                None
            }
        })
        .collect();
    assert_eq!(loads.len(), 80_000);
    let names: HashSet<_> = loads.iter().map(|l| l.name).collect();
    assert_eq!(names.len(), 80_000, "every record present once");
    let indexes: Vec<u64> = loads.iter().map(|l| l.code_index).collect();
    assert!(
        indexes.windows(2).all(|w| w[0] < w[1]),
        "code_index unique and increasing"
    );
    assert!(loads.iter().all(|l| l
        .code
        .is_some_and(|c| c.iter().all(|&b| usize::from(b) + 64 == c.len()))));
    let debug = dump
        .records
        .iter()
        .filter(|(_, r)| matches!(r, Record::DebugInfo { .. }))
        .count();
    assert_eq!(debug, 80_000);
    assert!(matches!(dump.records.last(), Some((_, Record::Close))));
}

#[test]
fn c_program_under_callgrind_leaves_a_jitdump_and_a_map() {
    let dir = util::scratch("c-valgrind");
    let demo = util::c_demo(&dir);
    let (pid, _) = util::callgrind(&dir, &[], &demo, &["100"], &[]);
    let data = std::fs::read(dir.join(format!("jit-{pid}.dump"))).unwrap();
    let dump = jitdump::read(&data).unwrap();
    let names: Vec<_> = dump
        .records
        .iter()
        .filter_map(|(_, r)| {
            if let Record::Load(l) = r {
                Some(l.name)
            } else {
                None
            }
        })
        .collect();
    assert_eq!(names, [&b"sum_to"[..], b"report"]);
    let map = std::fs::read_to_string(format!("/tmp/perf-{pid}.map")).unwrap();
    assert!(
        map.ends_with(" d sum_to\n") || map.contains(" d sum_to\n"),
        "{map}"
    );
    assert!(map.contains(" 16 report\n"), "{map}");
}

fn run_demo_natively(dir: &std::path::Path, value: &str) -> u32 {
    let demo = util::c_demo(dir);
    let child = Command::new(&demo)
        .arg("10")
        .current_dir(dir)
        .env("CALLGRIND_JIT", value)
        .output()
        .unwrap();
    assert!(child.status.success());
    // The pid is not printed; find it from the files, or return 0 when none.
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            e.unwrap()
                .file_name()
                .to_str()?
                .strip_prefix("jit-")?
                .strip_suffix(".dump")?
                .parse()
                .ok()
        })
        .next()
        .unwrap_or(0)
}

#[test]
fn callgrind_jit_1_writes_the_files_outside_valgrind() {
    let dir = util::scratch("env-on");
    let pid = run_demo_natively(&dir, "1");
    assert_ne!(pid, 0, "no jitdump written");
    let data = std::fs::read(dir.join(format!("jit-{pid}.dump"))).unwrap();
    assert_eq!(jitdump::read(&data).unwrap().records.len(), 5); // 2 x (debug + load) + close
    assert!(std::path::Path::new(&format!("/tmp/perf-{pid}.map")).exists());
}

#[test]
fn callgrind_jit_0_writes_nothing() {
    let dir = util::scratch("env-off");
    assert_eq!(run_demo_natively(&dir, "0"), 0);
    let entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(entries, ["demo"]);
}

#[test]
fn a_full_disk_is_reported_once_and_the_jit_goes_on() {
    let dir = util::scratch("full-disk");
    let mount = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=16k", "tmpfs"])
        .arg(&dir)
        .output()
        .unwrap();
    if !mount.status.success() {
        let why = String::from_utf8_lossy(&mount.stderr);
        util::skip(
            "a_full_disk_is_reported_once",
            &format!("cannot mount a tmpfs: {why}"),
        );
        return;
    }
    let session = session_in(&dir);
    let code = vec![0x90u8; 4096];
    let results: Vec<_> = (0..20)
        .map(|i| session.code_loaded(&code, format!("f{i}").as_bytes(), &[]))
        .collect();
    let failures = results.iter().filter(|r| r.is_err()).count();
    let dump_size = std::fs::metadata(dump_path(&dir)).map(|m| m.len());
    drop(session);
    let _ = Command::new("umount").arg(&dir).status();
    assert!(results[0].is_ok(), "the first load fits");
    assert!(failures >= 1, "the disk filled up");
    assert!(
        failures <= 2,
        "one failure per file, then quiet: {results:?}"
    );
    assert!(dump_size.unwrap() <= 16 << 10);
}

#[test]
fn an_unusable_directory_costs_one_warning_and_no_crash() {
    let dir = util::scratch("unusable");
    let missing = dir.join("does/not/exist");
    let session = Session::open(
        Options::default()
            .activation(Activation::On)
            .jitdump_dir(&missing)
            .perf_map_dir(&missing),
    );
    assert!(!session.is_enabled());
    assert!(session.code_loaded(&[0x90; 16], b"f", &[]).is_ok());
    // A device where the map should go is left alone, not replaced: a
    // node made here (never a real /dev entry), /dev/null's numbers.
    let devices = dir.join("devices");
    std::fs::create_dir(&devices).unwrap();
    let node = devices.join(format!("perf-{}.map", std::process::id()));
    let made = Command::new("mknod")
        .arg(&node)
        .args(["c", "1", "3"])
        .status()
        .unwrap();
    if !made.success() {
        util::skip("an_unusable_directory_device_case", "mknod needs root");
        return;
    }
    let session = Session::open(
        Options::default()
            .activation(Activation::On)
            .jitdump_dir(&dir)
            .perf_map_dir(&devices),
    );
    session.code_loaded(&[0x90; 16], b"f", &[]).unwrap();
    session.close().unwrap();
    use std::os::unix::fs::FileTypeExt;
    let kind = std::fs::symlink_metadata(&node).unwrap().file_type();
    assert!(kind.is_char_device(), "the device node was replaced");
}

#[test]
fn a_planted_symlink_does_not_redirect_our_writes() {
    let dir = util::scratch("symlink");
    let target = dir.join("victim");
    std::fs::write(&target, b"precious").unwrap();
    let link = dir.join(format!("perf-{}.map", std::process::id()));
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let session = session_in(&dir);
    session.code_loaded(&[0x90; 16], b"f", &[]).unwrap();
    session.close().unwrap();
    assert_eq!(std::fs::read(&target).unwrap(), b"precious");
    assert!(!std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(&link).unwrap().ends_with(" 10 f\n"));
}

/// A perf map this process wrote already (a runtime that writes its own,
/// beside the gdb preload) is left to its writer; one left by an earlier
/// process of the same pid is replaced.
#[test]
fn a_perf_map_this_process_already_writes_is_left_alone() {
    let dir = util::scratch("own-perf-map");
    let map = dir.join(format!("perf-{}.map", std::process::id()));
    std::fs::write(&map, "1000 10 the_runtimes_own\n").unwrap();
    let session = session_in(&dir);
    session.code_loaded(&[0x90; 16], b"ours", &[]).unwrap();
    session.close().unwrap();
    assert_eq!(
        std::fs::read_to_string(&map).unwrap(),
        "1000 10 the_runtimes_own\n"
    );

    // Written before this process started: an earlier process's, replaced.
    let dir = util::scratch("stale-perf-map");
    let map = dir.join(format!("perf-{}.map", std::process::id()));
    std::fs::write(&map, "1000 10 stale\n").unwrap();
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(24 * 3600);
    std::fs::File::options()
        .write(true)
        .open(&map)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let session = session_in(&dir);
    session.code_loaded(&[0x90; 16], b"ours", &[]).unwrap();
    session.close().unwrap();
    let text = std::fs::read_to_string(&map).unwrap();
    assert!(text.contains(" ours") && !text.contains("stale"), "{text}");
}
