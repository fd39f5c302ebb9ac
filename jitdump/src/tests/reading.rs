//! What well-formed files read as, in either byte order.

use super::*;

#[test]
fn every_record_kind_reads_in_either_byte_order() {
    for big in [false, true] {
        let mut e = Enc::new(big);
        e.header(1, 40, 0);
        let debug_at = e.at();
        e.debug(
            0x1000,
            2,
            &[(0x1008, 3, b"a.js"), (0x1004, 4, b"")],
            &[0; 3],
        );
        let load_at = e.at();
        e.load(0x1000, 4, 1, b"fib", &[0x90, 0x90, 0xc3, 0xcc]);
        let move_at = e.at();
        e.moved(0x1000, 0x2000, 4, 1);
        let unwind_at = e.at();
        e.unwinding(8, 4, 8);
        let nameless_at = e.at();
        e.load(0x3000, 2, 2, b"", &[]);
        let close_at = e.at();
        e.close();
        let (records, problems) = both(&e.buf).unwrap();
        assert_eq!(problems, [], "{big}");
        let entries = vec![
            DebugEntry {
                addr: 0x1008,
                line: 3,
                discrim: 1,
                file: b"a.js",
            },
            DebugEntry {
                addr: 0x1004,
                line: 4,
                discrim: 1,
                file: b"",
            },
        ];
        let load = |addr, size, index, name: &'static [u8], code| CodeLoad {
            pid: 4242,
            tid: 4243,
            code_addr: addr,
            code_size: size,
            code_index: index,
            name,
            code,
        };
        let moved = Move {
            old_code_addr: 0x1000,
            new_code_addr: 0x2000,
            code_size: 4,
            code_index: 1,
        };
        assert_eq!(
            records,
            [
                (
                    debug_at,
                    Record::DebugInfo {
                        code_addr: 0x1000,
                        entries
                    }
                ),
                (
                    load_at,
                    Record::Load(load(
                        0x1000,
                        4,
                        1,
                        b"fib",
                        Some(&[0x90, 0x90, 0xc3, 0xcc][..])
                    ))
                ),
                (move_at, Record::Move(moved)),
                (unwind_at, Record::UnwindingInfo),
                // Code bytes left out (jvmti, .NET): none, not empty.
                (nameless_at, Record::Load(load(0x3000, 2, 2, b"", None))),
                (close_at, Record::Close),
            ],
            "{big}"
        );
        let header = read::read_header(&e.buf).unwrap();
        let want = Header {
            big_endian: big,
            version: 1,
            total_size: 40,
            elf_mach: 62,
            reserved: format::JIT_CLIENT_MARK,
            pid: 4242,
            timestamp: 99,
            flags: 0,
        };
        assert_eq!(header, want);
        assert!(header.is_jit_client() && read::is_jitdump(&e.buf));
        // Each record read again alone, by its offset.
        let file = file_of(&e.buf);
        for (at, record) in &records {
            let bytes = scan::record_at(&file, *at).unwrap();
            assert_eq!(
                &scan::parse_record(&bytes, &header).unwrap(),
                record,
                "{big} {at}"
            );
        }
        // The span of the entries: the first, the lowest, the highest.
        let (items, _) = scanned(&e.buf).unwrap();
        let span = EntrySpan {
            first: 0x1008,
            min: 0x1004,
            max: 0x1008,
        };
        assert!(
            items[0].1.contains(&format!("{:?}", Some(span))),
            "{:?}",
            items[0]
        );
    }
}

#[test]
fn debug_info_and_unwinding_at_the_edges_of_their_layout() {
    for big in [false, true] {
        let mut e = Enc::new(big);
        e.header(1, 40, 0);
        // No entries and no padding: a body of 16 bytes.
        e.debug(0x1000, 0, &[], &[]);
        // Room for more entries than declared (a long file name), and a
        // body whose length is a multiple of 16.
        e.debug(0x1000, 1, &[(0x1000, 1, b"a/long/path/to/file.js")], &[0]);
        e.debug(0x1000, 1, &[(0x1000, 1, b"fifteen_chars.x")], &[]);
        // The header part as large as the whole.
        e.unwinding(8, 8, 8);
        let (records, problems) = both(&e.buf).unwrap();
        assert_eq!(problems, [], "{big}");
        let lines: Vec<usize> = records
            .iter()
            .map(|(_, r)| match r {
                Record::DebugInfo { entries, .. } => entries.len(),
                Record::UnwindingInfo => 9,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(lines, [0, 1, 1, 9], "{big}");
    }
}

#[test]
fn big_endian_records_across_a_read_chunk_are_read_whole() {
    // Records of 0x10000 bytes, then one of 0x20000 across the first MiB's
    // end. Their sizes read in the other byte order would be 256 and 512:
    // too short to reach the chunk's end.
    let mut e = Enc::new(true);
    e.header(1, 40, 0);
    let mut index = 0;
    while e.at() + 0x10000 < 1 << 20 {
        index += 1;
        let code = [0x90; 0x10000 - 16 - 40 - 7];
        e.load(
            0x10_0000 * index,
            code.len() as u64,
            index,
            b"filler",
            &code,
        );
    }
    let big_at = e.at();
    let code = vec![0xc3; 0x20000 - 16 - 40 - 2];
    e.load(0x900_0000, code.len() as u64, 999, b"f", &code);
    assert_eq!(e.at() - big_at, 0x20000);
    assert!(big_at < 1 << 20 && e.at() > 1 << 20);
    e.close();
    let (records, problems) = both(&e.buf).unwrap();
    assert_eq!(problems, []);
    assert_eq!(records.len() as u64, index + 2);
    match &records[records.len() - 2] {
        (at, Record::Load(load)) => assert_eq!((*at, load.code), (big_at, Some(&code[..]))),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_header_larger_than_forty_bytes_and_odd_headers_are_read_with_notes() {
    let mut e = Enc::new(false);
    e.header(2, 56, 3);
    let load_at = e.at();
    e.load(0x1000, 1, 1, b"f", &[0xc3]);
    let (records, problems) = both(&e.buf).unwrap();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].0, load_at);
    // Any other writer leaves the reserved word 0.
    let mut other = e.buf.clone();
    other[16..20].fill(0);
    assert!(!read::read_header(&other).unwrap().is_jit_client());
    let want = [
        problem(0, ProblemKind::UnexpectedVersion),
        problem(0, ProblemKind::UnknownFlags),
    ];
    assert_eq!(problems, want);
    // The TSC flag is known.
    let mut e = Enc::new(false);
    e.header(1, 40, format::FLAG_ARCH_TIMESTAMP);
    assert_eq!(both(&e.buf).unwrap(), (vec![], vec![]));
}

#[test]
fn the_writer_encodes_as_the_format_says() {
    // jit-client's writer, against this file's encoder.
    let mut buf = Vec::new();
    crate::write::header(&mut buf, 62, 4242, 99);
    let load = CodeLoad {
        pid: 4242,
        tid: 4243,
        code_addr: 0x1000,
        code_size: 1,
        code_index: 1,
        name: b"f",
        code: None,
    };
    let entries = [DebugEntry {
        addr: 0x1000,
        line: 3,
        discrim: 1,
        file: b"a.js",
    }];
    crate::write::debug_info(&mut buf, 7, 0x1000, entries.into_iter());
    crate::write::code_load_head(&mut buf, 7, &load);
    buf.push(0xc3);
    crate::write::close(&mut buf, 7);
    let mut e = Enc::new(cfg!(target_endian = "big"));
    e.header(1, 40, 0);
    e.debug(0x1000, 1, &[(0x1000, 3, b"a.js")], &[0; 3]);
    e.load(0x1000, 1, 1, b"f", &[0xc3]);
    e.close();
    assert_eq!(buf, e.buf);
}
