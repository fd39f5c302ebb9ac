//! Which files a run trusts: two runs of one pid each named from its own
//! files, a file another user planted set aside, and only jit-client's
//! files named in a Valgrind log.

use std::path::Path;

use crate::provenance::*;
use crate::util;

/// Gives run `b` the pid of `a` (its profile's `pid:` line, its jitdump's
/// header and both names) in a folder of its own: a container run twice.
fn as_same_pid(dir: &Path, a: &Run, b: &Run) -> Run {
    let folder = dir.join("B");
    std::fs::create_dir_all(&folder).unwrap();
    let text = std::fs::read_to_string(&b.profile).unwrap();
    let text = text.replace(&format!("pid: {}\n", b.pid), &format!("pid: {}\n", a.pid));
    let profile = folder.join(format!("callgrind.out.{}", a.pid));
    std::fs::write(&profile, text).unwrap();
    let mut data = std::fs::read(&b.dump).unwrap();
    data[20..24].copy_from_slice(&a.pid.to_ne_bytes());
    let dump = folder.join(format!("jit-{}.dump", a.pid));
    std::fs::write(&dump, data).unwrap();
    Run {
        pid: a.pid,
        profile,
        dump,
    }
}

#[test]
fn two_runs_that_share_a_pid_are_named_each_from_its_own_files() {
    let dir = util::scratch("prov-same-pid");
    let a = run(&dir, "A", &["fib_A", "1000"], &[]);
    let other = run(&dir, "other", &["fib_B", "1000"], &[]);
    let b = as_same_pid(&dir, &a, &other);
    let rel = |p: &Path| p.strip_prefix(&dir).unwrap().to_str().unwrap().to_string();
    let (pa, pb, da, db) = (rel(&a.profile), rel(&b.profile), rel(&a.dump), rel(&b.dump));
    let named = |r: &Run| {
        listed(
            &r.profile
                .with_file_name(format!("callgrind.jit.out.{}", r.pid)),
        )
    };
    for args in [vec![&pa, &pb], vec![&pa, &pb, &db, &da]] {
        let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
        let out = util::annotate(&dir, &args);
        let said = stderr(&out);
        assert!(out.status.success(), "{said}");
        let (named_a, named_b) = (named(&a), named(&b));
        assert!(
            named_a.contains("fib_A") && !named_a.contains("fib_B"),
            "{named_a}\n{said}"
        );
        assert!(
            named_b.contains("fib_B") && !named_b.contains("fib_A"),
            "{named_b}\n{said}"
        );
        assert!(said.contains("(the run in '"), "{said}");
    }
    // Joined per run, beside each run's parts: never one process of two.
    let out = util::annotate(&dir, &[&pa, &pb, "--merge"]);
    assert!(out.status.success(), "{}", stderr(&out));
    for r in [&a, &b] {
        let merged = r
            .profile
            .with_file_name(format!("callgrind.jit.merged.{}", r.pid));
        let joined = std::fs::read_to_string(&merged).unwrap();
        let raw = std::fs::read_to_string(&r.profile).unwrap();
        let totals = |t: &str| {
            t.lines()
                .find(|l| l.starts_with("totals:"))
                .unwrap()
                .to_string()
        };
        assert_eq!(totals(&joined), totals(&raw), "{}", merged.display());
    }
    let out = util::annotate(&dir, &[&pa, &pb, "--merge", "-o", "both"]);
    let said = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("the profiles are of 2 runs"), "{said}");
    assert!(!dir.join("both").exists());
    // A given file beside neither run could be either's.
    let loose = copy_into(&dir, &a.dump);
    let out = util::annotate(&dir, &[&pa, &pb, loose.to_str().unwrap()]);
    let said = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("could be either of the runs of pid"),
        "{said}"
    );
}

#[test]
fn a_symbol_file_another_user_planted_is_set_aside() {
    let dir = util::scratch("prov-planted");
    let r = run(&dir, "r", &["mine", "1000"], &[]);
    let evil = run(&dir, "evil", &["EVIL_from_tmp", "1000"], &[]);
    // Planted where runtimes write (the current folder stands for /tmp):
    // the run's pid in its name and header, a later header time, and a
    // file time within the profile's.
    let cwd = dir.join("cwd");
    std::fs::create_dir_all(&cwd).unwrap();
    let dump = cwd.join(format!("jit-{}.dump", r.pid));
    let mut data = std::fs::read(&evil.dump).unwrap();
    data[20..24].copy_from_slice(&r.pid.to_ne_bytes());
    std::fs::write(&dump, data).unwrap();
    let map = cwd.join(format!("perf-{}.map", r.pid));
    std::fs::write(&map, format!("{:x} 40 EVIL_map\n", code_addr(&r.dump))).unwrap();
    for file in [&dump, &map] {
        util::run_ok(
            std::process::Command::new("touch")
                .arg("-r")
                .arg(&r.profile)
                .arg(file),
        );
    }
    let profile = r.profile.to_str().unwrap();
    let names = |out: &str| listed(&cwd.join(out));
    // Writable by anyone: any user could have put its bytes there.
    let chmod = |mode| {
        use std::os::unix::fs::PermissionsExt;
        for file in [&dump, &map] {
            std::fs::set_permissions(file, std::fs::Permissions::from_mode(mode)).unwrap();
        }
    };
    chmod(0o666);
    let out = util::annotate(&cwd, &[profile, "-o", "open.out"]);
    let said = stderr(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        names("open.out").contains("mine") && !names("open.out").contains("EVIL"),
        "{said}"
    );
    assert!(said.contains("not used: anyone may write it"), "{said}");
    chmod(0o644);
    // Owned by another user (as root, the test can give it one).
    let chown = std::process::Command::new("chown")
        .arg("nobody")
        .args([&dump, &map])
        .status();
    if !chown.is_ok_and(|s| s.success()) {
        return util::skip("a_symbol_file_another_user_planted", "chown needs root");
    }
    let out = util::annotate(&cwd, &[profile, "-o", "owned.out"]);
    let said = stderr(&out);
    assert!(out.status.success(), "{said}");
    let named = names("owned.out");
    assert!(
        named.contains("mine") && !named.contains("EVIL"),
        "{named}\n{said}"
    );
    assert_eq!(
        said.matches("not used: owned by nobody").count(),
        2,
        "{said}"
    );
    // Asked for: used, and said whose.
    let out = util::annotate(&cwd, &[profile, "-o", "any.out", "--any-owner"]);
    let said = stderr(&out);
    assert!(out.status.success(), "{said}");
    assert!(names("any.out").contains("EVIL_from_tmp"), "{said}");
    assert!(
        said.contains("the newest of 2 candidates, owned by nobody"),
        "{said}"
    );
}

#[test]
fn valgrinds_log_names_only_the_files_jit_client_writes() {
    let dir = util::scratch("prov-log-line");
    let prog = util::c_program(&dir, "provenance");
    let out = std::process::Command::new("valgrind")
        .current_dir(&dir)
        .args(["--tool=none"])
        .arg(&prog)
        .args(["logged", "10"])
        .env("CALLGRIND_JIT_PERF_MAP", "0")
        .output()
        .unwrap();
    let said = stderr(&out);
    assert!(out.status.success(), "{said}");
    let line = said
        .lines()
        .find(|l| l.contains("callgrind-jit: writing"))
        .unwrap_or_else(|| panic!("no log line: {said}"));
    assert!(line.contains(".dump") && !line.contains("perf-"), "{line}");
}
