//! `scripts/install-c.sh PREFIX`: a C JIT builds with pkg-config alone,
//! loads the library by its SONAME, and names its functions at run time.

use std::process::Command;

use crate::util;

/// `scripts/install-c.sh DIR/prefix`: the prefix.
fn install_into(dir: &std::path::Path) -> std::path::PathBuf {
    let prefix = dir.join("prefix");
    util::run_ok(
        Command::new("bash")
            .arg(util::root().join("scripts/install-c.sh"))
            .arg(&prefix),
    );
    prefix
}

#[test]
fn a_c_jit_builds_with_pkg_config_alone_and_is_named() {
    let dir = util::scratch("install-c");
    let prefix = install_into(&dir);
    let lib = prefix.join("lib");

    // Only the cgjit_* functions are exported.
    let mut nm = Command::new("nm");
    nm.args(["-D", "--defined-only"])
        .arg(lib.join("libcallgrind_jit.so"));
    let symbols = String::from_utf8_lossy(&util::run_ok(&mut nm).stdout).into_owned();
    let exported: Vec<&str> = symbols
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .collect();
    assert!(
        !exported.is_empty() && exported.iter().all(|s| s.starts_with("cgjit_")),
        "{exported:?}"
    );

    let mut flags = Command::new("pkg-config");
    flags
        .args(["--cflags", "--libs", "callgrind-jit"])
        .env("PKG_CONFIG_PATH", lib.join("pkgconfig"));
    let flags = String::from_utf8_lossy(&util::run_ok(&mut flags).stdout).into_owned();
    let exe = dir.join("demo");
    let mut gcc = Command::new("gcc");
    gcc.arg(util::root().join("examples/c/demo.c"))
        .args(flags.split_whitespace())
        .arg("-o")
        .arg(&exe);
    util::run_ok(&mut gcc);

    // The program asks for the SONAME, which the install provides.
    let mut readelf = Command::new("readelf");
    readelf.arg("-d").arg(&exe);
    let dynamic = String::from_utf8_lossy(&util::run_ok(&mut readelf).stdout).into_owned();
    assert!(dynamic.contains("[libcallgrind_jit.so.0]"), "{dynamic}");

    let mut run = Command::new("valgrind");
    run.args([
        "--tool=callgrind",
        "--dump-instr=yes",
        "--callgrind-out-file=callgrind.out.%p",
    ])
    .arg(&exe)
    .arg("10")
    .current_dir(&dir)
    .env("LD_LIBRARY_PATH", &lib)
    .env("JITDUMPDIR", &dir);
    util::run_ok(&mut run);
    let profile = util::file_starting(&dir, "callgrind.out.").expect("a profile");
    let mut annotate = Command::new(util::cli());
    annotate.arg("annotate").arg(&profile).current_dir(&dir);
    util::run_ok(&mut annotate);
    let report = util::callgrind_annotate(&util::annotated_in(&dir), &["--auto=no"]);
    assert!(report.contains("sum.calc:sum_to ["), "{report}");
    assert!(report.contains("sum.calc:report ["), "{report}");
}

#[test]
fn record_from_an_install_prefix_finds_the_gdb_preload_in_its_lib() {
    let dir = util::scratch("install-gdb");
    let prefix = install_into(&dir);
    let bin = prefix.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(util::cli(), bin.join("callgrind-jit")).unwrap();
    let (jit, object, _) = crate::gdb_jit::c_jit(&dir);
    let out = util::run_ok(
        Command::new(bin.join("callgrind-jit"))
            .args(["record", "--"])
            .arg(jit)
            .arg(object)
            .env_remove("CALLGRIND_JIT_GDB_LIB")
            .current_dir(&dir),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("  triangle  ("), "{stderr}");
}
