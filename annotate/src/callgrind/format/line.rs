//! Classifying one callgrind line (no state): header, spec, position.

/// A problem with one line; the rewriter adds the line number.
pub type LineError = String;

/// The kinds of `key=value` lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key {
    /// `ob=`: object of the following functions.
    Ob,
    /// `fl=`: source file of the following functions.
    Fl,
    /// `fi=`: inlined file for the following cost lines.
    Fi,
    /// `fe=`: back to another file (same meaning as `fi=`).
    Fe,
    /// `fn=`: function of the following cost lines.
    Fn,
    /// `cob=`: object of the next call's callee.
    Cob,
    /// `cfi=`/`cfl=`: file of the next call's callee.
    Cfi,
    /// `cfn=`: the next call's callee.
    Cfn,
    /// `calls=COUNT TARGET`: a call; the next line is its position and cost.
    Calls,
    /// `jump=COUNT TARGET`: an unconditional jump.
    Jump,
    /// `jcnd=TAKEN/EXECUTED TARGET`: a conditional jump.
    Jcnd,
    /// `jfi=`: file of the next jump's target.
    Jfi,
    /// `jfn=`: function of the next jump's target.
    Jfn,
    /// A key outside the spec (`bb=`, `ln=` from hidden options): kept as is.
    Other,
}

/// One line, borrowed from the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Line<'a> {
    /// Empty or only blanks.
    Blank,
    /// `# ...`
    Comment,
    /// `key: value` (header lines, `totals:`, `summary:`).
    Header {
        /// The key before `:`.
        key: &'a [u8],
        /// The value, leading blanks removed.
        value: &'a [u8],
    },
    /// `key=value`.
    Spec {
        /// Which spec.
        key: Key,
        /// Everything after `=`.
        value: &'a [u8],
    },
    /// Positions and costs: starts with a digit, `+`, `-` or `*`.
    Position(&'a [u8]),
}

/// True when `line` starts like a position (cost) line.
#[inline]
pub fn starts_position(line: &[u8]) -> bool {
    matches!(line.first(), Some(b'0'..=b'9' | b'+' | b'-' | b'*'))
}

/// Classifies a line (without its line terminator).
pub fn classify(line: &[u8]) -> Result<Line<'_>, LineError> {
    let Some(&first) = line.first() else {
        return Ok(Line::Blank);
    };
    match first {
        b'0'..=b'9' | b'+' | b'-' | b'*' => Ok(Line::Position(line)),
        b'#' => Ok(Line::Comment),
        b' ' | b'\t' if line.iter().all(|&b| b == b' ' || b == b'\t') => Ok(Line::Blank),
        b' ' | b'\t' => Err("line starts with blanks (KCachegrind would drop its cost)".into()),
        b'a'..=b'z' | b'A'..=b'Z' => keyed(line),
        _ => Err(format!(
            "unexpected character {:?} at the start of a line",
            char::from(first)
        )),
    }
}

fn keyed(line: &[u8]) -> Result<Line<'_>, LineError> {
    let end = line
        .iter()
        .position(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
        .unwrap_or(line.len());
    let (key, rest) = line.split_at(end);
    match rest.first() {
        Some(b'=') => Ok(Line::Spec {
            key: spec_key(key)?,
            value: &rest[1..],
        }),
        Some(b':') => Ok(Line::Header {
            key,
            value: trim_start(&rest[1..]),
        }),
        _ => Err(format!(
            "expected '=' or ':' after '{}'",
            String::from_utf8_lossy(key)
        )),
    }
}

fn spec_key(key: &[u8]) -> Result<Key, LineError> {
    Ok(match key {
        b"ob" => Key::Ob,
        b"fl" => Key::Fl,
        b"fi" => Key::Fi,
        b"fe" => Key::Fe,
        b"fn" => Key::Fn,
        b"cob" => Key::Cob,
        b"cfi" | b"cfl" => Key::Cfi,
        b"cfn" => Key::Cfn,
        b"calls" => Key::Calls,
        b"jump" => Key::Jump,
        b"jcnd" => Key::Jcnd,
        b"jfi" => Key::Jfi,
        b"jfn" => Key::Jfn,
        b"rec" | b"frfn" => {
            return Err(
                "output of --mangle-names=no is not supported (no reader accepts it)".into(),
            )
        }
        _ => Key::Other,
    })
}

/// True for a header key that starts a new part where it follows a
/// part's `events:` line (ids and the position start afresh).
pub fn starts_part(key: &[u8]) -> bool {
    const PART_START: [&[u8]; 8] = [
        b"version",
        b"creator",
        b"pid",
        b"cmd",
        b"part",
        b"thread",
        b"positions",
        b"events",
    ];
    PART_START.contains(&key)
}

/// Removes leading spaces and tabs.
pub fn trim_start(s: &[u8]) -> &[u8] {
    let n = s.iter().take_while(|&&b| b == b' ' || b == b'\t').count();
    &s[n..]
}

/// A name as written: `(N) name` defines id N, `(N)` uses it, `name` is plain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NameRef<'a> {
    /// The compressed id, if any.
    pub id: Option<u64>,
    /// The name text, if any.
    pub name: Option<&'a [u8]>,
}

/// Parses the value of `ob= fl= fn= cfn=` and friends.
pub fn name_ref(value: &[u8]) -> Result<NameRef<'_>, LineError> {
    if let Some(id) = bare_id(value) {
        return Ok(NameRef {
            id: Some(id),
            name: None,
        });
    }
    let compressed = value.first() == Some(&b'(') && value.get(1).is_some_and(u8::is_ascii_digit);
    if !compressed {
        return Ok(NameRef {
            id: None,
            name: Some(value),
        });
    }
    let digits = value[1..].iter().take_while(|b| b.is_ascii_digit()).count();
    let close = 1 + digits;
    if value.get(close) != Some(&b')') {
        return Err(match value[close..].contains(&b')') {
            true => "name id is not a number that fits 64 bits".into(),
            false => "expected ')' after a name id".into(),
        });
    }
    let id = parse_u64(&value[1..close]).ok_or("name id is not a number that fits 64 bits")?;
    let rest = &value[close + 1..];
    if rest.first() == Some(&b'\'') {
        return Err(
            "output of --compress-mangled=yes is not supported (no reader accepts it)".into(),
        );
    }
    let name = trim_start(rest);
    Ok(NameRef {
        id: Some(id),
        name: (!name.is_empty()).then_some(name),
    })
}

/// The id of a value that is only `(N)` (the common case), N below 10^19.
#[inline]
pub fn bare_id(value: &[u8]) -> Option<u64> {
    let digits = value.strip_prefix(b"(")?.strip_suffix(b")")?;
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    digits.iter().try_fold(0u64, |acc, &b| {
        let digit = b.wrapping_sub(b'0');
        (digit <= 9).then(|| acc * 10 + u64::from(digit))
    })
}

/// A decimal u64, or None on anything else (empty, overflow, non-digit).
pub fn parse_u64(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    if s.len() < 20 {
        // At most 19 digits: no overflow possible.
        return s.iter().try_fold(0u64, |acc, &b| {
            let digit = b.wrapping_sub(b'0');
            (digit <= 9).then(|| acc * 10 + u64::from(digit))
        });
    }
    s.iter().try_fold(0u64, |acc, &b| {
        let digit = b.checked_sub(b'0').filter(|d| *d <= 9)?;
        acc.checked_mul(10)?.checked_add(u64::from(digit))
    })
}
/// A `calls=`/`jump=`/`jcnd=` line in parts.
#[derive(Clone, Copy)]
pub struct CountLine<'a> {
    /// `calls`, `jump` or `jcnd`.
    pub key: &'static str,
    /// The whole line.
    pub raw: &'a [u8],
    /// The count (`N`, or `TAKEN/EXECUTED`).
    pub count: &'a [u8],
    /// The target position's text (blanks in front).
    pub target: &'a [u8],
}

impl<'a> CountLine<'a> {
    /// Splits `raw` (`key=COUNT TARGET`), checking the count.
    pub fn parse(key: &'static str, raw: &'a [u8]) -> Result<Self, LineError> {
        let value = trim_start(&raw[key.len() + 1..]);
        let end = value
            .iter()
            .position(|&b| b == b' ' || b == b'\t')
            .unwrap_or(value.len());
        check_count(&value[..end])?;
        Ok(CountLine {
            key,
            raw,
            count: &value[..end],
            target: &value[end..],
        })
    }
}

/// Checks a count field (`calls=` count, `jcnd=` taken/executed).
pub fn check_count(token: &[u8]) -> Result<(), LineError> {
    let plain = !token.is_empty() && token.len() < 20 && token.iter().all(u8::is_ascii_digit);
    let ok = plain || token.split(|&b| b == b'/').all(|n| parse_u64(n).is_some());
    if ok {
        Ok(())
    } else {
        Err(format!("bad count '{}'", String::from_utf8_lossy(token)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_every_kind() {
        assert_eq!(classify(b"").unwrap(), Line::Blank);
        assert_eq!(classify(b"  \t").unwrap(), Line::Blank);
        assert_eq!(classify(b"# x").unwrap(), Line::Comment);
        assert_eq!(
            classify(b"events: Ir").unwrap(),
            Line::Header {
                key: b"events",
                value: b"Ir"
            }
        );
        assert_eq!(
            classify(b"cfl=(3)").unwrap(),
            Line::Spec {
                key: Key::Cfi,
                value: b"(3)"
            }
        );
        assert_eq!(classify(b"+3 * 5").unwrap(), Line::Position(b"+3 * 5"));
        let keys = [
            ("ob", Key::Ob),
            ("fl", Key::Fl),
            ("fi", Key::Fi),
            ("fe", Key::Fe),
            ("fn", Key::Fn),
            ("cob", Key::Cob),
            ("cfi", Key::Cfi),
            ("cfn", Key::Cfn),
            ("calls", Key::Calls),
            ("jump", Key::Jump),
            ("jcnd", Key::Jcnd),
            ("jfi", Key::Jfi),
            ("jfn", Key::Jfn),
            ("xyz", Key::Other),
        ];
        for (key, want) in keys {
            let line = format!("{key}=(1)");
            let got = classify(line.as_bytes()).unwrap();
            assert_eq!(
                got,
                Line::Spec {
                    key: want,
                    value: b"(1)"
                },
                "{key}"
            );
        }
        let blanks = classify(b" 3 5").unwrap_err();
        assert!(blanks.contains("starts with blanks"), "{blanks}");
        assert!(classify(b"rec=2").is_err());
        assert!(classify(b"\x01garbage").is_err());
    }

    #[test]
    fn parses_names() {
        assert_eq!(
            name_ref(b"(12) main").unwrap(),
            NameRef {
                id: Some(12),
                name: Some(b"main")
            }
        );
        assert_eq!(
            name_ref(b"(12)").unwrap(),
            NameRef {
                id: Some(12),
                name: None
            }
        );
        assert_eq!(
            name_ref(b"(below main)").unwrap(),
            NameRef {
                id: None,
                name: Some(b"(below main)")
            }
        );
        assert_eq!(
            name_ref(b"(7) (5)x").unwrap(),
            NameRef {
                id: Some(7),
                name: Some(b"(5)x")
            }
        );
        assert!(name_ref(b"(99999999999999999999999)").is_err());
        assert!(name_ref(b"(3").is_err());
    }

    #[test]
    fn parses_u64_strictly() {
        assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), None);
        assert_eq!(parse_u64(b"99999999999999999999"), None);
        assert_eq!(
            parse_u64(b"9999999999999999999"),
            Some(9_999_999_999_999_999_999)
        );
        assert_eq!(parse_u64(b"00000000000000000001"), Some(1));
        assert_eq!(parse_u64(b"000000000000000000001"), None);
        assert_eq!(parse_u64(b"1a"), None);
        assert_eq!(parse_u64(b""), None);
    }

    #[test]
    fn counts_are_numbers_or_pairs_of_them() {
        for good in [&b"1"[..], b"123", b"1/2", b"18446744073709551615"] {
            assert_eq!(check_count(good), Ok(()), "{good:?}");
        }
        let long = b"000000000000000000001"; // 21 digits
        for bad in [
            &b""[..],
            b"a",
            b"1a",
            b"1/",
            b"/2",
            b"99999999999999999999",
            long,
        ] {
            let err = check_count(bad).unwrap_err();
            assert!(err.starts_with("bad count"), "{bad:?}: {err}");
        }
    }
}
