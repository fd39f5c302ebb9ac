use std::collections::BTreeMap;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::plan::Share;
use super::*;

#[test]
fn a_continuation_is_shared_by_its_arcs_in_proportion_and_exactly() {
    // Arcs of 30, 10 and 60 (Ir) give back 50 of 100: 15, 5, 30.
    let mut share = Share {
        take: vec![50, 7],
        arcs: vec![100, 7],
        seen: vec![0, 0],
    };
    let taken: Vec<Vec<u64>> = [[30, 1], [10, 0], [60, 6]]
        .iter()
        .map(|arc| share.next(arc))
        .collect();
    assert_eq!(taken, [vec![15, 1], vec![5, 0], vec![30, 6]]);
    // Odd shares still add up to what is taken, never more than an arc.
    let mut share = Share {
        take: vec![10],
        arcs: vec![3],
        seen: vec![0],
    };
    let taken: u64 = (0..3).map(|_| share.next(&[1])[0]).sum();
    assert_eq!(taken, 3);
}

#[test]
fn a_continuation_with_no_arc_is_left_and_counted() {
    let mut noted = Noted::default();
    let names = Interner::default();
    let (f, x) = (SymbolId(1), Who::Jit(SymbolId(2)));
    noted.continuations.insert((1, f, 0x1010, x), vec![40, 2]);
    let plan = noted.plan(&names, false, |_| false).unwrap();
    assert!(!plan.takes_out());
    assert_eq!(plan.unplaced(), (40, 40));
    noted.callees.insert((1, f, x), vec![30]);
    let plan = noted.plan(&names, false, |_| false).unwrap();
    assert!(plan.takes_out());
    let (arcs, share) = &plan.shares[&(1, f)][0];
    assert_eq!(
        (arcs, &share.take[..]),
        (&Arcs::To(Callee::Jit(SymbolId(2))), &[30, 0][..])
    );
}

#[test]
fn a_continuation_comes_out_of_the_call_it_returns_from() {
    // Sites at 0x1004 and 0x1020; continuations at 0x100a (after the
    // first call) and 0x1025 (after the second), through other callers.
    let mut noted = Noted::default();
    let names = Interner::default();
    let f = SymbolId(1);
    let sites = BTreeMap::from([(0x1004, vec![100]), (0x1020, vec![50])]);
    noted.sites.all.insert((1, f), sites);
    let (a, b) = (Who::Jit(SymbolId(2)), Who::Jit(SymbolId(3)));
    noted.continuations.insert((1, f, 0x100a, a), vec![60]);
    noted.continuations.insert((1, f, 0x1025, a), vec![20]);
    noted.continuations.insert((1, f, 0x1025, b), vec![45]);
    // Before every site, and too far above one: no call returns there,
    // another entry point.
    noted.continuations.insert((1, f, 0x1000, b), vec![7]);
    noted.continuations.insert((1, f, 0x1014, b), vec![9]);
    let plan = noted.plan(&names, true, |_| false).unwrap();
    let mut taken: Vec<_> = plan.shares[&(1, f)]
        .iter()
        .map(|(arcs, share)| (arcs.clone(), share.take.clone()))
        .collect();
    taken.sort_by_key(|(arcs, _)| format!("{arcs:?}"));
    assert_eq!(
        taken,
        [
            (Arcs::Site(0x1004), vec![60]),
            (Arcs::Site(0x1020), vec![50])
        ]
    );
    assert_eq!(plan.unplaced(), (0, 125));
    let mut entries: Vec<_> = plan.entries.iter().copied().collect();
    entries.sort();
    assert_eq!(entries, [(f, 0x1000), (f, 0x1014)]);
    assert_eq!(plan.entry_points(), 2, "the summary's count");
}

#[test]
fn a_continuation_keeps_a_level_entered_whose_calls_hold_it() {
    let mut noted = Noted::default();
    let mut names = Interner::default();
    let f = SymbolId(1);
    let jit = |name: &[u8], entry| JitName {
        symbol: f,
        name: name.to_vec(),
        level: name
            .iter()
            .position(|&b| b == b'\'')
            .map(|i| i + 1..name.len()),
        entry,
        addr: 0,
        ambiguous: false,
    };
    let levels = &mut noted.levels;
    for name in [&b"f'2"[..], b"f", b"f'5"] {
        levels.entered.insert((f, name.to_vec()));
    }
    for name in [&b"f'2"[..], b"f'3", b"f'5"] {
        levels.resumed.insert((f, name.to_vec()), jit(name, false));
    }
    // The calls into f'2 and f'5 hold the calls into each of their
    // continuations (not their sum: one activation's nest).
    let (f2, f5) = (names.intern(b"f'2"), names.intern(b"f'5"));
    levels.called.insert((f, f2), 100);
    levels.resumed_cost.insert(((f, f2), 0x10), 100);
    levels.resumed_cost.insert(((f, f2), 0x20), 90);
    levels.called.insert((f, f5), 10);
    let lowered = levels.lowered(&names);
    assert_eq!(lowered.len(), 1);
    assert_eq!(lowered[&(f, b"f'3".to_vec())], b"f'2");
    // f'5's continuations hold more than its entry was called with:
    // callgrind's nesting of a loop, no activation's level.
    levels.resumed_cost.insert(((f, f5), 0x20), 11);
    let lowered = levels.lowered(&names);
    assert_eq!(lowered[&(f, b"f'5".to_vec())], b"f'2");
    levels.entered.clear();
    let lowered = levels.lowered(&names);
    assert_eq!(lowered[&(f, b"f'5".to_vec())], b"f");
    let plan = noted.plan(&names, true, |_| false).unwrap();
    assert!(plan.takes_out());
}

#[test]
fn what_the_return_address_cannot_hold_comes_out_of_arcs_outside_every_range() {
    // f's call at 0x1004 returns to 0x1009 but holds 10; callgrind nested
    // the continuation (100) under a call made at 0x500, code of no JIT
    // range charged to f (60), and under one at 0x600 (40).
    let mut noted = Noted::default();
    let names = Interner::default();
    let f = SymbolId(1);
    noted.sites.all.insert(
        (1, f),
        BTreeMap::from([(0x1004, vec![10]), (0x500, vec![60])]),
    );
    let outside = BTreeMap::from([(0x500, vec![60]), (0x600, vec![40])]);
    noted.sites.outside.insert((1, f), outside);
    let x = Who::Jit(SymbolId(2));
    noted.continuations.insert((1, f, 0x1009, x), vec![100]);
    let plan = noted.plan(&names, true, |_| false).unwrap();
    let mut taken: Vec<_> = plan.shares[&(1, f)]
        .iter()
        .map(|(arcs, share)| (format!("{arcs:?}"), share.take.clone(), share.arcs.clone()))
        .collect();
    taken.sort();
    // 10 from the return address; the other 90 from the 100 outside.
    assert_eq!(
        taken,
        [
            ("Outside".to_string(), vec![90], vec![100]),
            ("Site(4100)".to_string(), vec![10], vec![10]),
        ]
    );
    // A continuation its arcs hold whole takes nothing from outside.
    noted.continuations.insert((1, f, 0x1009, x), vec![10]);
    let plan = noted.plan(&names, true, |_| false).unwrap();
    assert_eq!(plan.shares[&(1, f)].len(), 1);
}

#[test]
fn a_call_into_an_entry_point_is_a_call_site_of_its_caller() {
    // f calls at 0x1008 (an arc of 10) and at 0x100d into g's 0x2040, a
    // folded call in the first pass (30); the plan finds 0x2040 an entry
    // point (no call site of g below it). f's continuation at 0x1012
    // returns from the second call: it comes out of that one.
    let mut noted = Noted::default();
    let names = Interner::default();
    let (f, g) = (SymbolId(1), SymbolId(2));
    let sites = BTreeMap::from([(0x1008, vec![10])]);
    noted.sites.all.insert((1, f), sites);
    noted
        .continuations
        .insert((1, g, 0x2040, Who::Jit(f)), vec![30]);
    let calls = BTreeMap::from([(0x100d, vec![30])]);
    noted
        .folded
        .insert((1, g, 0x2040), HashMap::from_iter([((1, f), calls)]));
    let x = Who::Jit(SymbolId(3));
    noted.continuations.insert((1, f, 0x1012, x), vec![25]);
    let plan = noted.plan(&names, true, |_| false).unwrap();
    assert!(plan.entries.contains(&(g, 0x2040)));
    let taken: Vec<_> = plan.shares[&(1, f)]
        .iter()
        .map(|(arcs, share)| (format!("{arcs:?}"), share.take.clone()))
        .collect();
    assert_eq!(
        taken,
        [(format!("{:?}", Arcs::<Callee>::Site(0x100d)), vec![25])]
    );
}

#[test]
fn a_call_from_code_in_no_range_charged_to_f_can_enter_f() {
    // Code at 0x500 (in no JIT range) that callgrind charged to f calls
    // f's 0x1040 (no call site of f below it: an entry point) and f's
    // 0x1009 (f's call at 0x1004 returns there: not one). A call from f's
    // own code at 0x1030 into 0x1050 stays inside f.
    let mut noted = Noted::default();
    let names = Interner::default();
    let f = SymbolId(1);
    noted
        .sites
        .all
        .insert((1, f), BTreeMap::from([(0x1004, vec![10])]));
    for (site, addr) in [(0x500, 0x1040), (0x500, 0x1009), (0x1030, 0x1050)] {
        let calls = BTreeMap::from([(site, vec![5])]);
        noted
            .folded
            .insert((1, f, addr), HashMap::from_iter([((1, f), calls)]));
    }
    let outside = |site: u64| site < 0x1000;
    let plan = noted.plan(&names, true, outside).unwrap();
    assert_eq!(plan.entries, HashSet::from_iter([(f, 0x1040)]));
    // Without instruction addresses no site is known to lie outside.
    assert!(noted.plan(&names, false, outside).is_none());
    // Kept for the plan when the part ends, though nothing resumes f.
    noted.end_part(1, outside);
    let plan = noted.plan(&names, true, outside).unwrap();
    assert_eq!(plan.entries, HashSet::from_iter([(f, 0x1040)]));
}
