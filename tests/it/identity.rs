//! An independent model of how KCachegrind and callgrind_annotate name
//! functions, used to prove a rewritten profile has no split or orphaned
//! functions.
//!
//! KCachegrind: a function is (name, file basename, object basename), fixed
//! where a compressed id is defined; `fn=` takes the last `ob=`/`fl=`,
//! `cfn=` takes `cob=`/`cfi=` or else the current object and file
//! (including an active `fi=`/`fe=`). callgrind_annotate: `file:name`, the
//! file being the current `fl/fi/fe` for `fn=` and `cfi=` or that for `cfn=`.

use std::collections::{BTreeSet, HashMap};

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

    /// JIT functions that KCachegrind sees under a triple other than the
    /// one expected for their name: the "split in half" defect. Only
    /// triples under a JIT object or `???` are considered (native functions
    /// may share a JIT function's name).
    pub fn kc_split(&self, expected: &BTreeSet<Triple>, jit_objects: &[String]) -> Vec<Triple> {
        let names: BTreeSet<&str> = expected.iter().map(|t| t.0.as_str()).collect();
        self.kc_defined
            .iter()
            .chain(&self.kc_called)
            .filter(|t| jit_objects.contains(&t.2) || t.2 == "???")
            .map(|t| (base(&t.0).to_string(), t.1.clone(), t.2.clone()))
            .filter(|t| names.contains(t.0.as_str()) && !expected.contains(t))
            .collect()
    }

    /// The same for callgrind_annotate's `file:name` keys: a JIT name
    /// keyed under `???` or under a file not expected for it.
    pub fn ca_split(&self, expected: &BTreeSet<(String, String)>) -> Vec<String> {
        let files: BTreeSet<&str> = expected.iter().map(|(f, _)| f.as_str()).collect();
        let names: BTreeSet<&str> = expected.iter().map(|(_, n)| n.as_str()).collect();
        self.ca_defined
            .iter()
            .chain(&self.ca_called)
            .filter_map(|key| {
                let (file, name) = split_key(key, &names)?;
                let suspicious = file == "???" || files.contains(file);
                (suspicious && !expected.contains(&(file.to_string(), base(name).to_string())))
                    .then(|| key.clone())
            })
            .collect()
    }
}

/// A function name without its recursion/caller suffixes.
fn base(name: &str) -> &str {
    name.split('\'').next().unwrap_or(name)
}

/// Splits `file:name` where `name` (without suffixes) is one of `names`.
fn split_key<'k>(key: &'k str, names: &BTreeSet<&str>) -> Option<(&'k str, &'k str)> {
    key.match_indices(':')
        .map(|(i, _)| (&key[..i], &key[i + 1..]))
        .find(|(_, n)| names.contains(base(n)))
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
        (Some(id), None) => map
            .get(&id)
            .unwrap_or_else(|| panic!("undefined id ({id})"))
            .clone(),
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
                let kc = (
                    cfi.clone().unwrap_or_else(|| file.clone()),
                    cob.clone().unwrap_or_else(|| ob.clone()),
                );
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

fn function(
    t: &mut Tables,
    value: &str,
    (kc_file, kc_ob): (String, String),
    ca_file: &str,
) -> (Triple, String) {
    match split_name(value) {
        (Some(id), Some(name)) => {
            let triple = (name.clone(), basename(&kc_file), basename(&kc_ob));
            t.kc_fn.insert(id, triple.clone());
            t.ca_fn.insert(id, name.clone());
            (triple, format!("{ca_file}:{name}"))
        }
        (Some(id), None) => {
            let triple = t
                .kc_fn
                .get(&id)
                .unwrap_or_else(|| panic!("undefined fn id ({id})"))
                .clone();
            let ca = format!("{ca_file}:{}", t.ca_fn[&id]);
            (triple, ca)
        }
        (None, name) => {
            let name = name.unwrap_or_default();
            (
                (name.clone(), basename(&kc_file), basename(&kc_ob)),
                format!("{ca_file}:{name}"),
            )
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
        } else if line.starts_with(|c: char| c.is_ascii_digit() || "+-*".contains(c))
            && !std::mem::take(&mut after_calls)
        {
            {
                let sums = parts.last_mut().expect("events: before costs");
                for (i, v) in line.split_whitespace().skip(columns).enumerate() {
                    sums[i] += v.parse::<u128>().expect("cost");
                }
            }
        }
    }
    parts
}
