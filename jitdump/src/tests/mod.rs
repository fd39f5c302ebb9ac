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

    /// A number's bytes in this encoder's byte order.
    fn number<const N: usize>(&mut self, le: [u8; N], be: [u8; N]) -> &mut Self {
        self.buf.extend_from_slice(if self.big { &be } else { &le });
        self
    }

    fn u32(&mut self, v: u32) -> &mut Self {
        self.number(v.to_le_bytes(), v.to_be_bytes())
    }

    fn u64(&mut self, v: u64) -> &mut Self {
        self.number(v.to_le_bytes(), v.to_be_bytes())
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
                .map(|(at, r)| (*at, text(&Item::from(r))))
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

mod damage;
mod reading;
