//! `callgrind-jit annotate`: sort the inputs, group the profiles by
//! process, name each process's profiles from its own symbol files
//! (`provenance`), rewrite them, report.

mod discover;
mod epochs;
pub mod logs;
mod no_symbols;
mod outputs;
mod provenance;
mod runs;
mod touched;

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::{bail, Context, Result};

use crate::callgrind::Stats;
use crate::input::{self, Input, Kind};
use crate::symbols::guest::GuestSymbols;
use crate::symbols::mapped::MappedCode;
use crate::symbols::{BiasMode, SymbolTable, SymbolTableBuilder, Touched};
use no_symbols::no_symbols;
pub use no_symbols::NoSymbols;
use outputs::{merge_parts, merge_target, rewrite_one};
use provenance::Provenance;
pub(crate) use runs::Run;
use runs::{by_run, discover, discover_for, folder_of, Group};

/// What to annotate.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// Callgrind profiles, then jitdump or perf map files (told apart by
    /// content); without symbol files each process's are found from its
    /// profiles' `pid:` line.
    pub inputs: Vec<PathBuf>,
    /// The output file (one profile only; `-` for stdout). Default: each
    /// profile's `callgrind.jit.out…` name beside it.
    pub output: Option<PathBuf>,
    /// How to treat the bias V8 and LLVM add to line addresses.
    pub bias: BiasMode,
    /// Annotate a profile that ends early (what is there), not refuse it.
    pub allow_truncated: bool,
    /// Use every given symbol file for every profile, whatever process it
    /// names.
    pub any_pid: bool,
    /// Use symbol files found of any owner, even writable by anyone.
    pub any_owner: bool,
    /// Write no code image beside the outputs (`--no-code`).
    pub no_code: bool,
    /// Keep mangled JIT names as the symbol files give them
    /// (`--demangle=no`).
    pub raw_names: bool,
    /// Also write each process's annotated parts joined into one profile
    /// (`--merge`; `output` then names that file).
    pub merge: bool,
    /// When the run started, if known (`record`): a symbol file last
    /// written before cannot be the run's.
    pub started: Option<SystemTime>,
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
    /// The code image written beside the output, and how many functions
    /// it holds.
    pub code_image: Option<(PathBuf, usize)>,
    /// Which symbols named it, where jit-client ended epochs.
    pub epoch: Epoch,
}

/// Which symbols named a profile of a run with epochs (address reuse:
/// jit-client had callgrind dump before loading code over code).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Epoch {
    /// No epochs: the code of the whole run.
    #[default]
    None,
    /// The code live in the profile's own epoch.
    Own,
    /// Several epochs in one file (`--combine-dumps`): the code of the
    /// whole run, as if no epoch had ended.
    Combined,
}

/// What `annotate` did for one process.
#[derive(Debug, Default)]
pub struct Report {
    /// The process's pid (`None`: its profiles have no `pid:` line).
    pub pid: Option<u32>,
    /// The folder of its profiles, where another run given with them
    /// had the same pid (a pid names a run only with its folder then).
    pub folder: Option<PathBuf>,
    /// Each of its profiles rewritten, in the order given.
    pub profiles: Vec<Rewritten>,
    /// Profiles skipped because they were empty (thread runs leave one).
    pub empty: Vec<PathBuf>,
    /// The symbol table built from the process's own symbol files.
    pub symbols: SymbolTable,
    /// Where its parts were written joined (`--merge`).
    pub merged: Option<PathBuf>,
    /// Each symbol file considered, and why it was used or set aside.
    pub provenance: Vec<(PathBuf, String)>,
}

/// Runs `annotate`: one report per process, in the order its first
/// profile was given.
pub(crate) fn annotate(request: &Request) -> Result<Vec<Report>> {
    match annotate_any(request)? {
        Annotated::Profiles(reports) => Ok(reports),
        Annotated::Logs(_) => bail!("no callgrind profile among the inputs"),
    }
}

/// What `annotate` did: a report per run of the profiles, or each
/// Valgrind log named.
pub enum Annotated {
    /// Callgrind profiles, a report per run.
    Profiles(Vec<Report>),
    /// Valgrind tools' text logs.
    Logs(Vec<logs::Named>),
}

/// The inputs, told apart by content.
#[derive(Default)]
struct Inputs {
    profiles: Vec<Input>,
    sources: Vec<Input>,
    logs: Vec<Input>,
    empty: Vec<PathBuf>,
}

impl Inputs {
    fn open(paths: &[PathBuf]) -> Result<Inputs> {
        let mut inputs = Inputs::default();
        let mut seen = std::collections::HashSet::new();
        for path in paths {
            let input = Input::open(path)?;
            // A file named twice (a glob and its own name, `./` before
            // it) is read once: twice would count its costs twice.
            if !seen.insert(identity(&input)?) {
                continue;
            }
            match input.kind {
                Kind::Profile => inputs.profiles.push(input),
                Kind::Empty if named_as_symbols(path) => bail!(
                    "'{}' is empty: its JIT wrote no functions there, so it names nothing",
                    path.display()
                ),
                Kind::Empty => inputs.empty.push(input.path),
                Kind::Jitdump | Kind::PerfMap => inputs.sources.push(input),
                Kind::ToolLog => inputs.logs.push(input),
            }
        }
        Ok(inputs)
    }
}

/// The file an input is, whatever it was named (device and inode).
fn identity(input: &Input) -> Result<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let meta = input
        .file
        .metadata()
        .with_context(|| format!("cannot read '{}'", input.path.display()))?;
    Ok((meta.dev(), meta.ino()))
}

/// A name runtimes give symbol files (`perf-PID.map`, `jit-PID.dump`),
/// never a profile's: an empty file so named was meant as one.
fn named_as_symbols(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("map" | "dump")
    )
}

/// Runs `annotate` on profiles or on Valgrind logs, whichever were given.
pub fn annotate_any(request: &Request) -> Result<Annotated> {
    let inputs = Inputs::open(&request.inputs)?;
    if inputs.logs.is_empty() {
        return annotate_profiles(request, inputs).map(Annotated::Profiles);
    }
    if !inputs.profiles.is_empty() {
        bail!("callgrind profiles and Valgrind logs were given together: annotate them apart");
    }
    logs::annotate(request, inputs.logs, inputs.sources).map(Annotated::Logs)
}

/// Annotates each run's profiles with its symbol files (those given, or
/// found where runtimes put them).
fn annotate_profiles(request: &Request, inputs: Inputs) -> Result<Vec<Report>> {
    let Inputs {
        profiles,
        sources,
        empty,
        ..
    } = inputs;
    check_profiles(request, &profiles, &empty)?;
    let mut protected: Vec<PathBuf> = profiles
        .iter()
        .chain(&sources)
        .map(|i| i.path.clone())
        .collect();
    let groups = by_run(profiles);
    let runs: Vec<Run> = groups.iter().map(|g| g.run.clone()).collect();
    let pids: Vec<Option<u32>> = runs.iter().map(|r| r.pid).collect();
    let provenances = match sources.is_empty() {
        true => discovered(&groups, &pids, request, &mut protected)?,
        false => provenance::given(&runs, sources, request.any_pid)?,
    };
    if request.merge && request.output.is_some() && groups.len() > 1 {
        bail!(
            "--merge -o names one file, but the profiles are of {} runs: \
             leave out -o to join each run's parts beside them",
            groups.len()
        );
    }
    let protected: Vec<&Path> = protected.iter().map(PathBuf::as_path).collect();
    let shared_pid = |pid: Option<u32>| pids.iter().filter(|&&p| p == pid).count() > 1;
    let mut reports = Vec::new();
    for (group, provenance) in groups.into_iter().zip(provenances) {
        let shared = shared_pid(group.run.pid);
        reports.push(annotate_run(
            request, group, provenance, &protected, shared,
        )?);
    }
    if let Some(first) = reports.first_mut() {
        first.empty = empty;
    }
    Ok(reports)
}

/// Fails where there is no profile to annotate, or more than `-o` can
/// name.
fn check_profiles(request: &Request, profiles: &[Input], empty: &[PathBuf]) -> Result<()> {
    if profiles.is_empty() {
        match empty.first() {
            Some(empty) => bail!("'{}' is empty: nothing to annotate", empty.display()),
            None => bail!("no callgrind profile among the inputs"),
        }
    }
    if request.output.is_some() && profiles.len() > 1 && !request.merge {
        bail!(
            "-o names one output, but {} profiles were given",
            profiles.len()
        );
    }
    Ok(())
}

/// The symbol files found for each run (of `pids`), added to the files no
/// output may replace (`protected`); an error where none was found for
/// any.
fn discovered(
    groups: &[Group],
    pids: &[Option<u32>],
    request: &Request,
    protected: &mut Vec<PathBuf>,
) -> Result<Vec<Provenance>> {
    let found: Vec<Provenance> = groups.iter().map(|g| discover_for(g, request)).collect();
    if found.iter().all(|p| p.used.is_empty()) {
        return Err(no_symbols(pids, &found).into());
    }
    let used = found.iter().flat_map(|p| p.used.iter());
    protected.extend(used.map(|i| i.path.clone()));
    Ok(found)
}

/// One run's profiles annotated with its symbol files (each part with the
/// code of its epoch, where the run has epochs), and merged where asked;
/// `shared`: another run of the inputs has the same pid.
fn annotate_run(
    request: &Request,
    Group { run, profiles }: Group,
    provenance: Provenance,
    protected: &[&Path],
    shared: bool,
) -> Result<Report> {
    let cmd = input::profile_command(&profiles[0].file);
    let ends = epochs::ends(&profiles);
    let has_epochs = ends.iter().any(Option::is_some);
    let named = touched::ahead(&profiles, &provenance.used, has_epochs, cmd.as_deref());
    let indexed = index_symbols(&provenance.used, request, named)?;
    // Kept for the epochs' tables where the run has any.
    let (whole, indexed) = match has_epochs {
        true => (
            indexed.fork().context("cannot read the symbol files")?,
            Some(indexed),
        ),
        false => (indexed, None),
    };
    let symbols = table_of(whole, Vec::new(), cmd.as_deref());
    let pid = run.pid;
    let mut report = Report {
        pid,
        folder: run.folder.filter(|_| shared),
        symbols,
        provenance: provenance.notes,
        ..Report::default()
    };
    let merged = request
        .merge
        .then(|| merge_target(request, pid, &profiles, protected))
        .transpose()?;
    for (profile, end) in profiles.iter().zip(ends) {
        let rewritten = match (end, &indexed) {
            (Some(end), Some(indexed)) => {
                let whole = &report.symbols;
                epochs::rewrite(request, profile, end, whole, indexed, protected)?
            }
            _ => rewrite_one(request, profile, &report.symbols, protected)?,
        };
        report.profiles.push(rewritten);
    }
    if let Some(target) = merged {
        // As private as the most private part.
        let mode = profiles.iter().fold(0o666, |m, p| m & p.mode);
        report.merged = Some(merge_parts(&report, target, mode)?);
    }
    Ok(report)
}

/// Indexes every symbol file (each read once, whatever its size; a
/// range's names are read again only if a profile touches it), leaving
/// out the ranges in the run's `program`'s own code.
fn load_symbols(sources: &[Input], request: &Request, cmd: Option<&str>) -> Result<SymbolTable> {
    Ok(table_of(
        index_symbols(sources, request, None)?,
        Vec::new(),
        cmd,
    ))
}

/// Every symbol file indexed, once: the tables of a run's epochs are all
/// made from it ([`table_of`]); perf maps keep what `touched` keeps.
fn index_symbols(
    sources: &[Input],
    request: &Request,
    touched: Option<Touched>,
) -> Result<SymbolTableBuilder> {
    let bias = request.bias;
    let mut table = SymbolTable::builder()
        .raw_names(request.raw_names)
        .touched(touched);
    for source in sources {
        let path = &source.path;
        let file = source
            .file
            .try_clone()
            .with_context(|| format!("cannot read '{}'", path.display()))?;
        if source.kind == Kind::Jitdump {
            table
                .add_jitdump_file(path.clone(), file, bias)
                .with_context(|| format!("cannot read jitdump '{}'", path.display()))?;
        } else {
            table
                .add_perf_map_file(path.clone(), file)
                .with_context(|| format!("cannot read '{}'", path.display()))?;
        }
    }
    Ok(table)
}

/// The table of the symbol files `indexed`, without the ranges in the
/// run's program's own code (named by `cmd`); with `epoch_end` (see
/// [`input::epoch_end`]), only the code loaded before those places.
fn table_of(
    indexed: SymbolTableBuilder,
    epoch_end: Vec<(String, u64)>,
    cmd: Option<&str>,
) -> SymbolTable {
    indexed
        .epoch_ending_at(epoch_end)
        .outside(cmd.and_then(MappedCode::of_command))
        .guest(cmd.and_then(GuestSymbols::of_command))
        .build()
}
