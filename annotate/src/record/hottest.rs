//! The hottest JIT functions record prints after the run: by inclusive
//! cost as their callers recorded it, at most what they ran (read back
//! from the outputs: `inclusive`), then self cost.

use std::collections::BTreeMap;
use std::path::Path;

use super::inclusive;
use crate::command::{Report, Rewritten};

/// `path` relative to `cwd` (the current folder) when it lies below it,
/// so the list reads the same on every machine.
pub fn relative<'p>(path: &'p Path, cwd: Option<&Path>) -> &'p Path {
    cwd.and_then(|cwd| path.strip_prefix(cwd).ok())
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(path)
}

/// The hottest JIT functions as `inclusive%  self%  name  (file:line)`
/// lines, by inclusive cost as callers recorded it, at most what it ran
/// (read back from the outputs; self cost where they cannot be read),
/// then self cost; by self cost, with a note, where an inclusive cost
/// passes the total.
pub fn top_list(report: &Report, top: usize) -> String {
    let table = &report.symbols;
    let cwd = std::env::current_dir().ok();
    let inclusive = inclusive_of(report);
    let mut total = 0;
    let mut by_function: BTreeMap<(String, String), (u64, u64)> = BTreeMap::new();
    for Rewritten { stats, .. } in &report.profiles {
        total += stats.total;
        for (&symbol, &cost) in &stats.jit_cost {
            let s = table.symbol(symbol);
            let file = s.file.map(|f| table.file(f));
            let file = file.as_deref().unwrap_or("<jit>");
            let incl = inclusive
                .get(&(file.to_string(), s.name.clone()))
                .copied()
                .unwrap_or(0);
            let file = relative(Path::new(file), cwd.as_deref())
                .display()
                .to_string();
            let location = if s.line > 0 {
                format!("{file}:{}", s.line)
            } else {
                file.to_string()
            };
            let entry = by_function.entry((s.name.clone(), location)).or_default();
            entry.0 += cost;
            entry.1 = entry.1.max(incl);
        }
    }
    let mut rows: Vec<_> = by_function
        .into_iter()
        .map(|(key, (own, incl))| (key, own, incl.max(own)))
        .collect();
    rows.sort_by(|a, b| (b.2, b.1).cmp(&(a.2, a.1)).then_with(|| a.0.cmp(&b.0)));
    // Inclusive costs past the total mean nothing: listed by self cost.
    let most = rows.first().map_or(0, |row| row.2);
    let overrun = most > total;
    if overrun {
        rows.sort_by(|a, b| (b.1, b.2).cmp(&(a.1, a.2)).then_with(|| a.0.cmp(&b.0)));
    }
    let share = |cost: u64| match total {
        0 => 0.0,
        t => cost as f64 * 100.0 / t as f64,
    };
    let mut out = String::new();
    for ((name, location), own, incl) in rows.into_iter().take(top) {
        out.push_str(&format!(
            "{:6.2}%  {:6.2}%  {name}  ({location})\n",
            share(incl),
            share(own)
        ));
    }
    if overrun {
        out.push_str(&overrun_note(share(most)));
    }
    out
}

/// Said under a list whose inclusive shares pass 100% (then sorted by
/// self cost): impossible for a call tree, so callgrind's calls and
/// returns did not nest (BEAM's scheduler resumes processes inside calls
/// that never return).
fn overrun_note(most: f64) -> String {
    format!(
        "  (inclusive shares above 100%, up to {most:.2}%: this runtime's calls and returns \
         do not nest as callgrind assumes, so its inclusive costs count some work many \
         times: listed by self cost)\n"
    )
}

/// Inclusive cost by JIT function (file, name: its first activation's;
/// deeper ones, `'2`, are inside it), summed over the process's outputs.
fn inclusive_of(report: &Report) -> std::collections::HashMap<(String, String), u64> {
    let mut objects: std::collections::HashSet<String> = report
        .symbols
        .sources()
        .iter()
        .map(|s| s.object.clone())
        .collect();
    for Rewritten { code_image, .. } in &report.profiles {
        if let Some((image, _)) = code_image {
            let image = std::path::absolute(image).unwrap_or_else(|_| image.clone());
            objects.insert(image.display().to_string());
        }
    }
    let outputs: Vec<&Path> = report
        .profiles
        .iter()
        .map(|p| p.output.as_path())
        .filter(|p| p.as_os_str() != "-")
        .collect();
    let costs = inclusive::of_profiles(&outputs, &objects).unwrap_or_default();
    let mut by_function = std::collections::HashMap::new();
    for ((_, file, name), costs) in costs {
        *by_function.entry((file, name)).or_default() += costs.inclusive();
    }
    by_function
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::callgrind::Stats;
    use crate::command::Epoch;
    use crate::symbols::SymbolTable;

    /// A report of `total` Ir in which `a` (declared at /app/a.js:3)
    /// costs 40 itself and 500 as its callers recorded it (300 in one
    /// profile, 200 in another, each what it ran there with its call to
    /// `helper`), and `b` (no file) 30 itself and is called by nobody; a
    /// third profile went to standard output.
    fn report_of(dir: &Path, total: u64) -> Report {
        let mut builder = SymbolTable::builder();
        let map = b"1000 10 JS:*a /app/a.js:3:1\n2000 10 b\n";
        builder.add_perf_map("perf-1.map".into(), map);
        let symbols = builder.build();
        let object = &symbols.sources()[0].object;
        let part = |n: u32, called: u64| {
            let output = dir.join(format!("callgrind.jit.out.1.{n}"));
            let profile = format!(
                "events: Ir\nob=(2) /bin/main\nfl=(2) main.c\nfn=(2) main\n0x1 10\n\
                 cob=(1) {object}\ncfi=(1) /app/a.js\ncfn=(1) a\ncalls=1 0x1000\n0x2 {called}\n\
                 ob=(1)\nfl=(1)\nfn=(1)\n0x1000 20\n\
                 cob=(2)\ncfi=(2)\ncfn=(3) helper\ncalls=1 0x3\n0x1001 {}\n",
                called.saturating_sub(20)
            );
            std::fs::write(&output, profile).unwrap();
            Rewritten {
                input: dir.join(format!("callgrind.out.1.{n}")),
                output,
                stats: Stats::default(),
                code_image: None,
                epoch: Epoch::None,
            }
        };
        let (mut first, second) = (part(1, 300), part(2, 200));
        let ids: Vec<_> = symbols.ids().collect();
        first.stats = Stats {
            total,
            jit_cost: [(ids[0], 40), (ids[1], 30)].into(),
            ..Stats::default()
        };
        let piped = Rewritten {
            output: "-".into(),
            ..part(3, 0)
        };
        Report {
            profiles: vec![first, second, piped],
            symbols,
            ..Report::default()
        }
    }

    #[test]
    fn the_hottest_are_listed_by_what_their_callers_recorded_then_self_cost() {
        let dir = tempfile::tempdir().unwrap();
        let report = report_of(dir.path(), 1000);
        assert_eq!(
            top_list(&report, 5),
            " 50.00%    4.00%  a  (/app/a.js:3)\n  3.00%    3.00%  b  (<jit>)\n"
        );
        assert_eq!(top_list(&report, 1), " 50.00%    4.00%  a  (/app/a.js:3)\n");
        // All of the total is no overrun.
        let whole = report_of(dir.path(), 500);
        assert_eq!(top_list(&whole, 1), "100.00%    8.00%  a  (/app/a.js:3)\n");
    }

    #[test]
    fn inclusive_shares_past_the_total_are_listed_by_self_cost_with_a_note() {
        let dir = tempfile::tempdir().unwrap();
        let report = report_of(dir.path(), 100);
        let list = top_list(&report, 5);
        let (rows, note) = list.split_at(list.find("  (inclusive").unwrap());
        assert_eq!(
            rows,
            "500.00%   40.00%  a  (/app/a.js:3)\n 30.00%   30.00%  b  (<jit>)\n"
        );
        assert_eq!(note, overrun_note(500.0));
        assert!(note.contains("up to 500.00%"));
    }

    #[test]
    fn paths_below_the_current_folder_are_shown_from_it() {
        let cwd = Path::new("/work/run");
        assert_eq!(
            relative(Path::new("/work/run/a.js"), Some(cwd)),
            Path::new("a.js")
        );
        assert_eq!(
            relative(Path::new("/elsewhere/a.js"), Some(cwd)),
            Path::new("/elsewhere/a.js")
        );
        assert_eq!(relative(cwd, Some(cwd)), cwd);
        assert_eq!(
            relative(Path::new("/work/run/a.js"), None),
            Path::new("/work/run/a.js")
        );
    }
}
