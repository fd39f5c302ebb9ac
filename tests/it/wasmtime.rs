//! wasmtime, through its Python binding, under the real callgrind: two
//! modules' functions of one name stay two functions (tests/wasm).
//!
//! Under Valgrind 3.19 wasmtime crashes in rustix's check_elf_base: its
//! PR_GET_AUXV prctl returns the host's auxiliary vector. tests/c/no_auxv_prctl.c
//! makes that prctl fail, and rustix reads /proc/self/auxv instead.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util;

/// The real python3 (not a version manager's shim script, which valgrind
/// would run instead of Python), if wasmtime imports in it.
fn python_with_wasmtime() -> Option<PathBuf> {
    let out = Command::new("python3")
        .args(["-c", "import sys, wasmtime; print(sys.executable)"])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// Runs tests/wasm/two_modules.py with `profiler` under callgrind in `dir`;
/// returns the pid.
fn run(dir: &Path, python: &Path, profiler: &str) -> u32 {
    let wrapper = util::c_program(dir, "no_auxv_prctl");
    let script = util::root().join("tests/wasm/two_modules.py");
    let out = util::run_ok(
        Command::new(wrapper)
            .current_dir(dir)
            .args(["valgrind", "--tool=callgrind", "--dump-instr=yes"])
            .arg("--callgrind-out-file=callgrind.out.%p")
            .arg(python)
            .arg(script)
            .arg(profiler),
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "6765 1820529360"
    );
    let profile = util::file_starting(dir, "callgrind.out.").unwrap();
    profile
        .extension()
        .unwrap()
        .to_str()
        .unwrap()
        .parse()
        .unwrap()
}

/// The self cost of `function` (callgrind_annotate's `file:name`).
fn self_cost(listing: &str, function: &str) -> u64 {
    util::costs_where(listing, |line| line.contains(&format!(" {function} [")))
}

#[test]
fn same_named_functions_of_two_wasm_modules_stay_apart() {
    let Some(python) = python_with_wasmtime() else {
        return util::skip(
            "wasmtime",
            "python3 with wasmtime (scripts/setup.sh installs it)",
        );
    };
    for profiler in ["jitdump", "perfmap"] {
        let dir = util::scratch(&format!("wasmtime-{profiler}"));
        let pid = run(&dir, &python, profiler);
        let map = PathBuf::from(format!("/tmp/perf-{pid}.map"));
        let out = util::annotate(&dir, &[&format!("callgrind.out.{pid}"), "-o", "named"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let sources: Vec<PathBuf> = [dir.join(format!("jit-{pid}.dump")), map.clone()]
            .into_iter()
            .filter(|p| p.exists())
            .collect();
        let symbols = crate::oracle::Symbols::read(&sources).for_output(&dir.join("named"));
        let _ = std::fs::remove_file(&map);
        let text = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
        let input = text(&format!("callgrind.out.{pid}"));
        crate::oracle::check(profiler, &input, &text("named"), &symbols);
        let inflated = crate::inflation::inflated_file(&dir.join("named"));
        assert_eq!(inflated, [], "#28 on wasmtime, {profiler}");
        let listing =
            util::callgrind_annotate(&dir.join("named"), &["--auto=no", "--threshold=100"]);
        // fib(20) recursive: over 20,000 calls; fib(60) iterative: one.
        let recursive =
            self_cost(&listing, "<jit module 1>:fib'2") + self_cost(&listing, "<jit module 1>:fib");
        let iterative = self_cost(&listing, "<jit module 2>:fib");
        assert!(recursive > 100_000, "{profiler}: {listing}");
        assert!((100..5_000).contains(&iterative), "{profiler}: {listing}");
        assert!(!listing.contains("<jit>:fib"), "{profiler}: {listing}");
        // Each fib's helper, apart from fib by alignment padding: fib(20)
        // reaches 10,946 leaves, fib(60) loops 60 times.
        let helper = |module| self_cost(&listing, &format!("<jit module {module}>:helper"));
        assert!(
            helper(1) > 10 * helper(2) && helper(2) > 0,
            "{profiler}: {listing}"
        );
        assert!(!listing.contains("<jit>:helper"), "{profiler}: {listing}");
        let trampolines = "wasm[0]::array_to_wasm_trampoline[1]";
        for module in 1..=2 {
            let name = format!("<jit module {module}>:{trampolines}");
            assert!(
                listing.contains(&name),
                "{profiler}: {name} missing:\n{listing}"
            );
        }
    }
}

/// With no profiler and debug info on, wasmtime registers each module with
/// gdb's JIT interface: `record` names it through the preload library,
/// each module's functions under their own file.
#[test]
fn wasmtime_told_only_gdb_is_named_through_the_preload() {
    let Some(python) = python_with_wasmtime() else {
        return util::skip(
            "wasmtime",
            "python3 with wasmtime (scripts/setup.sh installs it)",
        );
    };
    let dir = util::scratch("wasmtime-gdb");
    let wrapper = util::c_program(&dir, "no_auxv_prctl");
    let script = util::root().join("tests/wasm/two_modules.py");
    let out = util::run_ok(
        Command::new(wrapper)
            .current_dir(&dir)
            .arg(util::cli())
            .args(["record", "--"])
            .arg(&python)
            .arg(script)
            .arg("gdb")
            .env("CALLGRIND_JIT_GDB_LIB", util::gdb_preload()),
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "6765 1820529360"
    );
    let listing =
        util::callgrind_annotate(&util::annotated_in(&dir), &["--auto=no", "--threshold=100"]);
    let fib = |module: u32| {
        let file = format!("/<wasm-module>/<gen-{module}>.wasm");
        self_cost(&listing, &format!("{file}:wasm[0]::function[1]::fib'2"))
            + self_cost(&listing, &format!("{file}:wasm[0]::function[1]::fib"))
    };
    // fib(20) recursive in the first module, fib(60) iterative in the second.
    assert!(fib(0) > 100_000, "{listing}");
    assert!((100..5_000).contains(&fib(1)), "{listing}");
    crate::oracle::check_recording(&dir);
}
