//! Inclusive cost per function, read back from annotated profiles, as its
//! callers recorded it: the cost of the calls into it from other
//! functions, but no more than it ran, its self cost plus its calls out
//! (all of that where none called it).
//! For the hottest list: a runtime whose JIT code is trampolines
//! (CPython's) has almost no self cost in it, and its functions are found
//! by what they include.

use std::collections::{HashMap, HashSet};
use std::io::BufRead;
use std::path::Path;

/// A function as both readers tell them apart: object, file, name.
pub type Function = (String, String, String);

/// A function's costs in the first event.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Costs {
    /// Its own.
    pub own: u64,
    /// Of its calls to other functions.
    pub out: u64,
    /// Of the calls into it from other functions.
    pub called: u64,
}

impl Costs {
    /// What its callers recorded, but no more than its own plus its
    /// calls: callers' calls that hold more also held work that ran
    /// outside it (on Node, the rest of a caller V8 returned to through
    /// it: README), which callgrind_annotate shows as its and KCachegrind
    /// does not.
    pub fn inclusive(&self) -> u64 {
        let ran = self.own + self.out;
        match self.called {
            0 => ran,
            called => called.min(ran),
        }
    }
}

/// Per function under `objects`, summed over the profiles `paths`.
pub fn of_profiles(
    paths: &[&Path],
    objects: &HashSet<String>,
) -> std::io::Result<HashMap<Function, Costs>> {
    let mut costs = HashMap::new();
    for path in paths {
        let file = std::io::BufReader::new(std::fs::File::open(path)?);
        add_profile(file, objects, &mut costs)?;
    }
    Ok(costs)
}

/// Compressed names (`(id) name`, then `(id)`) by space.
#[derive(Default)]
struct Names {
    objects: HashMap<String, String>,
    files: HashMap<String, String>,
    functions: HashMap<String, String>,
}

fn resolve(table: &mut HashMap<String, String>, value: &str) -> String {
    let Some(rest) = value.strip_prefix('(') else {
        return value.to_string();
    };
    let Some((id, name)) = rest.split_once(')') else {
        return value.to_string();
    };
    match name.strip_prefix(' ') {
        Some(name) => {
            table.insert(id.to_string(), name.to_string());
            name.to_string()
        }
        None => table.get(id).cloned().unwrap_or_default(),
    }
}

/// What the next position line is.
#[derive(Clone, Copy, PartialEq)]
enum Next {
    Cost,
    Call,
    Jump,
}

/// The reader's place: the current function and the call being read.
#[derive(Default)]
struct Place {
    function: Function,
    callee_object: Option<String>,
    callee_file: Option<String>,
    callee: String,
}

fn add_profile(
    file: impl BufRead,
    objects: &HashSet<String>,
    costs: &mut HashMap<Function, Costs>,
) -> std::io::Result<()> {
    let mut names = Names::default();
    let mut at = Place::default();
    let mut positions = 1;
    let mut next = Next::Cost;
    for line in file.split(b'\n') {
        let line = line?;
        let line = String::from_utf8_lossy(&line);
        let first = line.bytes().next().unwrap_or(b'#');
        if first.is_ascii_digit() || matches!(first, b'+' | b'-' | b'*') {
            let cost = line.split_whitespace().nth(positions);
            let cost = cost.and_then(|c| c.parse::<u64>().ok()).unwrap_or(0);
            add(costs, objects, &mut at, next, cost);
            next = Next::Cost;
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            if let Some(p) = line.strip_prefix("positions:") {
                positions = p.split_whitespace().count();
            }
            continue;
        };
        let f = &mut at.function;
        match key {
            "ob" => f.0 = resolve(&mut names.objects, value),
            "fl" => f.1 = resolve(&mut names.files, value),
            "fi" | "fe" => drop(resolve(&mut names.files, value)),
            "fn" => f.2 = resolve(&mut names.functions, value),
            "cob" => at.callee_object = Some(resolve(&mut names.objects, value)),
            "cfi" | "cfl" => at.callee_file = Some(resolve(&mut names.files, value)),
            "cfn" => at.callee = resolve(&mut names.functions, value),
            "calls" => next = Next::Call,
            "jump" | "jcnd" => next = Next::Jump,
            _ => {}
        }
    }
    Ok(())
}

/// Adds a position line's `cost` where `next` says it goes.
fn add(
    costs: &mut HashMap<Function, Costs>,
    objects: &HashSet<String>,
    at: &mut Place,
    next: Next,
    cost: u64,
) {
    let here = &at.function;
    match next {
        Next::Cost if objects.contains(&here.0) => {
            costs.entry(here.clone()).or_default().own += cost;
        }
        Next::Call => {
            let target = (
                at.callee_object.take().unwrap_or_else(|| here.0.clone()),
                at.callee_file.take().unwrap_or_else(|| here.1.clone()),
                at.callee.clone(),
            );
            if target == *here {
                return;
            }
            if objects.contains(&here.0) {
                costs.entry(here.clone()).or_default().out += cost;
            }
            if objects.contains(&target.0) {
                costs.entry(target).or_default().called += cost;
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callers_arcs_else_self_plus_calls() {
        let profile = "positions: instr line\nevents: Ir\n\
            ob=(1) jit.elf\nfl=(1) a.py\nfn=(1) f\n0x10 1 5\ncob=(2) lib.so\ncfi=(2) g.c\ncfn=(2) g\ncalls=1 0x20 0\n0x11 1 100\n\
            fn=(3) f'2\n0x10 1 3\ncob=(1)\ncfi=(1)\ncfn=(3)\ncalls=1 0x10 0\n0x11 1 50\n\
            jump=1 0x12 0\n* * 7\n0x12 1 2\n\
            ob=(2)\nfl=(2)\nfn=(2)\n0x20 0 1\ncob=(1)\ncfi=(1)\ncfn=(3)\ncalls=2 0x10 0\n0x21 0 40\n\
            cob=(1)\ncfi=(1)\ncfn=(6) m\ncalls=1 0x50 0\n0x22 0 4\n\
            ob=(1)\nfl=(1)\nfn=(4) h\n0x30 1 6\nfi=(4) b.py\n0x31 1 9\nfl=(4)\nfn=(5) k\n0x40 1 2\nfl=(1)\nfn=(6)\n0x50 1 10\n";
        let objects: HashSet<String> = ["jit.elf".to_string()].into();
        let mut costs = HashMap::new();
        add_profile(profile.as_bytes(), &objects, &mut costs).unwrap();
        let of = |f: &str| costs[&("jit.elf".to_string(), "a.py".to_string(), f.to_string())];
        // f: nobody calls it: its own 5 and its call out 100.
        assert_eq!(
            of("f"),
            Costs {
                own: 5,
                out: 100,
                called: 0
            }
        );
        assert_eq!(of("f").inclusive(), 105);
        // f'2: its call to itself counts nowhere; g's call into it, 40.
        assert_eq!(
            of("f'2"),
            Costs {
                own: 5,
                out: 0,
                called: 40
            }
        );
        // Its callers' 40 hold more than it ran: its own 5.
        assert_eq!(of("f'2").inclusive(), 5);
        // m's caller holds less than m ran (it is also entered by a
        // jump): what the caller recorded.
        assert_eq!(
            of("m"),
            Costs {
                own: 10,
                out: 0,
                called: 4
            }
        );
        assert_eq!(of("m").inclusive(), 4);
        assert!(!costs.keys().any(|k| k.0 == "lib.so"));
        // An inlined file's lines are the function's; the file, named
        // first by fi=, is known by its id after.
        assert_eq!(of("h").own, 15);
        let k = costs[&("jit.elf".to_string(), "b.py".to_string(), "k".to_string())];
        assert_eq!(k.own, 2);
    }
}
