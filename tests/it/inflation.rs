//! Inclusive cost the rewrite must not invent (#28): for each function,
//! its self cost plus its calls to other functions (what KCachegrind
//! without cycle detection shows as inclusive) against what the calls
//! into it from other functions hold (what its callers recorded).

use std::collections::BTreeMap;

use crate::expand::{self, Record};

/// A function: (object, name).
pub type Function = (String, String);

/// Per function, in the first event: self cost, calls out to other
/// functions, calls in from other functions.
pub fn flows(profile: &str) -> BTreeMap<Function, [u64; 3]> {
    let mut flows: BTreeMap<Function, [u64; 3]> = BTreeMap::new();
    let first = |costs: &str| {
        costs
            .split_whitespace()
            .next()
            .map_or(0, |c| c.parse::<u64>().unwrap())
    };
    for record in expand::expand(profile) {
        match record {
            Record::Cost { at, costs, .. } => {
                flows.entry((at[0].clone(), at[3].clone())).or_default()[0] += first(&costs);
            }
            Record::Transfer {
                at,
                kind,
                target,
                costs,
                ..
            } if kind == "calls" => {
                let (from, to) = (
                    (at[0].clone(), at[3].clone()),
                    (target[0].clone(), target[2].clone()),
                );
                if from == to {
                    continue;
                }
                let cost = first(&costs);
                flows.entry(from).or_default()[1] += cost;
                flows.entry(to).or_default()[2] += cost;
            }
            Record::Transfer { .. } => {}
        }
    }
    flows
}

/// The functions of `objects` (a test on the object's name) that have
/// callers and whose self cost plus calls out exceed `ratio` times the
/// calls into them, by more than `floor`: (function, self + out, in).
pub fn inflated(
    profile: &str,
    objects: impl Fn(&str) -> bool,
    ratio: f64,
    floor: u64,
) -> Vec<(Function, u64, u64)> {
    flows(profile)
        .into_iter()
        .filter(|((object, _), _)| objects(object))
        .filter_map(|(f, [own, out, into])| {
            let total = own + out;
            let over = into > 0 && total as f64 > ratio * into as f64 && total - into > floor;
            over.then_some((f, total, into))
        })
        .collect()
}

/// JIT functions of each real fixture's output whose self cost plus
/// calls out exceed 1.05 times their calls in (by over 1,000 Ir), by
/// fixture folder and profile. Callgrind's own profiles have none: every JIT
/// pseudo-function there stays within 5% of what its callers recorded.
fn inflated_per_fixture() -> BTreeMap<String, Vec<(Function, u64, u64)>> {
    let dir = crate::util::scratch("inflation");
    let mut all = BTreeMap::new();
    for (profile, sources) in crate::every_fixture::all_fixtures(&dir) {
        let input = std::fs::read_to_string(&profile).unwrap();
        let in_fixtures = |s: &&std::path::PathBuf| s.starts_with(crate::util::fixture(""));
        let Some(source) = sources.iter().find(in_fixtures) else {
            continue; // generated: random arcs, inflated in the input already
        };
        let fixture = source.parent().unwrap().file_name().unwrap();
        let fixture = fixture.to_string_lossy().into_owned();
        let raw_jit = |o: &str| o == "???";
        assert_eq!(
            inflated(&input, raw_jit, 1.05, 1000),
            [],
            "{fixture}'s input"
        );
        let table = crate::rewriting::table_for(Some(&profile), &sources);
        let (out, _) = crate::rewriting::rewrite_bytes(input.as_bytes(), &table, 1 << 16);
        let out = String::from_utf8(out).unwrap();
        let names: Vec<String> = sources
            .iter()
            .map(|s| s.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        let jit =
            |o: &str| o.contains("jit-code.") || names.iter().any(|n| o.ends_with(n.as_str()));
        let profile_name = profile.file_name().unwrap().to_string_lossy().into_owned();
        all.insert(
            format!("{fixture}/{profile_name}"),
            inflated(&out, jit, 1.05, 1000),
        );
    }
    all
}

/// #28: the merge must not make a JIT function cost more than its
/// callers saw it run. Node had 13 functions over (Module._load 2.9x,
/// compileForInternalLoader 2.0x) until rule 8 took what a
/// continuation's own arcs cannot hold out of the arcs made from builtin
/// code callgrind charged to the function; Java had `Interpreter` at
/// 1.21x and `String.hashCode` at 2.44x until calls between two levels of
/// one function were kept as calls (compiled code at `'2` jumping to its
/// own continuation at level 1).
#[test]
fn inclusive_costs_stay_within_what_callers_recorded() {
    let all = inflated_per_fixture();
    for (fixture, found) in &all {
        assert_eq!(found, &[], "{fixture}");
    }
    assert_eq!(all.len(), 11, "{:?}", all.keys());
}

/// JIT functions of the profile `record` annotated in `dir` that cost
/// more than their callers recorded (as for the fixtures).
pub fn inflated_in(dir: &std::path::Path) -> Vec<(Function, u64, u64)> {
    inflated_file(&crate::util::annotated_in(dir))
}

/// [`inflated_in`] for the annotated profile `path`.
pub fn inflated_file(path: &std::path::Path) -> Vec<(Function, u64, u64)> {
    let out = std::fs::read_to_string(path).unwrap();
    let jit = |o: &str| {
        o.contains("jit-code.") || o.ends_with(".map") || o.ends_with(".dump") || o.contains("<jit")
    };
    inflated(&out, jit, 1.05, 1000)
}

/// #28 on profiles recorded now, as a new user would: Node 20 with
/// recursion, a class and closures; OpenJDK 17 with `-Xbatch` and an
/// interpreter-heavy start.
#[test]
fn recorded_node_and_java_runs_invent_no_inclusive_cost() {
    use crate::record_runtimes::{record_runtime_in, runtime};
    if let Some(node) = runtime("node") {
        let dir = crate::util::scratch("inflation-node");
        let program = "class Shape { constructor(r) { this.r = r; } area() { return 3 * this.r * this.r; } }\n\
             function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\n\
             const adders = [1, 2, 3].map((k) => (x) => x + k);\n\
             let t = 0;\n\
             for (let i = 0; i < 40; i++) { t += fib(14) + new Shape(i).area(); for (const a of adders) t = a(t) % 1000003; }\n\
             console.log(t);\n";
        std::fs::write(dir.join("shapes.js"), program).unwrap();
        let said = record_runtime_in(&dir, &node, &["shapes.js"], &[]);
        assert_eq!(inflated_in(&dir), [], "node");
        hottest_within_what_ran(&said, &dir);
    } else {
        crate::util::skip("recorded_node_inflation", "node is not installed");
    }
    if let (Some(java), Some(_)) = (runtime("java"), runtime("javac")) {
        let dir = crate::util::scratch("inflation-java");
        std::fs::copy(
            crate::util::fixture("java-hot/Hot.java"),
            dir.join("Hot.java"),
        )
        .unwrap();
        crate::util::run_ok(
            std::process::Command::new("javac")
                .args(["-d", ".", "Hot.java"])
                .current_dir(&dir),
        );
        record_runtime_in(&dir, &java, &["-Xbatch", "-cp", ".", "Hot"], &[]);
        assert_eq!(inflated_in(&dir), [], "java");
    } else {
        crate::util::skip("recorded_java_inflation", "a JDK is not installed");
    }
}

/// No function in `record`'s hottest list (`said`, for the run in `dir`)
/// has an inclusive share above what it ran: its self cost plus its calls
/// in the annotated output. (The callers of `setOwnProperty` hold the
/// rest of a Node run's module loading, 10% of it, for 0.01% it ran.)
fn hottest_within_what_ran(said: &str, dir: &std::path::Path) {
    let out = std::fs::read_to_string(crate::util::annotated_in(dir)).unwrap();
    let flows = flows(&out);
    let total: u64 = flows.values().map(|[own, _, _]| own).sum();
    let rows = said
        .lines()
        .skip_while(|l| !l.starts_with("hottest JIT functions"))
        .skip(1);
    let mut checked = 0;
    for row in rows {
        let Some((incl, rest)) = row.trim_start().split_once("%  ") else {
            break; // past the list
        };
        let Ok(incl) = incl.parse::<f64>() else { break };
        let (_, named) = rest.trim_start().split_once("%  ").unwrap();
        let name = named.rsplit_once("  (").map_or(named, |(name, _)| name);
        let ran = (flows.iter())
            .filter(|((object, f), _)| object.contains("jit-code.") && f == name)
            .map(|(_, [own, out, _])| own + out)
            .max();
        if let Some(ran) = ran {
            let share = 100.0 * ran as f64 / total as f64;
            assert!(incl <= share + 0.01, "{row}: ran {ran} of {total}\n{said}");
            checked += 1;
        }
    }
    assert!(checked > 0, "{said}");
}

/// The functions of `objects` whose callers' calls into them hold more
/// than 1.05 times their self cost plus calls out (by over 1,000 Ir):
/// callgrind_annotate, which reads a function's inclusive cost from its
/// callers, would show them costing more than they ran.
pub fn deflated(profile: &str, objects: impl Fn(&str) -> bool) -> Vec<(Function, u64, u64)> {
    flows(profile)
        .into_iter()
        .filter(|((object, _), _)| objects(object))
        .filter_map(|(f, [own, out, into])| {
            let total = own + out;
            let over = into as f64 > 1.05 * total as f64 && into - total > 1000;
            over.then_some((f, total, into))
        })
        .collect()
}

/// The real fixture `name`'s profile and its annotated output, with the
/// rewrite's counts.
fn fixture_rewritten(
    dir: &std::path::Path,
    name: &str,
) -> (String, String, annotate::callgrind::Stats) {
    let fixture = crate::util::fixture(name);
    let (profile, sources) = crate::every_fixture::all_fixtures(dir)
        .into_iter()
        .find(|(_, sources)| sources.iter().any(|s| s.starts_with(&fixture)))
        .unwrap();
    let input = std::fs::read_to_string(&profile).unwrap();
    let table = crate::rewriting::table_for(Some(&profile), &sources);
    let (out, stats) = crate::rewriting::rewrite_bytes(input.as_bytes(), &table, 1 << 16);
    (input, String::from_utf8(out).unwrap(), stats)
}

/// A continuation called back through builtins (`Module.load -> Call
/// builtins -> noop -> middle of Module.load`): the calls into `noop`
/// held the rest of `Module.load` (70,534,372 Ir for 172 of its own), so
/// callgrind_annotate showed `noop` at 14% inclusive. The calls into the
/// function that called the continuation back give it back. On Node's
/// fixture 20 JIT functions were so over what they ran. Then 13: their
/// continuation blocks (folded into them) called the continuations back.
/// Those come out of the calls into the function where they all call it
/// under one name. Then 8, each called under several levels' names
/// (`setOwnProperty` and `setOwnProperty'2`): those come out of each
/// level's calls, as far as they hold more than the level ran. Then 2:
/// `sumTo'2`, called by `sumTo`, whose continuation callgrind named at
/// level 1 (its prologue's return), now given back by the calls between
/// the levels. 1 remains (`wrappedFn'2`, reached from `wrappedFn` through
/// builtins), and callgrind's own profile has none.
#[test]
fn calls_into_a_function_that_called_a_continuation_back_give_it_back() {
    let dir = crate::util::scratch("called-back");
    let (input, out, stats) = fixture_rewritten(&dir, "node-fib");
    assert_eq!(deflated(&input, |o| o == "???"), []);
    let names: Vec<String> = deflated(&out, |o| o.ends_with(".dump"))
        .into_iter()
        .map(|((_, f), _, _)| f)
        .collect();
    assert_eq!(names, ["wrappedFn'2"]);
    for fixed in [
        "noop",
        "Module._findPath",
        "loadSource",
        "highWaterMarkFrom",
        // called back from their continuation blocks
        "Module._resolveFilename",
        "wrapSafe",
        "getHighWaterMark",
        "writeSync",
        "emitBeforeScript",
        // called at two levels: out of each level's calls
        "setOwnProperty",
        "setOwnProperty'2",
        "normalizeString",
        "normalizeString'2",
        "resolve",
        "resolve'2",
        // its continuation written at level 1: out of the calls between
        "sumTo'2",
    ] {
        assert!(!names.iter().any(|n| n == fixed), "{fixed}: {names:?}");
    }
    let flows = flows(&out);
    let noop = flows.iter().find(|((_, f), _)| f == "noop").unwrap().1;
    assert!(noop[2] < 1000, "{noop:?}");
    // 211,740,446 Ir given back without the continuation blocks' calls,
    // 353,703,033 without the levels'
    assert!(
        stats.reentry.called_back > 490_000_000,
        "{:?}",
        stats.reentry
    );
    // Three are called at two levels, and their continuations called
    // back what the calls into them held: 141,876,669 Ir, 958,094 and
    // 191,512, left in those calls until each level's calls gave back
    // what they held over what it ran. Each level's callers now hold what
    // it ran, within 4% (normalizeString's levels held 11,346 Ir more
    // than it called back, as the plan reckons what they ran: that stays,
    // both levels at one ratio), and within 1,000 Ir where the callers
    // hold less.
    let levels = ["setOwnProperty", "normalizeString", "resolve"];
    let of_levels = (flows.iter()).filter(|((_, f), _)| {
        let level = |n: &&str| {
            f.strip_prefix(*n)
                .is_some_and(|l| l.is_empty() || l.starts_with('\''))
        };
        levels.iter().any(level)
    });
    let mut into_levels = BTreeMap::new();
    for ((_, name), &[own, out, into]) in of_levels {
        let ran = own + out;
        assert!(
            into as f64 <= 1.04 * ran as f64,
            "{name}: {into} into, {ran} ran"
        );
        assert!(into + 1000 >= ran, "{name}: {into} into, {ran} ran");
        into_levels.insert(name.as_str(), into);
    }
    assert_eq!(into_levels.len(), 6);
    // (README: 71,074,193 and 70,846,077 Ir before)
    assert_eq!(into_levels["setOwnProperty"], 21_836);
    assert_eq!(into_levels["setOwnProperty'2"], 21_766);
    // sumTo'2 held 240,145 for 30 it ran, sumTo 9,087,273 for 9,327,388:
    // the continuation that resumed level 2 counted in both of sumTo's.
    for name in ["sumTo", "sumTo'2"] {
        let [own, out, into] = flows.iter().find(|((_, f), _)| f == name).unwrap().1;
        assert!(
            (own + out).abs_diff(*into) <= 1,
            "{name}: {own} + {out}, {into} into"
        );
    }
    // (of what the call between the levels held: all but sumTo'2's 30)
    let between = (
        stats.reentry.between_levels,
        stats.reentry.between_levels_held,
    );
    assert_eq!(between, (240_114, 240_145), "{:?}", stats.reentry);
}

/// HotSpot's call stub (`StubRoutines (1)`) jumps into the interpreter,
/// whose code calls a label of its own (a jump within it seen as a
/// call). The call stub's call into the interpreter holds that call's
/// cost too: before, its callers held 122,379,988 Ir for 111,891,380 it
/// ran (1.09 times), and `Interpreter` ran 10,500,965 more than its
/// callers held.
#[test]
fn a_jump_seen_as_a_call_in_code_jumped_into_stays_in_the_jumpers_call() {
    let dir = crate::util::scratch("moved-fold");
    let (input, out, _) = fixture_rewritten(&dir, "java-hot");
    assert_eq!(deflated(&input, |o| o == "???"), []);
    assert_eq!(deflated(&out, |o| o.ends_with(".map")), []);
    let flows = flows(&out);
    for name in ["StubRoutines (1)", "Interpreter"] {
        let [own, out, into] = flows.iter().find(|((_, f), _)| f == name).unwrap().1;
        assert_eq!(own + out, *into, "{name}");
    }
    let stub = flows.iter().find(|((_, f), _)| f == "StubRoutines (1)");
    assert_eq!(stub.unwrap().1[2], 122_379_988);
}
