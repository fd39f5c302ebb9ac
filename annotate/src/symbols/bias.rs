//! The +0x40 bias of line addresses: V8 and LLVM's jitdump writers add
//! the size of an ELF header to every DEBUG_INFO address (perf's reader
//! subtracts it). Other writers, jit-client among them, do not. The bias
//! is decided once per file, from who wrote it and from what all of its
//! records say, never per record: a function of jit-client whose first line
//! entry happens to sit 0x40 bytes in must keep its lines.

use jitdump::scan::EntrySpan;
use jitdump::Header;

/// The bias of 64-bit writers.
const ELF64_BIAS: u64 = 0x40;
/// V8's mark in the header's reserved word.
const V8_MARK: u32 = 0xdead_beef;

/// How to treat the bias (`--bias`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BiasMode {
    /// Decide per file from its writer and its records (the default).
    #[default]
    Detect,
    /// Never subtract anything.
    None,
    /// Always subtract this many bytes (0x40 for 64-bit, 0x34 for 32-bit writers).
    Fixed(u64),
}

/// Who wrote a jitdump, as far as its header tells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Writer {
    /// jit-client (its mark in the header): no bias.
    JitClient,
    /// V8 (`0xdeadbeef` in the header's reserved word): biased.
    V8,
    /// Any other writer (LLVM, and the many that leave the word 0).
    Other,
}

/// What was decided for one file, and why (for the summary).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// Bytes subtracted from every DEBUG_INFO address.
    pub shift: u64,
    /// The writer the header names.
    pub writer: Writer,
    /// DEBUG_INFO records the shift applies to.
    pub records: usize,
    /// Why, in a few words.
    pub reason: &'static str,
}

/// What the records of a file say: every record's offsets lie in the
/// biased window `[0x40, size + 0x40]`; some offset lies past its code's
/// end (impossible without the bias); how many records start exactly at
/// 0x40. Gathered one load at a time, from its DEBUG_INFO's span.
#[derive(Debug)]
pub struct Evidence {
    records: usize,
    all_in_window: bool,
    past_end: bool,
    first_at_bias: usize,
}

impl Evidence {
    /// No record seen yet.
    pub fn new() -> Evidence {
        Evidence {
            records: 0,
            all_in_window: true,
            past_end: false,
            first_at_bias: 0,
        }
    }

    /// Adds the load at `addr` of `size` bytes, its DEBUG_INFO's entries
    /// spanning `span` (`None`: no entries, no evidence).
    pub fn add(&mut self, addr: u64, size: u64, span: Option<EntrySpan>) {
        let Some(span) = span else {
            return;
        };
        self.records += 1;
        let window = ELF64_BIAS..=size.saturating_add(ELF64_BIAS);
        let lowest = span.min.checked_sub(addr);
        let highest = span.max.checked_sub(addr);
        self.all_in_window &= lowest.is_some_and(|o| window.contains(&o))
            && highest.is_some_and(|o| window.contains(&o));
        self.past_end |= highest.is_some_and(|o| o > size);
        self.first_at_bias += usize::from(span.first.checked_sub(addr) == Some(ELF64_BIAS));
    }

    /// The bias holds across the file: every record fits it, and some
    /// record could not be read without it (an address past its code, or
    /// most records starting exactly at 0x40).
    fn holds(&self) -> bool {
        let most_start_at_bias = self.records >= 2 && self.first_at_bias * 2 > self.records;
        self.records > 0 && self.all_in_window && (self.past_end || most_start_at_bias)
    }
}

/// Decides the bias of one file from what its records say.
pub fn decide(header: &Header, evidence: &Evidence, mode: BiasMode) -> Decision {
    let writer = match header.reserved {
        _ if header.is_jit_client() => Writer::JitClient,
        V8_MARK => Writer::V8,
        _ => Writer::Other,
    };
    let (shift, reason) = match (mode, writer) {
        (BiasMode::None, _) => (0, "--bias none"),
        (BiasMode::Fixed(b), _) => (b, "--bias given"),
        (BiasMode::Detect, Writer::JitClient) => (0, "jit-client writes no bias"),
        (BiasMode::Detect, Writer::V8) if evidence.all_in_window && evidence.records > 0 => {
            (ELF64_BIAS, "V8's writer adds it, and every record fits it")
        }
        (BiasMode::Detect, Writer::V8) => (0, "V8's writer, but not every record fits the bias"),
        (BiasMode::Detect, Writer::Other) if evidence.holds() => {
            (ELF64_BIAS, "every record fits it and some need it")
        }
        (BiasMode::Detect, Writer::Other) => (0, "the records show none"),
    };
    Decision {
        shift,
        writer,
        records: if shift == 0 { 0 } else { evidence.records },
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jitdump::DebugEntry;

    fn header(reserved: u32) -> Header {
        Header {
            big_endian: false,
            version: 1,
            total_size: 40,
            elf_mach: 62,
            reserved,
            pid: 1,
            timestamp: 0,
            flags: 0,
        }
    }

    fn evidence(loads: &[(u64, u64, &[DebugEntry])]) -> Evidence {
        let mut evidence = Evidence::new();
        for &(addr, size, entries) in loads {
            evidence.add(addr, size, EntrySpan::of(entries));
        }
        evidence
    }

    fn entry(addr: u64) -> DebugEntry<'static> {
        DebugEntry {
            addr,
            line: 1,
            discrim: 0,
            file: b"f",
        }
    }

    /// Two functions at 0x1000 and 0x2000 of 0x100 bytes, their first line
    /// entries at these offsets.
    fn shift_for(reserved: u32, first: [u64; 2]) -> u64 {
        let a = [entry(0x1000 + first[0]), entry(0x1000 + first[0] + 8)];
        let b = [entry(0x2000 + first[1]), entry(0x2000 + first[1] + 8)];
        let loads = [(0x1000, 0x100, &a[..]), (0x2000, 0x100, &b[..])];
        decide(&header(reserved), &evidence(&loads), BiasMode::Detect).shift
    }

    #[test]
    fn jit_client_files_never_get_the_bias() {
        let mark = jitdump::format::JIT_CLIENT_MARK;
        assert_eq!(shift_for(mark, [0x40, 0x40]), 0);
    }

    #[test]
    fn v8_files_get_it_where_every_record_fits() {
        assert_eq!(shift_for(V8_MARK, [0x40, 0x48]), 0x40);
        assert_eq!(shift_for(V8_MARK, [0x40, 0x0]), 0);
    }

    #[test]
    fn other_writers_get_it_only_where_the_file_shows_it() {
        assert_eq!(shift_for(0, [0x40, 0x40]), 0x40);
        // One function with a 64-byte prologue is no evidence.
        assert_eq!(shift_for(0, [0x40, 0x0]), 0);
        assert_eq!(shift_for(0, [0x40, 0x44]), 0);
        // An address past the code's end is.
        let past = [entry(0x1044), entry(0x1000 + 0x120)];
        let loads = [(0x1000u64, 0x100u64, &past[..])];
        assert_eq!(
            decide(&header(0), &evidence(&loads), BiasMode::Detect).shift,
            0x40
        );
    }

    #[test]
    fn the_edges_of_the_window_decide_as_stated() {
        let decided = |reserved, loads: &[(u64, u64, &[DebugEntry])]| {
            decide(&header(reserved), &evidence(loads), BiasMode::Detect)
        };
        // One entry below the window, one inside: not every record fits.
        let low = [entry(0x1010), entry(0x1050)];
        assert_eq!(decided(V8_MARK, &[(0x1000, 0x100, &low)]).shift, 0);
        // An entry exactly at the code's end is not past it: no evidence.
        let at_end = [entry(0x1040), entry(0x1100)];
        assert_eq!(decided(0, &[(0x1000, 0x100, &at_end)]).shift, 0);
        // A V8 file without line tables has nothing to shift.
        let none = decided(V8_MARK, &[]);
        assert_eq!((none.shift, none.records), (0, 0));
        // The records the shift applies to are counted only where it is.
        let a = [entry(0x1040), entry(0x1048)];
        let b = [entry(0x2048), entry(0x2050)];
        let two = decided(V8_MARK, &[(0x1000, 0x100, &a), (0x2000, 0x100, &b)]);
        assert_eq!((two.shift, two.records), (0x40, 2));
        let mark = jitdump::format::JIT_CLIENT_MARK;
        let ours = decided(mark, &[(0x1000, 0x100, &a), (0x2000, 0x100, &b)]);
        assert_eq!((ours.shift, ours.records), (0, 0));
    }
}
