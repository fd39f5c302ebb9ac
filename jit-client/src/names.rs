//! The name written for a function.

use std::borrow::Cow;

/// The name as given, or `jit_<addr>` when empty. (Bytes that would break
/// the files are replaced when the name is written.)
pub fn function_name(name: &[u8], addr: u64) -> Cow<'_, [u8]> {
    if name.is_empty() {
        return Cow::Owned(format!("jit_{addr:x}").into_bytes());
    }
    Cow::Borrowed(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_names_get_the_address() {
        assert_eq!(&*function_name(b"", 0x1f), b"jit_1f");
        assert_eq!(&*function_name(b"f", 0x1f), b"f");
    }
}
