//! Mangled names as Valgrind prints them with `--demangle=yes`: LLVM's
//! and Cranelift's JITs name their code with Itanium C++ (`_ZN...`) and
//! Rust (`_R...`, or legacy `_ZN...17h<hash>E`) symbols.

use std::borrow::Cow;

/// `raw` demangled, or as it is where it is not a mangled name. Rust
/// names lose their hash, as in Valgrind's output.
pub fn demangle(raw: &str) -> Cow<'_, str> {
    if !raw.starts_with("_Z") && !raw.starts_with("_R") && !raw.starts_with("__Z") {
        return Cow::Borrowed(raw);
    }
    if let Ok(rust) = rustc_demangle::try_demangle(raw) {
        return Cow::Owned(format!("{rust:#}"));
    }
    let options = cpp_demangle::DemangleOptions::default();
    match cpp_demangle::Symbol::new(raw).map(|s| s.demangle(&options)) {
        Ok(Ok(text)) => Cow::Owned(text),
        _ => Cow::Borrowed(raw),
    }
}

#[cfg(test)]
mod tests {
    use super::demangle;

    #[test]
    fn itanium_and_rust_names_are_demangled_others_kept() {
        // numba's njit function, as it registers it with gdb.
        assert_eq!(
            demangle("_ZN8__main__3hotB2v1B4abcdEx"),
            "__main__::hot[abi:v1][abi:abcd](long long)"
        );
        assert_eq!(demangle("_ZN3foo3barEv"), "foo::bar()");
        assert_eq!(
            demangle("_ZN4core3fmt5write17h0123456789abcdefE"),
            "core::fmt::write"
        );
        assert_eq!(demangle("_RNvCs1234_7mycrate4main"), "mycrate::main");
        for kept in [
            "NRT_incref",
            "LazyCompile:*fib /a.js:1",
            "_Zunparseable",
            "_R",
        ] {
            assert_eq!(demangle(kept), kept);
        }
    }
}
