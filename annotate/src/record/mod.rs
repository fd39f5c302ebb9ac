//! `callgrind-jit record`: run a program under callgrind with JIT symbols
//! switched on, annotate what it left (each process with its own symbol
//! files), and list the hottest JIT functions.

mod descendants;
mod gdb_jit;
mod hottest;
pub use hottest::{relative, top_list};
mod inclusive;
mod out_file;
mod run;
mod script;
mod signals;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result};

use crate::command::{annotate, NoSymbols, Report, Request};
use crate::runtimes;
use crate::UsageError;
pub(crate) use out_file::OutFile;

/// What `record` did.
pub struct Recording {
    /// The exit status to give: the program's, or 128 + the signal that
    /// ended valgrind (as a shell reports it).
    pub exit_code: i32,
    /// The signal that stopped the run, if one did.
    pub stopped_by: Option<String>,
    /// One annotation per process that left a profile, by pid.
    pub reports: Vec<(u32, Report)>,
    /// Processes whose profiles had nothing to name, and why.
    pub unnamed: Vec<(u32, NoSymbols)>,
    /// Each process's program, as its profile's `cmd:` names it.
    pub programs: BTreeMap<u32, String>,
    /// Processes whose profiles could not be annotated, and why (the
    /// others are annotated all the same).
    pub failed: Vec<(u32, String)>,
    /// With `--tool=memcheck|helgrind|drd|massif|dhat`: each output, named.
    pub logs: Vec<crate::command::logs::Named>,
}

/// Where the tool writes: its option and the default file name.
struct Writes {
    option: &'static str,
    default: String,
    /// What valgrind is given first (callgrind's own switches).
    first: &'static [&'static str],
}

/// The tool the options choose (the last `--tool=`, as valgrind takes
/// it), and where it writes; callgrind by default.
fn tool_writes(options: &[String]) -> Result<Writes, UsageError> {
    let tool = options.iter().rev().find_map(|o| o.strip_prefix("--tool="));
    match tool.unwrap_or("callgrind") {
        "callgrind" => Ok(Writes {
            option: OUT_FILE,
            default: "callgrind.out.%p".into(),
            first: &["--tool=callgrind", "--dump-instr=yes"],
        }),
        tool @ ("memcheck" | "helgrind" | "drd") => Ok(Writes {
            option: LOG_FILE,
            default: format!("{tool}.log.%p"),
            first: &[],
        }),
        "massif" => Ok(Writes {
            option: "--massif-out-file=",
            default: "massif.out.%p".into(),
            first: &[],
        }),
        "dhat" => Ok(Writes {
            option: "--dhat-out-file=",
            default: "dhat.out.%p".into(),
            first: &[],
        }),
        other => Err(UsageError(format!(
            "record names the output of callgrind, memcheck, helgrind, drd, massif and dhat, \
             not {other}'s (cachegrind keeps no addresses: use jit-client's live mode)"
        ))),
    }
}

/// What to record: valgrind's options and the command (`[VALGRIND_OPTION...]
/// -- CMD [ARG...]`), where to write, and whether to preload the GDB JIT
/// interface's library.
#[derive(Clone, Debug, Default)]
pub struct RecordRequest {
    /// Valgrind's options, `--`, then the command and its arguments.
    pub args: Vec<String>,
    /// Folder for the profiles and symbol files (default: the current one).
    pub out_dir: Option<PathBuf>,
    /// Do not preload libcallgrind_jit_gdb.so.
    pub no_gdb_jit: bool,
}

/// Runs `record`.
pub fn record(args: &RecordRequest) -> Result<Recording> {
    let (valgrind_options, command) = split_args(&args.args)?;
    let writes = tool_writes(valgrind_options)?;
    let out_dir = out_dir(args.out_dir.as_deref())?;
    let template = out_template(valgrind_options, &out_dir, &writes)?;
    if let Some(line) = runtimes::of_command(command).and_then(|r| runtimes::said(r, &out_dir)) {
        eprintln!("callgrind-jit: {line}");
    }
    let (options, traced) = script::traced(valgrind_options, command);
    if let Some(line) = traced {
        eprintln!("callgrind-jit: {line}");
    }
    let cmd = valgrind_command(&out_dir, &options, command, &writes);
    let preload = (!args.no_gdb_jit).then(gdb_jit::library);
    let ran = run::valgrind(cmd, preload, &template, &writes)?;
    let (profiles, started) = (ran.profiles, ran.started);
    let mut recording = Recording {
        exit_code: ran.exit_code,
        stopped_by: ran.stopped_by,
        reports: Vec::new(),
        unnamed: Vec::new(),
        programs: BTreeMap::new(),
        failed: Vec::new(),
        logs: Vec::new(),
    };
    // Valgrind's own switch also keeps the JIT names raw.
    let base = Request {
        started: Some(started),
        raw_names: valgrind_options.iter().any(|o| o == "--demangle=no"),
        ..Request::default()
    };
    if writes.option != OUT_FILE {
        recording.logs = name_logs(profiles, base)?;
        return Ok(recording);
    }
    script::none_left_empty(&profiles)?;
    for (pid, files) in by_pid(profiles) {
        annotate_process(&mut recording, pid, files, base.clone());
    }
    if !recording.failed.is_empty() && recording.exit_code == 0 {
        recording.exit_code = 1;
    }
    Ok(recording)
}

/// Names the logs' JIT frames, each process's from its own symbol files.
fn name_logs(logs: Vec<PathBuf>, base: Request) -> Result<Vec<crate::command::logs::Named>> {
    let request = Request {
        inputs: logs,
        ..base
    };
    match crate::command::annotate_any(&request)? {
        crate::command::Annotated::Logs(logs) => Ok(logs),
        crate::command::Annotated::Profiles(_) => Ok(Vec::new()),
    }
}

/// Annotates one process's profiles with its own symbol files; a failure
/// is kept for the summary and the other processes go on.
/// Symbol files last written before the run started are not this run's; a run
/// stopped by a signal may leave profiles that end early, annotated as
/// they are.
fn annotate_process(recording: &mut Recording, pid: u32, files: Vec<PathBuf>, base: Request) {
    // Parts ended by jit-client's epochs are also joined, for
    // callgrind_annotate.
    let epochs = files
        .iter()
        .any(|f| std::fs::File::open(f).is_ok_and(|file| crate::input::epoch_end(&file).is_some()));
    let program = files.iter().find_map(|f| {
        let cmd = crate::input::profile_command(&std::fs::File::open(f).ok()?)?;
        let first = cmd.split_whitespace().next()?;
        Some(first.rsplit('/').next().unwrap_or(first).to_string())
    });
    if let Some(program) = program {
        recording.programs.insert(pid, program);
    }
    let request = Request {
        inputs: files,
        allow_truncated: recording.stopped_by.is_some(),
        merge: epochs,
        ..base
    };
    match annotate(&request) {
        Ok(reports) => recording
            .reports
            .extend(reports.into_iter().map(|report| (pid, report))),
        Err(e) => match e.downcast::<NoSymbols>() {
            Ok(none) => recording.unnamed.push((pid, none)),
            Err(e) => recording.failed.push((pid, format!("{e:#}"))),
        },
    }
}

fn out_dir(given: Option<&Path>) -> Result<PathBuf> {
    let out_dir = given.unwrap_or(Path::new("."));
    std::fs::create_dir_all(out_dir)
        .with_context(|| format!("cannot create '{}'", out_dir.display()))?;
    out_dir
        .canonicalize()
        .with_context(|| format!("cannot use '{}'", out_dir.display()))
}

/// `[valgrind options] -- cmd args`; without `--` everything is the command.
fn split_args(args: &[String]) -> Result<(&[String], &[String]), UsageError> {
    let (options, command) = match args.iter().position(|a| a == "--") {
        Some(i) => (&args[..i], &args[i + 1..]),
        None => (&args[..0], args),
    };
    if command.is_empty() {
        return Err(UsageError(
            "no command to run: callgrind-jit record [VALGRIND_OPTION...] -- CMD [ARG...]".into(),
        ));
    }
    if let Some(bad) = options.iter().find(|o| !o.starts_with('-')) {
        return Err(UsageError(format!(
            "'{bad}' before '--' is not a valgrind option"
        )));
    }
    Ok((options, command))
}

const OUT_FILE: &str = "--callgrind-out-file=";
const LOG_FILE: &str = "--log-file=";

/// The user's `--callgrind-out-file` (the last one, as valgrind takes it),
/// else `callgrind.out.%p` in the output folder.
fn out_template(options: &[String], out_dir: &Path, writes: &Writes) -> Result<OutFile> {
    let given = options
        .iter()
        .rev()
        .find_map(|o| o.strip_prefix(writes.option));
    let template = match given {
        Some(t) => t.to_string(),
        None => out_dir.join(&writes.default).to_string_lossy().into_owned(),
    };
    let env = runtimes::program_env(out_dir);
    let out_file = OutFile::parse(&template, |var| {
        let ours = env.iter().find(|(k, _)| *k == var);
        ours.map(|(_, v)| v.clone())
            .or_else(|| std::env::var_os(var))
    })?;
    // Callgrind would write its profile over the JIT's symbol file.
    if out_file.gives("jit-1.dump") || out_file.gives("perf-1.map") {
        return Err(UsageError(format!(
            "{}{template} gives the name of the JIT's symbol file \
             (jit-PID.dump, perf-PID.map): valgrind would write over it",
            writes.option
        ))
        .into());
    }
    Ok(out_file)
}

fn valgrind_command(
    out_dir: &Path,
    options: &[String],
    command: &[String],
    writes: &Writes,
) -> Command {
    let mut cmd = Command::new("valgrind");
    cmd.args(writes.first);
    if !options.iter().any(|o| o.starts_with(writes.option)) {
        let mut out_file = OsString::from(writes.option);
        out_file.push(out_dir.join(&writes.default));
        cmd.arg(out_file);
    }
    cmd.args(options).args(command);
    cmd.envs(runtimes::program_env(out_dir));
    cmd
}

/// Profiles grouped by the `pid:` in their header (0: none). An empty
/// file (`--separate-threads=yes` leaves one beside the thread files)
/// goes with the first process, which reports it skipped.
fn by_pid(profiles: Vec<PathBuf>) -> BTreeMap<u32, Vec<PathBuf>> {
    let mut groups: BTreeMap<u32, Vec<PathBuf>> = BTreeMap::new();
    let mut empty = Vec::new();
    for p in profiles {
        if std::fs::metadata(&p).is_ok_and(|m| m.len() == 0) {
            empty.push(p);
            continue;
        }
        let file = std::fs::File::open(&p).ok();
        let pid = file
            .and_then(|f| crate::input::profile_pid(&f))
            .unwrap_or(0);
        groups.entry(pid).or_default().push(p);
    }
    match groups.values_mut().next() {
        Some(first) => first.extend(empty),
        None if !empty.is_empty() => {
            groups.insert(0, empty);
        }
        None => {}
    }
    groups
}

#[cfg(test)]
mod tests;
