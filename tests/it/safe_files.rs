//! annotate never destroys a file: outputs go only over nothing, an empty
//! file or a profile it wrote itself, never over an input (given or
//! found), keep the input's permission bits; stdin, pipes and FIFOs are
//! read whole.

use std::io::Write;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::util::{self, annotate};

fn dir_with_fixture(name: &str) -> std::path::PathBuf {
    let dir = util::scratch(name);
    for f in ["callgrind.out.9747", "jit-9747.dump"] {
        std::fs::copy(util::fixture("c-demo").join(f), dir.join(f)).unwrap();
    }
    dir
}

fn refused(out: &Output, says: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(says), "{says:?} not in {stderr}");
}

/// The reference output: the fixture annotated into a regular file.
fn reference(dir: &Path) -> Vec<u8> {
    let out = annotate(
        dir,
        &[
            "callgrind.out.9747",
            "jit-9747.dump",
            "-o",
            "ref.out",
            "--no-code",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read(dir.join("ref.out")).unwrap()
}

/// `-o NAME` onto what is at `NAME` is refused, saying `says`, and what
/// is there is still of the kind `still`.
fn refused_and_left(dir: &Path, name: &str, says: &str, still: fn(&std::fs::FileType) -> bool) {
    refused(&annotate(dir, &["callgrind.out.9747", "-o", name]), says);
    let kind = std::fs::symlink_metadata(dir.join(name))
        .unwrap()
        .file_type();
    assert!(still(&kind), "{name} was replaced");
}

#[test]
fn links_devices_and_fifos_are_refused_and_left_alone() {
    let dir = dir_with_fixture("safe-targets");
    std::fs::write(dir.join("target.txt"), b"keep me").unwrap();
    std::os::unix::fs::symlink("target.txt", dir.join("link")).unwrap();
    refused_and_left(&dir, "link", "it is a symbolic link", |k| k.is_symlink());
    assert_eq!(std::fs::read(dir.join("target.txt")).unwrap(), b"keep me");

    util::run_ok(Command::new("mkfifo").arg(dir.join("fifo")));
    refused_and_left(&dir, "fifo", "it is a FIFO", |k| k.is_fifo());

    // A device node of our own (never a real /dev entry): /dev/null's numbers.
    let made = Command::new("mknod")
        .arg(dir.join("null"))
        .args(["c", "1", "3"])
        .output()
        .unwrap();
    if made.status.success() {
        refused_and_left(&dir, "null", "it is a device", |k| k.is_char_device());
    } else {
        util::skip("links_devices_and_fifos_device_case", "mknod needs root");
    }
    refused_and_left(&dir, ".", "it is a folder", |k| k.is_dir());
}

#[test]
fn dash_o_dash_writes_the_whole_profile_to_stdout() {
    let dir = dir_with_fixture("safe-stdout");
    let expected = reference(&dir);
    let before = std::fs::read_dir(&dir).unwrap().count();
    let out = annotate(&dir, &["callgrind.out.9747", "-o", "-"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stdout == expected,
        "stdout differs from the file output"
    );
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), before);
}

#[test]
fn found_symbol_files_are_never_overwritten() {
    let dir = dir_with_fixture("safe-found");
    let dump = std::fs::read(dir.join("jit-9747.dump")).unwrap();
    // The jitdump is not on the command line: annotate finds it by pid.
    let out = annotate(&dir, &["callgrind.out.9747", "-o", "jit-9747.dump"]);
    refused(&out, "refusing to overwrite input '");
    refused(&out, "/jit-9747.dump'");
    assert_eq!(std::fs::read(dir.join("jit-9747.dump")).unwrap(), dump);
}

#[test]
fn the_output_keeps_the_inputs_permission_bits() {
    let dir = dir_with_fixture("safe-mode");
    for mode in [0o600, 0o640, 0o644] {
        let input = dir.join("callgrind.out.9747");
        std::fs::set_permissions(&input, std::fs::Permissions::from_mode(mode)).unwrap();
        let out = annotate(&dir, &["callgrind.out.9747", "jit-9747.dump"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let got = std::fs::metadata(dir.join("callgrind.jit.out.9747"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(got & 0o7777, mode, "mode {mode:o}");
        // The code image and the joined profile hold the same costs and
        // code: no more readable than the profile.
        let out = annotate(&dir, &["callgrind.out.9747", "jit-9747.dump", "--merge"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for made in [
            "jit-code.callgrind.jit.out.9747.elf",
            "callgrind.jit.merged.9747",
        ] {
            let got = std::fs::metadata(dir.join(made))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(got & 0o7777, mode, "{made}: mode {mode:o}");
        }
    }
}

#[test]
fn temporary_names_cannot_be_guessed_and_planted() {
    let dir = dir_with_fixture("safe-tmpname");
    // What another user could pre-create in a shared sticky folder, for
    // the names of the last version (".OUTPUT.PID.tmp", for the pids a
    // run is likely to get).
    let out = annotate(
        &dir,
        &["callgrind.out.9747", "jit-9747.dump", "-o", "x.out"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let leftover: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftover.is_empty(), "{leftover:?}");
    let pid_now = std::process::id();
    for pid in pid_now..pid_now + 3000 {
        std::fs::write(dir.join(format!(".y.out.{pid}.tmp")), b"planted").unwrap();
    }
    let out = annotate(
        &dir,
        &["callgrind.out.9747", "jit-9747.dump", "-o", "y.out"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::read(dir.join("y.out"))
        .unwrap()
        .starts_with(b"# callgrind format"));
}

#[test]
fn a_planted_link_at_the_code_image_path_points_to_no_code() {
    let dir = dir_with_fixture("safe-image-link");
    std::fs::write(dir.join("elsewhere"), b"keep me").unwrap();
    std::os::unix::fs::symlink("elsewhere", dir.join("jit-code.callgrind.jit.out.9747.elf"))
        .unwrap();
    let out = annotate(&dir, &["callgrind.out.9747", "jit-9747.dump"]);
    refused(
        &out,
        "it is a symbolic link (--no-code writes no code image)",
    );
    let out = annotate(&dir, &["callgrind.out.9747", "jit-9747.dump", "--no-code"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read(dir.join("elsewhere")).unwrap(), b"keep me");
}

#[test]
fn merge_dash_o_never_names_a_file_the_run_writes() {
    let dir = dir_with_fixture("safe-merge-own");
    for own in [
        "callgrind.jit.out.9747",
        "jit-code.callgrind.jit.out.9747.elf",
    ] {
        let out = annotate(
            &dir,
            &["callgrind.out.9747", "jit-9747.dump", "--merge", "-o", own],
        );
        refused(&out, "names a file this run writes itself");
        assert!(!dir.join(own).exists(), "{own} written");
    }
}

#[test]
fn a_profile_from_dev_stdin_or_a_process_substitution_goes_to_stdout() {
    let dir = dir_with_fixture("safe-dev-stdin");
    let expected = reference(&dir);
    let bash = |script: &str| {
        Command::new("bash")
            .args(["-c", script])
            .arg(util::cli())
            .current_dir(&dir)
            .output()
            .unwrap()
    };
    for script in [
        r#"cat callgrind.out.9747 | "$0" annotate /dev/stdin jit-9747.dump --no-code"#,
        r#""$0" annotate <(cat callgrind.out.9747) jit-9747.dump --no-code"#,
    ] {
        let out = bash(script);
        assert!(
            out.status.success(),
            "{script}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stdout == expected,
            "{script}: not the profile on stdout"
        );
    }
}

#[test]
fn stdin_pipes_and_fifos_are_read_whole() {
    let dir = dir_with_fixture("safe-stdin");
    let expected = reference(&dir);
    let profile = std::fs::read(dir.join("callgrind.out.9747")).unwrap();

    // `-` from a pipe, output to stdout by default.
    let mut child = Command::new(util::cli())
        .args(["annotate", "-", "jit-9747.dump"])
        .current_dir(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feed = profile.clone();
    let writer = std::thread::spawn(move || stdin.write_all(&feed));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stdout == expected,
        "stdin output differs from the file output"
    );

    // A FIFO given by name.
    let fifo = dir.join("profile.fifo");
    util::run_ok(Command::new("mkfifo").arg(&fifo));
    let path = fifo.clone();
    let writer = std::thread::spawn(move || std::fs::write(path, profile));
    let out = annotate(
        &dir,
        &[
            "profile.fifo",
            "jit-9747.dump",
            "-o",
            "from-fifo.out",
            "--no-code",
        ],
    );
    writer.join().unwrap().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::read(dir.join("from-fifo.out")).unwrap() == expected);
}

#[test]
fn a_profile_cut_anywhere_is_annotated_up_to_its_last_whole_record() {
    let dir = dir_with_fixture("safe-cut-anywhere");
    let whole = std::fs::read(dir.join("callgrind.out.9747")).unwrap();
    let header_end = whole.windows(4).position(|w| w == b"\nfn=").unwrap();
    // 40 cuts after the header, and a run of cuts one byte apart where
    // a call group ends (inside calls=, its cost line, the next cfn=).
    let calls = header_end
        + whole[header_end..]
            .windows(7)
            .position(|w| w == b"\ncalls=")
            .unwrap();
    let spread = (1..=40).map(|i| header_end + (whole.len() - header_end) * i / 41);
    let dense = (calls - 20..calls + 60).step_by(1);
    for cut in spread.chain(dense) {
        std::fs::write(dir.join("cut.9747"), &whole[..cut]).unwrap();
        let out = annotate(&dir, &["cut.9747", "jit-9747.dump", "-o", "refused.out"]);
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "cut at {cut}: {said}");
        assert!(
            said.contains("ends early") && said.contains("--allow-truncated"),
            "cut at {cut}: {said}"
        );
        let out = annotate(
            &dir,
            &[
                "cut.9747",
                "jit-9747.dump",
                "-o",
                "cut.out",
                "--allow-truncated",
            ],
        );
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "cut at {cut}: {said}");
        assert!(
            said.contains("a profile ends early (--allow-truncated)"),
            "cut at {cut}: {said}"
        );
    }
    // The last cut read by callgrind_annotate, without a warning.
    util::callgrind_annotate(&dir.join("cut.out"), &["--auto=no"]);
    assert!(!dir.join("refused.out").exists());
}

#[test]
fn a_file_of_the_users_is_not_replaced_and_an_earlier_output_is() {
    let dir = dir_with_fixture("safe-not-ours");
    std::fs::write(dir.join("notes.txt"), "my notes\n").unwrap();
    for args in [
        &["callgrind.out.9747", "jit-9747.dump", "-o", "notes.txt"][..],
        &[
            "--merge",
            "callgrind.out.9747",
            "jit-9747.dump",
            "-o",
            "notes.txt",
        ],
    ] {
        refused(
            &annotate(&dir, args),
            "refusing to replace 'notes.txt': it is not a profile callgrind-jit wrote",
        );
        assert_eq!(std::fs::read(dir.join("notes.txt")).unwrap(), b"my notes\n");
    }
    // Its own output, and an empty file, are written (again).
    let want = reference(&dir);
    std::fs::write(dir.join("empty.out"), "").unwrap();
    for name in ["ref.out", "empty.out"] {
        let args = [
            "callgrind.out.9747",
            "jit-9747.dump",
            "-o",
            name,
            "--no-code",
        ];
        let out = annotate(&dir, &args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(std::fs::read(dir.join(name)).unwrap(), want, "{name}");
    }
}
