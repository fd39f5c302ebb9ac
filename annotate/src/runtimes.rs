//! The runtimes callgrind-jit knows: the environment each reads to write
//! its symbol files (`record` sets it for the program and the programs it
//! starts, unless the user's own environment sets it), and whether its
//! compiled code is resumed by calls (the rewrite then plans re-entry
//! before writing).

use std::ffi::OsString;
use std::path::Path;

/// A runtime and how its symbol output is turned on.
pub struct Runtime {
    /// Its name in messages.
    pub name: &'static str,
    /// Program names that run it (`python3` also matches `python3.13`).
    programs: &'static [&'static str],
    /// The variables that turn its symbol output on.
    pub env: &'static [(&'static str, &'static str)],
    /// Variables naming the folder its symbol files go to: record's
    /// output folder, where annotate looks for them.
    pub folder_env: &'static [&'static str],
    /// Its compiled code is resumed by calls into its middle (V8's
    /// out-of-line prologue, HotSpot's entry points, BEAM's): its
    /// profiles need the re-entry plan, made before the output is
    /// written.
    pub resumes_by_calls: bool,
}

/// Every runtime record turns on.
pub const RUNTIMES: [Runtime; 11] = [
    Runtime {
        name: "MoarVM",
        programs: &["raku", "rakudo", "moar", "perl6"],
        // Its perf map, and its specializer run in step with the program
        // (under Valgrind its thread barely runs, and few frames are ever
        // JIT-compiled).
        env: &[("MVM_JIT_PERF_MAP", "1"), ("MVM_SPESH_BLOCKING", "1")],
        folder_env: &[],
        resumes_by_calls: false,
    },
    Runtime {
        name: "Node",
        programs: &["node", "nodejs"],
        // A jitdump with line tables and a perf map; interpreted frames as
        // functions of their own.
        env: &[(
            "NODE_OPTIONS",
            "--perf-prof --perf-basic-prof --interpreted-frames-native-stack",
        )],
        folder_env: &[],
        resumes_by_calls: true,
    },
    Runtime {
        name: "HotSpot",
        programs: &["java"],
        env: &[(
            "JAVA_TOOL_OPTIONS",
            "-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit",
        )],
        folder_env: &[],
        resumes_by_calls: true,
    },
    Runtime {
        name: "CPython",
        programs: &["python3", "python"],
        // 3.12 writes a perf map of its trampolines; 3.13 a jitdump
        // (the second wins where both are read).
        env: &[("PYTHONPERFSUPPORT", "1"), ("PYTHON_PERF_JIT_SUPPORT", "1")],
        folder_env: &[],
        resumes_by_calls: false,
    },
    Runtime {
        name: "Erlang",
        // `erl` and the rest exec BEAM: `beam.smp` is a profile's `cmd:`.
        programs: &["erl", "escript", "elixir", "iex", "mix", "beam.smp"],
        // BEAM's JIT writes a perf map and a jitdump (the same ranges,
        // names spelled differently; the jitdump's are used). One
        // scheduler that never busy-waits: Valgrind runs one thread at a
        // time, and idle schedulers spinning for thread progress made one
        // short run cost from 0.69 to 42 billion Ir (3 of 3 runs at 0.68
        // with these).
        env: &[(
            "ERL_FLAGS",
            "+JPperf true +S 1 +sbwt none +sbwtdcpu none +sbwtdio none",
        )],
        folder_env: &[],
        resumes_by_calls: true,
    },
    Runtime {
        name: "Deno",
        programs: &["deno"],
        // V8's flags as for Node, read from Deno's own variable.
        env: &[(
            "DENO_V8_FLAGS",
            "--perf-prof,--perf-basic-prof,--interpreted-frames-native-stack",
        )],
        folder_env: &[],
        resumes_by_calls: true,
    },
    Runtime {
        name: "Bun",
        programs: &["bun", "bunx"],
        // JavaScriptCore's jitdump (`jit-TID-PID.dump`), written where
        // annotate looks; without a folder it goes to a random name in /tmp.
        env: &[("BUN_JSC_useJITDump", "1")],
        folder_env: &["BUN_JSC_jitDumpDirectory"],
        resumes_by_calls: false,
    },
    Runtime {
        name: ".NET",
        programs: &["dotnet"],
        // A perf map: .NET Core 3.1 reads the COMPlus_ spelling, .NET 5
        // and later both.
        env: &[
            ("DOTNET_PerfMapEnabled", "1"),
            ("COMPlus_PerfMapEnabled", "1"),
        ],
        folder_env: &[],
        resumes_by_calls: false,
    },
    Runtime {
        name: "Mono",
        programs: &["mono", "mono-sgen"],
        // `--jitmap`: a perf map, from Mono's variable for extra options.
        env: &[("MONO_ENV_OPTIONS", "--jitmap")],
        folder_env: &[],
        resumes_by_calls: false,
    },
    Runtime {
        name: "QEMU",
        programs: &[
            "qemu-x86_64",
            "qemu-i386",
            "qemu-aarch64",
            "qemu-arm",
            "qemu-riscv64",
            "qemu-ppc64le",
            "qemu-s390x",
            "qemu-mips64el",
            "qemu-loongarch64",
        ],
        // User mode's jitdump of its translated blocks (8.1 and later),
        // named by the guest's symbols in annotate.
        env: &[("QEMU_JITDUMP", "1")],
        folder_env: &[],
        resumes_by_calls: false,
    },
    Runtime {
        name: "jit-client",
        programs: &[],
        // Programs linking jit-client: their jitdump beside the profile.
        env: &[("CALLGRIND_JIT", "1")],
        folder_env: &["JITDUMPDIR"],
        resumes_by_calls: false,
    },
];

/// The runtime the command's program is, by its file name.
pub(crate) fn of_command(command: &[String]) -> Option<&'static Runtime> {
    let program = command.first()?;
    let name = std::path::Path::new(program).file_name()?.to_str()?;
    RUNTIMES.iter().find(|r| {
        r.programs.iter().any(|p| {
            name.strip_prefix(p)
                .is_some_and(|rest| rest.is_empty() || is_version(rest))
        })
    })
}

/// `3`, `.13`, `3.12`: what follows a program name in a versioned one.
fn is_version(rest: &str) -> bool {
    rest.bytes().all(|b| b.is_ascii_digit() || b == b'.')
}

impl Runtime {
    /// The variables it sets for symbol files going to `folder`, but those
    /// the user's environment has.
    fn settings<'a>(
        &'a self,
        folder: &'a Path,
    ) -> impl Iterator<Item = (&'static str, OsString)> + 'a {
        let values = self.env.iter().map(|&(k, v)| (k, OsString::from(v)));
        let folders = self.folder_env.iter().map(move |&k| (k, folder.into()));
        values
            .chain(folders)
            .filter(|(key, _)| std::env::var_os(key).is_none())
    }
}

/// Every variable record sets for the program, whose symbol files go to
/// `folder`: each runtime's, unless the user's environment has it.
pub(crate) fn program_env(folder: &Path) -> Vec<(&'static str, OsString)> {
    RUNTIMES.iter().flat_map(|r| r.settings(folder)).collect()
}

/// What record says it turned on for `runtime` (the variables the user
/// did not set, folders given as `folder`), and how to keep it off;
/// `None` where it set nothing.
pub(crate) fn said(runtime: &Runtime, folder: &Path) -> Option<String> {
    let set: Vec<String> = runtime
        .settings(folder)
        .map(|(key, value)| format!("{key}='{}'", value.to_string_lossy()))
        .collect();
    let n = runtime.env.len() + runtime.folder_env.len();
    (!set.is_empty()).then(|| {
        format!(
            "{}: symbol output turned on with {} (set {} yourself, even empty, to keep it as you want)",
            runtime.name,
            set.join(" "),
            if n == 1 { "it" } else { "them" }
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(program: &str) -> Option<&'static str> {
        of_command(&[program.to_string()]).map(|r| r.name)
    }

    #[test]
    fn programs_are_recognised_by_their_file_name() {
        assert_eq!(name("/usr/bin/node"), Some("Node"));
        assert_eq!(name("python3.13"), Some("CPython"));
        assert_eq!(
            name("/root/.pyenv/versions/3.12.1/bin/python3"),
            Some("CPython")
        );
        assert_eq!(name("java"), Some("HotSpot"));
        assert_eq!(name("raku"), Some("MoarVM"));
        assert_eq!(name("/usr/bin/erl"), Some("Erlang"));
        assert_eq!(name("deno"), Some("Deno"));
        assert_eq!(name("/usr/local/bin/bun"), Some("Bun"));
        assert_eq!(name("dotnet"), Some(".NET"));
        assert_eq!(name("mono"), Some("Mono"));
        assert_eq!(name("/usr/bin/qemu-x86_64"), Some("QEMU"));
        assert_eq!(name("nodemon"), None);
        assert_eq!(name("./my-jit"), None);
        assert_eq!(name("jit-client"), None);
    }

    #[test]
    fn record_says_what_it_turned_on_and_how_to_keep_it_off() {
        let of = |name: &str| RUNTIMES.iter().find(|r| r.name == name).unwrap();
        let unset = |r: &Runtime| {
            let mut keys = r
                .env
                .iter()
                .map(|e| e.0)
                .chain(r.folder_env.iter().copied());
            keys.all(|k| std::env::var_os(k).is_none())
        };
        let (mono, bun) = (of("Mono"), of("Bun"));
        if unset(mono) {
            assert_eq!(
                said(mono, Path::new("/out")).as_deref(),
                Some("Mono: symbol output turned on with MONO_ENV_OPTIONS='--jitmap' (set it yourself, even empty, to keep it as you want)")
            );
        }
        if unset(bun) {
            assert_eq!(
                said(bun, Path::new("/out")).as_deref(),
                Some("Bun: symbol output turned on with BUN_JSC_useJITDump='1' BUN_JSC_jitDumpDirectory='/out' (set them yourself, even empty, to keep it as you want)")
            );
        }
        let nothing = Runtime {
            env: &[],
            folder_env: &[],
            ..*mono
        };
        assert_eq!(said(&nothing, Path::new("/out")), None);
        let folder_only = Runtime {
            env: &[],
            folder_env: &["CGJ_TEST_NEVER_SET"],
            ..*mono
        };
        let says = said(&folder_only, Path::new("/out")).unwrap();
        let sentence =
            "CGJ_TEST_NEVER_SET='/out' (set it yourself, even empty, to keep it as you want)";
        assert!(says.ends_with(sentence), "{says}");
    }

    #[test]
    fn folder_variables_name_the_output_folder() {
        let env = program_env(Path::new("/out"));
        let get = |key| env.iter().find(|(k, _)| *k == key).map(|(_, v)| v.clone());
        if std::env::var_os("BUN_JSC_jitDumpDirectory").is_none() {
            assert_eq!(get("BUN_JSC_jitDumpDirectory"), Some("/out".into()));
        }
        if std::env::var_os("CALLGRIND_JIT").is_none() {
            assert_eq!(get("CALLGRIND_JIT"), Some("1".into()));
        }
    }
}
