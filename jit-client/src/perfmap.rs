//! The perf map line format: `START SIZE NAME\n`, hex without `0x`.

use std::io::Write;

/// Appends one perf map line for `[start, start+size)` to `buf`.
pub fn line(buf: &mut Vec<u8>, start: u64, size: u64, name: &[u8]) {
    let _ = write!(buf, "{start:x} {size:x} ");
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
    }
}
