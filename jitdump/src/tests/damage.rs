//! Damaged and foreign files: what is reported, where, and by both readers.

use super::*;

#[test]
fn damage_is_stepped_over_or_stops_the_reading_where_it_is() {
    for big in [false, true] {
        let mut e = Enc::new(big);
        e.header(1, 40, 0);
        let unknown = e.at();
        e.record(77, &[1, 2, 3, 4]);
        let short_load = e.at();
        e.record(0, &[0; 20]);
        // An address and size that wrap around.
        let wrapping = e.at();
        e.load(u64::MAX - 1, 4, 1, b"w", &[]);
        // More entries declared than the body holds; padding of eight
        // bytes; padding that is not zero; a name without its NUL.
        let too_many = e.at();
        e.debug(0x1000, 9, &[(0x1000, 1, b"f")], &[]);
        let long_pad = e.at();
        e.debug(0x1000, 1, &[(0x1000, 1, b"f")], &[0; 8]);
        let dirty_pad = e.at();
        e.debug(0x1000, 1, &[(0x1000, 1, b"f")], &[0, 1]);
        let no_nul = e.at();
        let body = e.body(|b| {
            b.u64(0x1000).u64(1).u64(0x1000).u32(1).u32(0).bytes(b"abc");
        });
        e.record(2, &body);
        let short_debug = e.at();
        e.record(2, &[0; 8]);
        // Unwinding sizes beyond the data, the header part beyond the
        // whole.
        let unwind_long = e.at();
        e.unwinding(64, 8, 8);
        let unwind_hdr = e.at();
        e.unwinding(8, 16, 8);
        let short_unwind = e.at();
        e.record(4, &[0; 16]);
        let good = e.at();
        e.load(0x5000, 1, 2, b"ok", &[0xc3]);
        let (records, problems) = both(&e.buf).unwrap();
        let offsets: Vec<u64> = records.iter().map(|r| r.0).collect();
        assert_eq!(offsets, [unknown, good], "{big}");
        assert_eq!(records[0].1, Record::Unknown(77));
        use ProblemKind::*;
        let want = [
            problem(unknown, UnknownRecord),
            problem(short_load, CorruptRecord),
            problem(wrapping, CorruptRecord),
            problem(too_many, CorruptDebugInfo),
            problem(long_pad, CorruptDebugInfo),
            problem(dirty_pad, CorruptDebugInfo),
            problem(no_nul, CorruptDebugInfo),
            problem(short_debug, CorruptRecord),
            problem(unwind_long, CorruptRecord),
            problem(unwind_hdr, CorruptRecord),
            problem(short_unwind, CorruptRecord),
        ];
        assert_eq!(problems, want, "{big}");
    }
}

#[test]
fn impossible_sizes_a_cut_tail_and_data_after_close_end_the_reading() {
    for big in [false, true] {
        let mut e = Enc::new(big);
        e.header(1, 40, 0);
        e.load(0x1000, 1, 1, b"f", &[0xc3]);
        let base = e.buf.clone();
        let at = e.at();
        // A size below the prefix's 16 bytes, and one over 256 MiB.
        for size in [15u32, (256 << 20) + 1] {
            let mut e = Enc {
                big,
                buf: base.clone(),
            };
            e.u32(0).u32(size).u64(0).bytes(&[0; 64]);
            let (records, problems) = both(&e.buf).unwrap();
            assert_eq!(records.len(), 1);
            assert_eq!(
                problems,
                [problem(at, ProblemKind::BadRecordSize)],
                "{size}"
            );
        }
        // A size of exactly 16 (an empty body) and one of 256 MiB are
        // sizes; the second is cut short.
        for (size, kind) in [(16u32, None), (256 << 20, Some(ProblemKind::TruncatedTail))] {
            let mut e = Enc {
                big,
                buf: base.clone(),
            };
            e.u32(3).u32(size).u64(0);
            let (_, problems) = both(&e.buf).unwrap();
            let want: Vec<Problem> = kind.map(|k| problem(at, k)).into_iter().collect();
            assert_eq!(problems, want, "{size}");
        }
        // Data after the close.
        let mut e = Enc {
            big,
            buf: base.clone(),
        };
        e.close();
        let after = e.at();
        e.load(0x2000, 1, 2, b"g", &[0xc3]);
        let (records, problems) = both(&e.buf).unwrap();
        assert_eq!(records.len(), 2);
        assert_eq!(records[1], (at, Record::Close));
        assert_eq!(problems, [problem(after, ProblemKind::DataAfterClose)]);
    }
}

#[test]
fn every_cut_of_a_file_reads_the_same_in_both_readers() {
    for big in [false, true] {
        let mut e = Enc::new(big);
        e.header(1, 40, 0);
        e.debug(0x1000, 1, &[(0x1000, 1, b"a.js")], &[0; 3]);
        e.load(0x1000, 3, 1, b"f", &[1, 2, 3]);
        e.moved(0x1000, 0x2000, 3, 1);
        e.unwinding(8, 4, 8);
        e.close();
        let whole = both(&e.buf).unwrap().0.len();
        for cut in 0..e.buf.len() {
            let part = &e.buf[..cut];
            match both(part) {
                Ok((records, problems)) => {
                    assert!(cut >= 40, "{cut}");
                    assert!(records.len() < whole);
                    // A cut at a record's end leaves nothing cut.
                    let ends_whole = problems.is_empty();
                    let kinds: Vec<ProblemKind> = problems.iter().map(|p| p.kind).collect();
                    assert!(
                        ends_whole || kinds == [ProblemKind::TruncatedTail],
                        "{cut} {kinds:?}"
                    );
                }
                Err(e) => assert!(cut < 40, "{cut}: {e}"),
            }
        }
    }
}

#[test]
fn files_that_are_no_jitdump_are_refused_with_the_place() {
    let mut short = Enc::new(false);
    short.header(1, 40, 0);
    let error = |offset, message| ReadError { offset, message };
    let no_magic = "not a jitdump (no JiTD magic)";
    // A 40-byte header that declares `total` bytes.
    let declaring = |big, total| {
        let mut e = Enc::new(big);
        e.u32(format::MAGIC)
            .u32(1)
            .u32(total)
            .u32(62)
            .bytes(&[0; 24]);
        e.buf
    };
    let cases = [
        (b"JITD and more".to_vec(), error(0, no_magic)),
        (vec![], error(0, no_magic)),
        (
            short.buf[..39].to_vec(),
            error(39, "file ends inside the 40-byte header"),
        ),
        (declaring(true, 39), error(8, "header size below 40")),
        (
            declaring(false, 41),
            error(8, "header size beyond the end of the file"),
        ),
    ];
    for (bytes, want) in cases {
        assert_eq!(both(&bytes).unwrap_err(), want);
        assert_eq!(read::read_header(&bytes).unwrap_err(), want);
    }
    assert!(!read::is_jitdump(b"JITD") && !read::is_jitdump(b"JiT"));
    assert!(read::is_jitdump(b"JiTD") && read::is_jitdump(b"DTiJ"));
    let error = ReadError {
        offset: 8,
        message: "header size below 40",
    };
    assert_eq!(error.to_string(), "at byte 8: header size below 40");
    let scan_error = scan::ScanError::Format(error);
    assert_eq!(scan_error.to_string(), "at byte 8: header size below 40");
}

#[test]
fn a_record_read_again_alone_is_cut_to_its_size_and_checked() {
    let mut e = Enc::new(false);
    e.header(1, 40, 0);
    e.load(0x1000, 2, 1, b"f", &[0xc3, 0xcc]);
    let next = e.at();
    e.close();
    let file = file_of(&e.buf);
    let bytes = scan::record_at(&file, 40).unwrap();
    assert_eq!(bytes.len() as u64, next - 40);
    let close = scan::record_at(&file, next).unwrap();
    assert_eq!(close.len(), 16);
    let header = read::read_header(&e.buf).unwrap();
    assert_eq!(scan::parse_record(&close, &header), Ok(Record::Close));
    // Past the end: an error, not a short record.
    assert!(scan::record_at(&file, next + 8).is_err());
    // A record whose body no longer parses.
    let mut broken = bytes.clone();
    broken.truncate(30);
    broken[4..8].copy_from_slice(&30u32.to_le_bytes());
    assert_eq!(
        scan::parse_record(&broken, &header),
        Err(ProblemKind::CorruptRecord)
    );
}

#[test]
fn problems_read_as_sentences() {
    use ProblemKind::*;
    let all = [
        TruncatedTail,
        BadRecordSize,
        CorruptRecord,
        CorruptDebugInfo,
        UnknownRecord,
        DataAfterClose,
        UnexpectedVersion,
        UnknownFlags,
    ];
    let texts: Vec<String> = all.iter().map(ToString::to_string).collect();
    assert!(texts[0].starts_with("ends inside a record"));
    assert_eq!(texts[4], "unknown record type skipped");
    let distinct: std::collections::HashSet<&String> = texts.iter().collect();
    assert_eq!(distinct.len(), all.len());
    #[cfg(target_arch = "x86_64")]
    assert_eq!(format::elf_machine(), 62);
}
