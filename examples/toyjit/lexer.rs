//! Tokens of the toy language, each with its source position.

/// A token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tok {
    Int(i64),
    Ident(String),
    /// Punctuation and operators: `( ) { } , ; = + - * / % < > <= >= == !=`.
    Sym(&'static str),
}

/// Line and column, 1-based.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pos {
    pub line: u32,
    pub col: u32,
}

const SYMBOLS: [&str; 18] = [
    "<=", ">=", "==", "!=", "(", ")", "{", "}", ",", ";", "=", "+", "-", "*", "/", "%", "<", ">",
];

/// Splits `src` into tokens; `#` starts a comment to the end of the line.
pub fn lex(src: &str) -> Result<Vec<(Tok, Pos)>, String> {
    let mut out = Vec::new();
    for (n, text) in src.lines().enumerate() {
        let text = text.split('#').next().unwrap_or_default();
        let mut i = 0;
        while i < text.len() {
            let rest = &text[i..];
            let pos = Pos {
                line: n as u32 + 1,
                col: i as u32 + 1,
            };
            let c = rest.chars().next().unwrap_or(' ');
            if c.is_whitespace() {
                i += 1;
            } else if c.is_ascii_digit() {
                let len = rest
                    .find(|c: char| !c.is_ascii_digit())
                    .unwrap_or(rest.len());
                out.push((
                    Tok::Int(
                        rest[..len]
                            .parse()
                            .map_err(|e| format!("{}:{}: {e}", pos.line, pos.col))?,
                    ),
                    pos,
                ));
                i += len;
            } else if c.is_ascii_alphabetic() || c == '_' {
                let len = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                out.push((Tok::Ident(rest[..len].to_string()), pos));
                i += len;
            } else if let Some(sym) = SYMBOLS.iter().find(|s| rest.starts_with(**s)) {
                out.push((Tok::Sym(sym), pos));
                i += sym.len();
            } else {
                return Err(format!(
                    "{}:{}: unexpected character {c:?}",
                    pos.line, pos.col
                ));
            }
        }
    }
    Ok(out)
}
