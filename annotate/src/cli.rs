//! Command-line interface (clap derive; doc comments are the help text).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use annotate::symbols::BiasMode;

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
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    #[command(after_help = COMPLETIONS_EXAMPLES)]
    Completions(CompletionsArgs),
    /// Print the manual page (roff) of callgrind-jit or of one subcommand.
    #[command(
        after_help = "Example:\n  callgrind-jit man > callgrind-jit.1 && man -l callgrind-jit.1"
    )]
    Man(ManArgs),
}

const COMPLETIONS_EXAMPLES: &str = "\
Examples:
  callgrind-jit completions bash > ~/.local/share/bash-completion/completions/callgrind-jit
  callgrind-jit completions zsh > ~/.zfunc/_callgrind-jit
  callgrind-jit completions fish > ~/.config/fish/completions/callgrind-jit.fish";

/// Arguments of `completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    pub shell: clap_complete::Shell,
}

/// Arguments of `man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// A subcommand whose page to print (e.g. record); default: the main page.
    pub subcommand: Option<String>,
}

/// Arguments of `clean`.
#[derive(Debug, Args)]
pub struct CleanArgs {
    /// Where the folders are. Default: $TMPDIR, else /tmp.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

const RECORD_EXAMPLES: &str = "\
Runs valgrind --tool=callgrind --dump-instr=yes on CMD, annotates every
profile part and thread file of every process it wrote (each with its own
pid's symbol files), and prints the summary and the hottest JIT functions on
stderr (inclusive and self share). Options before '--' that are not
callgrind-jit's go to valgrind, --callgrind-out-file (with %p, %q{VAR}) and
--trace-children=yes included; a CMD that is a script (#!) gets
--trace-children=yes unless one is given. With --tool=memcheck, helgrind or drd, the
tool's log (--log-file, default TOOL.log.%p) is written with its JIT frames
named, jit.TOOL.log.PID, and printed on stderr; with --tool=massif or dhat,
massif.out.PID and dhat.out.PID become jit.massif.out.PID, jit.dhat.out.PID.

The program, and every program it starts, gets the variables that turn the
runtimes' symbol output on, unless its environment already sets them:
CALLGRIND_JIT=1 (jit-client) and JITDUMPDIR (the output folder);
MVM_JIT_PERF_MAP=1, MVM_SPESH_BLOCKING=1 (MoarVM); NODE_OPTIONS (Node:
--perf-prof --perf-basic-prof --interpreted-frames-native-stack);
JAVA_TOOL_OPTIONS (HotSpot: -XX:+UnlockDiagnosticVMOptions
-XX:+DumpPerfMapAtExit); PYTHONPERFSUPPORT=1, PYTHON_PERF_JIT_SUPPORT=1
(CPython 3.12, 3.13). Set one yourself, even empty, to keep it as you want.

Ctrl-C or SIGTERM stop the program, not callgrind-jit: what valgrind wrote is
annotated.

Examples:
  callgrind-jit record -- node app.js
  callgrind-jit record -- raku script.raku
  callgrind-jit record --collect-jumps=yes -- ./my-jit program.toy
  callgrind-jit record --trace-children=yes -- ./run-tests
  callgrind-jit record --tool=memcheck -- ./my-jit program.toy

Exit status: the program's (128 + N if a signal N ended it); 1 if no profile
was written or annotating failed; 2 usage error.";

/// Arguments of `record`.
#[derive(Debug, Args)]
pub struct RecordArgs {
    /// Directory for the profiles and the jitdump. Default: the current one.
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,

    /// How many JIT functions to list.
    #[arg(long, default_value_t = 10)]
    pub top: usize,

    /// Do not preload libcallgrind_jit_gdb.so, which names the code JITs
    /// register with gdb's JIT interface (numba, LLVM's JITs).
    #[arg(long)]
    pub no_gdb_jit: bool,

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
  callgrind-jit annotate callgrind.out.1234            (finds jit-1234.dump, perf-1234.map by pid)
  callgrind-jit annotate callgrind.out.1234*           (all parts and threads of a run)
  callgrind-jit annotate callgrind.out.1234 -o named.out
  callgrind-jit annotate memcheck.log               (memcheck, helgrind, DRD logs, massif.out, dhat.out)

Exit status: 0 success (warnings allowed), 1 error, 2 usage error.";

/// Arguments of `annotate`.
#[derive(Debug, Args)]
pub struct AnnotateArgs {
    /// Callgrind profiles (or Valgrind tool logs), then jitdump or perf map
    /// files (told apart by content). Without symbol files they are found
    /// from the profile's pid (a log's `==PID==` lines).
    #[arg(required = true, value_name = "PROFILE|SOURCE")]
    pub inputs: Vec<PathBuf>,

    /// Output file (one profile only). Default: `callgrind.jit.out.PID…`
    /// beside the input (a name KCachegrind will not merge with the input).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// How to treat the +0x40 bias V8 and LLVM add to line addresses.
    #[arg(long, value_enum, default_value_t = Bias::Detect)]
    pub bias: Bias,

    /// Annotate a profile that ends early (callgrind still writing it, a
    /// full disk): what is there, said so in the summary.
    #[arg(long)]
    pub allow_truncated: bool,

    /// Use the given symbol files for every profile, whatever process they
    /// name (by default a file of another pid is refused).
    #[arg(long)]
    pub any_pid: bool,

    /// Use symbol files found of any owner. By default a found jitdump or
    /// perf map owned by another user (not you, root or the profile's
    /// owner), or writable by anyone, is set aside: any user can plant one
    /// in /tmp under a pid's name. Files given by name are always used.
    #[arg(long)]
    pub any_owner: bool,

    /// Write no code image: by default the machine code of the JIT
    /// functions a profile names is written beside its output as
    /// jit-code.OUTPUT.elf (from the jitdump's code bytes), for
    /// KCachegrind's Machine Code tab and objdump.
    #[arg(long)]
    pub no_code: bool,

    /// Also join each process's annotated parts (one per dump: callgrind
    /// writes one when jit-client sees code loaded over code) into one
    /// profile, callgrind.jit.merged.PID (or -o FILE, - for stdout), for
    /// callgrind_annotate, which reads one part of one file. KCachegrind
    /// loads the parts themselves together.
    #[arg(long)]
    pub merge: bool,

    /// Demangle C++ and Rust names of JIT code (LLVM and Cranelift JITs
    /// register mangled symbols), as Valgrind does for native code.
    #[arg(long, value_name = "yes|no", default_value = "yes", value_parser = ["yes", "no"])]
    pub demangle: String,

    /// Print nothing but errors.
    #[arg(short, long)]
    pub quiet: bool,
}

impl RecordArgs {
    /// The library's request for these arguments.
    pub fn request(&self) -> annotate::record::RecordRequest {
        annotate::record::RecordRequest {
            args: self.args.clone(),
            out_dir: self.out_dir.clone(),
            no_gdb_jit: self.no_gdb_jit,
        }
    }
}

impl AnnotateArgs {
    /// The library's request for these arguments.
    pub fn request(&self) -> annotate::command::Request {
        annotate::command::Request {
            inputs: self.inputs.clone(),
            output: self.output.clone(),
            bias: self.bias.mode(),
            allow_truncated: self.allow_truncated,
            any_pid: self.any_pid,
            any_owner: self.any_owner,
            no_code: self.no_code,
            raw_names: self.demangle == "no",
            merge: self.merge,
            started: None,
        }
    }
}

/// `--bias` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Bias {
    /// Decide per jitdump, from its writer and what all of its records show.
    Detect,
    /// Never remove it.
    None,
    /// Always remove 0x40 (64-bit V8 and LLVM writers).
    Elf64,
    /// Always remove 0x34 (32-bit writers).
    Elf32,
}

impl Bias {
    /// What the symbol reader does for this value.
    pub fn mode(self) -> BiasMode {
        match self {
            Bias::Detect => BiasMode::Detect,
            Bias::None => BiasMode::None,
            Bias::Elf64 => BiasMode::Fixed(0x40),
            Bias::Elf32 => BiasMode::Fixed(0x34),
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn cli_is_consistent() {
        super::Cli::command().debug_assert();
    }
}
