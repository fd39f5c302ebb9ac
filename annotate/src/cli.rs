//! Command-line interface (clap derive; doc comments are the help text).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Name JIT-compiled functions in callgrind profiles.
#[derive(Debug, Parser)]
#[command(name = "callgrind-jit", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Rewrite callgrind profiles so JIT functions have names, files and lines.
    #[command(after_help = ANNOTATE_EXAMPLES)]
    Annotate(AnnotateArgs),
    /// Run a program under callgrind with JIT symbols on, then annotate.
    #[command(after_help = RECORD_EXAMPLES)]
    Record(RecordArgs),
    /// Remove the live-mode folders ($TMPDIR/callgrind-jit-PID) of processes
    /// that have ended.
    Clean(CleanArgs),
}

/// Arguments of `clean`.
#[derive(Debug, Args)]
pub struct CleanArgs {
    /// Where the folders are. Default: $TMPDIR, else /tmp.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

const RECORD_EXAMPLES: &str = "\
Runs valgrind --tool=callgrind --dump-instr=yes on CMD with CALLGRIND_JIT=1
(jit-client), MVM_JIT_PERF_MAP=1 (MoarVM) and JITDUMPDIR set, annotates
every profile part and thread file, and prints the hottest JIT functions.
Options before '--' that are not callgrind-jit's go to valgrind.
node needs its own switches: record -- node --perf-prof --perf-basic-prof app.js

Examples:
  callgrind-jit record -- raku script.raku
  callgrind-jit record --collect-jumps=yes -- ./my-jit program.toy

Exit status: the program's.";

/// Arguments of `record`.
#[derive(Debug, Args)]
pub struct RecordArgs {
    /// Directory for the profiles and the jitdump. Default: the current one.
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,

    /// How many JIT functions to list.
    #[arg(long, default_value_t = 10)]
    pub top: usize,

    /// [VALGRIND_OPTION...] -- CMD [ARG...]
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        required = true,
        value_name = "ARGS"
    )]
    pub args: Vec<String>,
}

const ANNOTATE_EXAMPLES: &str = "\
Examples:
  callgrind-jit annotate callgrind.out.1234 jit-1234.dump
  callgrind-jit annotate callgrind.out.1234            (finds jit-1234.dump, /tmp/perf-1234.map)
  callgrind-jit annotate callgrind.out.1234*           (all parts and threads of a run)
  callgrind-jit annotate callgrind.out.1234 -o named.out

Exit status: 0 success (warnings allowed), 1 error, 2 usage error.";

/// Arguments of `annotate`.
#[derive(Debug, Args)]
pub struct AnnotateArgs {
    /// Callgrind profiles, then jitdump or perf map files (told apart by
    /// content). Without symbol files they are found from the profile's pid.
    #[arg(required = true, value_name = "PROFILE|SOURCE")]
    pub inputs: Vec<PathBuf>,

    /// Output file (one profile only). Default: `callgrind.jit.out.PID…`
    /// beside the input (a name KCachegrind will not merge with the input).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// How to treat the +0x40 bias V8 and LLVM add to line addresses.
    #[arg(long, value_enum, default_value_t = Bias::Detect)]
    pub bias: Bias,

    /// Print nothing but errors.
    #[arg(short, long)]
    pub quiet: bool,
}

/// `--bias` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Bias {
    /// Detect it per DEBUG_INFO record.
    Detect,
    /// Never remove it.
    None,
    /// Always remove 0x40 (64-bit V8 and LLVM writers).
    Elf64,
    /// Always remove 0x34 (32-bit writers).
    Elf32,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn cli_is_consistent() {
        super::Cli::command().debug_assert();
    }
}
