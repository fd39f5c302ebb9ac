//! Processes the program started that outlive it. With
//! `--trace-children=yes` each writes its own profile when it ends, which
//! may be after the program itself (Erlang's `erl` script ends while
//! `beam.smp`'s helper lives on). `record` adopts such orphans (a child
//! subreaper) and waits for them, so every profile is whole when read.

use std::time::{Duration, Instant};

use super::signals::Forwarding;

/// Makes orphaned descendants this process's children (Linux's child
/// subreaper), so that they can be waited for.
pub fn adopt_orphans() {
    // SAFETY: PR_SET_CHILD_SUBREAPER takes one integer argument.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
}

/// Waits for every child that was not there before valgrind started
/// (`before`: a shell's `2> >(tee ...)` makes tee our child, and it waits
/// for us), saying after a second which ones; a stopping signal ends the
/// wait.
pub fn wait_for_rest(forwarding: &Forwarding, before: &[u32]) {
    let started = Instant::now();
    let mut said = false;
    loop {
        let adopted: Vec<(u32, String)> = children()
            .into_iter()
            .filter(|(pid, _)| !before.contains(pid))
            .collect();
        for (pid, _) in &adopted {
            let mut status = 0;
            // SAFETY: waitpid on our own child with a status of our own.
            unsafe { libc::waitpid(*pid as i32, &mut status, libc::WNOHANG) };
        }
        if adopted.is_empty() || forwarding.received().is_some() {
            return;
        }
        if !said && started.elapsed() > Duration::from_secs(1) {
            let names: Vec<String> = adopted.iter().map(|(p, n)| format!("{p} ({n})")).collect();
            eprintln!(
                "callgrind-jit: the program ended; waiting for what it started to end and \
                 write its profiles: {} (Ctrl-C stops waiting)",
                names.join(", ")
            );
            said = true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// This process's children still running (not yet reaped zombies are
/// left out once reaped), with their names, from /proc.
pub fn children() -> Vec<(u32, String)> {
    let me = std::process::id().to_string();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| {
            let pid = e.ok()?.file_name().into_string().ok()?;
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
            let field = |key: &str| {
                status
                    .lines()
                    .find_map(|l| l.strip_prefix(key).map(|v| v.trim().to_string()))
            };
            let name = field("Name:").unwrap_or_default();
            (field("PPid:")? == me).then(|| (pid.parse().ok(), name))
        })
        .filter_map(|(pid, name)| Some((pid?, name)))
        .collect()
}
