//! `callgrind-jit annotate`: sort the inputs, group the profiles by
//! process, name each process's profiles from its own symbol files
//! (`provenance`), rewrite them, report.

mod discover;
mod epochs;
pub mod logs;
mod provenance;

use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::{bail, Context, Result};

use crate::callgrind::{self, Ending, RewriteError, Stats};
use crate::code_image;
use crate::input::{self, Input, Kind, OUTPUT_MARK};
use crate::output::{self, Target};
use crate::symbols::guest::GuestSymbols;
use crate::symbols::mapped::MappedCode;
use crate::symbols::{BiasMode, SymbolTable};
use provenance::Provenance;

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
pub fn annotate(request: &Request) -> Result<Vec<Report>> {
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
        for path in paths {
            let input = Input::open(path)?;
            match input.kind {
                Kind::Profile => inputs.profiles.push(input),
                Kind::Empty => inputs.empty.push(input.path),
                Kind::Jitdump | Kind::PerfMap => inputs.sources.push(input),
                Kind::ToolLog => inputs.logs.push(input),
            }
        }
        Ok(inputs)
    }
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

fn annotate_profiles(request: &Request, inputs: Inputs) -> Result<Vec<Report>> {
    let Inputs {
        profiles,
        sources,
        empty,
        ..
    } = inputs;
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
    let mut protected: Vec<PathBuf> = profiles
        .iter()
        .chain(&sources)
        .map(|i| i.path.clone())
        .collect();
    let groups = by_run(profiles);
    let runs: Vec<Run> = groups.iter().map(|g| g.run.clone()).collect();
    let pids: Vec<Option<u32>> = runs.iter().map(|r| r.pid).collect();
    let provenances = if sources.is_empty() {
        let found: Vec<Provenance> = groups.iter().map(|g| discover_for(g, request)).collect();
        if found.iter().all(|p| p.used.is_empty()) {
            return Err(no_symbols(&pids, &found).into());
        }
        protected.extend(
            found
                .iter()
                .flat_map(|p| p.used.iter().map(|i| i.path.clone())),
        );
        found
    } else {
        provenance::given(&runs, sources, request.any_pid)?
    };
    if request.merge && request.output.is_some() && groups.len() > 1 {
        bail!(
            "--merge -o names one file, but the profiles are of {} runs: \
             leave out -o to join each run's parts beside them",
            groups.len()
        );
    }
    let protected: Vec<&Path> = protected.iter().map(PathBuf::as_path).collect();
    let mut reports = Vec::new();
    let shared_pid = |pid: Option<u32>| pids.iter().filter(|&&p| p == pid).count() > 1;
    for (Group { run, profiles }, provenance) in groups.into_iter().zip(provenances) {
        let cmd = input::profile_command(&profiles[0].file);
        let symbols = load_symbols(&provenance.used, request, Vec::new(), cmd.as_deref())?;
        let pid = run.pid;
        let mut report = Report {
            pid,
            folder: run.folder.filter(|_| shared_pid(pid)),
            symbols,
            provenance: provenance.notes,
            ..Report::default()
        };
        let merged = request
            .merge
            .then(|| merge_target(request, pid, &profiles, &protected))
            .transpose()?;
        for (profile, end) in profiles.iter().zip(epochs::ends(&profiles)) {
            let rewritten = match end {
                Some(end) => {
                    let used = &provenance.used;
                    epochs::rewrite(request, profile, end, &mut report.symbols, used, &protected)?
                }
                None => rewrite_one(request, profile, &mut report.symbols, &protected)?,
            };
            report.profiles.push(rewritten);
        }
        if let Some(target) = merged {
            // As private as the most private part.
            let mode = profiles.iter().fold(0o666, |m, p| m & p.mode);
            report.merged = Some(merge_parts(&report, target, mode)?);
        }
        reports.push(report);
    }
    if let Some(first) = reports.first_mut() {
        first.empty = empty;
    }
    Ok(reports)
}

/// One run of a program: the pid of its profiles' `pid:` line and the
/// folder they are in. Containers and CI jobs give a program the same pid
/// on every run, so profiles of one pid in two folders are two runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    /// The `pid:` line's pid.
    pub pid: Option<u32>,
    /// The profiles' folder (`None`: read from a pipe).
    pub folder: Option<PathBuf>,
}

impl Run {
    fn of(profile: &Input) -> Run {
        let folder = (!profile.is_spooled())
            .then(|| folder_of(&profile.path))
            .flatten();
        Run {
            pid: input::profile_pid(&profile.file),
            folder,
        }
    }
}

/// The real folder holding `path`.
pub(super) fn folder_of(path: &Path) -> Option<PathBuf> {
    let absolute = std::path::absolute(path).ok()?;
    absolute.parent()?.canonicalize().ok()
}

/// One run's profiles.
struct Group {
    run: Run,
    profiles: Vec<Input>,
}

/// The profiles grouped by run, in the order given.
fn by_run(profiles: Vec<Input>) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    for profile in profiles {
        let run = Run::of(&profile);
        match groups.iter_mut().find(|g| g.run == run) {
            Some(group) => group.profiles.push(profile),
            None => groups.push(Group {
                run,
                profiles: vec![profile],
            }),
        }
    }
    groups
}

/// The symbol files found for one run's profiles.
fn discover_for(group: &Group, request: &Request) -> Provenance {
    match group.run.pid {
        Some(pid) => discover(pid, &group.profiles, request),
        None => Provenance::default(),
    }
}

/// The symbol files of process `pid` found where runtimes put them, for
/// `files` (its profiles, or a log): beside the first, written before the
/// last was.
fn discover(pid: u32, profiles: &[Input], request: &Request) -> Provenance {
    let first = &profiles[0];
    let beside = if first.is_spooled() {
        Path::new("-")
    } else {
        &first.path
    };
    let ended = profiles
        .iter()
        .filter_map(|p| p.file.metadata().and_then(|m| m.modified()).ok())
        .max();
    let trust = provenance::Trust {
        profile_owner: (!first.is_spooled())
            .then(|| first.file.metadata().ok())
            .flatten()
            .map(|m| std::os::unix::fs::MetadataExt::uid(&m)),
        any_owner: request.any_owner,
    };
    provenance::discovered(pid, beside, ended, request.started, trust)
}

/// Rewrites one profile into its output, and the machine code of the JIT
/// functions it names into a code image beside it: both written, or
/// neither.
fn rewrite_one(
    request: &Request,
    profile: &Input,
    symbols: &mut SymbolTable,
    protected: &[&Path],
) -> Result<Rewritten> {
    let allow = request.allow_truncated;
    let whole;
    let profile = match profile.cut()? {
        None => profile,
        Some((_, cut)) if !allow => return Err(ends_early(&profile.path, cut.describe())),
        Some((end, _)) => {
            whole = profile.prefix(end)?;
            &whole
        }
    };
    let own_output = request.output.as_deref().filter(|_| !request.merge);
    let target = target_for(own_output, profile);
    let image = match &target {
        Target::File(out) if !request.no_code && code_image::wanted(symbols) => {
            Some(code_image::path_for(out))
        }
        _ => None,
    };
    symbols.name_objects(image.as_deref());
    let symbols = &*symbols;
    let mut code_image = None;
    let stats = match &target {
        Target::Stdout => {
            output::write_to_stdout(|file| rewrite_into(profile, file, symbols, allow))?
        }
        Target::File(out) => {
            output::check_target(out, protected)?;
            if let Some(image) = &image {
                code_image::check_target(image, protected)?;
            }
            output::write_atomically(out, profile.mode, |file| {
                let stats = rewrite_into(profile, file, symbols, allow)?;
                if let Some(image) = &image {
                    let named = stats.jit_cost.keys().copied();
                    let mode = profile.mode & 0o666;
                    let functions = code_image::write(symbols, named, image, mode)?;
                    code_image = (functions > 0).then(|| (image.clone(), functions));
                }
                Ok(stats)
            })?
        }
    };
    let output = match target {
        Target::Stdout => PathBuf::from("-"),
        Target::File(out) => out,
    };
    Ok(Rewritten {
        input: profile.path.clone(),
        output,
        stats,
        code_image,
    })
}

/// `--merge`: where a process's outputs are joined: `-o` (`-` for
/// stdout), else `callgrind.jit.merged.PID` beside the first output (a
/// name KCachegrind does not load as one more part of the run). Decided
/// and checked before any part is written.
fn merge_target(
    request: &Request,
    pid: Option<u32>,
    profiles: &[Input],
    protected: &[&Path],
) -> Result<Target> {
    if profiles.iter().any(Input::is_spooled) {
        bail!("--merge joins files: it cannot take a profile read from a pipe or standard input");
    }
    let target = match &request.output {
        Some(out) => Target::from_arg(out),
        None => {
            let first = output::default_output(&profiles[0].path);
            let pid = pid.map_or_else(|| "nopid".to_string(), |p| p.to_string());
            Target::File(first.with_file_name(format!("callgrind.jit.merged.{pid}")))
        }
    };
    if let Target::File(path) = &target {
        output::check_target(path, protected)?;
        refuse_own_output(path, profiles)?;
    }
    Ok(target)
}

/// Refuses a `--merge` target that is a file the run itself writes: a
/// part's output (its costs would be counted twice) or a code image
/// (every later annotate of the run would refuse to replace it).
fn refuse_own_output(target: &Path, profiles: &[Input]) -> Result<()> {
    for profile in profiles {
        let out = output::default_output(&profile.path);
        let image = code_image::path_for(&out);
        for written in [&out, &image] {
            if output::check_not_input(target, &[written]).is_err() {
                bail!(
                    "--merge -o '{}' names a file this run writes itself ('{}'): choose another name",
                    target.display(),
                    written.display()
                );
            }
        }
    }
    Ok(())
}

/// Joins the process's outputs into `target` (see [`merge_target`]).
fn merge_parts(report: &Report, target: Target, mode: u32) -> Result<PathBuf> {
    let parts: Vec<&Path> = report.profiles.iter().map(|p| p.output.as_path()).collect();
    let join = |file: &File| crate::merge::write(&parts, file);
    match target {
        Target::Stdout => {
            output::write_to_stdout(join)?;
            Ok(PathBuf::from("-"))
        }
        Target::File(path) => {
            output::write_atomically(&path, mode, join)?;
            Ok(path)
        }
    }
}

/// `-o` if given; a profile read from a pipe goes to stdout; else the
/// default name beside it.
fn target_for(output: Option<&Path>, profile: &Input) -> Target {
    match output {
        Some(o) => Target::from_arg(o),
        None if profile.is_spooled() => Target::Stdout,
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
    /// Files found there but set aside, and why.
    pub set_aside: Vec<(PathBuf, String)>,
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
            "nothing to name: no jitdump or perf map of pid {} (looked for {}",
            pids.join(", "),
            looked.join(", ")
        )?;
        for (path, why) in &self.set_aside {
            write!(f, "; '{}' {why}", path.display())?;
        }
        f.write_str("); give them after the profile")
    }
}

impl std::error::Error for NoSymbols {}

/// The error for processes where nothing was found to name them by.
fn no_symbols(pids: &[Option<u32>], found: &[Provenance]) -> NoSymbols {
    NoSymbols {
        pids: pids.iter().flatten().copied().collect(),
        looked: found
            .iter()
            .flat_map(|p| p.looked.iter().cloned())
            .collect(),
        set_aside: found.iter().flat_map(|p| p.notes.iter().cloned()).collect(),
    }
}

/// Indexes every symbol file (each read once, whatever its size; a
/// range's names are read again only if a profile touches it), leaving
/// out the ranges in the run's `program`'s own code.
/// With `epoch_end` (see [`input::epoch_end`]), only the code loaded
/// before those places.
fn load_symbols(
    sources: &[Input],
    request: &Request,
    epoch_end: Vec<(String, u64)>,
    cmd: Option<&str>,
) -> Result<SymbolTable> {
    let bias = request.bias;
    let mut table = SymbolTable::builder()
        .epoch_ending_at(epoch_end)
        .raw_names(request.raw_names)
        .outside(cmd.and_then(MappedCode::of_command))
        .guest(cmd.and_then(GuestSymbols::of_command));
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
    Ok(table.build())
}

/// Rewrites `input` into `file`, then marks it as ours.
fn rewrite_into(
    input: &Input,
    mut file: &File,
    symbols: &SymbolTable,
    allow_truncated: bool,
) -> Result<Stats> {
    // The rewriter buffers its output itself (and writes copied lines
    // straight from its input buffers): the file takes no buffer of its own.
    let name = input.path.display();
    let read = |e| anyhow::Error::new(e).context(format!("cannot read '{name}'"));
    let result = callgrind::rewrite(input.rewound().map_err(read)?, file, symbols);
    let stats = result.map_err(|e| match e {
        RewriteError::Parse { line, message } => anyhow::anyhow!("{name}:{line}: {message}"),
        other => anyhow::anyhow!("cannot rewrite '{name}': {other}"),
    })?;
    if let Some(why) = symbols.failure() {
        bail!("cannot name '{name}': {why}");
    }
    if !allow_truncated {
        check_ending(&input.path, stats.ending)?;
    }
    // A blank line first, in case the input lacks its last newline.
    file.seek(SeekFrom::End(0))?;
    file.write_all(format!("\n{OUTPUT_MARK}").as_bytes())?;
    Ok(stats)
}

/// A profile that ends early is refused: its costs are partial, and its
/// header's `summary:` would give wrong shares.
fn check_ending(path: &Path, ending: Ending) -> Result<()> {
    let what = match ending {
        Ending::Complete => return Ok(()),
        Ending::NoTotals => "its last part has no totals: line",
        Ending::CutLine => "its last line is cut off",
    };
    Err(ends_early(path, what))
}

fn ends_early(path: &Path, what: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "'{}' ends early ({what}): callgrind may still be writing it, or the disk was full; \
         --allow-truncated annotates what is there",
        path.display()
    )
}
