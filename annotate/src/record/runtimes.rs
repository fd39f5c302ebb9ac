//! The runtimes `record` knows: the environment each reads to write its
//! symbol files, set for the program (and the programs it starts) unless
//! the user's own environment sets it.

/// A runtime and how its symbol output is turned on.
pub struct Runtime {
    /// Its name in messages.
    pub name: &'static str,
    /// Program names that run it (`python3` also matches `python3.13`).
    programs: &'static [&'static str],
    /// The variables that turn its symbol output on.
    pub env: &'static [(&'static str, &'static str)],
}

/// Every runtime record turns on.
pub const RUNTIMES: [Runtime; 5] = [
    Runtime {
        name: "MoarVM",
        programs: &["raku", "rakudo", "moar", "perl6"],
        // Its perf map, and its specializer run in step with the program
        // (under Valgrind its thread barely runs, and few frames are ever
        // JIT-compiled).
        env: &[("MVM_JIT_PERF_MAP", "1"), ("MVM_SPESH_BLOCKING", "1")],
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
    },
    Runtime {
        name: "HotSpot",
        programs: &["java"],
        env: &[(
            "JAVA_TOOL_OPTIONS",
            "-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit",
        )],
    },
    Runtime {
        name: "CPython",
        programs: &["python3", "python"],
        // 3.12 writes a perf map of its trampolines; 3.13 a jitdump
        // (the second wins where both are read).
        env: &[("PYTHONPERFSUPPORT", "1"), ("PYTHON_PERF_JIT_SUPPORT", "1")],
    },
    Runtime {
        name: "Erlang",
        programs: &["erl", "escript", "elixir", "iex", "mix"],
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
    },
];

/// The runtime the command's program is, by its file name.
pub fn of_command(command: &[String]) -> Option<&'static Runtime> {
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

/// Every variable record sets for the program: jit-client on, then each
/// runtime's.
pub fn program_env() -> impl Iterator<Item = (&'static str, &'static str)> {
    let runtimes = RUNTIMES.iter().flat_map(|r| r.env.iter().copied());
    [("CALLGRIND_JIT", "1")].into_iter().chain(runtimes)
}

/// What record says it turned on for `runtime` (the variables the user
/// did not set), and how to keep it off; `None` where it set nothing.
pub fn said(runtime: &Runtime) -> Option<String> {
    let set: Vec<String> = runtime
        .env
        .iter()
        .filter(|(key, _)| std::env::var_os(key).is_none())
        .map(|(key, value)| format!("{key}='{value}'"))
        .collect();
    (!set.is_empty()).then(|| {
        format!(
            "{}: symbol output turned on with {} (set {} yourself, even empty, to keep it as you want)",
            runtime.name,
            set.join(" "),
            if runtime.env.len() == 1 { "it" } else { "them" }
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
        assert_eq!(name("nodemon"), None);
        assert_eq!(name("./my-jit"), None);
    }
}
