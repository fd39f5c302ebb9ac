//! The runtimes of the matrix beyond Node, Java, Python, MoarVM and Erlang:
//! .NET, Mono, Deno, Bun and PHP, each recorded with `callgrind-jit record`
//! where it is installed (scripts/setup.sh installs them), and .NET's
//! recording kept as a fixture whose costs are checked against the
//! program's own call counts.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::record_runtimes::{record_runtime, record_runtime_in, runtime};
use crate::util;

const FIB_JS: &str = "function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\n\
                      console.log(fib(25));\n";

/// Inclusive and self cost of the function whose callgrind_annotate line
/// (all recursion levels) contains `needle`.
fn inclusive_and_self(profile: &Path, needle: &str) -> (u64, u64) {
    let report = |args: &[&str]| {
        let mut all = vec!["--auto=no", "--threshold=100"];
        all.extend_from_slice(args);
        util::callgrind_annotate(profile, &all)
    };
    let (incl, flat) = (report(&["--inclusive=yes"]), report(&[]));
    let sum = |r: &str| util::costs_where(r, |l| l.contains(needle));
    (sum(&incl), sum(&flat))
}

/// No warning in what record said, but the ones `allowed` names.
fn no_warning_but(said: &str, allowed: &[&str]) {
    let warnings = said
        .lines()
        .filter(|l| l.contains("warning") || l.contains("address reuse"))
        .filter(|l| !allowed.iter().any(|a| l.contains(a)));
    assert_eq!(warnings.count(), 0, "{said}");
}

/// Calls of `fib(k)` (itself and its recursion) for `fib(n) = n < 2 ? n
/// : fib(n-1) + fib(n-2)`.
fn fib_calls(k: u64) -> u64 {
    let (mut a, mut b) = (1, 1); // calls of fib(0), fib(1)
    for _ in 1..k {
        (a, b) = (b, a + b + 1);
    }
    if k == 0 {
        a
    } else {
        b
    }
}

#[test]
fn fib_calls_are_counted_as_the_recursion_makes_them() {
    let calls: Vec<u64> = (0..6).map(fib_calls).collect();
    assert_eq!(calls, [1, 1, 3, 5, 9, 15]);
    assert_eq!(fib_calls(22), 57_313);
}

/// .NET's precode blocks: every call between managed methods goes through
/// an entry of a `stub<N> AllocateTemporaryEntryPoints<…>` range. Calls to
/// its second and later entries were folded as calls into the middle of
/// one function, and `Fib::walk` kept 3,418 of its cost (its own): its
/// calls of `fib` were gone.
#[test]
fn dotnet_callers_keep_the_calls_through_precode_entries() {
    let dir = util::scratch("dotnet-fixture");
    let profile = crate::rewrite::gunzip("dotnet-fib", "callgrind.out.25773", &dir);
    let map = util::fixture("dotnet-fib/perf-25773.map");
    let out = util::annotate(
        &dir,
        &[
            profile.to_str().unwrap(),
            map.to_str().unwrap(),
            "-o",
            "named",
        ],
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(!said.contains("calls into the middle"), "{said}");
    let named = dir.join("named");
    let (walk, walk_self) = inclusive_and_self(&named, "Fib::walk(int32)");
    let (_, fib_self) = inclusive_and_self(&named, "Fib::fib(int32)");
    // The truth from the program: Main's fib(22) and walk(200)'s
    // fib(i % 12) make all of fib's calls; walk's share of fib's cost is
    // its share of the calls (one compiled body: every call costs alike,
    // give or take the recursion's leaves).
    let from_walk: u64 = (0..200).map(|i| fib_calls(i % 12)).sum();
    let all = from_walk + fib_calls(22);
    let want = walk_self + fib_self * from_walk / all;
    assert!(
        walk >= want * 95 / 100 && walk <= want * 110 / 100,
        "Fib::walk inclusive {walk}, want about {want} (self {walk_self}, fib's self {fib_self}, {from_walk} of {all} calls)\n{said}"
    );
}

/// `dotnet` from PyPI's dotnetcore2 (scripts/setup.sh installs it), where
/// it runs.
fn dotnet() -> Option<PathBuf> {
    let out = Command::new("python3")
        .args([
            "-c",
            "import dotnetcore2, os; print(os.path.dirname(dotnetcore2.__file__))",
        ])
        .output()
        .ok()?;
    let dir = String::from_utf8(out.stdout).ok()?;
    let dotnet = Path::new(dir.trim()).join("bin/dotnet");
    dotnet.exists().then_some(dotnet)
}

/// Fib.cs compiled with Mono's mcs into `dir` (with .NET's runtime
/// config), where mcs is installed.
fn fib_exe(dir: &Path) -> Option<()> {
    for name in ["Fib.cs", "Fib.runtimeconfig.json"] {
        std::fs::copy(util::fixture(&format!("dotnet-fib/{name}")), dir.join(name)).ok()?;
    }
    let built = Command::new("mcs")
        .arg("Fib.cs")
        .current_dir(dir)
        .output()
        .ok()?;
    built.status.success().then_some(())
}

#[test]
fn dotnet_is_named_with_no_flag_of_its_own() {
    let dir = util::scratch("record-dotnet");
    let (Some(dotnet), Some(())) = (dotnet(), fib_exe(&dir)) else {
        return util::skip(
            "dotnet_is_named",
            "dotnetcore2 (pip) or mcs (mono-mcs) is not installed",
        );
    };
    // The wheel carries no ICU.
    let env = [("DOTNET_SYSTEM_GLOBALIZATION_INVARIANT", "1")];
    let said = record_runtime_in(&dir, &dotnet, &["Fib.exe"], &env);
    no_warning_but(&said, &[]);
    assert!(
        said.contains(".NET: symbol output turned on with DOTNET_PerfMapEnabled='1' COMPlus_PerfMapEnabled='1'"),
        "{said}"
    );
    assert!(!said.contains("calls into the middle"), "{said}");
    let named = util::annotated_in(&dir);
    let (walk, walk_self) = inclusive_and_self(&named, "Fib::walk(int32)");
    let (_, fib_self) = inclusive_and_self(&named, "Fib::fib(int32)");
    assert!(
        fib_self > 0 && walk > walk_self + fib_self / 10,
        "walk {walk} (self {walk_self}), fib's self {fib_self}\n{said}"
    );
    crate::oracle::check_recording(&dir);
}

#[test]
fn mono_is_named_with_no_flag_of_its_own() {
    let dir = util::scratch("record-mono");
    let (Some(mono), Some(())) = (runtime("mono"), fib_exe(&dir)) else {
        return util::skip("mono_is_named", "mono or mcs is not installed");
    };
    let said = record_runtime_in(&dir, &mono, &["Fib.exe"], &[]);
    no_warning_but(&said, &[]);
    assert!(
        said.contains("Mono: symbol output turned on with MONO_ENV_OPTIONS='--jitmap'"),
        "{said}"
    );
    let named = util::annotated_in(&dir);
    let (walk, walk_self) = inclusive_and_self(&named, "Fib:walk (int)");
    let (_, fib_self) = inclusive_and_self(&named, "Fib:fib (int)");
    assert!(
        fib_self > 0 && walk > walk_self + fib_self / 10,
        "walk {walk} (self {walk_self}), fib's self {fib_self}\n{said}"
    );
    crate::oracle::check_recording(&dir);
}

#[test]
fn deno_is_named_with_no_flag_of_its_own() {
    let Some(deno) = runtime("deno") else {
        return util::skip("deno_is_named", "deno is not installed (npm)");
    };
    let said = record_runtime(
        "record-deno",
        &deno,
        &["run", "fib.js"],
        &[("fib.js", FIB_JS)],
    );
    assert!(
        said.contains("Deno: symbol output turned on with DENO_V8_FLAGS='--perf-prof"),
        "{said}"
    );
    // V8's tier marker and quote are gone from the name.
    let row = said.lines().find(|l| l.contains("  fib  (file://"));
    assert!(row.is_some_and(|r| r.ends_with("fib.js:1)")), "{said}");
    crate::oracle::check_recording(&util::scratch_dir("record-deno"));
}

#[test]
fn bun_jitdump_is_found_where_record_asked_for_it() {
    let Some(bun) = runtime("bun") else {
        return util::skip("bun_jitdump_is_found", "bun is not installed (npm)");
    };
    let said = record_runtime("record-bun", &bun, &["fib.js"], &[("fib.js", FIB_JS)]);
    // Bun never flushes its jitdump's last writes: that one is true.
    no_warning_but(&said, &["ends inside a record"]);
    assert!(
        said.contains(
            "Bun: symbol output turned on with BUN_JSC_useJITDump='1' BUN_JSC_jitDumpDirectory='"
        ),
        "{said}"
    );
    // JavaScriptCore's jitdump, `jit-TID-PID.dump` in record's folder.
    let found = said
        .lines()
        .any(|l| l.contains("symbols of pid") && l.contains(".dump' ("));
    assert!(found, "{said}");
    assert!(!said.contains("JIT functions named: 0 "), "{said}");
    crate::oracle::check_recording(&util::scratch_dir("record-bun"));
}

#[test]
fn php_opcache_jit_is_named() {
    let php_jits = Command::new("php")
        .args([
            "-d",
            "opcache.enable_cli=1",
            "-r",
            "echo function_exists('opcache_get_status') ? 'y' : 'n';",
        ])
        .output()
        .is_ok_and(|o| o.stdout == b"y");
    if !php_jits {
        return util::skip(
            "php_opcache_jit_is_named",
            "php with opcache is not installed",
        );
    }
    let fib = "<?php\nfunction fib($n) { return $n < 2 ? $n : fib($n - 1) + fib($n - 2); }\n\
               echo fib(22), \"\\n\";\n";
    // PHP reads no variable for these: the flags are the user's. opcache
    // leaves a script changed in the last 2 seconds uncached, and so not
    // JIT-compiled (file_update_protection): this one was just written.
    let said = record_runtime(
        "record-php",
        Path::new("php"),
        &[
            "-d",
            "opcache.enable_cli=1",
            "-d",
            "opcache.file_update_protection=0",
            "-d",
            "opcache.jit_buffer_size=16M",
            "-d",
            "opcache.jit=1205",
            "-d",
            "opcache.jit_debug=0x10",
            "fib.php",
        ],
        &[("fib.php", fib)],
    );
    assert!(said.contains("  JIT$fib  ("), "{said}");
    no_warning_but(&said, &[]);
    crate::oracle::check_recording(&util::scratch_dir("record-php"));
}

/// QEMU's user mode (8.1 and later; Debian 12 has it in backports, which
/// scripts/setup.sh installs): its jitdump lists every translated block as
/// `guest-0xADDR` but not the TCG prologue that jumps into them, so all
/// the blocks' cost stayed under the prologue's address (#34 bug 3).
#[test]
fn qemu_blocks_are_named_by_the_guest_function() {
    let jitdump = Command::new("qemu-x86_64")
        .arg("-h")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("-jitdump"));
    if !jitdump {
        return util::skip(
            "qemu_blocks_are_named",
            "qemu-x86_64 8.1 or later is not installed",
        );
    }
    let dir = util::scratch("record-qemu");
    let guest = dir.join("guest");
    util::run_ok(
        Command::new("gcc")
            .args(["-O1", "-g", "-static", "-o"])
            .arg(&guest)
            .arg(util::root().join("tests/qemu/guest.c")),
    );
    // By its full path: the oracle reads the guest from the cmd: line.
    let said = record_runtime_in(
        &dir,
        Path::new("qemu-x86_64"),
        &[guest.to_str().unwrap()],
        &[],
    );
    no_warning_but(&said, &[]);
    assert!(
        said.contains("QEMU: symbol output turned on with QEMU_JITDUMP='1'"),
        "{said}"
    );
    assert!(
        said.contains("moved to the JIT function whose code it is"),
        "{said}"
    );
    // collatz runs nearly all of the guest's code: its blocks, named by
    // the guest's symbol, hold their own cost now.
    let row = said.lines().find(|l| l.ends_with("  collatz  (<jit>)"));
    let own: f64 = row
        .and_then(|r| r.split('%').nth(1))
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| panic!("{said}"));
    assert!(own > 5.0, "{said}");
    crate::oracle::check_recording(&dir);
}
