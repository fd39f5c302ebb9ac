use super::*;

#[test]
fn perf_maps_name_their_pid() {
    assert_eq!(perf_map_pid(Path::new("/tmp/perf-42.map")), Some(42));
    assert_eq!(perf_map_pid(Path::new("perf-x.map")), None);
    assert_eq!(perf_map_pid(Path::new("my.map")), None);
}

#[test]
fn a_file_of_another_process_or_time_is_set_aside() {
    let now = SystemTime::now();
    let hour = Duration::from_secs(3600);
    let evidence = |pid, modified| Evidence {
        pid,
        created: Some(modified),
        modified: Some(modified),
    };
    let fine = evidence(Some(7), now - hour);
    assert_eq!(set_aside(7, &fine, Some(now), Some(now - 2 * hour)), None);
    let other = set_aside(7, &evidence(Some(8), now), None, None);
    assert_eq!(other.as_deref(), Some("its header names pid 8"));
    let late = set_aside(7, &evidence(None, now + hour), Some(now), None);
    assert_eq!(late.as_deref(), Some("written 1 h after the profile"));
    let stale = set_aside(
        7,
        &evidence(Some(7), now - 2 * hour),
        None,
        Some(now - hour),
    );
    assert_eq!(
        stale.as_deref(),
        Some("last written 1 h before the run started")
    );
    // Written within the slack after the profile, or as the run started:
    // this run's.
    let at = |t| evidence(Some(7), t);
    assert_eq!(set_aside(7, &at(now + SLACK), Some(now), None), None);
    assert_eq!(set_aside(7, &at(now), None, Some(now)), None);
    let past = set_aside(
        7,
        &at(now + SLACK + Duration::from_secs(1)),
        Some(now),
        None,
    );
    assert_eq!(past.as_deref(), Some("written 3 s after the profile"));
}

/// CLOCK_MONOTONIC now, in nanoseconds (a jitdump header's clock).
fn monotonic_now() -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    assert_eq!(rc, 0);
    now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64
}

/// `most`, or less on a machine up for less than twice that: a jitdump's
/// clock starts at boot, so no dump is older than the machine's uptime.
fn span_since_boot(most: Duration) -> Duration {
    most.min(Duration::from_nanos(monotonic_now() / 2))
}

/// A jitdump header of `pid` created `ago` before now (monotonic time;
/// `ago` at most the machine's uptime).
fn dump_header(pid: u32, ago: Duration) -> Vec<u8> {
    let mut head = Vec::new();
    let at = monotonic_now() - ago.as_nanos() as u64;
    jitdump::write::header(&mut head, 62, pid, at);
    head
}

/// `bytes` written to `dir/name`, opened as an input.
fn input_at(dir: &Path, name: &str, bytes: &[u8]) -> Input {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    Input::open(&path).unwrap()
}

fn me() -> String {
    // SAFETY: geteuid has no preconditions.
    user_name(unsafe { libc::geteuid() })
}

#[test]
fn users_are_named_by_login_else_by_number() {
    assert_eq!(user_name(0), "root");
    assert_eq!(user_name(4_000_000_009), "uid 4000000009");
}

#[test]
fn spans_are_said_in_their_largest_whole_unit() {
    for (secs, want) in [
        (0, "0 s"),
        (59, "59 s"),
        (60, "1 min"),
        (3_599, "59 min"),
        (3_600, "1 h"),
        (86_399, "23 h"),
        (86_400, "1 d"),
        (3 * 86_400 + 5, "3 d"),
    ] {
        assert_eq!(span(Duration::from_secs(secs)), want);
    }
}

#[test]
fn a_found_file_of_another_user_or_writable_by_anyone_is_refused() {
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    let stranger = 4_000_000_007;
    let trust = Trust::default();
    assert_eq!(trust.refuses(me, 0o644), None);
    assert_eq!(trust.refuses(0, 0o600), None);
    let owned = trust.refuses(stranger, 0o644).unwrap();
    assert_eq!(
        owned,
        format!("owned by uid {stranger}, not by you or the profile's owner (--any-owner uses it)")
    );
    let writable = trust.refuses(me, 0o646).unwrap();
    assert_eq!(writable, "anyone may write it (--any-owner uses it anyway)");
    // Group-writable is not anyone.
    assert_eq!(trust.refuses(me, 0o664), None);
    let profile_owner = Trust {
        profile_owner: Some(stranger),
        any_owner: false,
    };
    assert_eq!(profile_owner.refuses(stranger, 0o644), None);
    assert!(profile_owner.refuses(stranger, 0o777).is_some());
    let any = Trust {
        profile_owner: None,
        any_owner: true,
    };
    assert_eq!(any.refuses(stranger, 0o777), None);
}

#[test]
fn a_jitdump_s_header_gives_its_pid_and_when_it_was_created() {
    let dir = tempfile::tempdir().unwrap();
    let made = span_since_boot(Duration::from_secs(3600));
    let dump = input_at(dir.path(), "jit-42.dump", &dump_header(42, made));
    let (pid, created) = jitdump_evidence(&dump);
    assert_eq!(pid, Some(42));
    let ago = SystemTime::now().duration_since(created.unwrap()).unwrap();
    assert!(
        (made..made + Duration::from_secs(5)).contains(&ago),
        "{ago:?}"
    );
    // The file was written just now: its creation is the header's time.
    let evidence = Evidence::of(&dump);
    assert_eq!(evidence.pid, Some(42));
    let apart = |a: SystemTime, b: SystemTime| a.duration_since(b).unwrap_or_else(|e| e.duration());
    assert!(apart(evidence.created.unwrap(), created.unwrap()) < Duration::from_secs(1));
    assert!(evidence.modified.unwrap() > created.unwrap() + made / 2);
    // An architecture's own clock (flag bit 0) is no wall time.
    let mut arch = dump_header(43, made);
    arch[32] |= 1;
    let arch = input_at(dir.path(), "jit-43.dump", &arch);
    assert_eq!(jitdump_evidence(&arch), (Some(43), None));
    let evidence = Evidence::of(&arch);
    assert_eq!(evidence.created, evidence.modified);
    // A perf map's pid is its name's.
    let map = input_at(dir.path(), "perf-44.map", b"10 4 f\n");
    assert_eq!(Evidence::of(&map).pid, Some(44));
}

#[test]
fn a_given_file_goes_to_the_runs_of_its_pid() {
    let runs = |pids: &[Option<u32>]| -> Vec<Option<u32>> { pids.to_vec() };
    let path = Path::new("/x/jit-9.dump");
    let pids = runs(&[Some(7), None, Some(8)]);
    assert_eq!(targets(&pids, path, Some(7), false).unwrap(), [0, 1]);
    assert_eq!(targets(&pids, path, Some(9), true).unwrap(), [0, 1, 2]);
    let other = targets(&runs(&[Some(7), Some(8)]), path, Some(9), false).unwrap_err();
    assert_eq!(
        other.to_string(),
        "'/x/jit-9.dump' was written by pid 9, but the profiles are of pid 7, 8: \
         it would give them another process's names (--any-pid uses it anyway)"
    );
    let unnamed = targets(&runs(&[Some(7), Some(8)]), path, None, false).unwrap_err();
    assert_eq!(
        unnamed.to_string(),
        "'/x/jit-9.dump' names no pid (not perf-PID.map), and the profiles are of pids 7, 8: \
         annotate one process at a time, or give --any-pid"
    );
    assert_eq!(targets(&runs(&[Some(7)]), path, None, false).unwrap(), [0]);
}

#[test]
fn of_two_runs_of_one_pid_a_given_file_names_the_one_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, c) = (
        dir.path().join("a"),
        dir.path().join("b"),
        dir.path().join("c"),
    );
    for d in [&a, &b, &c] {
        std::fs::create_dir(d).unwrap();
    }
    let run = |pid, folder: &Path| Run {
        pid: Some(pid),
        folder: super::super::folder_of(&folder.join("callgrind.out.1")),
    };
    let runs = [run(7, &a), run(7, &b), run(8, &a)];
    let map = b"10 4 f\n";
    let in_b = input_at(&b, "perf-7.map", map);
    assert_eq!(same_folder(&runs, &in_b, vec![0, 1]).unwrap(), [1]);
    // Runs of other pids keep the file, wherever it is.
    assert_eq!(same_folder(&runs, &in_b, vec![0, 1, 2]).unwrap(), [1, 2]);
    assert_eq!(same_folder(&runs, &in_b, vec![0, 2]).unwrap(), [0, 2]);
    let in_c = input_at(&c, "perf-7.map", map);
    let error = same_folder(&runs, &in_c, vec![0, 1])
        .unwrap_err()
        .to_string();
    assert!(
        error.ends_with(
            "could be either of the runs of pid 7 given: put each run's symbol files \
             beside its profiles, or annotate one run at a time"
        ),
        "{error}"
    );
    // Given with --any-pid to every run, it still names one of the two.
    let given = given(&runs, vec![in_b.try_clone().unwrap()], true).unwrap();
    let used: Vec<usize> = given.iter().map(|p| p.used.len()).collect();
    assert_eq!(used, [0, 1, 1]);
    let notes: Vec<&str> = given
        .iter()
        .flat_map(|p| &p.notes)
        .map(|n| n.1.as_str())
        .collect();
    let owner = me();
    assert_eq!(
        notes,
        [
            format!("given, written by pid 7, owned by {owner}"),
            format!("given, written by pid 7, used for pid 8 (--any-pid), owned by {owner}")
        ]
    );
}

#[test]
fn a_given_file_s_note_says_what_tied_it_to_its_run() {
    let dir = tempfile::tempdir().unwrap();
    let unnamed = input_at(dir.path(), "my.map", b"10 4 f\n");
    let dump = input_at(dir.path(), "x.dump", &dump_header(5, Duration::ZERO));
    let one = |pid| [Run { pid, folder: None }];
    let note = |runs: &[Run], input: &Input| {
        let given = given(runs, vec![input.try_clone().unwrap()], false).unwrap();
        assert_eq!(given[0].used.len(), 1);
        given[0].notes[0].1.clone()
    };
    let owner = me();
    assert_eq!(
        note(&one(Some(3)), &unnamed),
        format!("given, names no pid; the only process, owned by {owner}")
    );
    assert_eq!(
        note(&one(None), &dump),
        format!("given, written by pid 5; the profile names no pid, owned by {owner}")
    );
    assert_eq!(
        note(&one(Some(5)), &dump),
        format!("given, written by pid 5, owned by {owner}")
    );
}

#[test]
fn the_newest_of_each_kind_found_is_used_and_the_rest_set_aside_with_reasons() {
    let dir = tempfile::tempdir().unwrap();
    let pid = 4_000_000_011u32;
    let profile = dir.path().join(format!("callgrind.out.{pid}"));
    let min = span_since_boot(Duration::from_secs(300)) / 5;
    std::fs::write(
        dir.path().join(format!("jit-{pid}.dump")),
        dump_header(pid, min),
    )
    .unwrap();
    let older = dump_header(pid, 5 * min);
    std::fs::write(dir.path().join(format!("jit-3-{pid}.dump")), older).unwrap();
    let other = dump_header(5, min);
    std::fs::write(dir.path().join(format!("jit-4-{pid}.dump")), other).unwrap();
    let open = dir.path().join(format!("jit-6-{pid}.dump"));
    std::fs::write(&open, dump_header(pid, Duration::ZERO)).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o666)).unwrap();
    let map = dir.path().join(format!("perf-{pid}.map"));
    std::fs::write(&map, b"10 4 f\n").unwrap();
    let now = SystemTime::now();
    let found = discovered(pid, &profile, Some(now), None, Trust::default());
    let name = |p: &Path| p.file_name().unwrap().to_string_lossy().into_owned();
    let used: Vec<String> = found.used.iter().map(|i| name(&i.path)).collect();
    assert_eq!(used, [format!("jit-{pid}.dump"), format!("perf-{pid}.map")]);
    let mut notes: Vec<(String, String)> = found
        .notes
        .iter()
        .map(|(p, why)| (name(p), why.clone()))
        .collect();
    notes.sort();
    let owner = me();
    let want = [
        (
            format!("jit-3-{pid}.dump"),
            "not used: older than the file used".to_string(),
        ),
        (
            format!("jit-4-{pid}.dump"),
            "not used: its header names pid 5".to_string(),
        ),
        (
            format!("jit-{pid}.dump"),
            format!("found, the newest of 2 candidates, owned by {owner}"),
        ),
        (
            format!("jit-6-{pid}.dump"),
            "not used: anyone may write it (--any-owner uses it anyway)".to_string(),
        ),
        (
            format!("perf-{pid}.map"),
            format!("found, the only candidate, owned by {owner}"),
        ),
    ];
    assert_eq!(notes, want);
    assert!(found
        .looked
        .contains(&dir.path().join(format!("jit-{pid}.dump"))));
    // A run that started after the map was written, and a profile that
    // ended before the files were: neither is used.
    let later = discovered(pid, &profile, None, Some(now + 10 * min), Trust::default());
    let map_note = later
        .notes
        .iter()
        .find(|(p, _)| name(p) == format!("perf-{pid}.map"));
    assert_eq!(
        map_note.map(|n| n.1.as_str()),
        Some("not used: last written 10 min before the run started")
    );
    let earlier = discovered(pid, &profile, Some(now - 61 * min), None, Trust::default());
    assert!(earlier.used.is_empty());
    let late = |n: &(PathBuf, String)| n.1 == "not used: written 1 h after the profile";
    assert!(earlier.notes.iter().any(late), "{:?}", earlier.notes);
}
