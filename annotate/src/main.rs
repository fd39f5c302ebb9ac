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
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
