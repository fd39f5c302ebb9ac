//! The summary printed on stderr after `annotate`.

use std::fmt::Write as _;

use crate::callgrind::{Ending, ReadBack, Reading, Stats};
use crate::command::{Epoch, Report, Rewritten};
use crate::symbols::SymbolTable;
use moved::{calls, reentry};

/// How many unnamed addresses and ambiguous functions to list.
const TOP: usize = 5;

impl Report {
    /// The summary of a whole run, as the command prints it.
    pub fn summary(&self) -> String {
        render(self)
    }
}

/// Renders the summary of a whole run.
fn render(report: &Report) -> String {
    let mut s = String::new();
    let table = &report.symbols;
    sources(&mut s, report);
    for path in &report.empty {
        let _ = writeln!(
            s,
            "skipped empty profile '{}' (thread runs leave one)",
            path.display()
        );
    }
    let mut all = Stats::default();
    for Rewritten {
        input,
        output: out,
        stats,
        code_image,
        ..
    } in &report.profiles
    {
        let out = if out.as_os_str() == "-" {
            "standard output".to_string()
        } else {
            format!("'{}'", out.display())
        };
        let _ = writeln!(
            s,
            "wrote {out} (from '{}'{})",
            input.display(),
            reads(stats)
        );
        if let Some((image, functions)) = code_image {
            let _ = writeln!(
                s,
                "wrote '{}' (machine code of {functions} JIT functions, for KCachegrind's Machine Code tab and objdump)",
                image.display()
            );
        }
        all.merge(stats);
    }
    if let Some(merged) = &report.merged {
        let merged = match merged.as_os_str() == "-" {
            true => "standard output".to_string(),
            false => format!("'{}'", merged.display()),
        };
        let _ = writeln!(
            s,
            "wrote {merged} ({} profiles joined into one part, for callgrind_annotate)",
            report.profiles.len()
        );
    }
    costs(&mut s, table, &all);
    problems(&mut s, table, &all);
    epochs(&mut s, report);
    s
}

/// How often a profile was read, where more than once, and why; and what
/// was read again to place positions.
fn reads(stats: &Stats) -> String {
    let mut s = String::new();
    if let [first, again @ ..] = &stats.reads[..] {
        if !again.is_empty() {
            let first = match first {
                Reading::First => String::new(),
                r => format!("first for {}, ", r.why()),
            };
            let again: Vec<&str> = again.iter().map(|r| r.why()).collect();
            let times = stats.reads.len();
            let _ = write!(
                s,
                "; read {times} times: {first}again for {}",
                again.join(", then ")
            );
        }
    }
    let ReadBack { times, bytes } = stats.read_back;
    if times > 0 {
        let _ = write!(
            s,
            "; {times} relative positions placed by reading {bytes} bytes again (not callgrind's layout)"
        );
    }
    s
}

/// Which symbol files name the process's profiles, and why; and what the
/// +0x40 bias decision was where it matters.
fn sources(s: &mut String, report: &Report) {
    let table = &report.symbols;
    let of = report
        .pid
        .map(|p| format!(" of pid {p}"))
        .unwrap_or_default();
    let of = match &report.folder {
        Some(folder) => format!("{of} (the run in '{}')", folder.display()),
        None => of,
    };
    if table.sources().is_empty() {
        let _ = writeln!(
            s,
            "no jitdump or perf map{of} given or found: nothing to name"
        );
    }
    for (path, why) in &report.provenance {
        let used = table
            .sources()
            .iter()
            .position(|source| source.path == *path);
        let twins = |i| {
            let report = &table.report.map_twins;
            let n = report.iter().find(|(s, _)| *s == i).map_or(0, |t| t.1);
            match n {
                0 => String::new(),
                n => format!(", and {n} the jitdump gives too, named from it"),
            }
        };
        let kept = |i| match table.left_out_unnamed(i) {
            0 => String::new(),
            n => format!(
                ", {} of them kept: those on pages the profiles name",
                table.ranges_of(i) - n
            ),
        };
        let ranges = used
            .map(|i| {
                format!(
                    "{} code ranges{}{}; ",
                    table.ranges_of(i),
                    kept(i),
                    twins(i)
                )
            })
            .unwrap_or_default();
        let _ = writeln!(s, "symbols{of}: '{}' ({ranges}{why})", path.display());
    }
    for (path, decision) in &table.report.bias {
        let writer_has_it = decision.writer == crate::symbols::Writer::V8;
        if decision.shift != 0 || writer_has_it {
            let _ = writeln!(
                s,
                "line addresses of '{}': {} bias removed from {} DEBUG_INFO records ({})",
                path.display(),
                format_args!("{:#x}", decision.shift),
                decision.records,
                decision.reason
            );
        }
    }
}

fn costs(s: &mut String, table: &SymbolTable, all: &Stats) {
    let event = all.events.first().map_or("cost", String::as_str);
    if all.ending != Ending::Complete {
        let _ = writeln!(
            s,
            "warning: a profile ends early (--allow-truncated): what is there was annotated; \
             the costs after the cut are missing from the figures below"
        );
    }
    let names: std::collections::BTreeSet<_> = all
        .jit_cost
        .keys()
        .map(|&k| &table.symbol(k).name)
        .collect();
    let _ = writeln!(
        s,
        "JIT functions named: {} ({} code ranges), holding {} of {event} ({} of {})",
        names.len(),
        all.jit_cost.len(),
        percent(all.jit_total(), all.total),
        group(all.jit_total()),
        group(all.total)
    );
    if !all.live_images.is_empty() {
        let _ = writeln!(
            s,
            "named by Valgrind itself (live mode): the code in {} live-mode images, nothing left to name there",
            all.live_images.len()
        );
    }
    let unnamed = all.unnamed_total();
    let _ = writeln!(
        s,
        "still address-named (under ??? or a live-mode image): {} of {event}",
        percent(unnamed, all.total)
    );
    // Only addresses worth a look: at least 0.01% of the total.
    let worth = |cost: u64| cost.saturating_mul(10_000) >= all.total.max(1);
    let mut top: Vec<_> = all.unnamed_cost.iter().filter(|(_, &c)| worth(c)).collect();
    top.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    for (addr, cost) in top.into_iter().take(TOP) {
        let _ = writeln!(
            s,
            "  {addr:#018x}  {} ({})",
            group(*cost),
            percent(*cost, all.total)
        );
    }
    if all.has_line && !all.has_instr && !all.jit_cost.is_empty() {
        let _ = writeln!(
            s,
            "hint: the profile has no instruction addresses: JIT functions get no per-line costs, and JIT code entered by a jump stays with the function that jumped ({} of {} is JIT code's); record with --dump-instr=yes",
            group(all.jit_total()),
            event,
        );
    }
}

/// How profiles of a run with epochs were named.
fn epochs(s: &mut String, report: &Report) {
    let count = |which| report.profiles.iter().filter(|r| r.epoch == which).count();
    let (own_epochs, combined_epochs) = (count(Epoch::Own), count(Epoch::Combined));
    if combined_epochs > 0 {
        let _ = writeln!(
            s,
            "warning: {} profiles hold several epochs in one file (--combine-dumps=yes): named as if no epoch had ended; record without --combine-dumps to name each epoch with its own code",
            combined_epochs
        );
    }
    if own_epochs > 0 {
        let _ = writeln!(
            s,
            "address reuse: {} profile parts named each with the code live in its epoch (jit-client had callgrind dump before loading code over code)",
            own_epochs
        );
    }
}

/// What the rewrite moved, folded or could not place, and what was wrong
/// with the symbol files.
fn problems(s: &mut String, table: &SymbolTable, all: &Stats) {
    let event = all.events.first().map_or("cost", String::as_str);
    address_reuse(s, table, all, event);
    calls(s, all, event);
    reentry(s, all, event);
    if all.unknown_lines > 0 {
        let _ = writeln!(
            s,
            "warning: {} lines with unknown keys passed through unchanged",
            all.unknown_lines
        );
    }
    symbol_files(s, table);
}

/// The functions charged with the cost of others that lay at their
/// addresses (address reuse without epochs).
fn address_reuse(s: &mut String, table: &SymbolTable, all: &Stats, event: &str) {
    if !all.ambiguous.is_empty() {
        let _ = writeln!(
            s,
            "warning: address reuse without epochs (the runtime loaded code over code and no dump split the profile): {} functions charged with the cost of every function that lay at their addresses:",
            all.ambiguous.len(),
        );
        for &id in all.ambiguous.iter().take(TOP) {
            let others: Vec<String> = table
                .sharing_addresses(id)
                .iter()
                .take(TOP)
                .map(|&o| format!("'{}'", table.symbol(o).name))
                .collect();
            let cost = all.jit_cost.get(&id).copied().unwrap_or(0);
            let _ = writeln!(
                s,
                "  '{}' (loaded last) is charged for {} too: {} of {} at stake",
                table.symbol(id).name,
                others.join(", "),
                group(cost),
                event,
            );
        }
    }
}

/// What building the symbol table left out or found wrong.
fn symbol_files(s: &mut String, table: &SymbolTable) {
    if let Some((program, n)) = &table.report.in_program {
        let _ = writeln!(
            s,
            "{n} ranges of the symbol files lie in the code of '{}' itself (a runtime's compiled-in code, such as V8's embedded builtins): left to that file's own names",
            program.display()
        );
    }
    for (path, what, n) in &table.report.problems {
        let times = if *n > 1 {
            format!(" ({n} times)")
        } else {
            String::new()
        };
        let _ = writeln!(s, "warning: '{}': {what}{times}", path.display());
    }
    if table.report.orphan_debug_info > 0 {
        let _ = writeln!(
            s,
            "warning: DEBUG_INFO records matching no CODE_LOAD: {}",
            table.report.orphan_debug_info
        );
    }
}

/// `1,200 of the 4,000 of Ir`.
pub(super) fn share_of(part: u64, whole: u64, event: &str) -> String {
    format!("{} of the {} of {event}", group(part), group(whole))
}

/// `part` as a percentage of `total`, two decimals.
pub(super) fn percent(part: u64, total: u64) -> String {
    if total == 0 {
        return "0.00%".into();
    }
    format!("{:.2}%", part as f64 * 100.0 / total as f64)
}

/// 1234567 -> "1,234,567".
pub fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

mod moved;
#[cfg(test)]
mod tests;
