//! `callgrind-jit annotate`: sort the inputs, load the symbols, rewrite
//! each profile, report.

use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::callgrind::{self, RewriteError, Stats};
use crate::discover;
use crate::input::{self, Input, Kind, OUTPUT_MARK};
use crate::output::{self, Target};
use crate::symbols::{BiasMode, SymbolTable};

/// What to annotate.
#[derive(Clone, Debug)]
pub struct Request {
    /// Callgrind profiles, then jitdump or perf map files (told apart by
    /// content); without symbol files they are found from the profiles'
    /// pids.
    pub inputs: Vec<PathBuf>,
    /// The output file (one profile only; `-` for stdout). Default: each
    /// profile's `callgrind.jit.out…` name beside it.
    pub output: Option<PathBuf>,
    /// How to treat the bias V8 and LLVM add to line addresses.
    pub bias: BiasMode,
}

/// One profile rewritten.
#[derive(Debug)]
pub struct Rewritten {
    /// The profile read.
    pub input: PathBuf,
    /// Where it was written (`-` for stdout).
    pub output: PathBuf,
    /// What the rewrite did.
    pub stats: Stats,
}

/// What one `annotate` run did.
#[derive(Debug, Default)]
pub struct Report {
    /// Each profile rewritten, in the order given.
    pub profiles: Vec<Rewritten>,
    /// Profiles skipped because they were empty (thread runs leave one).
    pub empty: Vec<PathBuf>,
    /// The symbol table used.
    pub symbols: SymbolTable,
}

/// Runs `annotate`.
pub fn annotate(request: &Request) -> Result<Report> {
    let mut profiles = Vec::new();
    let mut sources = Vec::new();
    let mut report = Report::default();
    for path in &request.inputs {
        let input = Input::open(path)?;
        match input.kind {
            Kind::Profile => profiles.push(input),
            Kind::Empty => report.empty.push(input.path),
            Kind::Jitdump | Kind::PerfMap => sources.push(input),
        }
    }
    if profiles.is_empty() {
        match report.empty.first() {
            Some(empty) => bail!("'{}' is empty: nothing to annotate", empty.display()),
            None => bail!("no callgrind profile among the inputs"),
        }
    }
    if request.output.is_some() && profiles.len() > 1 {
        bail!(
            "-o names one output, but {} profiles were given",
            profiles.len()
        );
    }
    if sources.is_empty() {
        for path in discover_sources(&profiles)? {
            sources.push(Input::open(&path)?);
        }
    }
    report.symbols = load_symbols(&sources, request.bias)?;
    let protected: Vec<&Path> = profiles
        .iter()
        .chain(&sources)
        .map(|i| i.path.as_path())
        .collect();
    for profile in &profiles {
        let target = target_for(request.output.as_deref(), profile);
        let stats = match &target {
            Target::Stdout => {
                output::write_to_stdout(|file| rewrite_into(profile, file, &report.symbols))?
            }
            Target::File(out) => {
                output::check_target(out, &protected)?;
                output::write_atomically(out, profile.mode, |file| {
                    rewrite_into(profile, file, &report.symbols)
                })?
            }
        };
        let out = match target {
            Target::Stdout => PathBuf::from("-"),
            Target::File(out) => out,
        };
        report.profiles.push(Rewritten {
            input: profile.path.clone(),
            output: out,
            stats,
        });
    }
    Ok(report)
}

/// `-o` if given; stdin's profile goes to stdout; else the default name.
fn target_for(output: Option<&Path>, profile: &Input) -> Target {
    match output {
        Some(o) => Target::from_arg(o),
        None if profile.is_stdin() => Target::Stdout,
        None => Target::File(output::default_output(&profile.path)),
    }
}

/// No symbol file was given, and none was found where runtimes put them.
#[derive(Debug)]
pub struct NoSymbols {
    /// The profiles' pids (empty: no profile has a `pid:` line).
    pub pids: Vec<u32>,
    /// Every place looked at.
    pub looked: Vec<PathBuf>,
}

impl std::fmt::Display for NoSymbols {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.pids.is_empty() {
            return f.write_str(
                "nothing to name: the profile has no pid: line to find its jitdump or perf map by; \
                 give them after the profile",
            );
        }
        let pids: Vec<String> = self.pids.iter().map(u32::to_string).collect();
        let looked: Vec<String> = self
            .looked
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        write!(
            f,
            "nothing to name: no jitdump or perf map of pid {} (looked for {}); \
             give them after the profile",
            pids.join(", "),
            looked.join(", ")
        )
    }
}

impl std::error::Error for NoSymbols {}

fn discover_sources(profiles: &[Input]) -> Result<Vec<PathBuf>, NoSymbols> {
    let mut missing = NoSymbols {
        pids: Vec::new(),
        looked: Vec::new(),
    };
    let mut found: Vec<PathBuf> = Vec::new();
    for profile in profiles {
        let Some(pid) = input::profile_pid(&profile.file) else {
            continue;
        };
        let beside = if profile.is_stdin() {
            Path::new("-")
        } else {
            &profile.path
        };
        let discovery = discover::sources_for(pid, beside);
        for path in discovery.found {
            if !found.contains(&path) {
                found.push(path);
            }
        }
        if !missing.pids.contains(&pid) {
            missing.pids.push(pid);
        }
        missing.looked.extend(discovery.looked);
    }
    if found.is_empty() {
        return Err(missing);
    }
    Ok(found)
}

fn load_symbols(sources: &[Input], bias: BiasMode) -> Result<SymbolTable> {
    let mut table = SymbolTable::builder();
    for source in sources {
        let path = &source.path;
        let data = source
            .read_all()
            .with_context(|| format!("cannot read '{}'", path.display()))?;
        if source.kind == Kind::Jitdump {
            table
                .add_jitdump(path.clone(), &data, bias)
                .with_context(|| format!("cannot read jitdump '{}'", path.display()))?;
        } else {
            table.add_perf_map(path.clone(), &data);
        }
    }
    let table = table.build();
    Ok(table)
}

/// Rewrites `input` into `file`, then marks it as ours.
fn rewrite_into(input: &Input, mut file: &File, symbols: &SymbolTable) -> Result<Stats> {
    // The rewriter buffers its output itself (and writes copied lines
    // straight from its input buffers): the file takes no buffer of its own.
    let name = input.path.display();
    let read = |e| anyhow::Error::new(e).context(format!("cannot read '{name}'"));
    let result = callgrind::rewrite(input.rewound().map_err(read)?, file, symbols);
    let stats = result.map_err(|e| match e {
        RewriteError::Parse { line, message } => anyhow::anyhow!("{name}:{line}: {message}"),
        other => anyhow::anyhow!("cannot rewrite '{name}': {other}"),
    })?;
    // A blank line first, in case the input lacks its last newline.
    file.seek(SeekFrom::End(0))?;
    file.write_all(format!("\n{OUTPUT_MARK}").as_bytes())?;
    Ok(stats)
}
