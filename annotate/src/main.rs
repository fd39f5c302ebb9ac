//! `callgrind-jit`: name JIT-compiled functions in callgrind profiles.

use std::process::ExitCode;

use std::io::stdout;

use annotate::clean::Outcome;
use annotate::command::Annotated;
use annotate::record::Recording;
use annotate::UsageError;
use clap::{CommandFactory, Parser};
use cli::{Cli, Command};

mod cli;

/// Out of memory is one line and exit status 1, not an abort.
#[global_allocator]
static ALLOCATOR: annotate::OneLineOnFailure = annotate::OneLineOnFailure;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(code) => code,
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) if err.downcast_ref::<UsageError>().is_some() => {
            eprintln!("callgrind-jit: {err:#}\n\nFor more information, try '--help'.");
            ExitCode::from(2)
        }
        Err(err) => {
            eprintln!("callgrind-jit: {err:#}");
            ExitCode::from(1)
        }
    }
}

fn run(cli: &Cli) -> anyhow::Result<ExitCode> {
    match &cli.command {
        Command::Annotate(args) => {
            let annotated = annotate::command::annotate_any(&args.request())?;
            if !args.quiet {
                match annotated {
                    Annotated::Profiles(reports) => reports.iter().for_each(print_summary),
                    Annotated::Logs(logs) => logs.iter().for_each(print_log),
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Clean(args) => {
            let dir = args.dir.clone().unwrap_or_else(std::env::temp_dir);
            let mut failed = false;
            for (path, outcome) in annotate::clean::clean(&dir)? {
                failed |= matches!(outcome, Outcome::Failed(_));
                eprintln!("callgrind-jit: {}", clean_line(&path, &outcome));
            }
            Ok(if failed {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        Command::Record(args) => {
            let recording = annotate::record::record(&args.request())?;
            print_recording(&recording, args.top);
            Ok(ExitCode::from(recording.exit_code.clamp(0, 255) as u8))
        }
        Command::Completions(args) => {
            let mut command = Cli::command();
            clap_complete::generate(args.shell, &mut command, "callgrind-jit", &mut stdout());
            Ok(ExitCode::SUCCESS)
        }
        Command::Man(args) => {
            let page = man_page(args.subcommand.as_deref())?;
            clap_mangen::Man::new(page).render(&mut stdout())?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The clap command whose man page to render: the main one or a
/// subcommand, named `callgrind-jit-SUB` as man pages of subcommands are.
fn man_page(sub: Option<&str>) -> anyhow::Result<clap::Command> {
    let main = Cli::command();
    let Some(sub) = sub else {
        return Ok(main);
    };
    let found = main
        .get_subcommands()
        .find(|c| c.get_name() == sub)
        .cloned()
        .ok_or_else(|| UsageError(format!("no subcommand '{sub}' to print a page for")))?;
    let name = format!("callgrind-jit-{sub}");
    Ok(found.name(name.clone()).bin_name(name))
}

fn clean_line(path: &std::path::Path, outcome: &Outcome) -> String {
    let path = path.display();
    match outcome {
        Outcome::Removed => format!("removed '{path}'"),
        Outcome::InUse => format!("kept '{path}': its process is running"),
        Outcome::NotOurs(why) => format!("left '{path}' alone: {why}"),
        Outcome::KeptOthers(names) => format!(
            "kept '{path}': removed live mode's files, but it also holds {}",
            names.join(", ")
        ),
        Outcome::Failed(e) => format!("cannot clean '{path}': {e}"),
    }
}

fn print_log(log: &annotate::command::logs::Named) {
    for (pid, path, why) in &log.provenance {
        eprintln!(
            "callgrind-jit: symbols of pid {pid}: '{}' ({why})",
            path.display()
        );
    }
    let out = match log.output.as_os_str() == "-" {
        true => "standard output".to_string(),
        false => format!("'{}'", log.output.display()),
    };
    eprintln!(
        "callgrind-jit: wrote {out} (from '{}'): {} JIT frames named, {} unknown frames outside every JIT range left as ???",
        log.input.display(),
        log.named,
        log.unnamed
    );
}

fn print_summary(report: &annotate::command::Report) {
    for line in report.summary().lines() {
        eprintln!("callgrind-jit: {line}");
    }
}

/// Processes with nothing to name: each with why, where no process was
/// named; else in one line (a script's helpers, a JIT's own children).
fn print_unnamed(recording: &Recording) {
    if recording.reports.is_empty() {
        for (pid, none) in &recording.unnamed {
            eprintln!("callgrind-jit: pid {pid}: {none}");
        }
        return;
    }
    let pids: Vec<String> = recording
        .unnamed
        .iter()
        .map(|(pid, _)| match recording.programs.get(pid) {
            Some(program) => format!("{pid} ({program})"),
            None => pid.to_string(),
        })
        .collect();
    if !pids.is_empty() {
        eprintln!(
            "callgrind-jit: no JIT symbols of pid {}: their profiles are left as callgrind wrote them",
            pids.join(", ")
        );
    }
}

/// Everything `record` says goes to stderr: stdout is the program's.
fn print_recording(recording: &Recording, top: usize) {
    if let Some(signal) = &recording.stopped_by {
        eprintln!("callgrind-jit: the run was stopped by {signal}; annotating what valgrind wrote");
    }
    print_unnamed(recording);
    for (pid, error) in &recording.failed {
        eprintln!("callgrind-jit: error: pid {pid}: {error}");
    }
    let several = recording.reports.len() + recording.unnamed.len() > 1;
    for (pid, report) in &recording.reports {
        print_summary(report);
        print_top(report, top, several.then_some(*pid));
    }
    for log in &recording.logs {
        // The tool's messages, JIT frames named, where the user looks.
        if let Some(text) = log
            .text
            .then(|| std::fs::read_to_string(&log.output).ok())
            .flatten()
        {
            eprint!("{text}");
        }
        print_log(log);
    }
    if recording.reports.is_empty() && recording.logs.is_empty() {
        eprintln!("callgrind-jit: no JIT function was named (did the program register its code?)");
    }
}

fn print_top(report: &annotate::command::Report, top: usize, pid: Option<u32>) {
    let list = annotate::record::top_list(report, top);
    let of = pid.map(|p| format!(" of pid {p}")).unwrap_or_default();
    let live = report
        .profiles
        .iter()
        .any(|p| !p.stats.live_images.is_empty());
    if list.is_empty() && live {
        eprintln!("Valgrind named the JIT functions{of} itself (live mode): kcachegrind opens the profile as it is");
    } else if list.is_empty() {
        eprintln!("no JIT function{of} was named (did the program register its code?)");
    } else {
        let event = report
            .profiles
            .first()
            .and_then(|p| p.stats.events.first().cloned())
            .unwrap_or_default();
        eprintln!("hottest JIT functions{of} (inclusive and self share of {event}):");
        eprint!("{list}");
    }
    if let Some(annotate::command::Rewritten { output: out, .. }) = report.profiles.first() {
        let cwd = std::env::current_dir().ok();
        let out = annotate::record::relative(out, cwd.as_deref());
        eprintln!("open in KCachegrind: kcachegrind {}", out.display());
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
