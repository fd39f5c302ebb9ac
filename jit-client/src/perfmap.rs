//! The perf map line format: `START SIZE NAME\n`, hex without `0x`.

use crate::names::digits;

/// Appends one perf map line for `[start, start+size)` to `buf`.
pub fn line(buf: &mut Vec<u8>, start: u64, size: u64, name: &[u8]) {
    for v in [start, size] {
        let (hex, from) = digits(v, 16);
        buf.extend_from_slice(&hex[from..]);
        buf.push(b' ');
    }
    jitdump::write::put_str(buf, name);
    *buf.last_mut().expect("put_str wrote a NUL") = b'\n';
}

#[cfg(test)]
mod tests {
    #[test]
    fn formats_like_perf() {
        let mut buf = Vec::new();
        super::line(&mut buf, 0x7f00_1000, 0x40, b"fib (fib.toy:3)");
        assert_eq!(buf, b"7f001000 40 fib (fib.toy:3)\n");
        buf.clear();
        super::line(&mut buf, 0, u64::MAX, b"f");
        assert_eq!(buf, b"0 ffffffffffffffff f\n");
    }
}
