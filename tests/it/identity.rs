//! An independent model of how KCachegrind and callgrind_annotate name
//! functions, used to prove a rewritten profile has no split or orphaned
//! functions.
//!
//! KCachegrind: a function is (name, file basename, object basename), fixed
//! where a compressed id is defined; `fn=` takes the last `ob=`/`fl=`,
//! `cfn=` takes `cob=`/`cfi=` or else the current object and file
//! (including an active `fi=`/`fe=`). callgrind_annotate: `file:name`, the
//! file being the current `fl/fi/fe` for `fn=` and `cfi=` or that for `cfn=`.

use std::collections::{BTreeMap, BTreeSet, HashMap};

/// A function as KCachegrind keys it.
pub type Triple = (String, String, String);

/// Functions seen by both readers' rules.
#[derive(Debug, Default)]
pub struct Functions {
    /// KCachegrind: defined by `fn=`.
    pub kc_defined: BTreeSet<Triple>,
    /// KCachegrind: named by `cfn=`.
    pub kc_called: BTreeSet<Triple>,
    /// callgrind_annotate: `file:name` defined by `fn=`.
    pub ca_defined: BTreeSet<String>,
    /// callgrind_annotate: `file:name` named by `cfn=`.
    pub ca_called: BTreeSet<String>,
}

impl Functions {
    /// Callees never defined, by KCachegrind's rules.
    pub fn kc_orphans(&self) -> Vec<&Triple> {
        self.kc_called.difference(&self.kc_defined).collect()
    }

    /// Callees never defined, by callgrind_annotate's rules.
    pub fn ca_orphans(&self) -> Vec<&String> {
        self.ca_called.difference(&self.ca_defined).collect()
    }

    /// Names that KCachegrind shows under more than one (file, object),
    /// among functions whose object basename passes `is_jit`.
    pub fn kc_split(&self, is_jit: impl Fn(&str) -> bool) -> Vec<String> {
        let mut by_name: BTreeMap<&str, BTreeSet<&Triple>> = BTreeMap::new();
        for t in self.kc_defined.iter().chain(&self.kc_called) {
            by_name.entry(&t.0).or_default().insert(t);
        }
        by_name
            .into_iter()
            .filter(|(_, ts)| ts.len() > 1 && ts.iter().any(|t| is_jit(&t.2)))
            .map(|(n, ts)| format!("{n}: {ts:?}"))
            .collect()
    }

    /// JIT names that callgrind_annotate keys under more than one file.
    pub fn ca_split(&self, jit_names: &BTreeSet<String>) -> Vec<String> {
        let mut by_name: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for key in self.ca_defined.iter().chain(&self.ca_called) {
            for name in jit_names {
                if key.ends_with(&format!(":{name}")) {
                    by_name.entry(name).or_default().insert(key);
                }
            }
        }
        by_name.into_iter().filter(|(_, ks)| ks.len() > 1).map(|(n, ks)| format!("{n}: {ks:?}")).collect()
    }

    /// Names of functions whose object passes `is_jit` (KCachegrind view).
    pub fn jit_names(&self, is_jit: impl Fn(&str) -> bool) -> BTreeSet<String> {
        self.kc_defined.iter().filter(|t| is_jit(&t.2)).map(|t| t.0.clone()).collect()
    }
}

fn basename(s: &str) -> String {
    s.rsplit('/').next().unwrap_or(s).to_string()
}

#[derive(Default)]
struct Tables {
    ob: HashMap<u64, String>,
    fl: HashMap<u64, String>,
    kc_fn: HashMap<u64, Triple>,
    ca_fn: HashMap<u64, String>,
}

/// `(N) name`, `(N)` or `name` -> (id, name).
fn split_name(v: &str) -> (Option<u64>, Option<String>) {
    if v.starts_with('(') && v[1..].starts_with(|c: char| c.is_ascii_digit()) {
        let close = v.find(')').expect("')' in compressed name");
        let id = v[1..close].parse().expect("numeric id");
        let name = v[close + 1..].trim_start();
        return (Some(id), (!name.is_empty()).then(|| name.to_string()));
    }
    (None, Some(v.to_string()))
}

fn resolve(map: &mut HashMap<u64, String>, v: &str) -> String {
    match split_name(v) {
        (Some(id), Some(name)) => {
            map.insert(id, name.clone());
            name
        }
        (Some(id), None) => map.get(&id).unwrap_or_else(|| panic!("undefined id ({id})")).clone(),
        (None, name) => name.unwrap_or_default(),
    }
}

/// Reads a profile with both readers' identity rules.
pub fn functions(text: &str) -> Functions {
    let mut f = Functions::default();
    let mut t = Tables::default();
    let (mut ob, mut fl, mut file) = (String::new(), String::new(), String::new());
    let (mut cob, mut cfi): (Option<String>, Option<String>) = (None, None);
    for line in text.lines() {
        let Some((key, value)) = line.split_once('=') else {
            if line.starts_with("part:") {
                t = Tables::default();
            }
            continue;
        };
        match key {
            "ob" => ob = resolve(&mut t.ob, value),
            "fl" => {
                fl = resolve(&mut t.fl, value);
                file = fl.clone();
            }
            "fi" | "fe" => file = resolve(&mut t.fl, value),
            "cob" => cob = Some(resolve(&mut t.ob, value)),
            "cfi" | "cfl" => cfi = Some(resolve(&mut t.fl, value)),
            "jfi" => {
                resolve(&mut t.fl, value);
            }
            "fn" => {
                let kc = (fl.clone(), ob.clone());
                let (triple, ca) = function(&mut t, value, kc, &file);
                f.kc_defined.insert(triple);
                f.ca_defined.insert(ca);
            }
            "cfn" => {
                let kc = (cfi.clone().unwrap_or_else(|| file.clone()), cob.clone().unwrap_or_else(|| ob.clone()));
                let ca_file = cfi.take().unwrap_or_else(|| file.clone());
                let (triple, ca) = function(&mut t, value, kc, &ca_file);
                cob = None;
                f.kc_called.insert(triple);
                f.ca_called.insert(ca);
            }
            "jfn" => {
                function(&mut t, value, (file.clone(), ob.clone()), &file);
            }
            _ => {}
        }
    }
    f
}

fn function(t: &mut Tables, value: &str, (kc_file, kc_ob): (String, String), ca_file: &str) -> (Triple, String) {
    match split_name(value) {
        (Some(id), Some(name)) => {
            let triple = (name.clone(), basename(&kc_file), basename(&kc_ob));
            t.kc_fn.insert(id, triple.clone());
            t.ca_fn.insert(id, name.clone());
            (triple, format!("{ca_file}:{name}"))
        }
        (Some(id), None) => {
            let triple = t.kc_fn.get(&id).unwrap_or_else(|| panic!("undefined fn id ({id})")).clone();
            let ca = format!("{ca_file}:{}", t.ca_fn[&id]);
            (triple, ca)
        }
        (None, name) => {
            let name = name.unwrap_or_default();
            ((name.clone(), basename(&kc_file), basename(&kc_ob)), format!("{ca_file}:{name}"))
        }
    }
}

/// Per-event self cost (cost lines not following `calls=`), per part.
pub fn self_costs(text: &str) -> Vec<Vec<u128>> {
    let mut parts: Vec<Vec<u128>> = Vec::new();
    let mut columns = 1;
    let mut after_calls = false;
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("positions:") {
            columns = v.split_whitespace().count();
        } else if let Some(v) = line.strip_prefix("events:") {
            parts.push(vec![0; v.split_whitespace().count()]);
        } else if line.starts_with("calls=") {
            after_calls = true;
        } else if line.starts_with(|c: char| c.is_ascii_digit() || "+-*".contains(c)) {
            if !std::mem::take(&mut after_calls) {
                let sums = parts.last_mut().expect("events: before costs");
                for (i, v) in line.split_whitespace().skip(columns).enumerate() {
                    sums[i] += v.parse::<u128>().expect("cost");
                }
            }
        }
    }
    parts
}
