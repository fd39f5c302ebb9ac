//! What the output must hold: each input record mapped by the rules
//! (1-7, 9), calls folded (rule 4), continuations noted (rule 8).

use super::*;

/// Maps a position in JIT function `own` (rule 2): [instr, line], [line]
/// or [instr].
pub(super) fn map_pos(
    symbols: &Symbols,
    own: &Range,
    pos: &[u64],
    columns: &[&str],
) -> (String, Vec<u64>) {
    let instr = columns.iter().position(|c| *c == "instr").map(|i| pos[i]);
    let line_col = columns.iter().position(|c| *c == "line");
    let (file, line) = match instr {
        None => own.decl.clone(),
        Some(addr) => match symbols.at(addr) {
            Some(holder) => holder.line_at(addr),
            None => (own.decl.0.clone(), line_col.map_or(0, |i| pos[i])),
        },
    };
    let mut pos = pos.to_vec();
    if let Some(i) = line_col {
        pos[i] = line;
    }
    (file, pos)
}

/// The output a correct rewrite of `input` gives, summed (rules 1-7, 9),
/// and what rule 8 takes out of arcs.
pub fn expected(input: &str, symbols: &Symbols) -> (Sums, Vec<Reentry>) {
    let (sums, _, reentries) = expected_with_folds(input, symbols);
    (sums, reentries)
}

/// How many call records rule 4 folds away in `input`.
pub fn folded_calls(input: &str, symbols: &Symbols) -> u64 {
    expected_with_folds(input, symbols).1
}

/// Rule 8 for one pair: the arcs from `f`'s code to `x`, and the cost per
/// event their sum loses.
#[derive(Debug, Default)]
pub struct Reentry {
    pub(super) arcs: Vec<Key>,
    pub(super) continuation: Vec<u64>,
}

/// A function as rule 8 tells them apart: a JIT range by its start, or a
/// name in an object.
pub(super) type Who = (String, String);

pub(super) fn who(range: Option<&Range>, object: &str, name: &str) -> Who {
    match range {
        Some(r) => ("jit".into(), r.start.to_string()),
        None => (object.to_string(), name.to_string()),
    }
}

/// [`expected`], the number of calls folded, and rule 8's pairs.
pub(super) fn expected_with_folds(input: &str, symbols: &Symbols) -> (Sums, u64, Vec<Reentry>) {
    symbols.note_entry_points(input);
    symbols.note_entries(input);
    let mut folded = 0;
    let columns = columns_of(input);
    let mut sums = Sums::default();
    // Rule 8: folded calls by (f, address resumed, x); arcs by (f, site)
    // and by (f, callee).
    let mut resumed: BTreeMap<(u64, u64, Who), Vec<u64>> = BTreeMap::new();
    let mut by_site: BTreeMap<u64, BTreeMap<u64, Vec<Key>>> = BTreeMap::new();
    let mut by_callee: BTreeMap<(u64, Who), Vec<Key>> = BTreeMap::new();
    // Rule 8's second part: arcs by (f, site) of the sites in no range.
    let mut outside: BTreeMap<u64, BTreeMap<u64, Vec<Key>>> = BTreeMap::new();
    let mut called_back = called_back::CalledBack::default();
    let instr = columns.iter().position(|c| *c == "instr");
    // Rule 4: a cost line of zeros means nothing.
    let records = expand::expand(input)
        .into_iter()
        .filter(|r| !r.is_zero_cost());
    for record in records {
        match record {
            Record::Cost { at, pos, costs } => {
                let values = numbers(&costs);
                let first = values.first().copied().unwrap_or(0);
                called_back.ran(symbols, &at, first, None);
                let (place, _) = place(symbols, &at, &pos, &columns);
                sums.add((place, None), values);
            }
            Record::Transfer {
                at,
                kind,
                target,
                count,
                target_pos,
                pos,
                costs,
            } => {
                let site = instr.map(|i| pos[i]);
                let (place, from) = place(symbols, &at, &pos, &columns);
                let callee = symbols.function(&target[0], &target[2]);
                if let (Some(to), "calls") = (callee.range, kind.as_str()) {
                    // Callgrind names a pseudo-function after its call target.
                    if symbols.folds(from, &place, &callee) {
                        folded += 1;
                        if !from.is_some_and(|h| std::ptr::eq(h, to)) {
                            let x = who(from, &place.0, &place.3);
                            let addr = callee.addr.unwrap();
                            let sum = resumed.entry((to.start, addr, x)).or_default();
                            add_to(sum, numbers(&costs));
                            let block = (&at, from, place.3.as_str());
                            called_back.continuation(
                                symbols,
                                block,
                                (to.start, addr),
                                numbers(&costs),
                            );
                        }
                        continue; // rule 4
                    }
                }
                // Rule 4's exception: a call between levels is no arc of rule 8's.
                let kept = symbols.between_levels(from, &place, &callee);
                let key = transfer_key(symbols, place, kind, &target, &target_pos, &columns);
                if key.1.as_ref().is_some_and(|t| t.0 == "calls") {
                    let first = numbers(&costs).first().copied().unwrap_or(0);
                    let target = &key.1.as_ref().unwrap().1;
                    let made = (
                        from.map(|f| f.start),
                        site,
                        who(callee.range, &target[0], &target[2]),
                    );
                    called_back.ran(symbols, &at, first, Some((&key, made)));
                    if !kept {
                        called_back.call(symbols, (&at, from, site), &callee, &key);
                    }
                }
                let mut values = counts(&count);
                values.extend(numbers(&costs));
                if let (Some(f), "calls", false) = (from, key.1.as_ref().unwrap().0.as_str(), kept)
                {
                    let x = who(
                        callee.range,
                        &key.1.as_ref().unwrap().1[0],
                        &key.1.as_ref().unwrap().1[2],
                    );
                    if let Some(site) = site {
                        let sites = by_site.entry(f.start).or_default();
                        sites.entry(site).or_default().push(key.clone());
                        if symbols.at(site).is_none() {
                            let sites = outside.entry(f.start).or_default();
                            sites.entry(site).or_default().push(key.clone());
                        }
                    }
                    by_callee.entry((f.start, x)).or_default().push(key.clone());
                }
                sums.add(key, values);
            }
        }
    }
    // Per f: the continuations by the arcs they come out of, and the
    // sites returned to.
    let mut groups: BTreeMap<(u64, Vec<Key>), Vec<u64>> = BTreeMap::new();
    let mut returned_to: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for ((f, addr, x), cost) in resumed {
        let arcs = match by_site.get(&f) {
            Some(sites) => sites.range(..addr).next_back().map(|(&site, arcs)| {
                returned_to.entry(f).or_default().push(site);
                arcs
            }),
            None => by_callee.get(&(f, x)),
        };
        let Some(arcs) = arcs else { continue };
        let mut arcs = arcs.clone();
        arcs.sort();
        arcs.dedup();
        add_to(groups.entry((f, arcs)).or_default(), cost);
    }
    // What those arcs cannot hold comes out of f's arcs at sites in no
    // range (but the sites returned to), where positions have addresses.
    let mut beyond: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for ((f, arcs), continuation) in &groups {
        if by_site.contains_key(f) {
            let held = held_by(&sums, arcs);
            let rest = continuation
                .iter()
                .enumerate()
                .map(|(e, &c)| c.saturating_sub(held.get(e).copied().unwrap_or(0)))
                .collect();
            add_to(beyond.entry(*f).or_default(), rest);
        }
    }
    // Rule 8's second part leaves out the calls of functions whose arcs
    // give back continuations of their own.
    let mut giving: std::collections::BTreeSet<u64> = groups.keys().map(|(f, _)| *f).collect();
    // Rule 8's last part: those that give back out of none at sites in no range.
    let mut own_levels = giving.clone();
    let mut reentries: Vec<Reentry> = groups
        .into_iter()
        .map(|((_, arcs), continuation)| Reentry { arcs, continuation })
        .collect();
    for (f, rest) in beyond {
        let arcs: Vec<Key> = outside
            .get(&f)
            .into_iter()
            .flatten()
            .filter(|(site, _)| !returned_to.get(&f).is_some_and(|r| r.contains(site)))
            .flat_map(|(_, keys)| keys.iter().cloned())
            .collect();
        if rest.first().is_some_and(|&r| r > 0) && !arcs.is_empty() {
            let mut arcs = arcs;
            arcs.sort();
            arcs.dedup();
            reentries.push(Reentry {
                arcs,
                continuation: rest,
            });
            giving.insert(f);
            own_levels.remove(&f);
        }
    }
    let by_level = symbols.entry_points.borrow().is_empty();
    let first = (&reentries[..], &sums);
    let giving = (&giving, &own_levels);
    let second = called_back.reentries((&by_site, &by_callee), giving, first, by_level);
    reentries.extend(second);
    (sums, folded, reentries)
}

/// The cost the arcs `keys` hold in `sums`, per event (their count left
/// out).
pub(super) fn held_by(sums: &Sums, keys: &[Key]) -> Vec<u64> {
    let mut held = Vec::new();
    for key in keys {
        if let Some(values) = sums.0.get(key) {
            add_to(&mut held, values.iter().skip(1).copied().collect());
        }
    }
    held
}

pub(super) fn add_to(sum: &mut Vec<u64>, values: Vec<u64>) {
    if sum.len() < values.len() {
        sum.resize(values.len(), 0);
    }
    for (s, v) in sum.iter_mut().zip(values) {
        *s += v;
    }
}

/// A call's or jump's record key: its place, and its target mapped.
pub(super) fn transfer_key(
    symbols: &Symbols,
    place: Place,
    kind: String,
    target: &[String; 3],
    target_pos: &[u64],
    columns: &[&str],
) -> Key {
    let callee = symbols.function(&target[0], &target[2]);
    let (target, target_pos) = match callee.range {
        // Rule 1: the callee under its function file, whatever range the
        // target instruction lies in (callgrind's `cfi=` names the called
        // function's file).
        Some(r) => {
            let (line_file, tpos) = map_pos(symbols, r, target_pos, columns);
            let target = [r.object.clone(), r.decl.0.clone(), callee.name];
            // A jump within the function names no function (`jfn=`): its
            // file is the target line's (KCachegrind reads `jfi=` so).
            let within =
                kind != "calls" && target == [place.0.clone(), place.1.clone(), place.3.clone()];
            let file = if within { line_file } else { r.decl.0.clone() };
            ([r.object.clone(), file, target[2].clone()], tpos)
        }
        // A jump names no object (`jfn=` takes the current one): from a
        // JIT function's record (its object not the input's) to code of
        // no range, it is a jump within that function.
        None if kind != "calls" && place.0 != target[0] => (
            [place.0.clone(), place.2.clone(), place.3.clone()],
            target_pos.to_vec(),
        ),
        None => (
            [target[0].clone(), target[1].clone(), callee.name],
            target_pos.to_vec(),
        ),
    };
    (place, Some((kind, target, target_pos)))
}

/// The input's self cost of the first event: in all, and in JIT ranges
/// (rule 1). A profile's `totals:` and the summary's figures must agree.
pub fn self_costs(input: &str, symbols: &Symbols) -> (u64, u64) {
    let columns = columns_of(input);
    let (mut total, mut jit) = (0, 0);
    for record in expand::expand(input) {
        if let Record::Cost { at, pos, costs } = record {
            let first = numbers(&costs).first().copied().unwrap_or(0);
            total += first;
            if place(symbols, &at, &pos, &columns).1.is_some() {
                jit += first;
            }
        }
    }
    (total, jit)
}

/// A call's count, or a conditional jump's `taken/executed`.
pub(super) fn counts(count: &str) -> Vec<u64> {
    count.split('/').map(|c| c.parse().unwrap()).collect()
}

pub(super) fn place<'a>(
    symbols: &'a Symbols,
    at: &[String; 5],
    pos: &[u64],
    columns: &[&str],
) -> (Place, Option<&'a Range>) {
    let f = symbols.function(&at[0], &at[3]);
    let instr = columns.iter().position(|c| *c == "instr").map(|i| pos[i]);
    let holder = instr.and_then(|addr| symbols.at(addr));
    let stub = f.range.is_none() && is_stub(at);
    match (f.range, holder) {
        (Some(r), Some(h)) if !std::ptr::eq(r, h) => {
            let (file, pos) = map_pos(symbols, h, pos, columns);
            // The suffix of the function callgrind charged (`'2`, callers).
            let name = format!("{}{}", h.name, &f.name[r.name.len()..]);
            (
                (h.object.clone(), h.decl.0.clone(), file, name, pos),
                Some(h),
            )
        }
        (None, Some(h)) if stub => {
            let (file, pos) = map_pos(symbols, h, pos, columns);
            let base = at[3].split('\'').next().unwrap_or_default();
            let name = format!("{}{}", h.name, &f.name[base.len()..]);
            (
                (h.object.clone(), h.decl.0.clone(), file, name, pos),
                Some(h),
            )
        }
        (Some(r), _) => {
            let (file, pos) = map_pos(symbols, r, pos, columns);
            (
                (r.object.clone(), r.decl.0.clone(), file, f.name, pos),
                Some(r),
            )
        }
        (None, _) => {
            let fn_file = at[4].clone();
            (
                (at[0].clone(), fn_file, at[2].clone(), f.name, pos.to_vec()),
                None,
            )
        }
    }
}

/// Rule 2: a function callgrind named by address under `???` (that the
/// address is in no range is the caller's to check).
pub(super) fn is_stub(at: &[String; 5]) -> bool {
    at[0] == "???" && address(at[3].split('\'').next().unwrap_or_default()).is_some()
}
