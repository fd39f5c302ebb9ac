//! Reading perf map files (`/tmp/perf-PID.map`): `START SIZE NAME` lines.
//!
//! Lenient like the runtimes that write them: `0x` prefixes, upper case,
//! tabs and names with spaces are accepted. The symbol table reads whole
//! maps line by line (symbols/index_perfmap.rs, which counts and skips the
//! lines that do not parse); this module reads one line.

mod hex;

use hex::hex_field;

/// True when `data` looks like a perf map: its first line parses.
pub fn looks_like_perf_map(data: &[u8]) -> bool {
    let first = data.split(|&b| b == b'\n').next().unwrap_or_default();
    parse_line(first.strip_suffix(b"\r").unwrap_or(first)).is_some()
}

/// Which runtime wrote a perf map, as its first line shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapWriter {
    /// V8 (`--perf-basic-prof`): each name tagged with what the code is
    /// (`Builtin:`, `JS:`, `LazyCompile:`...).
    V8,
    /// HotSpot (`-XX:+DumpPerfMapAtExit`, `jcmd PID Compiler.perfmap`):
    /// address and size as `0x` and 16 digits.
    HotSpot,
    /// BEAM (`+JPperf true`): its shared code first, `$global::` names.
    Beam,
    /// Any other.
    Other,
}

/// V8's tags: the kind of code a name stands for, before its first `:`.
const V8_TAGS: [&str; 12] = [
    "Builtin",
    "BytecodeHandler",
    "Callback",
    "Eval",
    "Function",
    "Handler",
    "JS",
    "LazyCompile",
    "RegExp",
    "Script",
    "Stub",
    "Wasm",
];

/// The writer of the perf map whose first line is `line`.
pub fn writer(line: &[u8]) -> MapWriter {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let Some((_, _, name)) = fields(line) else {
        return MapWriter::Other;
    };
    let wide = |field: &[u8]| field.len() == 18 && field.starts_with(b"0x");
    let mut words = line
        .split(|b| b.is_ascii_whitespace())
        .filter(|w| !w.is_empty());
    if words.next().is_some_and(wide) && words.next().is_some_and(wide) {
        return MapWriter::HotSpot;
    }
    if name.starts_with(b"$global::") {
        return MapWriter::Beam;
    }
    // One colon after the tag: `Function::call` is C++'s.
    let tagged = |tag: &&str| {
        let rest = name.strip_prefix(tag.as_bytes());
        rest.and_then(|r| r.strip_prefix(b":"))
            .is_some_and(|r| !r.starts_with(b":"))
    };
    match V8_TAGS.iter().any(tagged) {
        true => MapWriter::V8,
        false => MapWriter::Other,
    }
}

/// `7f3c2a1000 1a4 LazyCompile:~foo file.js:3` -> (start, size, name).
fn parse_line(line: &[u8]) -> Option<(u64, u64, String)> {
    let (start, size, rest) = fields(line)?;
    Some((start, size, name(rest)))
}

/// A line's address, size and name bytes, without decoding the name;
/// `None` where the line does not parse or its name is blank.
pub fn fields(line: &[u8]) -> Option<(u64, u64, &[u8])> {
    let (start, rest) = hex_field(line)?;
    let (size, rest) = hex_field(rest)?;
    // A name starts right after the blanks: its first byte settles it
    // (one in a million lines needs the whole check).
    let blank = match rest.first() {
        Some(b) if b.is_ascii_graphic() => false,
        _ if rest.is_ascii() => rest.iter().all(|&b| (b as char).is_whitespace()),
        _ => name(rest).is_empty(),
    };
    (!blank).then_some((start, size, rest))
}

/// A name's bytes as text: lossily decoded, trailing blanks dropped.
pub fn name(raw: &[u8]) -> String {
    String::from_utf8_lossy(raw).trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_maps_writer_shows_in_its_first_line() {
        let hotspot = b"0x000000001b5f71c0 0x0000000000000270 long Hot.collatz(long)";
        assert_eq!(writer(hotspot), MapWriter::HotSpot);
        assert_eq!(
            writer(b"18c4000 300 Builtin:DeoptimizationEntry_Eager"),
            MapWriter::V8
        );
        assert_eq!(
            writer(b"7f3c2a1000 1a4 LazyCompile:~foo file.js:3\r"),
            MapWriter::V8
        );
        assert_eq!(writer(b"3a 1a4 JS:*fib /app/fib.js:3:13"), MapWriter::V8);
        // HotSpot's width in the address alone is not HotSpot's.
        let wide_start = b"0x00007f0000001000 10 Builtin:Foo";
        assert_eq!(writer(wide_start), MapWriter::V8);
        let beam = b"0x7ff6ff836000 68 $global::apply_fun_shared";
        assert_eq!(writer(beam), MapWriter::Beam);
        // Others: MoarVM, .NET, a C JIT, a name with a colon that is no
        // V8 tag, `0x` addresses of another width, and no map at all.
        let others: [&[u8]; 9] = [
            b"95e6000 a09 find_method(gen/moar/stage2/nqpmo.nqp:1391)",
            b"000000005C470078 48 stub<1> AllocateTemporaryEntryPoints<PRECODE_FIXUP>",
            b"483c000 d sum_to",
            b"483c000 d std::vector<int>::push_back",
            b"483c000 d Function::call",
            b"0x483c000 0xd JS",
            b"0x00007f00 0x10 Builtin",
            b"1000 10 $local::f",
            b"not a map",
        ];
        for line in others {
            assert_eq!(
                writer(line),
                MapWriter::Other,
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }

    #[test]
    fn accepts_the_variants_runtimes_write() {
        let lines: [&[u8]; 3] = [
            b"95e6000 a09 find_method(x.nqp:1)",
            b"0x10 0x20 JS:~f a.js:1:2  ",
            b"00000000DEAD0000\t10\t[Tier1] A::B()",
        ];
        let read = lines.map(|l| parse_line(l).unwrap());
        assert_eq!(
            read.each_ref().map(|(s, n, name)| (*s, *n, name.as_str())),
            [
                (0x95e6000, 0xa09, "find_method(x.nqp:1)"),
                (0x10, 0x20, "JS:~f a.js:1:2"),
                (0xdead0000, 0x10, "[Tier1] A::B()")
            ]
        );
    }

    #[test]
    fn lines_without_a_name_or_a_number_do_not_parse() {
        // Blank names: ASCII blanks beyond spaces and tabs, and Unicode
        // ones (a no-break space).
        let blank = [
            &b"10 20 \x0b"[..],
            b"10 20 \xc2\xa0",
            b"10 20 \xc2\xa0 \x0c",
        ];
        for line in [&b"zz 10 f"[..], b"10 20", b"10 20 \t ", b"10"]
            .iter()
            .chain(&blank)
        {
            assert_eq!(fields(line), None, "{}", String::from_utf8_lossy(line));
        }
        for line in [&b"10 20 \xc3\xa9t\xc3\xa9"[..], b"10 20 \xff", b"10 20 ~"] {
            assert!(fields(line).is_some(), "{}", String::from_utf8_lossy(line));
        }
    }

    #[test]
    fn a_file_is_a_perf_map_where_its_first_line_parses() {
        assert!(looks_like_perf_map(b"7f00 10 f\nnot a line\n"));
        assert!(looks_like_perf_map(b"0x10 0x20 g\r\n"));
        for not in [
            &b""[..],
            b"\n7f00 10 f\n",
            b"==123== Memcheck\n",
            b"hello world\n",
        ] {
            assert!(
                !looks_like_perf_map(not),
                "{}",
                String::from_utf8_lossy(not)
            );
        }
    }
}
