//! Parsing tokens into functions, statements and expressions.

use crate::lexer::{Pos, Tok};

/// An expression with the position of its first token.
#[derive(Debug)]
pub enum Expr {
    Int(i64, Pos),
    Var(String, Pos),
    Call(String, Vec<Expr>, Pos),
    Binary(&'static str, Box<Expr>, Box<Expr>, Pos),
}

impl Expr {
    pub fn pos(&self) -> Pos {
        match self {
            Expr::Int(_, p) | Expr::Var(_, p) | Expr::Call(_, _, p) | Expr::Binary(_, _, _, p) => {
                *p
            }
        }
    }
}

/// A statement with its position.
#[derive(Debug)]
pub enum Stmt {
    Let(String, Expr, Pos),
    Assign(String, Expr, Pos),
    While(Expr, Vec<Stmt>, Pos),
    If(Expr, Vec<Stmt>, Vec<Stmt>, Pos),
    Return(Expr, Pos),
    Expr(Expr),
}

/// `fn name(params) { body }`.
#[derive(Debug)]
pub struct Function {
    pub name: String,
    pub params: Vec<String>,
    pub body: Vec<Stmt>,
    pub pos: Pos,
}

struct Parser {
    toks: Vec<(Tok, Pos)>,
    at: usize,
}

/// Parses a whole source file.
pub fn parse(toks: Vec<(Tok, Pos)>) -> Result<Vec<Function>, String> {
    let mut p = Parser { toks, at: 0 };
    let mut functions = Vec::new();
    while p.at < p.toks.len() {
        functions.push(p.function()?);
    }
    Ok(functions)
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at).map(|t| &t.0)
    }

    fn pos(&self) -> Pos {
        self.toks
            .get(self.at)
            .or(self.toks.last())
            .map(|t| t.1)
            .unwrap_or_default()
    }

    fn next(&mut self) -> Result<(Tok, Pos), String> {
        let tok = self
            .toks
            .get(self.at)
            .cloned()
            .ok_or("unexpected end of file")?;
        self.at += 1;
        Ok(tok)
    }

    fn eat(&mut self, sym: &str) -> bool {
        let found = matches!(self.peek(), Some(Tok::Sym(s)) if *s == sym);
        self.at += usize::from(found);
        found
    }

    fn expect(&mut self, sym: &str) -> Result<(), String> {
        let pos = self.pos();
        self.eat(sym)
            .then_some(())
            .ok_or_else(|| format!("{}:{}: expected '{sym}'", pos.line, pos.col))
    }

    fn ident(&mut self) -> Result<String, String> {
        match self.next()? {
            (Tok::Ident(name), _) => Ok(name),
            (t, pos) => Err(format!(
                "{}:{}: expected a name, found {t:?}",
                pos.line, pos.col
            )),
        }
    }

    fn function(&mut self) -> Result<Function, String> {
        let pos = self.pos();
        if self.ident()? != "fn" {
            return Err(format!("{}:{}: expected 'fn'", pos.line, pos.col));
        }
        let name = self.ident()?;
        self.expect("(")?;
        let mut params = Vec::new();
        while !self.eat(")") {
            params.push(self.ident()?);
            self.eat(",");
        }
        Ok(Function {
            name,
            params,
            body: self.block()?,
            pos,
        })
    }

    fn block(&mut self) -> Result<Vec<Stmt>, String> {
        self.expect("{")?;
        let mut body = Vec::new();
        while !self.eat("}") {
            body.push(self.statement()?);
            self.eat(";");
        }
        Ok(body)
    }

    fn statement(&mut self) -> Result<Stmt, String> {
        let pos = self.pos();
        let keyword = match self.peek() {
            Some(Tok::Ident(k)) => k.clone(),
            _ => return Ok(Stmt::Expr(self.expr()?)),
        };
        let assign = matches!(self.toks.get(self.at + 1), Some((Tok::Sym("="), _)));
        match keyword.as_str() {
            "let" => {
                self.at += 1;
                let name = self.ident()?;
                self.expect("=")?;
                Ok(Stmt::Let(name, self.expr()?, pos))
            }
            "while" => {
                self.at += 1;
                Ok(Stmt::While(self.expr()?, self.block()?, pos))
            }
            "if" => {
                self.at += 1;
                let (cond, then) = (self.expr()?, self.block()?);
                let is_else = matches!(self.peek(), Some(Tok::Ident(k)) if k == "else");
                self.at += usize::from(is_else);
                let otherwise = if is_else { self.block()? } else { Vec::new() };
                Ok(Stmt::If(cond, then, otherwise, pos))
            }
            "return" => {
                self.at += 1;
                Ok(Stmt::Return(self.expr()?, pos))
            }
            name if assign => {
                let name = name.to_string();
                self.at += 2;
                Ok(Stmt::Assign(name, self.expr()?, pos))
            }
            _ => Ok(Stmt::Expr(self.expr()?)),
        }
    }

    /// Binary operators by precedence level, loosest first.
    fn expr(&mut self) -> Result<Expr, String> {
        self.binary(0)
    }

    fn binary(&mut self, level: usize) -> Result<Expr, String> {
        const LEVELS: [&[&str]; 3] = [
            &["<", ">", "<=", ">=", "==", "!="],
            &["+", "-"],
            &["*", "/", "%"],
        ];
        if level == LEVELS.len() {
            return self.primary();
        }
        let mut left = self.binary(level + 1)?;
        while let Some(Tok::Sym(op)) = self.peek().cloned() {
            if !LEVELS[level].contains(&op) {
                break;
            }
            let pos = self.pos();
            self.at += 1;
            let right = self.binary(level + 1)?;
            left = Expr::Binary(op, Box::new(left), Box::new(right), pos);
        }
        Ok(left)
    }

    fn primary(&mut self) -> Result<Expr, String> {
        match self.next()? {
            (Tok::Int(v), pos) => Ok(Expr::Int(v, pos)),
            (Tok::Sym("("), _) => {
                let e = self.expr()?;
                self.expect(")")?;
                Ok(e)
            }
            (Tok::Ident(name), pos) if self.eat("(") => {
                let mut args = Vec::new();
                while !self.eat(")") {
                    args.push(self.expr()?);
                    self.eat(",");
                }
                Ok(Expr::Call(name, args, pos))
            }
            (Tok::Ident(name), pos) => Ok(Expr::Var(name, pos)),
            (t, pos) => Err(format!("{}:{}: unexpected {t:?}", pos.line, pos.col)),
        }
    }
}
