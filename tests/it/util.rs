//! Shared helpers: paths, building the binaries once, running real tools.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The workspace root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A fixture folder under tests/fixtures.
pub fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures").join(name)
}

/// A fresh, empty scratch folder for one test.
pub fn scratch(name: &str) -> PathBuf {
    crate::leftovers::clean_up_at_exit();
    let dir = scratch_dir(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Where [`scratch`] puts the folder `name` of this test process.
pub fn scratch_dir(name: &str) -> PathBuf {
    root()
        .join("target/it-scratch")
        .join(format!("{name}-{}", std::process::id()))
}

/// A test that cannot run here: in CI that is a failure (setup installs
/// what the suite needs, and CI runs as root); elsewhere it says so on
/// stderr and leaves a note that scripts/test.sh lists after the run.
pub fn skip(test: &str, why: &str) {
    assert!(
        std::env::var_os("CI").is_none(),
        "{test} cannot run in CI: {why}"
    );
    eprintln!("SKIPPED {test}: {why}");
    let notes = root().join("target/it-skipped");
    let _ = std::fs::create_dir_all(&notes);
    let _ = std::fs::write(notes.join(test), format!("{why}\n"));
}

/// Runs `cmd`, panicking with everything it printed if it fails.
pub fn run_ok(cmd: &mut Command) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(out.status.success(), "{}", describe(cmd, &out));
    out
}

/// The command, its status, stdout and stderr, for failure messages.
pub fn describe(cmd: &Command, out: &Output) -> String {
    format!(
        "command: {cmd:?}\nstatus: {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The suite's own profile: `cargo test --release` tests release binaries.
const RELEASE: bool = !cfg!(debug_assertions);

/// `cargo build --locked ARGS` (with `--release` if `release`).
fn cargo_build(args: &[&str], release: bool) {
    let mut cmd = Command::new(env!("CARGO"));
    cmd.args(["build", "--locked"]);
    if release {
        cmd.arg("--release");
    }
    run_ok(cmd.args(args).current_dir(root()));
}

/// `<target folder>/<profile>/PATH`: where `cargo build` put it, under
/// `CARGO_TARGET_DIR` where that is set (else a stale binary of
/// `target/` would be tested).
fn built(path: &str, release: bool) -> PathBuf {
    let profile = if release { "release" } else { "debug" };
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or(root().join("target"), |dir| {
        root().join(dir) // an absolute folder replaces the root
    });
    target.join(profile).join(path)
}

/// Builds with `cargo build ARGS` once per `cell`, returning `path` (under
/// the profile's target folder).
fn built_once(cell: &OnceLock<PathBuf>, args: &[&str], path: &str) -> PathBuf {
    built_once_as(cell, args, path, RELEASE)
}

fn built_once_as(cell: &OnceLock<PathBuf>, args: &[&str], path: &str, release: bool) -> PathBuf {
    cell.get_or_init(|| {
        cargo_build(args, release);
        built(path, release)
    })
    .clone()
}

/// The `callgrind-jit` binary, built once per test run.
pub fn cli() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    built_once(
        &BIN,
        &["-p", "callgrind-jit", "--bin", "callgrind-jit"],
        "callgrind-jit",
    )
}

/// annotate's profile generator (`annotate/examples/gen_profile.rs`):
/// writes `callgrind.out.4242` and `jit-4242.dump` of about `mb` MB, with
/// `call_jit_percent`% of calls into JIT code, into `dir` and returns their
/// paths.
pub fn generated_profile(dir: &Path, mb: u32, call_jit_percent: u32) -> (PathBuf, PathBuf) {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    let bin = built_once(
        &BIN,
        &["-p", "callgrind-jit", "--example", "gen_profile"],
        "examples/gen_profile",
    );
    run_ok(
        Command::new(bin)
            .arg(mb.to_string())
            .arg(dir)
            .arg("10")
            .arg(call_jit_percent.to_string()),
    );
    (dir.join("callgrind.out.4242"), dir.join("jit-4242.dump"))
}

/// jit-client's static library (always release: the C tests run it many
/// times under Valgrind), built once per test run.
pub fn staticlib() -> PathBuf {
    static LIB: OnceLock<PathBuf> = OnceLock::new();
    built_once_as(&LIB, &["-p", "jit-client"], "libjit_client.a", true)
}

/// The GDB JIT interface's preload library (always release: the tests run
/// JITs under Valgrind with it), built once per test run.
pub fn gdb_preload() -> PathBuf {
    static LIB: OnceLock<PathBuf> = OnceLock::new();
    let args = ["-p", "callgrind-jit-gdb"];
    built_once_as(&LIB, &args, "libcallgrind_jit_gdb.so", true)
}

/// Builds `examples/c/demo.c` against the header and the static library.
pub fn c_demo(dir: &Path) -> PathBuf {
    gcc(&root().join("examples/c/demo.c"), &dir.join("demo"))
}

/// Compiles one C file against jit-client's header (and tests/c's helpers)
/// and links the static library, as the README tells C users to.
fn gcc(source: &Path, exe: &Path) -> PathBuf {
    run_ok(
        Command::new("gcc")
            .args(["-O1", "-g"])
            .arg(source)
            .arg("-I")
            .arg(root().join("jit-client/include"))
            .arg("-I")
            .arg(root().join("tests/c"))
            .arg(staticlib())
            .args(["-lpthread", "-ldl", "-lm", "-o"])
            .arg(exe),
    );
    exe.to_path_buf()
}

/// Runs `prog args` under the real callgrind in `dir` (its cwd); returns
/// the pid and the profile.
pub fn callgrind(
    dir: &Path,
    extra: &[&str],
    prog: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> (u32, PathBuf) {
    let mut cmd = Command::new("valgrind");
    cmd.current_dir(dir)
        .args([
            "--tool=callgrind",
            "--dump-instr=yes",
            "--callgrind-out-file=callgrind.out.%p",
        ])
        .args(extra)
        .arg(prog)
        .args(args)
        .envs(env.iter().copied());
    run_ok(&mut cmd);
    let profile = file_starting(dir, "callgrind.out.").expect("callgrind wrote a profile");
    let pid = profile
        .extension()
        .unwrap()
        .to_string_lossy()
        .parse()
        .unwrap();
    (pid, profile)
}

/// `callgrind_annotate` (the real one) on `profile`, with `args`.
pub fn callgrind_annotate(profile: &Path, args: &[&str]) -> String {
    callgrind_annotate_files(profile, args, &[])
}

/// The same, annotating the given source files.
pub fn callgrind_annotate_files(profile: &Path, args: &[&str], sources: &[&Path]) -> String {
    // From the profile's folder, so its "$PWD/" stripping leaves paths whole.
    let mut cmd = Command::new("callgrind_annotate");
    cmd.args(args)
        .arg(profile)
        .args(sources)
        .current_dir(profile.parent().unwrap());
    let out = run_ok(&mut cmd);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("WARNING") && !stderr.contains("line "),
        "callgrind_annotate warned:\n{stderr}"
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The example JIT (examples/toyjit), built once per test run.
pub fn toyjit() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    let args = ["-p", "callgrind-jit-suite", "--example", "toyjit"];
    built_once(&BIN, &args, "examples/toyjit")
}

/// `callgrind-jit record --out-dir DIR -- ARGS...` with extra environment.
pub fn record(dir: &Path, args: &[&std::ffi::OsStr], env: &[(&str, &str)]) -> Output {
    Command::new(cli())
        .arg("record")
        .arg("--out-dir")
        .arg(dir)
        .arg("--")
        .args(args)
        .current_dir(dir)
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

/// The annotated profile `record` wrote in `dir`.
pub fn annotated_in(dir: &Path) -> PathBuf {
    file_starting(dir, "callgrind.jit.out.").expect("record wrote an annotated profile")
}

/// The first file in `dir` whose name starts with `prefix`.
pub fn file_starting(dir: &Path, prefix: &str) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix))
}

/// Builds tests/c/NAME.c against the header and the static library.
pub fn c_program(dir: &Path, name: &str) -> PathBuf {
    gcc(&root().join(format!("tests/c/{name}.c")), &dir.join(name))
}

/// Names of the CODE_LOADs in a jitdump, and the damage found.
pub fn dump_names(path: &Path) -> (Vec<String>, Vec<jitdump::Problem>) {
    let data = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let dump = jitdump::read(&data).unwrap();
    let names = dump
        .records
        .iter()
        .filter_map(|(_, r)| match r {
            jitdump::Record::Load(l) => Some(String::from_utf8_lossy(l.name).into_owned()),
            _ => None,
        })
        .collect();
    (names, dump.problems)
}

/// The first cost on the callgrind_annotate report line that contains
/// `needle`.
pub fn cost_of(report: &str, needle: &str) -> u64 {
    let line = report
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in:\n{report}"));
    line.split_whitespace()
        .next()
        .unwrap()
        .replace(',', "")
        .parse()
        .unwrap_or(0)
}

/// The sum of the first costs of every report line that `select` takes.
pub fn costs_where(report: &str, select: impl Fn(&str) -> bool) -> u64 {
    report
        .lines()
        .filter(|l| select(l))
        .filter_map(|l| {
            l.split_whitespace()
                .next()?
                .replace(',', "")
                .parse::<u64>()
                .ok()
        })
        .sum()
}

/// `callgrind-jit annotate ARGS` run in `dir`.
pub fn annotate(dir: &Path, args: &[&str]) -> Output {
    Command::new(cli())
        .arg("annotate")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

/// [`annotate`] with the file `stdin` on its standard input (a pipe's
/// content: `-` among the arguments reads it).
pub fn annotate_from(dir: &Path, args: &[&str], stdin: &Path) -> Output {
    Command::new(cli())
        .arg("annotate")
        .args(args)
        .current_dir(dir)
        .stdin(std::fs::File::open(stdin).unwrap())
        .output()
        .unwrap()
}

/// A jit-client session that is on, writing both files into `dir`.
pub fn session_in(dir: &Path) -> jit_client::Session {
    jit_client::Session::open(
        jit_client::Options::default()
            .activation(jit_client::Activation::On)
            .jitdump_dir(dir)
            .perf_map_dir(dir),
    )
}
