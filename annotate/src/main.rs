//! `callgrind-jit`: name JIT-compiled functions in callgrind profiles.

use std::process::ExitCode;

use annotate::cli::{Cli, Command};
use clap::Parser;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(code) => code,
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("callgrind-jit: {err:#}");
            ExitCode::from(1)
        }
    }
}

fn run(cli: &Cli) -> anyhow::Result<ExitCode> {
    match &cli.command {
        Command::Annotate(args) => {
            let report = annotate::command::annotate(args)?;
            if !args.quiet {
                for line in annotate::summary::render(&report).lines() {
                    eprintln!("callgrind-jit: {line}");
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Clean(args) => {
            let dir = args.dir.clone().unwrap_or_else(std::env::temp_dir);
            for path in annotate::clean::clean(&dir)? {
                eprintln!("callgrind-jit: removed '{}'", path.display());
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Record(args) => {
            let recording = annotate::record::record(args)?;
            for line in annotate::summary::render(&recording.report).lines() {
                eprintln!("callgrind-jit: {line}");
            }
            print_top(&recording.report, args.top);
            Ok(ExitCode::from(recording.exit_code.clamp(0, 255) as u8))
        }
    }
}

fn print_top(report: &annotate::command::Report, top: usize) {
    let list = annotate::record::top_list(report, top);
    if list.is_empty() {
        println!("no JIT function was named (did the program register its code?)");
    } else {
        println!(
            "hottest JIT functions (share of {}):",
            report
                .profiles
                .first()
                .and_then(|p| p.2.events.first().cloned())
                .unwrap_or_default()
        );
        print!("{list}");
    }
    if let Some((_, out, _)) = report.profiles.first() {
        println!("open in KCachegrind: kcachegrind {}", out.display());
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
