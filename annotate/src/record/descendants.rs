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

/// Waits for every remaining child (adopted orphans) to end, saying after
/// a second which ones it waits for; a stopping signal ends the wait.
pub fn wait_for_rest(forwarding: &Forwarding) {
    let started = Instant::now();
    let mut said = false;
    loop {
        let mut status = 0;
        // SAFETY: waitpid with a status out-parameter of our own.
        let reaped = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        match reaped {
            0 if forwarding.received().is_some() => return,
            0 => {
                if !said && started.elapsed() > Duration::from_secs(1) {
                    eprintln!(
                        "callgrind-jit: the program ended; waiting for what it started to end and \
                         write its profiles: {} (Ctrl-C stops waiting)",
                        children().join(", ")
                    );
                    said = true;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            r if r > 0 => {}
            _ => return, // ECHILD: none left
        }
    }
}

/// This process's children, as `PID (NAME)`, from /proc.
fn children() -> Vec<String> {
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
            (field("PPid:")? == me)
                .then(|| format!("{pid} ({})", field("Name:").unwrap_or_default()))
        })
        .collect()
}
