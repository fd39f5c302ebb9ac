//! Making arbitrary bytes safe as jitdump and perf map strings.

use std::borrow::Cow;

/// Replaces NUL, newline and carriage return with `_` (as wasmtime does):
/// any of them would cut a jitdump string or a perf map line short.
pub fn sanitize(name: &[u8]) -> Cow<'_, [u8]> {
    let bad = |b: &u8| matches!(b, 0 | b'\n' | b'\r');
    if !name.iter().any(bad) {
        return Cow::Borrowed(name);
    }
    Cow::Owned(
        name.iter()
            .map(|b| if bad(b) { b'_' } else { *b })
            .collect(),
    )
}

/// The name to write for a function: sanitized, or `jit_<addr>` when empty.
pub fn function_name(name: &[u8], addr: u64) -> Cow<'_, [u8]> {
    if name.is_empty() {
        return Cow::Owned(format!("jit_{addr:x}").into_bytes());
    }
    sanitize(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_line_breaks_and_nul() {
        assert_eq!(&*sanitize(b"a\nb\0c\rd"), b"a_b_c_d");
        assert!(matches!(sanitize(b"plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn empty_names_get_the_address() {
        assert_eq!(&*function_name(b"", 0x1f), b"jit_1f");
    }
}
