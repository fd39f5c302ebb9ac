//! valgrind's `--callgrind-out-file` template: expanding `%q{VAR}` and
//! `%%`, and telling which file names a run with that template can write.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::UsageError;

/// A profile name template split into folder and file name pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutFile {
    /// The folder the profiles go to (`%q{VAR}` and `%%` expanded).
    pub dir: PathBuf,
    /// The file name: literal text and `%p`/`%n` numbers.
    name: Vec<Piece>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(String),
    /// `%p` (a pid) or `%n` (a sequence number): one or more digits.
    Number,
}

impl OutFile {
    /// Parses `template` as valgrind does, with `env` giving `%q{VAR}`.
    pub fn parse(
        template: &str,
        env: impl Fn(&str) -> Option<OsString>,
    ) -> Result<OutFile, UsageError> {
        let pieces = pieces(template, &env)?;
        let text_only = |ps: &[Piece]| {
            ps.iter()
                .map(|p| match p {
                    Piece::Text(t) => Some(t.as_str()),
                    Piece::Number => None,
                })
                .collect::<Option<String>>()
        };
        // Split at the last '/' of the text: numbers belong to the name.
        let mut split = None;
        for (i, p) in pieces.iter().enumerate() {
            if let Piece::Text(t) = p {
                if let Some(j) = t.rfind('/') {
                    split = Some((i, j));
                }
            }
        }
        let (dir, name) = match split {
            None => (String::new(), pieces),
            Some((i, j)) => {
                let Some(mut dir) = text_only(&pieces[..i]) else {
                    return Err(UsageError(format!(
                        "--callgrind-out-file={template}: %p or %n in a folder name is not supported"
                    )));
                };
                let Piece::Text(t) = &pieces[i] else {
                    unreachable!()
                };
                dir.push_str(&t[..=j]);
                let mut name = vec![Piece::Text(t[j + 1..].to_string())];
                name.extend(pieces[i + 1..].iter().cloned());
                (dir, name)
            }
        };
        let dir = if dir.is_empty() {
            PathBuf::from(".")
        } else {
            PathBuf::from(dir)
        };
        Ok(OutFile { dir, name })
    }

    /// True if `file_name` is a profile this template gives: the name
    /// itself, or a dump part (`.N`) or thread file (`-TID`) of it.
    pub fn matches(&self, file_name: &str) -> bool {
        match_from(&self.name, file_name)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '-']))
    }

    /// True if the template itself gives `file_name` (no part suffix).
    pub fn gives(&self, file_name: &str) -> bool {
        match_from(&self.name, file_name) == Some("")
    }

    /// The profiles in the template's folder, sorted.
    pub fn existing(&self) -> std::io::Result<Vec<PathBuf>> {
        let mut found = Vec::new();
        for entry in std::fs::read_dir(&self.dir)? {
            let path = entry?.path();
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            if name.is_some_and(|n| self.matches(&n)) && path.is_file() {
                found.push(path);
            }
        }
        found.sort();
        Ok(found)
    }

    /// The template as a path, for messages (`%p` and `%n` kept).
    pub fn display(&self) -> String {
        let name: String = self
            .name
            .iter()
            .map(|p| match p {
                Piece::Text(t) => t.as_str(),
                Piece::Number => "<N>",
            })
            .collect();
        Path::new(&self.dir).join(name).display().to_string()
    }
}

/// What is left of `s` after the pieces, if they match its start.
fn match_from<'a>(pieces: &[Piece], s: &'a str) -> Option<&'a str> {
    let Some((first, rest)) = pieces.split_first() else {
        return Some(s);
    };
    match first {
        Piece::Text(t) => match_from(rest, s.strip_prefix(t.as_str())?),
        Piece::Number => {
            let digits = s.bytes().take_while(u8::is_ascii_digit).count();
            (digits > 0).then(|| match_from(rest, &s[digits..]))?
        }
    }
}

fn pieces(
    template: &str,
    env: &impl Fn(&str) -> Option<OsString>,
) -> Result<Vec<Piece>, UsageError> {
    let bad = |why: &str| UsageError(format!("--callgrind-out-file={template}: {why}"));
    let mut out: Vec<Piece> = Vec::new();
    let mut text = String::new();
    let mut chars = template.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            text.push(c);
            continue;
        }
        match chars.next() {
            Some('%') => text.push('%'),
            Some('p' | 'n') => {
                out.push(Piece::Text(std::mem::take(&mut text)));
                out.push(Piece::Number);
            }
            Some('q') => {
                let rest = chars.as_str();
                let var = rest
                    .strip_prefix('{')
                    .and_then(|r| r.split_once('}'))
                    .map(|(v, _)| v)
                    .ok_or_else(|| bad("%q must be followed by {VAR}"))?;
                let value =
                    env(var).ok_or_else(|| bad(&format!("%q{{{var}}}: {var} is not set")))?;
                text.push_str(&value.to_string_lossy());
                chars = rest[var.len() + 2..].chars();
            }
            _ => return Err(bad("'%' must be followed by p, n, q{VAR} or %")),
        }
    }
    out.push(Piece::Text(text));
    out.retain(|p| !matches!(p, Piece::Text(t) if t.is_empty()));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(t: &str) -> OutFile {
        OutFile::parse(t, |v| (v == "JOB").then(|| "j7".into())).unwrap()
    }

    #[test]
    fn default_template_matches_parts_and_threads_only() {
        let t = parse("/out/callgrind.out.%p");
        assert_eq!(t.dir, Path::new("/out/"));
        for yes in [
            "callgrind.out.12",
            "callgrind.out.12.3",
            "callgrind.out.12-02",
        ] {
            assert!(t.matches(yes), "{yes}");
        }
        for no in [
            "callgrind.out.",
            "callgrind.out.x",
            "callgrind.jit.out.12",
            "callgrind.out.12x",
        ] {
            assert!(!t.matches(no), "{no}");
        }
    }

    #[test]
    fn literal_names_and_variables() {
        let t = parse("my.out");
        assert_eq!(t.dir, Path::new("."));
        assert!(t.matches("my.out") && t.matches("my.out.2") && !t.matches("my.outer"));
        let t = parse("runs/%q{JOB}/cg.%p.100%%");
        assert_eq!(t.dir, Path::new("runs/j7/"));
        assert!(t.matches("cg.55.100%") && !t.matches("cg.55.100"));
        // Said in messages with its numbers left open.
        assert_eq!(t.display(), "runs/j7/cg.<N>.100%");
        assert_eq!(parse("my.out").display(), "./my.out");
    }

    #[test]
    fn bad_templates_are_usage_errors() {
        let env = |_: &str| None;
        for bad in ["a%", "a%x", "%q{UNSET}", "%qJOB", "d%p/x"] {
            assert!(OutFile::parse(bad, env).is_err(), "{bad}");
        }
    }
}
