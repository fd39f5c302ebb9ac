//! The readers against files built here byte by byte, in both byte
//! orders: what each record reads as, each kind of damage and where it is
//! reported, and the two readers ([`read`](crate::read()) and
//! [`scan`](crate::scan::scan)) agreeing on every file and every cut of
//! it. annotate's tests read real runtimes' files; these hold the format.

use std::io::Write;

use crate::format;
use crate::records::{Header, Move, Problem, ProblemKind, ReadError, Record};
use crate::scan::{self, EntrySpan, Item};
use crate::{read, CodeLoad, DebugEntry};

/// A jitdump encoder in either byte order, for any record, well formed
/// or not.
struct Enc {
    big: bool,
    buf: Vec<u8>,
}

impl Enc {
    fn new(big: bool) -> Enc {
        Enc {
            big,
            buf: Vec::new(),
        }
    }

    fn u32(&mut self, v: u32) -> &mut Self {
        let bytes = if self.big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        };
        self.buf.extend_from_slice(&bytes);
        self
    }

    fn u64(&mut self, v: u64) -> &mut Self {
        let bytes = if self.big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        };
        self.buf.extend_from_slice(&bytes);
        self
    }

    fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.buf.extend_from_slice(b);
        self
    }

    /// A header of `total` bytes (40 and up: the rest zero).
    fn header(&mut self, version: u32, total: u32, flags: u64) -> &mut Self {
        self.u32(format::MAGIC).u32(version).u32(total).u32(62);
        self.u32(format::JIT_CLIENT_MARK)
            .u32(4242)
            .u64(99)
            .u64(flags);
        self.buf
            .resize(self.buf.len() + (total as usize).saturating_sub(40), 0);
        self
    }

    /// A record of id `id` around `body` (its size as declared).
    fn record(&mut self, id: u32, body: &[u8]) -> &mut Self {
        self.u32(id).u32(16 + body.len() as u32).u64(7);
        self.bytes(body)
    }

    /// A body encoded by `f` in this encoder's byte order.
    fn body(&self, f: impl FnOnce(&mut Enc)) -> Vec<u8> {
        let mut e = Enc::new(self.big);
        f(&mut e);
        e.buf
    }

    fn load(&mut self, addr: u64, size: u64, index: u64, name: &[u8], code: &[u8]) -> &mut Self {
        let body = self.body(|e| {
            e.u32(4242)
                .u32(4243)
                .u64(addr)
                .u64(addr)
                .u64(size)
                .u64(index);
            e.bytes(name).bytes(&[0]).bytes(code);
        });
        self.record(0, &body)
    }

    fn moved(&mut self, old: u64, new: u64, size: u64, index: u64) -> &mut Self {
        let body = self.body(|e| {
            e.u32(4242)
                .u32(4243)
                .u64(new)
                .u64(old)
                .u64(new)
                .u64(size)
                .u64(index);
        });
        self.record(1, &body)
    }

    /// A DEBUG_INFO of `n` declared entries, those given, then `pad`.
    fn debug(&mut self, addr: u64, n: u64, entries: &[(u64, u32, &[u8])], pad: &[u8]) -> &mut Self {
        let body = self.body(|e| {
            e.u64(addr).u64(n);
            for &(at, line, file) in entries {
                e.u64(at).u32(line).u32(1).bytes(file).bytes(&[0]);
            }
            e.bytes(pad);
        });
        self.record(2, &body)
    }

    fn close(&mut self) -> &mut Self {
        self.record(3, &[])
    }

    fn unwinding(&mut self, unwind: u64, hdr: u64, data: usize) -> &mut Self {
        let body = self.body(|e| {
            e.u64(unwind).u64(hdr).u64(unwind).bytes(&vec![0xab; data]);
        });
        self.record(4, &body)
    }

    /// The offset the next record will have.
    fn at(&self) -> u64 {
        self.buf.len() as u64
    }
}

fn file_of(bytes: &[u8]) -> std::fs::File {
    let mut file = tempfile::tempfile().unwrap();
    file.write_all(bytes).unwrap();
    file
}

/// A record as the scan hands it over.
fn as_item<'a>(record: &Record<'a>) -> Item<'a> {
    match record {
        Record::Load(load) => Item::Load(*load),
        Record::Move(m) => Item::Move(m.clone()),
        Record::DebugInfo { code_addr, entries } => Item::DebugInfo {
            code_addr: *code_addr,
            span: EntrySpan::of(entries),
        },
        Record::Close => Item::Close,
        Record::UnwindingInfo | Record::Unknown(_) => Item::Other,
    }
}

/// An item as text, its code bytes as their length and a checksum (a
/// failure then prints no megabytes).
fn text(item: &Item) -> String {
    match item {
        Item::Load(load) => {
            let sum = |c: &[u8]| {
                c.iter().fold(0u64, |h, &b| {
                    (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
                })
            };
            let code = load.code.map(|c| (c.len(), sum(c)));
            format!(
                "{:?} with code {code:?}",
                CodeLoad {
                    code: None,
                    ..*load
                }
            )
        }
        other => format!("{other:?}"),
    }
}

/// What a reader gives: records by offset, and the damage found.
type Reading<T> = Result<(Vec<(u64, T)>, Vec<Problem>), ReadError>;

/// What the scan of `bytes` gives: its items (as text) and its problems.
fn scanned(bytes: &[u8]) -> Reading<String> {
    let mut items = Vec::new();
    let result = scan::scan(&file_of(bytes), |at, item| items.push((at, text(&item))));
    match result {
        Ok(scan) => Ok((items, scan.problems)),
        Err(scan::ScanError::Format(e)) => Err(e),
        Err(e) => panic!("{e}"),
    }
}

/// Both readers on `bytes`: the records and problems `read` gives, after
/// checking that the scan gives the same.
fn both(bytes: &[u8]) -> Reading<Record<'_>> {
    let read = read(bytes);
    let scan = scanned(bytes);
    match (&read, &scan) {
        (Ok(dump), Ok((items, problems))) => {
            let want: Vec<(u64, String)> = dump
                .records
                .iter()
                .map(|(at, r)| (*at, text(&as_item(r))))
                .collect();
            assert_eq!(items, &want, "the scan's items");
            assert_eq!(problems, &dump.problems, "the scan's problems");
        }
        (Err(r), Err(s)) => assert_eq!(r, s),
        _ => panic!("read {:?}, scan {:?}", read.is_ok(), scan.is_ok()),
    }
    read.map(|dump| (dump.records, dump.problems))
}

fn problem(offset: u64, kind: ProblemKind) -> Problem {
    Problem { offset, kind }
}

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
    let cases: Vec<(Vec<u8>, ReadError)> = vec![
        (
            b"JITD and more".to_vec(),
            ReadError {
                offset: 0,
                message: "not a jitdump (no JiTD magic)",
            },
        ),
        (
            vec![],
            ReadError {
                offset: 0,
                message: "not a jitdump (no JiTD magic)",
            },
        ),
        (
            short.buf[..39].to_vec(),
            ReadError {
                offset: 39,
                message: "file ends inside the 40-byte header",
            },
        ),
        (
            {
                let mut e = Enc::new(true);
                e.u32(format::MAGIC).u32(1).u32(39).u32(62).bytes(&[0; 24]);
                e.buf
            },
            ReadError {
                offset: 8,
                message: "header size below 40",
            },
        ),
        (
            {
                let mut e = Enc::new(false);
                e.u32(format::MAGIC).u32(1).u32(41).u32(62).bytes(&[0; 24]);
                e.buf
            },
            ReadError {
                offset: 8,
                message: "header size beyond the end of the file",
            },
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
