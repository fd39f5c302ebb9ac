//! Rule 2's calls: a function that jumped into another JIT range's code
//! calls that range's function.

use super::*;

/// A function as rule 2 names it: (object, name).
pub(super) type Caller = (String, String);

/// Rule 2's calls: (caller, callee) -> [count, costs...].
pub type JumpCalls = BTreeMap<(Caller, Caller), Vec<u64>>;

/// Rule 2's calls of `input`, and per pair the part of them that is
/// rule 8's arcs (which may lose a continuation's cost).
pub fn jump_calls(input: &str, symbols: &Symbols, reentries: &[Reentry]) -> (JumpCalls, JumpCalls) {
    let reducible_keys: std::collections::BTreeSet<&Key> =
        reentries.iter().flat_map(|r| &r.arcs).collect();
    let mut reducible = JumpCalls::new();
    let columns = columns_of(input);
    let mut calls = JumpCalls::new();
    let mut run: Option<(Caller, Caller, u64)> = None;
    let records = expand::expand(input)
        .into_iter()
        .filter(|r| !r.is_zero_cost());
    for record in records {
        // How often the record ran: a cost line's first event, a call's
        // count.
        let (at, pos, costs, ran, kind) = match &record {
            Record::Cost { at, pos, costs } => {
                let first = numbers(costs).first().copied().unwrap_or(0);
                (at, pos, costs, first.max(1), "")
            }
            Record::Transfer {
                at,
                pos,
                costs,
                kind,
                count,
                ..
            } => (at, pos, costs, counts(count)[0], kind.as_str()),
        };
        let f = symbols.function(&at[0], &at[3]);
        let (place, holder) = place(symbols, at, pos, &columns);
        let moved = match (f.range, holder) {
            (Some(r), Some(h)) if !std::ptr::eq(r, h) => Some((
                (r.object.clone(), f.name.clone()),
                (h.object.clone(), place.3.clone()),
                h.start,
            )),
            (None, Some(h)) if is_stub(at) => Some((
                (at[0].clone(), f.name.clone()),
                (h.object.clone(), place.3.clone()),
                h.start,
            )),
            _ => None,
        };
        // A run is of one range (ranges may share a name); code of another
        // version of the same function is the function's own.
        let Some((caller, owner, range)) = moved.filter(|(a, b, _)| a != b) else {
            run = None;
            continue;
        };
        let here = (caller, owner, range);
        if let Record::Transfer {
            target, target_pos, ..
        } = &record
        {
            let callee = symbols.function(&target[0], &target[2]);
            if kind != "calls" {
                continue;
            }
            let folds = symbols.folds(holder, &place, &callee);
            // into the middle of the range it runs in: one of its records
            let inside = (callee.range.zip(holder)).is_some_and(|(c, h)| std::ptr::eq(c, h));
            if folds && !inside {
                continue;
            }
            let key = transfer_key(
                symbols,
                place.clone(),
                kind.into(),
                target,
                target_pos,
                &columns,
            );
            if !folds && reducible_keys.contains(&key) {
                let sum = reducible
                    .entry((here.0.clone(), callee_name(&place, holder)))
                    .or_default();
                add_to_at(sum, 1, numbers(costs));
            }
        }
        let values = numbers(costs);
        let sum = calls.entry((here.0.clone(), here.1.clone())).or_default();
        if sum.is_empty() {
            sum.push(0);
        }
        if run.as_ref() != Some(&here) {
            sum[0] += ran;
        }
        add_to_at(sum, 1, values);
        run = Some(here);
    }
    (calls, reducible)
}

/// The callee of rule 2's call for a record at `place` held by `holder`.
pub(super) fn callee_name(place: &Place, holder: Option<&Range>) -> (String, String) {
    (
        holder.map_or_else(String::new, |h| h.object.clone()),
        place.3.clone(),
    )
}

pub(super) fn add_to_at(sum: &mut Vec<u64>, at: usize, values: Vec<u64>) {
    if sum.len() < at + values.len() {
        sum.resize(at + values.len(), 0);
    }
    for (s, v) in sum[at..].iter_mut().zip(values) {
        *s += v;
    }
}

/// Rule 2's calls: takes the calls between each pair out of `want` and
/// `got` and holds their sums to it; the differences, if any.
pub(super) fn take_out_jump_calls(
    want: &mut Sums,
    got: &mut Sums,
    (calls, reducible): &(JumpCalls, JumpCalls),
) -> String {
    let mut report = String::new();
    // The call records of each pair, taken out of both sums in one pass.
    let take = |sums: &mut Sums| {
        let mut by_pair: JumpCalls = BTreeMap::new();
        sums.0.retain(|(place, transfer), values| {
            let Some((_, target, _)) = transfer.as_ref().filter(|t| t.0 == "calls") else {
                return true;
            };
            let pair = (
                (place.0.clone(), place.3.clone()),
                (target[0].clone(), target[2].clone()),
            );
            if !calls.contains_key(&pair) {
                return true;
            }
            add_to(by_pair.entry(pair).or_default(), values.clone());
            false
        });
        by_pair
    };
    let (mut wanted, mut held) = (take(want), take(got));
    for ((caller, callee), extra) in calls {
        let may_lose = reducible.get(&(caller.clone(), callee.clone()));
        let pair = (caller.clone(), callee.clone());
        let (mut w, g) = (
            wanted.remove(&pair).unwrap_or_default(),
            held.remove(&pair).unwrap_or_default(),
        );
        add_to(&mut w, extra.clone());
        let trim = |mut v: Vec<u64>| {
            while v.last() == Some(&0) {
                v.pop();
            }
            v
        };
        // Rule 8 may have taken up to its arcs' cost out of moved calls.
        let lost_ok = w.len() >= g.len()
            && w.first() == g.first()
            && w.iter().enumerate().skip(1).all(|(e, &want)| {
                let got = g.get(e).copied().unwrap_or(0);
                let limit = may_lose.and_then(|m| m.get(e)).copied().unwrap_or(0);
                got <= want && want - got <= limit
            });
        if trim(w.clone()) != trim(g.clone()) && !lost_ok {
            report.push_str(&format!(
                "rule 2: calls {caller:?} -> {callee:?}: want {w:?} (jumps: {extra:?}), output has {g:?}\n"
            ));
        }
    }
    report
}
