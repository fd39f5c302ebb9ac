//! Numbers in the names and lines jit-client writes inside the JIT
//! (`jit-PID.dump`, live mode's images and folder, perf map lines),
//! spelled by hand: `format!` cost live mode 1,400 instructions a load,
//! a perf map line 400, and the first load 2,000 more.

/// `prefix`, `n` in decimal, `suffix`.
pub(crate) fn numbered(prefix: &str, n: u64, suffix: &str) -> String {
    let mut name = String::with_capacity(prefix.len() + 20 + suffix.len());
    name.push_str(prefix);
    push_digits(&mut name, n, 10);
    name.push_str(suffix);
    name
}

/// `v` in `radix` (10 or 16, lower case), without leading zeros: the
/// digits are `.0[.1..]`.
pub(crate) fn digits(mut v: u64, radix: u64) -> ([u8; 20], usize) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b"0123456789abcdef"[(v % radix) as usize];
        v /= radix;
        if v == 0 {
            return (digits, i);
        }
    }
}

/// Appends `v` in `radix` (see [`digits`]).
pub(crate) fn push_digits(out: &mut String, v: u64, radix: u64) {
    let (digits, start) = digits(v, radix);
    out.extend(digits[start..].iter().map(|&d| char::from(d)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_spelled_as_format_spells_them() {
        for n in [0, 7, 10, 4242, u64::from(u32::MAX), u64::MAX] {
            assert_eq!(numbered("jit-", n, ".dump"), format!("jit-{n}.dump"));
            let mut hex = String::new();
            push_digits(&mut hex, n, 16);
            assert_eq!(hex, format!("{n:x}"));
        }
    }
}
