//! A session through its public API, in this process (outside Valgrind):
//! what it writes, what each call answers, and when it stops.

use crate::{Activation, ErrorKind, Options, Session};

/// A session of `activation` writing into a folder of its own.
fn session(activation: Activation) -> (tempfile::TempDir, Session) {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options::default()
        .activation(activation)
        .jitdump_dir(dir.path())
        .perf_map_dir(dir.path());
    (dir, Session::open(opts))
}

/// The records of the jitdump in `dir`, by kind.
fn records(dir: &std::path::Path) -> Vec<&'static str> {
    let path = dir.join(format!("jit-{}.dump", std::process::id()));
    let bytes = std::fs::read(path).unwrap();
    let dump = jitdump::read(&bytes).unwrap();
    assert_eq!(dump.problems, []);
    let kind = |r: &jitdump::Record| match r {
        jitdump::Record::Load(_) => "load",
        jitdump::Record::DebugInfo { .. } => "debug",
        jitdump::Record::Close => "close",
        _ => "other",
    };
    dump.records.iter().map(|(_, r)| kind(r)).collect()
}

#[test]
fn a_session_writes_each_good_load_and_refuses_the_rest() {
    let (dir, s) = session(Activation::On);
    assert!(s.is_enabled() && !s.is_closed());
    let pid = std::process::id();
    let want = (
        dir.path().join(format!("jit-{pid}.dump")),
        dir.path().join(format!("perf-{pid}.map")),
    );
    assert_eq!(s.paths(), Some(want));
    let code = vec![0x90u8; 8];
    s.code_loaded(&code, b"f", &[]).unwrap();
    let invalid = |r: crate::Result<()>| r.unwrap_err().kind() == ErrorKind::InvalidArgument;
    assert!(invalid(s.code_loaded(&[], b"empty", &[])));
    assert!(invalid(s.code_unloaded(0x1000, 0)));
    assert!(invalid(s.code_unloaded(usize::MAX, 2)));
    s.code_unloaded(code.as_ptr() as usize, code.len()).unwrap();
    s.close().unwrap();
    assert!(s.is_closed() && !s.is_enabled());
    assert_eq!(s.paths(), None);
    assert_eq!(records(dir.path()), ["load", "close"]);
    let map = std::fs::read_to_string(dir.path().join(format!("perf-{pid}.map"))).unwrap();
    assert_eq!(map.lines().count(), 1);
}

#[test]
fn after_close_a_load_is_told_it_was_not_written() {
    let (dir, s) = session(Activation::On);
    s.close().unwrap();
    for _ in 0..2 {
        let err = s.code_loaded(&[0xc3], b"late", &[]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Closed);
        assert!(
            err.to_string().contains("after the session was closed"),
            "{err}"
        );
        let err = s.code_unloaded(0x1000, 1).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Closed);
    }
    s.close().unwrap();
    assert_eq!(records(dir.path()), ["close"]);
}

#[test]
fn a_session_off_writes_nothing_and_says_all_is_well() {
    // Outside Valgrind, `Auto` is off too.
    for activation in [Activation::Off, Activation::Auto] {
        let (dir, s) = session(activation);
        assert!(!s.is_enabled() && !s.is_closed());
        assert_eq!(s.paths(), None);
        s.code_loaded(&[0xc3], b"f", &[]).unwrap();
        s.code_unloaded(0x1000, 1).unwrap();
        s.close().unwrap();
        assert!(!s.is_closed(), "nothing was open");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}

#[test]
fn a_session_dropped_closes_its_jitdump() {
    let (dir, s) = session(Activation::On);
    s.code_loaded(&[0xc3], b"f", &[]).unwrap();
    drop(s);
    assert_eq!(records(dir.path()), ["load", "close"]);
}

#[test]
fn a_session_that_can_create_no_file_is_off() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options::default()
        .activation(Activation::On)
        .jitdump_dir(dir.path().join("gone"))
        .perf_map(false);
    let s = Session::open(opts);
    assert!(!s.is_enabled() && !s.is_closed());
    s.code_loaded(&[0xc3], b"f", &[]).unwrap();
}

#[test]
fn live_mode_stays_off_outside_valgrind() {
    let dir = tempfile::tempdir().unwrap();
    // SAFETY: live mode never starts outside Valgrind: nothing is mapped.
    let opts = unsafe { Options::default().live(true) };
    let opts = opts
        .activation(Activation::On)
        .jitdump_dir(dir.path())
        .perf_map_dir(dir.path());
    let s = Session::open(opts);
    s.code_loaded(&[0xc3; 16], b"f", &[]).unwrap();
    // SAFETY: as above.
    assert!(!unsafe { s.set_live(true) });
    assert!(!crate::live_dir(std::process::id()).exists());
}
