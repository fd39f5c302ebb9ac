//! Every fast classification held to the rules of the module doc, read
//! one line at a time.

use super::*;

/// The rules of the module doc, one line at a time.
fn plain_cost_line(line: &[u8]) -> bool {
    let sep = |b: &u8| matches!(b, b' ' | b'\t');
    let mut tokens = line.split(sep).filter(|t| !t.is_empty());
    let first = tokens.next().is_some_and(plain_token);
    let decimal = |t: &[u8]| !t.contains(&b'x') && !t.contains(&b'X');
    matches!(line.first(), Some(b'0'..=b'9' | b'+' | b'-' | b'*'))
        && first
        && tokens.all(|t| plain_token(t) && decimal(t))
}

fn plain_token(t: &[u8]) -> bool {
    let number = t.strip_prefix(b"+").or(t.strip_prefix(b"-")).unwrap_or(t);
    let plain = match number.get(..2) {
        Some(b"0x" | b"0X") => number.len() > 2 && number[2..].iter().all(u8::is_ascii_hexdigit),
        _ => !number.is_empty() && number.iter().all(u8::is_ascii_digit),
    };
    t.len() <= 16 && (t == b"*" || plain)
}

/// The break offsets a line-by-line reading gives.
fn slow_breaks(chunk: &[u8]) -> Vec<usize> {
    let mut out = vec![0];
    let Some(first) = chunk.iter().position(|&b| b == b'\n') else {
        return out;
    };
    let mut at = first + 1;
    for line in chunk[first + 1..].split_inclusive(|&b| b == b'\n') {
        let Some(text) = line.strip_suffix(b"\n") else {
            break;
        };
        if !plain_cost_line(text) {
            out.push(at);
        }
        at += line.len();
    }
    if *out.last().unwrap() < at {
        out.push(at);
    }
    out
}

/// The break offsets of `breaks`, after checking that the baseline
/// code gives the same and that the newlines are counted.
fn fast_breaks(chunk: &[u8]) -> Vec<usize> {
    let mut out = Breaks::default();
    breaks(b"1 2\nfn=(1)\n3 4\n", &mut out); // reused: old marks must go
    breaks(chunk, &mut out);
    let mut baseline = Breaks::default();
    breaks_with::<Baseline>(chunk, &mut baseline);
    assert_eq!(out, baseline);
    let newlines = chunk.iter().filter(|&&b| b == b'\n').count();
    assert_eq!(out.newlines(), newlines as u64);
    let mut offsets = Vec::new();
    while let Some(at) = out.next_from(offsets.last().map_or(0, |&o| o + 1)) {
        offsets.push(at);
    }
    offsets
}

const LINES: &[&[u8]] = &[
    b"0x2f780 297 13",
    b"+1 +2 327",
    b"+3 * 9690",
    b"-0x1f -7 0",
    b"* * 1",
    b"16 0",
    b"0X7fffFFFF 1\t2",
    b"1234567890123456 1",
    b"+0x10 3 ",
    b"12345678901234567 1",
    b"5 0x10 1",
    b"+1 * 0x5",
    b"0x00007fffffffffff 5",
    b"fn=(12) main",
    b"calls=3 0x400",
    b"",
    b"0 zz",
    b"1-2 5",
    b"++1 2",
    b"+ 1",
    b"*5 1",
    b"** 1",
    b"5* 1",
    b"0x 1",
    b"00x5 1",
    b"0x5x3 1",
    b"12ab 1",
    b"1 ab",
    b"x5 1",
    b" 5 1",
    b"5 1\r",
    b"5 \xc3\xa9",
    b"# comment",
];

/// Deterministic pseudo-random lines from `LINES`.
fn text(seed: u64, count: usize, plain_only: bool) -> Vec<u8> {
    let mut state = seed;
    let mut out = Vec::new();
    for _ in 0..count {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let pool = if plain_only { 9 } else { LINES.len() };
        let line = LINES[(state >> 33) as usize % pool];
        out.extend_from_slice(line);
        out.push(b'\n');
    }
    out
}

#[test]
fn block_masks_class_every_byte_as_one_byte_at_a_time() {
    let spread = |bit: u64| if bit == 1 { u64::MAX } else { 0 };
    for b in 0..=255u8 {
        let want = Masks::of_byte(b);
        let mut got = vec![Masks::of(&[b; BLOCK])];
        #[cfg(target_arch = "x86_64")]
        if avx2::detected() {
            // SAFETY: the CPU has AVX2.
            got.push(unsafe { avx2::masks(&[b; BLOCK]) });
        }
        for m in got {
            let pairs = [
                (m.nl, want.nl),
                (m.sep, want.sep),
                (m.allowed, want.allowed),
                (m.start, want.start),
                (m.sign, want.sign),
                (m.star, want.star),
                (m.x, want.x),
                (m.zero, want.zero),
                (m.digit, want.digit),
                (m.hex, want.hex),
            ];
            for (i, (got, want)) in pairs.into_iter().enumerate() {
                assert_eq!(got, spread(want), "byte {b:#04x} mask {i}");
            }
        }
    }
}

#[test]
fn sample_lines_are_classed_as_the_rules_say() {
    let plain: Vec<_> = LINES.iter().map(|l| plain_cost_line(l)).collect();
    assert!(plain[..9].iter().all(|&p| p), "{plain:?}");
    assert!(plain[9..].iter().all(|&p| !p), "{plain:?}");
}

#[test]
fn every_line_alone_gives_the_slow_answer() {
    for line in LINES {
        for pad in 0..70 {
            let mut chunk = b"tail\n".to_vec();
            chunk.resize(pad + 5, b'5');
            chunk.push(b'\n');
            chunk.extend_from_slice(line);
            chunk.extend_from_slice(b"\n1 2\n");
            chunk.resize(256, b'7');
            let line = line.escape_ascii();
            assert_eq!(fast_breaks(&chunk), slow_breaks(&chunk), "{pad} {line}");
        }
    }
}

#[test]
fn mixed_text_gives_the_slow_answer_at_every_length() {
    for seed in 0..40 {
        let text = text(seed, 120, seed % 4 == 0);
        for len in (0..text.len()).step_by(7) {
            let chunk = &text[len / 3..len];
            assert_eq!(
                fast_breaks(chunk),
                slow_breaks(chunk),
                "seed {seed} len {len}"
            );
        }
    }
}

#[test]
fn long_tokens_across_blocks_are_marked() {
    for at in 1..80 {
        let mut chunk = vec![b'1'; 200];
        for (i, b) in chunk.iter_mut().enumerate().take(at) {
            *b = if i % 4 == 3 { b'\n' } else { b'2' };
        }
        chunk[at] = b'\n';
        for i in (at + 18..200).step_by(4) {
            chunk[i] = b'\n';
        }
        assert_eq!(fast_breaks(&chunk), slow_breaks(&chunk), "at {at}");
    }
}
