//! jit-client under fork, kill -9, threads, memcheck and helgrind.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use crate::util;

#[test]
fn a_forked_child_writes_its_own_files() {
    let dir = util::scratch("fork");
    let exe = util::c_program(&dir, "fork");
    let child = Command::new(&exe)
        .env("CALLGRIND_JIT", "1")
        .env("JITDUMPDIR", &dir)
        .output()
        .unwrap();
    assert!(child.status.success());
    let child_pid: u32 = String::from_utf8_lossy(&child.stdout)
        .trim()
        .parse()
        .unwrap();
    let parent = util::file_starting(&dir, "jit-")
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned());
    let (child_names, _) = util::dump_names(&dir.join(format!("jit-{child_pid}.dump")));
    assert_eq!(child_names, ["child_fn"]);
    let parent_dump = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.extension().is_some_and(|x| x == "dump")
                && !p.ends_with(format!("jit-{child_pid}.dump"))
        })
        .unwrap_or_else(|| panic!("no parent dump: {parent:?}"));
    let (names, problems) = util::dump_names(&parent_dump);
    assert_eq!(names, ["parent_fn", "parent_after_fork"]);
    assert!(problems.is_empty(), "{problems:?}");
    let map = std::fs::read_to_string(format!("/tmp/perf-{child_pid}.map")).unwrap();
    assert!(
        map.ends_with(" 6 child_fn\n") && map.lines().count() == 1,
        "{map}"
    );
}

#[test]
fn kill_9_loses_nothing_already_registered() {
    let dir = util::scratch("kill9");
    let exe = util::c_program(&dir, "crash");
    let mut child = Command::new(&exe)
        .env("CALLGRIND_JIT", "1")
        .env("JITDUMPDIR", &dir)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line, "ready\n");
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let (names, problems) = util::dump_names(&dir.join(format!("jit-{}.dump", child.id())));
    assert!(names.len() > 200, "{}", names.len());
    assert!(
        names
            .iter()
            .enumerate()
            .all(|(i, n)| *n == format!("fn_{i}")),
        "records in order, none torn"
    );
    assert!(
        problems.is_empty(),
        "the file parses to its end: {problems:?}"
    );
}

fn valgrind_clean(tool: &str, args: &[&std::ffi::OsStr], dir: &std::path::Path) {
    let out = Command::new("valgrind")
        .arg(format!("--tool={tool}"))
        .arg("--error-exitcode=1")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.contains("ERROR SUMMARY: 0 errors"),
        "{tool}:\n{stderr}"
    );
}

#[test]
fn the_examples_are_memcheck_clean() {
    let dir = util::scratch("memcheck");
    let demo = util::c_demo(&dir);
    valgrind_clean("memcheck", &[demo.as_os_str(), "100".as_ref()], &dir);
    let toy = util::root().join("examples/toyjit");
    let (jit, demo_toy, math) = (util::toyjit(), toy.join("demo.toy"), toy.join("math.toy"));
    valgrind_clean(
        "memcheck",
        &[jit.as_os_str(), demo_toy.as_os_str(), math.as_os_str()],
        &dir,
    );
}

#[test]
fn helgrind_sees_no_race_between_threads_loading_code() {
    let dir = util::scratch("helgrind");
    let exe = util::c_program(&dir, "threads");
    valgrind_clean("helgrind", &[exe.as_os_str()], &dir);
    let dump = util::file_starting(&dir, "jit-").expect("a jitdump");
    let (names, problems) = util::dump_names(&dump);
    assert_eq!((names.len(), problems.len()), (800, 0));
}
