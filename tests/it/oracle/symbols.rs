//! The oracle's own reading of the symbol files: JIT ranges with their
//! names, objects and line tables (rules 1, 5 and 6), and the lookups
//! the rules make in them.

use super::*;

/// One JIT function.
#[derive(Debug, Clone)]
pub(super) struct Range {
    pub(super) start: u64,
    pub(super) end: u64,
    pub(super) name: String,
    pub(super) object: String,
    /// Rule 5: 1 for a jitdump's range, 0 for a perf map's.
    pub(super) rank: u8,
    pub(super) decl: (String, u64),
    /// (address, line, file), sorted by address.
    pub(super) lines: Vec<(u64, u64, String)>,
}

impl Range {
    /// Rule 4: a call to `addr` is a new activation.
    pub(super) fn entered_at(&self, addr: u64) -> bool {
        let table = self.name.starts_with("stub<")
            && (self.name.contains("AllocateTemporaryEntryPoints")
                || self.name.contains("Precode"));
        addr == self.start || table
    }

    /// Rule 2.
    pub(super) fn line_at(&self, addr: u64) -> (String, u64) {
        let i = self.lines.partition_point(|(a, _, _)| *a <= addr);
        match i.checked_sub(1).map(|i| &self.lines[i]) {
            Some((_, line, file)) if *line != 0 => (file.clone(), *line),
            _ => self.decl.clone(),
        }
    }
}

/// The JIT ranges of some symbol files, in load order.
pub struct Symbols {
    pub(super) ranges: Vec<Range>,
    /// The ranges by start, and the longest one's length: where to look
    /// (built on first use; the rule stays the linear one's).
    pub(super) by_start: std::sync::OnceLock<(Vec<(u64, usize)>, u64)>,
    /// Rule 1: (range start, level) of every name made of a range's start
    /// in the input being mapped.
    pub(super) entered: std::cell::RefCell<std::collections::BTreeSet<(u64, u32)>>,
    /// Rule 1: (range start, level) whose calls into the start hold the
    /// calls into each of that level's continuations.
    pub(super) held: std::cell::RefCell<std::collections::BTreeSet<(u64, u32)>>,
    /// Rule 4: the addresses in the middle of a range that are entry
    /// points in the input being mapped.
    pub(super) entry_points: std::cell::RefCell<std::collections::BTreeSet<u64>>,
}

impl Symbols {
    /// Reads jitdumps and perf maps (told apart by the jitdump magic).
    pub fn read(paths: &[PathBuf]) -> Symbols {
        let mut ranges = Vec::new();
        for path in paths {
            let object = std::path::absolute(path).unwrap().display().to_string();
            let data = std::fs::read(path).unwrap();
            let first = ranges.len();
            let by_function = if data.starts_with(b"DTiJ") || data.starts_with(b"JiTD") {
                read_jitdump(path, &object, &mut ranges)
            } else {
                read_perf_map(&data, &object, &mut ranges)
            };
            if !by_function {
                file_by_module(&mut ranges[first..]);
            }
        }
        Symbols {
            ranges,
            by_start: Default::default(),
            entered: Default::default(),
            held: Default::default(),
            entry_points: Default::default(),
        }
    }

    /// Rule 7: a jitdump's functions are written under the code image
    /// beside the output, where one was written.
    pub fn with_code_image(mut self, image: &Path) -> Symbols {
        let object = std::path::absolute(image).unwrap().display().to_string();
        for range in self.ranges.iter_mut().filter(|r| r.rank == 1) {
            range.object = object.clone();
        }
        self
    }

    /// The rules for the output `output` of a run that may have written a
    /// code image beside it.
    pub fn for_output(self, output: &Path) -> Symbols {
        let name = output.file_name().unwrap().to_string_lossy();
        let image = output.with_file_name(format!("jit-code.{name}.elf"));
        match image.exists() {
            true => self.with_code_image(&image),
            false => self,
        }
    }

    /// Rule 5: the range that wins at `addr`.
    pub(super) fn at(&self, addr: u64) -> Option<&Range> {
        let (by_start, longest) = self.by_start.get_or_init(|| {
            let mut v: Vec<(u64, usize)> = self
                .ranges
                .iter()
                .enumerate()
                .map(|(i, r)| (r.start, i))
                .collect();
            v.sort();
            let longest = self
                .ranges
                .iter()
                .map(|r| r.end - r.start)
                .max()
                .unwrap_or(0);
            (v, longest)
        });
        // Only a range starting within `longest` below `addr` can hold it.
        let from = by_start.partition_point(|&(s, _)| s < addr.saturating_sub(*longest));
        let to = by_start.partition_point(|&(s, _)| s <= addr);
        by_start[from..to]
            .iter()
            .map(|&(_, i)| (i, &self.ranges[i]))
            .filter(|(_, r)| r.start <= addr && addr < r.end)
            .max_by_key(|(i, r)| (r.rank, *i))
            .map(|(_, r)| r)
    }
}

/// File names that are text (rule 6: V8 writes some that are not).
pub(super) fn is_text(file: &str) -> bool {
    !file.chars().any(|c| c.is_control() || c == '\u{fffd}')
}

/// Rule 13: one file's ranges, in load order, filed apart by module.
fn file_by_module(ranges: &mut [Range]) {
    let mut module = vec![0; ranges.len()];
    let mut count = 0;
    let mut i = 0;
    while i < ranges.len() {
        let mut end = i + 1;
        while end < ranges.len() && {
            let (prev, next) = (&ranges[end - 1], &ranges[end]);
            prev.end > prev.start && next.start >= prev.end && next.start - prev.end < 64
        } {
            end += 1;
        }
        if end - i >= 2 {
            count += 1;
            module[i..end].fill(count);
        }
        i = end;
    }
    let mut modules_of: BTreeMap<String, std::collections::BTreeSet<u32>> = BTreeMap::new();
    for (r, &m) in ranges.iter().zip(&module) {
        if m > 0 && r.decl.0 == "<jit>" {
            modules_of.entry(r.name.clone()).or_default().insert(m);
        }
    }
    for (r, &m) in ranges.iter_mut().zip(&module) {
        if r.decl.0 == "<jit>" && modules_of.get(&r.name).is_some_and(|s| s.len() > 1) {
            r.decl.0 = format!("<jit module {m}>");
        }
    }
}

/// `0x` + 8 to 16 lowercase hex digits.
pub fn address(s: &str) -> Option<u64> {
    let hex = s.strip_prefix("0x")?;
    let ok = (8..=16).contains(&hex.len())
        && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    ok.then(|| u64::from_str_radix(hex, 16).ok())?
}

/// What a function of the input is in the output.
pub(super) struct Mapped<'a> {
    pub(super) name: String,
    /// The JIT range of its base, if it is JIT code (rule 1).
    pub(super) range: Option<&'a Range>,
    /// The address the pseudo-function was named after (JIT code only).
    pub(super) addr: Option<u64>,
}

impl Symbols {
    /// Rules 1 and 3 for a function name under `object`.
    pub(super) fn function(&self, object: &str, name: &str) -> Mapped<'_> {
        let mut parts = name.split('\'');
        let base = parts.next().unwrap_or_default();
        let range = (object == "???")
            .then(|| address(base).and_then(|a| self.at(a)))
            .flatten();
        let mut out = range.map_or_else(|| base.to_string(), |r| r.name.clone());
        // A continuation (named after an address inside its range) keeps
        // a level its range's start was named with and whose calls hold
        // those into that level's continuations, else the highest such
        // level below.
        let continuation = range.is_some_and(|r| !address(base).is_some_and(|a| self.enters(r, a)));
        let mut parts = parts.peekable();
        let level = parts
            .peek()
            .filter(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            .map(|p| p.parse::<u32>().unwrap());
        if let (true, Some(level), Some(r)) = (continuation, level, range) {
            parts.next();
            let (entered, held) = (self.entered.borrow(), self.held.borrow());
            let real = |l: u32| entered.contains(&(r.start, l)) && held.contains(&(r.start, l));
            let kept = (2..=level).rev().find(|&l| real(l));
            if let Some(l) = kept {
                out.push_str(&format!("'{l}"));
            }
        }
        for part in parts {
            out.push('\'');
            match address(part).and_then(|a| self.at(a)) {
                Some(r) => out.push_str(&r.name),
                None => out.push_str(part),
            }
        }
        let addr = range.and(address(base));
        Mapped {
            name: out,
            range,
            addr,
        }
    }
}

impl Symbols {
    /// Rule 4: a call to `callee` made at `place`, in the code of range
    /// `from`, is folded away.
    pub(super) fn folds(&self, from: Option<&Range>, place: &Place, callee: &Mapped) -> bool {
        self.enters_middle(callee) && !self.between_levels(from, place, callee)
    }

    /// A call to `callee` enters its range elsewhere than at an entry.
    pub(super) fn enters_middle(&self, callee: &Mapped) -> bool {
        callee
            .range
            .is_some_and(|to| !callee.addr.is_some_and(|a| self.enters(to, a)))
    }

    /// Rule 4's exception: a call from a range's code into its own middle
    /// written under another name (another recursion level) stays a
    /// call, and is none of rule 8's arcs.
    pub(super) fn between_levels(
        &self,
        from: Option<&Range>,
        place: &Place,
        callee: &Mapped,
    ) -> bool {
        let same = from
            .zip(callee.range)
            .is_some_and(|(h, to)| std::ptr::eq(h, to));
        same && self.enters_middle(callee) && place.3 != callee.name
    }

    /// Rule 4: a call to `addr` in `range` is a new activation.
    pub(super) fn enters(&self, range: &Range, addr: u64) -> bool {
        range.entered_at(addr) || self.entry_points.borrow().contains(&addr)
    }

    /// Rule 4: notes the entry points of `input` (see the rule).
    pub(super) fn note_entry_points(&self, input: &str) {
        self.entry_points.borrow_mut().clear();
        let columns = columns_of(input);
        let Some(instr) = columns.iter().position(|c| *c == "instr") else {
            return;
        };
        // Each call's site, target, and whether JIT code made it (a record
        // of a function that maps to a range).
        let calls: Vec<(u64, [String; 3], bool)> = expand::expand(input)
            .into_iter()
            .filter_map(|r| match r {
                Record::Transfer {
                    kind,
                    target,
                    pos,
                    at,
                    ..
                } if kind == "calls" => {
                    let jit = self.function(&at[0], &at[3]).range.is_some();
                    Some((pos[instr], target, jit))
                }
                _ => None,
            })
            .collect();
        let middle = |target: &[String; 3]| {
            let callee = self.function(&target[0], &target[2]);
            callee
                .range
                .zip(callee.addr)
                .filter(|(r, a)| !r.entered_at(*a))
        };
        let mut sites: BTreeMap<u64, std::collections::BTreeSet<u64>> = BTreeMap::new();
        for (site, target, _) in calls.iter().filter(|c| c.2) {
            if let (Some(holder), None) = (self.at(*site), middle(target)) {
                sites.entry(holder.start).or_default().insert(*site);
            }
        }
        let mut points = std::collections::BTreeSet::new();
        for (site, target, _) in &calls {
            let Some((to, addr)) = middle(target) else {
                continue;
            };
            let internal = self.at(*site).is_some_and(|h| std::ptr::eq(h, to));
            let below = sites
                .get(&to.start)
                .and_then(|s| s.range(..addr).next_back());
            let returns_here = below.is_some_and(|&s| addr - s <= 15);
            if !internal && !returns_here {
                points.insert(addr);
            }
        }
        *self.entry_points.borrow_mut() = points;
    }
}
