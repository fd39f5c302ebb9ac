//! Rule 1's levels: which levels a range's start is named with, and
//! which of them hold their continuations (see the rule).

use super::*;

impl Symbols {
    /// Rule 1: notes the levels each range's start is named with, and
    /// which of them hold their continuations.
    pub(super) fn note_entries(&self, input: &str) {
        let records = expand::expand(input);
        let mut entered = std::collections::BTreeSet::new();
        for record in &records {
            let names = match record {
                Record::Cost { at, .. } => [Some((&at[0], &at[3])), None],
                Record::Transfer { at, target, .. } => {
                    [Some((&at[0], &at[3])), Some((&target[0], &target[2]))]
                }
            };
            for (object, name) in names.into_iter().flatten() {
                match self.piece(object, name) {
                    Some((r, addr, level)) if r.entered_at(addr) => entered.insert((addr, level)),
                    _ => false,
                };
            }
        }
        *self.entered.borrow_mut() = entered;
        self.note_held(&records);
    }

    /// Rule 1: per (range start, level), the first-event cost of the calls
    /// into the start, against that of the calls into each address of the
    /// middle, each from anything but that level of the range.
    fn note_held(&self, records: &[Record]) {
        let first = |costs: &str| {
            let cost = costs.split_whitespace().next();
            cost.map_or(0, |c| c.parse::<u64>().unwrap())
        };
        let mut called: BTreeMap<(u64, u32), u64> = BTreeMap::new();
        let mut resumed: BTreeMap<(u64, u32, u64), u64> = BTreeMap::new();
        for record in records {
            let Record::Transfer {
                at,
                kind,
                target,
                costs,
                ..
            } = record
            else {
                continue;
            };
            let from = self.piece(&at[0], &at[3]).map(|(r, _, l)| (r.start, l));
            let Some((r, addr, level)) = self.piece(&target[0], &target[2]) else {
                continue;
            };
            if kind != "calls" || from == Some((r.start, level)) {
                continue;
            }
            let sum = match r.entered_at(addr) {
                true => called.entry((r.start, level)).or_default(),
                false => resumed.entry((r.start, level, addr)).or_default(),
            };
            *sum += first(costs);
        }
        let resumed = |&(start, level): &(u64, u32)| {
            let each = resumed.range((start, level, 0)..=(start, level, u64::MAX));
            each.map(|(_, &c)| c).max().unwrap_or(0)
        };
        *self.held.borrow_mut() = called
            .iter()
            .filter(|(key, &c)| c >= resumed(key))
            .map(|(&key, _)| key)
            .collect();
    }

    /// A pseudo-function of a JIT range (rule 1): the range, the address
    /// it is named after and its level.
    fn piece(&self, object: &str, name: &str) -> Option<(&Range, u64, u32)> {
        let mut parts = name.split('\'');
        let addr = address(parts.next()?).filter(|_| object == "???")?;
        let level = parts.next().and_then(|p| p.parse().ok()).unwrap_or(1);
        Some((self.at(addr)?, addr, level))
    }
}
