use super::run::{exit_code, file_clock_now, output_pid, written_since};
use super::*;
use std::process::ExitStatus;
use std::time::SystemTime;

fn strings(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

#[test]
fn valgrind_s_options_come_before_the_double_dash_and_the_command_after() {
    let args = strings(&["--tool=memcheck", "-v", "--", "node", "--", "x.js"]);
    let (options, command) = split_args(&args).unwrap();
    assert_eq!((options, command), (&args[..2], &args[3..]));
    // Without `--`, all of it is the command.
    let args = strings(&["node", "--perf-prof", "x.js"]);
    assert_eq!(split_args(&args).unwrap(), (&args[..0], &args[..]));
    for (args, want) in [
        (
            strings(&[]),
            "no command to run: callgrind-jit record [VALGRIND_OPTION...] -- CMD [ARG...]",
        ),
        (
            strings(&["-v", "--"]),
            "no command to run: callgrind-jit record [VALGRIND_OPTION...] -- CMD [ARG...]",
        ),
        (
            strings(&["-v", "node", "--", "x.js"]),
            "'node' before '--' is not a valgrind option",
        ),
    ] {
        assert_eq!(split_args(&args).unwrap_err().0, want);
    }
}

#[test]
fn the_last_tool_named_decides_where_the_output_goes() {
    let writes = |options: &[&str]| {
        tool_writes(&strings(options))
            .map(|w| (w.option, w.default))
            .map_err(|e| e.0)
    };
    let callgrind = Ok((OUT_FILE, "callgrind.out.%p".to_string()));
    assert_eq!(writes(&[]), callgrind);
    assert_eq!(writes(&["--tool=memcheck", "--tool=callgrind"]), callgrind);
    assert_eq!(
        writes(&["--tool=callgrind", "--tool=helgrind"]),
        Ok((LOG_FILE, "helgrind.log.%p".to_string()))
    );
    assert_eq!(
        writes(&["--tool=drd"]),
        Ok((LOG_FILE, "drd.log.%p".to_string()))
    );
    assert_eq!(
        writes(&["--tool=massif"]),
        Ok(("--massif-out-file=", "massif.out.%p".to_string()))
    );
    assert_eq!(
        writes(&["--tool=dhat"]),
        Ok(("--dhat-out-file=", "dhat.out.%p".to_string()))
    );
    let cachegrind = writes(&["--tool=cachegrind"]).unwrap_err();
    assert!(
        cachegrind.ends_with(
            "not cachegrind's (cachegrind keeps no addresses: use jit-client's live mode)"
        ),
        "{cachegrind}"
    );
    // Callgrind alone is given its own switches first.
    let first = |options: &[&str]| tool_writes(&strings(options)).unwrap().first;
    assert_eq!(first(&[]), ["--tool=callgrind", "--dump-instr=yes"]);
    assert!(first(&["--tool=memcheck"]).is_empty());
}

#[test]
fn valgrind_writes_into_the_folder_unless_told_where() {
    let dir = Path::new("/runs");
    let words = |cmd: &Command| -> Vec<String> {
        cmd.get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    };
    let writes = tool_writes(&[]).unwrap();
    let command = strings(&["node", "x.js"]);
    let cmd = valgrind_command(dir, &strings(&["-q"]), &command, &writes);
    assert_eq!(cmd.get_program(), "valgrind");
    assert_eq!(
        words(&cmd),
        [
            "--tool=callgrind",
            "--dump-instr=yes",
            "--callgrind-out-file=/runs/callgrind.out.%p",
            "-q",
            "node",
            "x.js"
        ]
    );
    let own = strings(&["--callgrind-out-file=p.%p"]);
    let cmd = valgrind_command(dir, &own, &command, &writes);
    assert_eq!(
        words(&cmd)[2..],
        ["--callgrind-out-file=p.%p", "node", "x.js"]
    );
    // The runtimes' switches are set in the program's environment.
    let env: Vec<_> = cmd
        .get_envs()
        .map(|(k, _)| k.to_string_lossy().into_owned())
        .collect();
    let want: Vec<_> = runtimes::program_env(dir)
        .into_iter()
        .map(|(k, _)| k.to_string())
        .collect();
    assert!(!want.is_empty());
    assert_eq!(env.len(), want.len());
    assert!(want.iter().all(|k| env.contains(k)), "{env:?}");
    let memcheck = tool_writes(&strings(&["--tool=memcheck"])).unwrap();
    let cmd = valgrind_command(dir, &strings(&["--tool=memcheck"]), &command, &memcheck);
    assert_eq!(
        words(&cmd),
        [
            "--log-file=/runs/memcheck.log.%p",
            "--tool=memcheck",
            "node",
            "x.js"
        ]
    );
}

#[test]
fn a_template_that_would_write_over_a_symbol_file_is_refused() {
    let writes = tool_writes(&[]).unwrap();
    let dir = Path::new("/runs");
    let template =
        |options: &[&str]| out_template(&strings(options), dir, &writes).map_err(|e| e.to_string());
    let default = template(&[]).unwrap();
    assert_eq!(default.dir, dir);
    assert!(default.gives("callgrind.out.77"));
    // The last one counts, as valgrind takes it.
    let last = template(&[
        "--callgrind-out-file=/a/x.%p",
        "--callgrind-out-file=/b/y.%p",
    ])
    .unwrap();
    assert_eq!(last.dir, Path::new("/b/"));
    // %q{VAR}: the variables record sets for the program, else the
    // environment's.
    let bun = template(&["--callgrind-out-file=%q{BUN_JSC_jitDumpDirectory}/cg.%p"]).unwrap();
    assert_eq!(bun.dir, Path::new("/runs/"));
    let home = std::env::var("HOME").unwrap();
    let at_home = template(&["--callgrind-out-file=%q{HOME}/cg.%p"]).unwrap();
    assert_eq!(at_home.dir, Path::new(&format!("{home}/")));
    for bad in [
        "--callgrind-out-file=/t/jit-%p.dump",
        "--callgrind-out-file=perf-%p.map",
    ] {
        let error = template(&[bad]).unwrap_err();
        assert!(
            error.ends_with(
                "gives the name of the JIT's symbol file (jit-PID.dump, perf-PID.map): \
                 valgrind would write over it"
            ),
            "{error}"
        );
        assert!(error.starts_with(bad), "{error}");
    }
}

#[test]
fn a_signal_s_exit_code_is_128_and_its_number() {
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(exit_code(ExitStatus::from_raw(0)), 0);
    assert_eq!(exit_code(ExitStatus::from_raw(3 << 8)), 3);
    assert_eq!(exit_code(ExitStatus::from_raw(libc::SIGSEGV)), 128 + 11);
}

#[test]
fn outputs_are_told_apart_by_pid_and_time() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let a = write(
        "callgrind.out.1",
        "# callgrind format\npid: 41\nevents: Ir\n",
    );
    let b = write(
        "callgrind.out.2",
        "# callgrind format\npid: 42\nevents: Ir\n",
    );
    let c = write(
        "callgrind.out.3",
        "# callgrind format\npid: 41\nevents: Ir\n",
    );
    let empty = write("callgrind.out.4", "");
    let log = write(
        "memcheck.log.9",
        "==43== Memcheck, a memory error detector\n",
    );
    let massif = write("massif.out.44", "desc: (none)\n");
    assert_eq!(output_pid(&a, false), Some(41));
    assert_eq!(output_pid(&log, false), Some(43));
    assert_eq!(output_pid(&massif, true), Some(44));
    assert_eq!(output_pid(&massif, false), None);
    let groups = by_pid(vec![b.clone(), a.clone(), empty.clone(), c.clone()]);
    // The empty file goes last with the first process (the lowest pid).
    let want = BTreeMap::from([
        (41, vec![a.clone(), c.clone(), empty.clone()]),
        (42, vec![b.clone()]),
    ]);
    assert_eq!(groups, want);
    assert!(by_pid(Vec::new()).is_empty());
    // Empty files alone are kept, under no pid.
    assert_eq!(
        by_pid(vec![empty.clone()]),
        BTreeMap::from([(0, vec![empty])])
    );
    // A file last written before the run started is not its.
    let template = OutFile::parse(
        &dir.path().join("callgrind.out.%p").to_string_lossy(),
        |_| None,
    )
    .unwrap();
    let old = SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&b)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let started = file_clock_now(dir.path());
    assert!(!dir
        .path()
        .join(format!(".callgrind-jit-record.{}", std::process::id()))
        .exists());
    let mut since = written_since(&template, old + std::time::Duration::from_secs(1)).unwrap();
    since.sort();
    assert_eq!(since.len(), 3, "{since:?}");
    assert!(!since.contains(&b));
    assert!(
        written_since(&template, started + std::time::Duration::from_secs(60))
            .unwrap()
            .is_empty()
    );
}
