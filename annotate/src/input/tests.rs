//! Telling inputs apart by content, finding where a cut profile ends,
//! and reading a profile's header: each held to files made here.

use super::*;

/// A file in `dir` holding `bytes`.
fn file_at(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// An unlinked file holding `bytes`.
fn holding(bytes: &[u8]) -> File {
    crate::output::file_holding(bytes).unwrap()
}

/// What `Input::open` makes of `bytes`: the kind, or the error.
fn kind_of(bytes: &[u8]) -> std::result::Result<Kind, String> {
    let dir = tempfile::tempdir().unwrap();
    let path = file_at(dir.path(), "in", bytes);
    Input::open(&path)
        .map(|input| input.kind)
        .map_err(|e| format!("{e:#}").replace(&*path.to_string_lossy(), "IN"))
}

#[test]
fn each_kind_is_told_by_its_first_bytes() {
    let mut jitdump = Vec::new();
    jitdump::write::header(&mut jitdump, 62, 1, 0);
    let kinds: [(&[u8], Kind); 13] = [
        (b"", Kind::Empty),
        (&jitdump, Kind::Jitdump),
        (b"# callgrind format\nversion: 1\n", Kind::Profile),
        (b"version: 1\ncreator: callgrind-3.22\n", Kind::Profile),
        (b"events: Ir\n", Kind::Profile),
        (b"pid: 7\n", Kind::Profile),
        (b"7f3c2a1000 1a4 LazyCompile:~f a.js:3\n", Kind::PerfMap),
        (b"==42== Memcheck, a memory error detector\n", Kind::ToolLog),
        (b"desc: (none)\ncmd: ./a\ntime_unit: i\n", Kind::ToolLog),
        (b" {\"dhatFileVersion\": 2,\n", Kind::ToolLog),
        (
            b"<?xml version=\"1.0\"?>\n<valgrindoutput>\n",
            Kind::ToolLog,
        ),
        // A saved stderr: the program's own lines before Valgrind's.
        (b"hello\nworld\n--7-- run\n", Kind::ToolLog),
        (b"cmd: ./a\n", Kind::Profile),
    ];
    for (bytes, want) in kinds {
        assert_eq!(
            kind_of(bytes),
            Ok(want),
            "{}",
            String::from_utf8_lossy(bytes)
        );
    }
}

#[test]
fn what_cannot_be_read_is_refused_saying_what_it_is() {
    let refused: [(&[u8], &str); 8] = [
        (
            b"\x1f\x8b\x08\x00",
            "'IN' is gzip-compressed: decompress it first (gunzip -k 'IN')",
        ),
        (
            b"\xfd7zXZ\x00\x00",
            "'IN' is xz-compressed: decompress it first (unxz -k 'IN')",
        ),
        (
            b"\x28\xb5\x2f\xfd\x00",
            "'IN' is zstd-compressed: decompress it first (unzstd 'IN')",
        ),
        (
            b"BZh91AY",
            "'IN' is bzip2-compressed: decompress it first (bunzip2 -k 'IN')",
        ),
        (b"# cachegrind format\n", "'IN' is a cachegrind profile"),
        (
            b"desc: I1 cache: 32768 B\ncmd: ./a\nevents: Ir\n",
            "'IN' is a cachegrind profile",
        ),
        (
            b"hello world\n",
            "'IN' is neither a callgrind profile, a Valgrind log, a jitdump nor a perf map",
        ),
        (
            b"events: Ir\nfn=main\n1 2\n# annotated by callgrind-jit\n",
            "'IN' is already annotated by callgrind-jit",
        ),
    ];
    for (bytes, start) in refused {
        let err = kind_of(bytes).unwrap_err();
        assert!(err.starts_with(start), "{err}");
    }
    // JSON that is not DHAT's, XML that is no Valgrind log.
    for other in [&b"{\"a\": 1}\n"[..], b"<?xml version=\"1.0\"?>\n<other/>\n"] {
        assert!(kind_of(other).unwrap_err().contains("neither"));
    }
    assert!(kind_of(b"x \"dhatFileVersion\"\n")
        .unwrap_err()
        .contains("neither"));
    assert!(kind_of(b"x <valgrindoutput>\n")
        .unwrap_err()
        .contains("neither"));
    // A log line only past the first 16 lines is not a log.
    let late: Vec<u8> = [&b"x\n".repeat(16)[..], b"==7== late\n"].concat();
    assert!(kind_of(&late).unwrap_err().contains("neither"));
}

#[test]
fn a_profile_cut_off_ends_before_its_last_line_or_its_open_call() {
    let cut = |text: &[u8]| cut_of(&holding(text)).unwrap();
    let whole = b"events: Ir\nfn=(1) main\n3 4\ncfn=(2) f\ncalls=1 0x10\n5 6\n";
    assert_eq!(cut(whole), None);
    assert_eq!(cut(b""), None);
    // In a cost line: back to its start.
    assert_eq!(
        cut(b"events: Ir\nfn=(1) main\n3 4"),
        Some((23, Cut::InLine))
    );
    // After a call's first lines: back to the call's first.
    let open = b"events: Ir\nfn=(1) main\ncob=(3) o\ncfn=(2) f\ncalls=1 0x10\n";
    assert_eq!(cut(open), Some((23, Cut::InCall)));
    // Inside a call's line: the call is cut too, said as a cut line.
    assert_eq!(
        cut(b"fn=(1) main\ncfn=(2) f\ncalls=1 0x1"),
        Some((12, Cut::InLine))
    );
    assert_eq!(cut(b"fn=(1) main\njcnd=1/2 0x1\n"), Some((12, Cut::InCall)));
    for key in GROUP_KEYS {
        let text = [b"fn=(1) main\n", key, b"1\n"].concat();
        assert_eq!(cut(&text), Some((12, Cut::InCall)), "{key:?}");
    }
    // A file of call lines alone: cut at its very start.
    assert_eq!(cut(b"cfn=(2) f\ncalls=1 0x1\n"), Some((0, Cut::InCall)));
    // Through the input, as annotate asks.
    let dir = tempfile::tempdir().unwrap();
    let path = file_at(
        dir.path(),
        "callgrind.out.1",
        b"events: Ir\nfn=(1) main\n3 4",
    );
    assert_eq!(
        Input::open(&path).unwrap().cut().unwrap(),
        Some((23, Cut::InLine))
    );
}

#[test]
fn a_cut_inside_a_long_run_of_call_lines_stops_at_the_window_s_first_whole_line() {
    // 70,000 bytes of call lines: only the last 64 KiB are read, and the
    // line the window starts in may be partial, so the cut goes back to
    // the first line that starts inside the window.
    let text = b"cfn=(2) f\n".repeat(7_000);
    let len = text.len() as u64;
    let base = len - 64 * 1024;
    let first_whole = text[base as usize..]
        .iter()
        .position(|&b| b == b'\n')
        .unwrap() as u64
        + 1;
    let got = cut_of(&holding(&text)).unwrap();
    assert_eq!(got, Some((base + first_whole, Cut::InCall)));
    // The window starting exactly at a line: that line may still be the
    // end of a longer one, and is not taken.
    let text = b"cfn=(2) fffffff\n".repeat(5_000);
    let base = text.len() as u64 - 64 * 1024;
    assert_eq!(base % 16, 0);
    let got = cut_of(&holding(&text)).unwrap();
    assert_eq!(got, Some((base + 16, Cut::InCall)));
    assert_eq!(Cut::InCall.describe(), "it ends inside a call or jump");
    assert_eq!(Cut::InLine.describe(), "its last line is cut off");
}

#[test]
fn valgrind_log_lines_give_their_pid() {
    assert_eq!(log_pid("==123== Memcheck"), Some((123, " Memcheck")));
    assert_eq!(log_pid("--5-- run"), Some((5, " run")));
    assert_eq!(log_pid("**7** x"), Some((7, " x")));
    for not in [
        "==12 x", "==ab== x", "=", "", "==1-- x", "##1## x", "== 1== x",
    ] {
        assert_eq!(log_pid(not), None, "{not}");
    }
}

#[test]
fn our_outputs_end_with_the_mark() {
    let dir = tempfile::tempdir().unwrap();
    let ours = file_at(
        dir.path(),
        "a",
        format!("events: Ir\n{OUTPUT_MARK}").as_bytes(),
    );
    let inside = file_at(
        dir.path(),
        "b",
        format!("{OUTPUT_MARK}events: Ir\n").as_bytes(),
    );
    let short = file_at(dir.path(), "c", b"# annotated\n");
    assert!(is_our_output_at(&ours));
    assert!(!is_our_output_at(&inside));
    assert!(!is_our_output_at(&short));
    assert!(!is_our_output_at(&dir.path().join("none")));
}

#[test]
fn the_header_gives_pid_command_and_epoch_end_within_64_lines() {
    let header = b"version: 1\ncmd: node  app.js \npid: 42\nevents: Ir\n";
    let file = holding(header);
    assert_eq!(profile_pid(&file), Some(42));
    assert_eq!(profile_command(&file).as_deref(), Some("node  app.js"));
    let late = [&b"# x\n".repeat(64)[..], b"pid: 42\ncmd: a\n"].concat();
    assert_eq!(profile_pid(&holding(&late)), None);
    assert_eq!(profile_command(&holding(&late)), None);
    assert_eq!(profile_pid(&holding(b"pid: x\n")), None);
    let prefix = jit_client::epochs::DESC_PREFIX;
    let desc = format!(
        "version: 1\ndesc: Trigger: Client Request: {prefix} jit-7.dump@120 bad perf-7.map@x perf-7.map@33\n"
    );
    assert_eq!(
        epoch_end(&holding(desc.as_bytes())),
        Some(vec![("jit-7.dump".into(), 120), ("perf-7.map".into(), 33)])
    );
    let none = format!("desc: Trigger: Client Request: {prefix} bad\n");
    assert_eq!(epoch_end(&holding(none.as_bytes())), None);
    assert_eq!(
        epoch_end(&holding(b"desc: Trigger: Program termination\n")),
        None
    );
}

#[test]
fn a_fifo_is_spooled_and_read_again_from_its_copy() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(fifo, b"events: Ir\nfn=main\n1 2\n").unwrap())
    };
    let input = Input::open(&fifo).unwrap();
    writer.join().unwrap();
    assert_eq!(
        (input.kind, input.mode, input.is_spooled()),
        (Kind::Profile, 0o600, true)
    );
    let read = |input: &Input| {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut input.rewound().unwrap(), &mut text).unwrap();
        text
    };
    assert_eq!(read(&input), "events: Ir\nfn=main\n1 2\n");
    assert_eq!(read(&input), "events: Ir\nfn=main\n1 2\n");
    let prefix = input.prefix(11).unwrap();
    assert_eq!(read(&prefix), "events: Ir\n");
    let copy = input.try_clone().unwrap();
    assert_eq!((copy.kind, copy.is_spooled()), (Kind::Profile, true));
}

#[test]
fn a_regular_file_keeps_its_mode_and_a_missing_one_is_named() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = file_at(dir.path(), "p", b"events: Ir\n");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    let input = Input::open(&path).unwrap();
    assert_eq!((input.mode, input.is_spooled()), (0o640, false));
    let err = Input::open(&dir.path().join("none")).unwrap_err();
    assert!(format!("{err:#}").starts_with("cannot read '"), "{err:#}");
}
