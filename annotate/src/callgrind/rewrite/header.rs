//! Header lines (`key: value`): where a part starts, its columns and
//! events, and its totals.

use super::ids::Sym;
use super::reader::Reader;
use super::state::Part;
use super::{Res, Rewriter};
use crate::callgrind::format::line::{parse_u64, starts_part};
use crate::callgrind::format::position::Columns;

/// A part dumped at jit-client's request where an epoch ended.
const EPOCH_DESC: &str = "Trigger: Client Request: callgrind-jit epoch ends at";

/// What the header lines said so far.
#[derive(Debug, Default)]
pub(super) struct Totals {
    /// The part's `events:` line was read: cost lines may follow.
    pub events_seen: bool,
    /// `totals:` of the finished parts.
    pub finished: u64,
    /// The current part's `totals:` (or `summary:`).
    pub part: Option<u64>,
    /// The current part has its `totals:` line (callgrind writes it last).
    pub part_complete: bool,
}

impl Rewriter<'_> {
    /// A header line (`key: value`): a new part starts at the first of
    /// its header lines after cost lines; `totals:`/`summary:` are counted.
    pub(super) fn header(&mut self, raw: &[u8], key: &[u8], value: &[u8], terminated: bool) -> Res {
        if self.totals.events_seen && starts_part(key) {
            self.end_block()?;
            self.close_part_totals();
            let none = self.part_none();
            self.part = Part::default();
            self.reader = Reader::new(none);
            self.writer.new_part(none);
            self.cols = Columns::default();
            self.totals.events_seen = false;
            self.totals.part_complete = false;
        }
        match key {
            b"positions" => self.cols = Columns::parse(value)?,
            b"events" => {
                self.totals.events_seen = true;
                self.stats.parts += 1;
                let names = value
                    .split(|b| b.is_ascii_whitespace())
                    .filter(|w| !w.is_empty());
                self.stats.events = names
                    .map(|w| String::from_utf8_lossy(w).into_owned())
                    .collect();
            }
            b"desc" if value.starts_with(EPOCH_DESC.as_bytes()) => self.stats.epoch_parts_seen += 1,
            b"totals" | b"summary" => {
                self.end_block()?;
                let first = value
                    .split(|b| b.is_ascii_whitespace())
                    .next()
                    .unwrap_or_default();
                let value = parse_u64(first).ok_or("expected a number after totals:/summary:")?;
                self.totals.part_complete |= key == b"totals";
                // totals: wins over summary: (it is exactly the self cost).
                if key == b"totals" || self.totals.part.is_none() {
                    self.totals.part = Some(value);
                }
            }
            _ => {}
        }
        Ok(self.writer.out.verbatim(raw, terminated)?)
    }

    pub(super) fn close_part_totals(&mut self) {
        if self.totals.part.is_some() || self.totals.events_seen {
            let outside = self.naming.symbols.outside();
            self.reentry.noted.end_part(self.stats.parts, outside);
        }
        self.totals.finished += self.totals.part.take().unwrap_or(0);
        self.stats.total = self.totals.finished;
    }

    fn part_none(&mut self) -> Sym {
        self.naming.names.intern(b"")
    }
}
