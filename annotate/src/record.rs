//! `callgrind-jit record`: run a program under callgrind with JIT symbols
//! switched on, annotate what it left, and list the hottest JIT functions.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::cli::{AnnotateArgs, Bias, RecordArgs};
use crate::command::{annotate, Report};
use crate::summary::group;

/// What `record` did: the program's exit code and the annotation.
pub struct Recording {
    /// The program's exit code (valgrind passes it through).
    pub exit_code: i32,
    /// The annotation of the profiles it left.
    pub report: Report,
}

/// Runs `record`.
pub fn record(args: &RecordArgs) -> Result<Recording> {
    let (valgrind_options, command) = split_args(&args.args)?;
    let out_dir = args.out_dir.clone().unwrap_or_else(|| PathBuf::from("."));
    std::fs::create_dir_all(&out_dir)
        .with_context(|| format!("cannot create '{}'", out_dir.display()))?;
    let out_dir = out_dir
        .canonicalize()
        .with_context(|| format!("cannot use '{}'", out_dir.display()))?;
    let mut cmd = valgrind_command(&out_dir, valgrind_options, command);
    let mut child = cmd.spawn().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            anyhow::anyhow!("valgrind not found: install it (Debian: apt-get install valgrind)")
        }
        _ => anyhow::anyhow!("cannot start valgrind: {e}"),
    })?;
    let pid = child.id();
    let status = child.wait().context("waiting for valgrind")?;
    let exit_code = status.code().unwrap_or(128 + 9);
    let profiles = profiles_of(&out_dir, pid)?;
    if profiles.is_empty() {
        bail!(
            "valgrind left no profile callgrind.out.{pid} in '{}' (exit code {exit_code})",
            out_dir.display()
        );
    }
    let annotate_args = AnnotateArgs {
        inputs: profiles,
        output: None,
        bias: Bias::Detect,
        quiet: false,
    };
    let report = annotate(&annotate_args)?;
    Ok(Recording { exit_code, report })
}

/// `[valgrind options] -- cmd args`; without `--` everything is the command.
fn split_args(args: &[String]) -> Result<(&[String], &[String])> {
    let (options, command) = match args.iter().position(|a| a == "--") {
        Some(i) => (&args[..i], &args[i + 1..]),
        None => (&args[..0], args),
    };
    if command.is_empty() {
        bail!("no command to run: callgrind-jit record [VALGRIND_OPTION...] -- CMD [ARG...]");
    }
    if let Some(bad) = options.iter().find(|o| !o.starts_with('-')) {
        bail!("'{bad}' before '--' is not a valgrind option");
    }
    Ok((options, command))
}

fn valgrind_command(out_dir: &Path, options: &[String], command: &[String]) -> Command {
    let mut cmd = Command::new("valgrind");
    let mut out_file = OsString::from("--callgrind-out-file=");
    out_file.push(out_dir.join("callgrind.out.%p"));
    cmd.args(["--tool=callgrind", "--dump-instr=yes"])
        .arg(out_file)
        .args(options)
        .args(command);
    cmd.env("CALLGRIND_JIT", "1").env("MVM_JIT_PERF_MAP", "1");
    if std::env::var_os("JITDUMPDIR").is_none() {
        cmd.env("JITDUMPDIR", out_dir);
    }
    cmd
}

/// `callgrind.out.PID` and its parts (`.N`) and thread files (`-TID`).
fn profiles_of(dir: &Path, pid: u32) -> Result<Vec<PathBuf>> {
    let base = format!("callgrind.out.{pid}");
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot list '{}'", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            name == base
                || name
                    .strip_prefix(&base)
                    .is_some_and(|rest| rest.starts_with(['.', '-']))
        })
        .collect();
    found.sort();
    Ok(found)
}

/// The hottest JIT functions as `share  name  file:line` lines.
pub fn top_list(report: &Report, top: usize) -> String {
    let table = &report.symbols;
    let mut total = 0;
    let mut by_function: BTreeMap<(String, String), u64> = BTreeMap::new();
    for (_, _, stats) in &report.profiles {
        total += stats.total;
        for (&symbol, &cost) in &stats.jit_cost {
            let s = table.symbol(symbol);
            let file = s.file.map_or("<jit>", |f| table.file(f));
            let location = if s.line > 0 {
                format!("{file}:{}", s.line)
            } else {
                file.to_string()
            };
            *by_function.entry((s.name.clone(), location)).or_default() += cost;
        }
    }
    let mut rows: Vec<_> = by_function.into_iter().collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mut out = String::new();
    for ((name, location), cost) in rows.into_iter().take(top) {
        let share = if total > 0 {
            cost as f64 * 100.0 / total as f64
        } else {
            0.0
        };
        out.push_str(&format!(
            "{share:6.2}%  {:>14}  {name}  ({location})\n",
            group(cost)
        ));
    }
    out
}
