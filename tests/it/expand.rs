//! An independent reader of the callgrind format for tests: every cost,
//! call and jump line expanded into a record with names resolved and
//! positions absolute. Two profiles that mean the same expand to the same
//! records, however differently they are compressed.

use std::collections::HashMap;

/// Where a record's reader state stood: object, function file (the last
/// `fl=`, KCachegrind's), current file (after `fi=`/`fe=`), function, and
/// the file current at its `fn=` (callgrind_annotate's function file).
type Context = [String; 5];

/// One expanded line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    Cost {
        at: Context,
        pos: Vec<u64>,
        costs: String,
    },
    /// A call or jump: `kind` (`calls`/`jump`/`jcnd`), the target's
    /// object, file and function, the count, the absolute target; then the
    /// site's position and costs.
    Transfer {
        at: Context,
        kind: String,
        target: [String; 3],
        count: String,
        target_pos: Vec<u64>,
        pos: Vec<u64>,
        costs: String,
    },
}

impl Record {
    /// A cost line of zeros, which means nothing (the rewriter may keep a
    /// folded call's position that way).
    pub fn is_zero_cost(&self) -> bool {
        matches!(self, Record::Cost { costs, .. } if costs.split_whitespace().all(|c| c == "0"))
    }
}

#[derive(Default)]
struct Reader {
    names: HashMap<(u8, u64), String>,
    at: Context,
    pos: Vec<u64>,
    columns: usize,
    /// Pending `cob=`/`cfi=`/`cfn=` (or `jfi=`/`jfn=`) values.
    pending: [Option<String>; 3],
    /// A `calls=`/`jump=`/`jcnd=` line waiting for its position line.
    transfer: Option<(String, String, Vec<u64>)>,
    records: Vec<Record>,
}

/// Expands a whole profile (all parts, in order).
pub fn expand(text: &str) -> Vec<Record> {
    let mut r = Reader::default();
    for line in text.lines() {
        r.line(line);
    }
    r.records
}

/// The same profile with every position written relative to the one
/// before it (`+3`, `-2`, `*`), each function's first too: a layout
/// callgrind never writes, whose positions the rewriter's lazy pass must
/// read back to place.
pub fn all_relative(text: &str) -> String {
    let mut r = Reader::default();
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for line in text.lines() {
        if is_position_line(line) {
            let (pos, costs) = r.decode(line);
            let relative = pos.iter().zip(&r.pos).map(|(&now, &before)| {
                if now >= before {
                    format!("+{}", now - before)
                } else {
                    format!("-{}", before - now)
                }
            });
            out.push_str(&relative.collect::<Vec<_>>().join(" "));
            if !costs.is_empty() {
                out.push(' ');
                out.push_str(&costs);
            }
        } else {
            out.push_str(line);
        }
        out.push('\n');
        r.line(line);
    }
    out
}

/// The same profile with every name written out where callgrind writes
/// an id (`fn=(12)` becomes `fn=main`), as `--compress-strings=no` does.
pub fn names_spelled_out(text: &str) -> String {
    let mut r = Reader::default();
    let mut out = String::with_capacity(text.len() * 2);
    for line in text.lines() {
        match line
            .split_once('=')
            .and_then(|(key, value)| Some((key, space(key)?, value)))
        {
            Some((key, space, value)) if !is_position_line(line) => {
                let name = r.name(space, value);
                out.push_str(key);
                out.push('=');
                out.push_str(&name);
            }
            _ => out.push_str(line),
        }
        out.push('\n');
        r.line(line);
    }
    out
}

/// The id space of a name line's key.
fn space(key: &str) -> Option<u8> {
    match key {
        "ob" | "cob" => Some(b'o'),
        "fl" | "fi" | "fe" | "cfi" | "cfl" | "jfi" => Some(b'f'),
        "fn" | "cfn" | "jfn" => Some(b'n'),
        _ => None,
    }
}

fn is_position_line(line: &str) -> bool {
    line.starts_with(|c: char| c.is_ascii_digit() || "+-*".contains(c))
}

impl Reader {
    fn line(&mut self, line: &str) {
        if is_position_line(line) {
            return self.position_line(line);
        }
        if let Some(v) = line.strip_prefix("positions:") {
            self.columns = v.split_whitespace().count();
        }
        if line.starts_with("events:") {
            // A new part: ids and positions restart.
            self.names.clear();
            self.pos = vec![0; self.columns.max(1)];
        }
        let Some((key, value)) = line.split_once('=') else {
            return;
        };
        match key {
            "ob" => self.at[0] = self.name(b'o', value),
            "fl" => {
                self.at[1] = self.name(b'f', value);
                self.at[2] = self.at[1].clone();
            }
            "fi" | "fe" => self.at[2] = self.name(b'f', value),
            "fn" => {
                self.at[3] = self.name(b'n', value);
                self.at[4] = self.at[2].clone();
            }
            "cob" => self.pending[0] = Some(self.name(b'o', value)),
            "cfi" | "cfl" | "jfi" => self.pending[1] = Some(self.name(b'f', value)),
            "cfn" | "jfn" => self.pending[2] = Some(self.name(b'n', value)),
            "calls" | "jump" | "jcnd" => {
                let (count, target) = value.split_once(' ').unwrap_or((value, ""));
                let target_pos = self.decode(target).0;
                self.transfer = Some((key.to_string(), count.to_string(), target_pos));
            }
            _ => {}
        }
    }

    fn position_line(&mut self, line: &str) {
        let (pos, costs) = self.decode(line);
        self.pos = pos.clone();
        let at = self.at.clone();
        let record = match self.transfer.take() {
            None => Record::Cost { at, pos, costs },
            Some((kind, count, target_pos)) => {
                let pending = std::mem::take(&mut self.pending);
                let defaults = [&at[0], &at[2], &at[3]];
                let target =
                    [0, 1, 2].map(|i| pending[i].clone().unwrap_or_else(|| defaults[i].clone()));
                Record::Transfer {
                    at,
                    kind,
                    target,
                    count,
                    target_pos,
                    pos,
                    costs,
                }
            }
        };
        self.records.push(record);
    }

    /// Positions (absolute, relative or `*`) and the rest of the line.
    fn decode(&self, text: &str) -> (Vec<u64>, String) {
        let mut tokens = text.split_whitespace();
        let pos = self
            .pos
            .iter()
            .map(|&prev| match tokens.next().unwrap_or("*") {
                "*" => prev,
                // Wrapping, as the rewriter and KCachegrind read it: after
                // a client-requested dump, callgrind 3.19 writes the next
                // part's first lines relative to the part before (a line
                // can go below zero).
                t if t.starts_with('+') => prev.wrapping_add(number(&t[1..])),
                t if t.starts_with('-') => prev.wrapping_sub(number(&t[1..])),
                t => number(t),
            })
            .collect();
        (pos, tokens.collect::<Vec<_>>().join(" "))
    }

    /// Resolves `(id) name`, `(id)` or `name` in one of the three id spaces.
    fn name(&mut self, space: u8, value: &str) -> String {
        let compressed =
            value.starts_with('(') && value[1..].starts_with(|c: char| c.is_ascii_digit());
        let Some((id, name)) = value[1..].split_once(')').filter(|_| compressed) else {
            return value.to_string();
        };
        let id: u64 = id.parse().unwrap();
        match name.trim_start() {
            "" => self.names[&(space, id)].clone(),
            name => {
                self.names.insert((space, id), name.to_string());
                name.to_string()
            }
        }
    }
}

fn number(t: &str) -> u64 {
    match t.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).unwrap(),
        None => t.parse().unwrap(),
    }
}
