//! Splitting the names runtimes write into function, file and line.
//!
//! Perf maps carry no line tables, so runtimes pack a source location into
//! the name. The conventions below are tried in order; the first that
//! matches wins, otherwise the whole string is the function name.

/// A function name with the location it carried, if any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Split {
    /// Function name (never empty).
    pub name: String,
    /// Source file named in the string.
    pub file: Option<String>,
    /// Source line named in the string (0 = none).
    pub line: u32,
}

/// Splits `raw` by the first runtime convention that matches. Control
/// characters become `_`, whichever file the name came from: a line break
/// would end the profile line the name is written on, and an escape
/// sequence would reach the terminal.
pub fn split(raw: &str) -> Split {
    let raw = raw.trim();
    let split = v8(raw)
        .or_else(|| luajit(raw))
        .or_else(|| paren_location(raw))
        .or_else(|| cpython(raw))
        .unwrap_or_else(|| Split {
            name: fallback(raw, None, 0),
            file: None,
            line: 0,
        });
    Split {
        name: printable(split.name),
        file: split.file.map(printable),
        line: split.line,
    }
}

/// True for a range that is a table of entry points rather than one
/// function's body: .NET's perf map lists its precode blocks as one range
/// (`stub<364> AllocateTemporaryEntryPoints<PRECODE_FIXUP>`), each 8-byte
/// entry a method's own way in. A call to any of its addresses is a call.
pub(crate) fn is_entry_table(name: &str) -> bool {
    name.strip_prefix("stub<").is_some_and(|rest| {
        rest.contains("AllocateTemporaryEntryPoints") || rest.contains("Precode")
    })
}

/// `s` with each control character replaced by `_`.
fn printable(s: String) -> String {
    match s.contains(char::is_control) {
        true => s.replace(char::is_control, "_"),
        false => s,
    }
}

/// A readable name for an empty one: `<anon file:line>` (file basename).
fn fallback(name: &str, file: Option<&str>, line: u32) -> String {
    if !name.is_empty() {
        return name.to_string();
    }
    let file = file.map(|f| f.rsplit('/').next().unwrap_or(f));
    match (file, line) {
        (Some(f), 0) => format!("<anon {f}>"),
        (Some(f), l) => format!("<anon {f}:{l}>"),
        (None, _) => "<anon>".to_string(),
    }
}

fn located(name: &str, file: &str, line: u32) -> Split {
    Split {
        name: fallback(name, Some(file), line),
        file: Some(file.to_string()),
        line,
    }
}

/// V8: `JS:*fib /path/fib.js:1:13`, `Function:~ node:internal/x:3:4`.
fn v8(raw: &str) -> Option<Split> {
    let (tag, rest) = raw.split_once(':')?;
    if tag.is_empty() || !tag.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return None;
    }
    let (location, col) = rest.rsplit_once(':')?;
    let (location, line) = location.rsplit_once(':')?;
    let (line, _col): (u32, u32) = (line.parse().ok()?, col.parse().ok()?);
    let space = script_start(location)?;
    let (func, file) = (&location[..space], &location[space + 1..]);
    // Tier markers (`~` interpreted, `^` baseline, `+` Maglev, `*`
    // TurboFan) and the `'` newer V8 (Deno's) adds after one: no JS name
    // starts with them.
    let func = func.trim_start_matches(['~', '^', '+', '*', '\'']);
    // JS functions read best bare (tiers merge); other tags stay visible.
    let name = match (tag, func.is_empty()) {
        (_, true) => String::new(),
        ("JS", false) => func.to_string(),
        (_, false) => format!("{tag}:{func}"),
    };
    Some(located(&name, file, line))
}

/// The space before the script: the leftmost one whose suffix starts like
/// a path or URL, else the last one.
fn script_start(s: &str) -> Option<usize> {
    const STARTS: [&str; 7] = ["/", "./", "node:", "file:", "http:", "https:", "<"];
    s.match_indices(' ')
        .map(|(i, _)| i)
        .find(|&i| STARTS.iter().any(|p| s[i + 1..].starts_with(p)))
        .or_else(|| s.rfind(' '))
}

/// LuaJIT: `TRACE_12::script.lua:40`.
fn luajit(raw: &str) -> Option<Split> {
    let rest = raw.strip_prefix("TRACE_")?;
    let (number, location) = rest.split_once("::")?;
    number.parse::<u32>().ok()?;
    let (file, line) = location.rsplit_once(':')?;
    let line = line.parse().ok()?;
    Some(Split {
        name: format!("TRACE_{number}"),
        file: Some(file.to_string()),
        line,
    })
}

/// MoarVM `name(file:line)` and perf-map-agent `...(File.java:12)`. The
/// name may contain parens (`infix:<(|)>`), so search from the right.
fn paren_location(raw: &str) -> Option<Split> {
    let inner = raw.strip_suffix(')')?;
    let (before, line) = inner.rsplit_once(':')?;
    if line.is_empty() || !line.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let open = before.rfind('(')?;
    let (name, file) = (&before[..open], &before[open + 1..]);
    if file.is_empty() {
        return None;
    }
    Some(located(name.trim_end(), file, line.parse().ok()?))
}

/// CPython: `py::qualname:/path/file.py` (no line in the name).
fn cpython(raw: &str) -> Option<Split> {
    let rest = raw.strip_prefix("py::")?;
    let (name, file) = rest.split_once(':')?;
    Some(Split {
        name: format!("py::{}", fallback(name, None, 0)),
        file: Some(file.to_string()),
        line: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dotnet_precode_blocks_are_entry_tables() {
        assert!(is_entry_table(
            "stub<364> AllocateTemporaryEntryPoints<PRECODE_FIXUP>"
        ));
        assert!(is_entry_table("stub<2> FixupPrecodeChunk"));
        assert!(!is_entry_table("stub<7> GenerateResolveStub"));
        assert!(!is_entry_table("AllocateTemporaryEntryPoints"));
        assert!(!is_entry_table("int32 [Fib] Fib::fib(int32)[QuickJitted]"));
    }

    fn parts(raw: &str) -> (String, Option<String>, u32) {
        let s = split(raw);
        (s.name, s.file, s.line)
    }

    fn some(name: &str, file: &str, line: u32) -> (String, Option<String>, u32) {
        (name.into(), Some(file.into()), line)
    }

    #[test]
    fn moarvm_names() {
        assert_eq!(
            parts("find_method(gen/moar/stage2/nqpmo.nqp:1391)"),
            some("find_method", "gen/moar/stage2/nqpmo.nqp", 1391)
        );
        assert_eq!(parts("(-e:1)"), some("<anon -e:1>", "-e", 1));
        assert_eq!(
            parts("postcircumfix:<{ }>(SETTING::src/core.c/hash_slice.pm6:6)"),
            some(
                "postcircumfix:<{ }>",
                "SETTING::src/core.c/hash_slice.pm6",
                6
            )
        );
        assert_eq!(
            parts("infix:<(|)>(SETTING::src/core.c/set_union.pm6:12)"),
            some("infix:<(|)>", "SETTING::src/core.c/set_union.pm6", 12)
        );
        assert_eq!(parts("<unit>(-e:1)"), some("<unit>", "-e", 1));
    }

    #[test]
    fn v8_names() {
        assert_eq!(
            parts("JS:*fib /tmp/fib.js:1:13"),
            some("fib", "/tmp/fib.js", 1)
        );
        assert_eq!(
            parts("JS:~get x node:internal/url:3:4"),
            some("get x", "node:internal/url", 3)
        );
        assert_eq!(
            parts("JS:^ /tmp/a b/s.js:7:1"),
            some("<anon s.js:7>", "/tmp/a b/s.js", 7)
        );
        assert_eq!(parts("Function:*f x.js:2:1"), some("Function:f", "x.js", 2));
        // Deno 2's V8 writes a `'` after the tier marker.
        assert_eq!(
            parts("JS:*'fib file:///tmp/fib.js:1:1"),
            some("fib", "file:///tmp/fib.js", 1)
        );
        assert_eq!(
            parts("Builtin:ArrayPrototypePush"),
            ("Builtin:ArrayPrototypePush".into(), None, 0)
        );
        // A tag is a word (letters, digits, `_`): no tag, or one with a
        // space, is no V8 name.
        assert_eq!(parts("My_Tag:*f x.js:2:1"), some("My_Tag:f", "x.js", 2));
        for raw in [":*f x.js:2:1", "JS x:*f x.js:2:1"] {
            assert_eq!(parts(raw), (raw.into(), None, 0), "{raw}");
        }
    }

    #[test]
    fn other_runtimes() {
        assert_eq!(
            parts("TRACE_3::@bench.lua:40"),
            some("TRACE_3", "@bench.lua", 40)
        );
        assert_eq!(
            parts("py::Foo.bar:/usr/lib/x.py"),
            some("py::Foo.bar", "/usr/lib/x.py", 0)
        );
        assert_eq!(
            parts("wasm[0]::function[3]"),
            ("wasm[0]::function[3]".into(), None, 0)
        );
        assert_eq!(parts(""), ("<anon>".into(), None, 0));
        assert_eq!(
            parts("unterminated(file.nqp:12"),
            ("unterminated(file.nqp:12".into(), None, 0)
        );
        // A line number is digits only (`+5` would parse as a number).
        for raw in ["f(a.nqp:+5)", "f(a.nqp:)", "f(:5)"] {
            assert_eq!(parts(raw), (raw.into(), None, 0), "{raw}");
        }
    }
}
