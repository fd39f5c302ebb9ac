//! Broken and hostile inputs: typed errors and counted warnings, never a
//! panic, and no allocation sized by numbers read from the file.

use annotate::symbols::{BiasMode, SymbolTable};
use jitdump::{self, ProblemKind, Record};

use crate::rewriting::Pass;
use crate::util;

fn dump_fixture() -> Vec<u8> {
    std::fs::read(util::fixture("c-demo/jit-9747.dump")).unwrap()
}

fn table_of(data: &[u8]) -> Result<SymbolTable, jitdump::ReadError> {
    let mut table = SymbolTable::builder();
    table.add_jitdump("x.dump".into(), data, BiasMode::Detect)?;
    let table = table.build();
    Ok(table)
}

/// The end offsets of the CODE_LOAD records (id 0) of a little-endian
/// jitdump, by walking the record sizes from the header's own size.
fn code_load_ends(data: &[u8]) -> Vec<usize> {
    let u32_at = |at: usize| u32::from_le_bytes(data[at..at + 4].try_into().unwrap()) as usize;
    let mut at = u32_at(8);
    let mut ends = Vec::new();
    while at + 8 <= data.len() {
        let (id, size) = (u32_at(at), u32_at(at + 4));
        if id == 0 {
            ends.push(at + size);
        }
        at += size;
    }
    ends
}

#[test]
fn every_prefix_of_a_jitdump_reads_or_fails_cleanly() {
    let data = dump_fixture();
    let ends = code_load_ends(&data);
    assert_eq!(ends.len(), 2, "the fixture holds two loads");
    for len in 0..=data.len() {
        let whole_loads = ends.iter().filter(|&&end| end <= len).count();
        match table_of(&data[..len]) {
            Ok(table) => assert_eq!(table.len(), whole_loads, "prefix {len}"),
            Err(e) => assert!(len < 40, "prefix {len} failed: {e}"),
        }
    }
    assert_eq!(table_of(&data).unwrap().len(), 2);
}

/// A little-endian record: id, total size, timestamp, body.
fn record(id: u32, size: u32, body: &[u8]) -> Vec<u8> {
    let mut r = Vec::new();
    r.extend_from_slice(&id.to_le_bytes());
    r.extend_from_slice(&size.to_le_bytes());
    r.extend_from_slice(&0u64.to_le_bytes());
    r.extend_from_slice(body);
    r
}

fn with_records(records: &[Vec<u8>]) -> Vec<u8> {
    let mut data = dump_fixture()[..40].to_vec();
    for r in records {
        data.extend_from_slice(r);
    }
    data
}

fn problems(data: &[u8]) -> Vec<ProblemKind> {
    jitdump::read(data)
        .unwrap()
        .problems
        .iter()
        .map(|p| p.kind)
        .collect()
}

#[test]
fn hostile_record_sizes_stop_reading_without_panic() {
    assert_eq!(
        problems(&with_records(&[record(0, 0, &[])])),
        [ProblemKind::BadRecordSize]
    );
    assert_eq!(
        problems(&with_records(&[record(0, 8, &[])])),
        [ProblemKind::BadRecordSize]
    );
    assert_eq!(
        problems(&with_records(&[record(0, 1 << 30, &[0; 8])])),
        [ProblemKind::BadRecordSize]
    );
    assert_eq!(
        problems(&with_records(&[record(0, 4096, &[0; 8])])),
        [ProblemKind::TruncatedTail]
    );
    assert_eq!(
        problems(&with_records(&[vec![0; 64]])),
        [ProblemKind::BadRecordSize],
        "zero-filled tail"
    );
}

#[test]
fn hostile_bodies_are_skipped_and_counted() {
    let mut huge_debug = Vec::new();
    huge_debug.extend_from_slice(&0x1000u64.to_le_bytes());
    huge_debug.extend_from_slice(&(1u64 << 60).to_le_bytes());
    let mut no_nul = vec![0u8; 40];
    no_nul.extend_from_slice(b"name-without-nul");
    let data = with_records(&[
        record(2, 32, &huge_debug),
        record(0, 16 + no_nul.len() as u32, &no_nul),
        record(77, 24, &[1; 8]),
        record(3, 16, &[]),
        record(0, 16, &[]),
    ]);
    let dump = jitdump::read(&data).unwrap();
    let kinds: Vec<_> = dump.problems.iter().map(|p| p.kind).collect();
    assert_eq!(
        kinds,
        [
            ProblemKind::CorruptDebugInfo,
            ProblemKind::CorruptRecord,
            ProblemKind::UnknownRecord,
            ProblemKind::DataAfterClose
        ]
    );
    assert!(matches!(dump.records.last(), Some((_, Record::Close))));
}

#[test]
fn a_byte_swapped_writer_is_read_in_its_own_order() {
    let mut data = Vec::new();
    for v in [0x4A69_5444u32, 1, 40, 62, 0, 7] {
        data.extend_from_slice(&v.to_be_bytes());
    }
    data.extend_from_slice(&[0; 16]);
    let mut body = Vec::new();
    for v in [7u32, 7] {
        body.extend_from_slice(&v.to_be_bytes());
    }
    for v in [0x5000u64, 0x5000, 16, 3] {
        body.extend_from_slice(&v.to_be_bytes());
    }
    body.extend_from_slice(b"be_fn\0");
    body.extend_from_slice(&[0x90; 16]);
    let mut rec = 0u32.to_be_bytes().to_vec();
    rec.extend_from_slice(&(16 + body.len() as u32).to_be_bytes());
    rec.extend_from_slice(&[0; 8]);
    rec.extend_from_slice(&body);
    data.extend_from_slice(&rec);
    let table = table_of(&data).unwrap();
    assert!(jitdump::read(&data).unwrap().header.big_endian);
    let hit = table.lookup(0x5008).unwrap();
    assert_eq!(table.symbol(hit.symbol).name, "be_fn");
}

#[test]
fn version_2_and_unknown_flags_are_read_with_a_warning() {
    let mut data = dump_fixture();
    data[4] = 2;
    data[33] = 0x80;
    let kinds = problems(&data);
    assert!(
        kinds.contains(&ProblemKind::UnexpectedVersion)
            && kinds.contains(&ProblemKind::UnknownFlags)
    );
    assert_eq!(table_of(&data).unwrap().len(), 2);
}

#[test]
fn hostile_profiles_are_errors_naming_the_line() {
    let empty = SymbolTable::default();
    let header = "# callgrind format\nversion: 1\npositions: instr line\nevents: Ir\n";
    let cases = [
        ("fn=(3)\n0x10 1 1\n", 5, "undefined function id", true),
        (
            "fl=(1) a.c\nfn=(2) f\n0x10 1 99999999999999999999\n",
            7,
            "bad cost",
            true,
        ),
        ("fn=(2) f\n-0x99 1 1\n", 6, "bad position", false),
        (
            "fn=(2) f\ncfn=(3) g\ncalls=1 0x10 1\nfn=(4) h\n",
            8,
            "calls=/jump=/jcnd=",
            true,
        ),
        (
            "fn=(2) f\ncfn=(3) g\ncalls=1 0x10 1\n",
            7,
            "ends inside a call",
            true,
        ),
        ("fn=(2) f\n\u{0}\u{1}\n", 6, "unexpected character", true),
        ("fn=(2) f\nrec=1\n", 6, "mangle-names=no", true),
        ("fn=(2) f\n0x10 1 1\n0 1 zz\n", 7, "bad cost 'zz'", true),
        ("fn=(2) f\n0x10 1 1\n0 zz\n", 7, "bad position 'zz'", true),
        (
            "fn=(2) f\n0x10 1 1\n+1 1-2 3\n",
            7,
            "bad position '1-2'",
            true,
        ),
        ("fn=(2) f\n0x10 1 1\n+1 * 1a\n", 7, "bad cost '1a'", true),
        ("fn=(2) f\n0x10 1 1\n+1 * 0x5\n", 7, "bad cost '0x5'", true),
        (
            "fn=(2) f\n0x10 1 1\n+1 *5 5\n",
            7,
            "bad position '*5'",
            true,
        ),
        ("fn=(2) f\n0x10 1 1\n5\n", 7, "position columns", false),
        // A call's lines are parsed at its position line; each error
        // names its own line.
        (
            "fn=(2) f\ncfn=(3) g\ncalls=x 0x10\n0x10 1 1\n",
            7,
            "bad count 'x'",
            true,
        ),
        (
            "fn=(2) f\ncfi=(1\ncfn=(3) g\ncalls=1 0x10\n0x10 1 1\n",
            6,
            "expected ')'",
            true,
        ),
        (
            "fn=(2) f\njump=1 zz\n0x10 1 1\n",
            6,
            "expected 2 position columns",
            false,
        ),
    ];
    // Fast mode copies native position lines without placing them (a
    // relative step below zero goes unseen) or counting their columns,
    // but reads every character.
    for (body, line, message, fast_reads) in cases {
        let input = format!("{header}{body}");
        let err = Pass::Exact
            .run(input.as_bytes(), Vec::new(), &empty)
            .unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with(&format!("line {line}: ")) && text.contains(message),
            "{body:?}: {text}"
        );
        let fast = Pass::Lazy.run(input.as_bytes(), Vec::new(), &empty);
        if fast_reads {
            let fast = fast.expect_err(&format!("{body:?} in fast mode"));
            assert_eq!(fast.to_string(), text, "{body:?} in fast mode");
        }
    }
}

#[test]
fn a_line_of_megabytes_is_an_error_not_an_allocation() {
    let mut input = b"# callgrind format\nevents: Ir\nfn=".to_vec();
    input.resize(input.len() + (17 << 20), b'x');
    let err = Pass::Lazy
        .run(&input[..], std::io::sink(), &SymbolTable::default())
        .unwrap_err();
    assert!(
        err.to_string().contains("line 3: line longer than 16 MiB"),
        "{err}"
    );
}

/// A native profile of several MB (many reader chunks), with a name
/// line longer than the room kept in front of a chunk (100 kB) or than a
/// chunk (300 kB) every 7,000 functions.
fn long_native_profile() -> Vec<String> {
    let mut lines = vec![
        "# callgrind format".to_string(),
        "positions: instr line".into(),
        "events: Ir".into(),
        "ob=(1) /bin/x".into(),
        "fl=(1) x.c".into(),
    ];
    for f in 0..40_000 {
        let name = if f % 7_000 == 3 {
            "g".repeat([100_000, 300_000][f / 7_000 % 2])
        } else {
            format!("f{f}")
        };
        lines.push(format!("fn=({f}) {name}"));
        lines.extend(["0x10 1 1", "+1 1 2", "+2 * 3"].map(String::from));
        if f > 0 {
            lines.extend(["cfn=(0)", "calls=1 0x10 1", "+1 * 4"].map(String::from));
        }
        lines.push(String::new());
    }
    lines.pop();
    lines
}

#[test]
fn errors_name_their_line_deep_in_a_profile_read_in_chunks() {
    let lines = long_native_profile();
    let after_long: Vec<usize> = (0..lines.len())
        .filter(|&i| i > 0 && lines[i - 1].len() >= 100_000)
        .collect();
    assert_eq!(after_long.len(), 6);
    let spread = (1..40).map(|k| k * lines.len() / 40);
    let targets = spread.chain(after_long).chain([lines.len() - 1]);
    for at in targets {
        let at = (at..lines.len())
            .find(|&i| lines[i].starts_with('+'))
            .unwrap();
        let mut broken = lines.clone();
        broken[at] = "+1 1 zz".into();
        for end in ["", "\n"] {
            let input = broken.join("\n") + end;
            for mode in Pass::BOTH {
                let table = SymbolTable::default();
                let err = mode
                    .run(input.as_bytes(), std::io::sink(), &table)
                    .unwrap_err();
                let want = format!("line {}: bad cost 'zz'", at + 1);
                assert_eq!(err.to_string(), want, "{mode:?} end {end:?}");
            }
        }
    }
}

#[test]
fn fast_mode_still_refuses_numbers_over_64_bits() {
    let input = "# callgrind format\npositions: line\nevents: Ir\nfl=(1) a.c\nfn=(2) f\n3 5\n+1 99999999999999999999\n";
    let err = Pass::Lazy
        .run(input.as_bytes(), Vec::new(), &SymbolTable::default())
        .unwrap_err();
    assert!(err.to_string().starts_with("line 7: bad cost"), "{err}");
}

/// A writer that fails once `room` bytes are written, like a full disk.
struct FullDisk {
    room: usize,
}

impl std::io::Write for FullDisk {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        if data.len() > self.room {
            return Err(std::io::Error::other("disk full (test)"));
        }
        self.room -= data.len();
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl annotate::callgrind::Output for FullDisk {
    fn restart(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_failing_output_is_reported_with_its_own_error() {
    let input = std::fs::read(util::fixture("moarvm-words/callgrind.out.2422")).unwrap();
    for mode in Pass::BOTH {
        let err = mode
            .run(
                &input[..],
                FullDisk { room: 1 << 20 },
                &SymbolTable::default(),
            )
            .unwrap_err();
        assert_eq!(err.to_string(), "disk full (test)");
    }
}
