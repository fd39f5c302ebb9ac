//! Processes the program started that outlive it. With
//! `--trace-children=yes` each writes its own profile when it ends, which
//! may be after the program itself (Erlang's `erl` script ends while
//! `beam.smp`'s helper lives on). `record` adopts such orphans (a child
//! subreaper) and waits for them, so every profile is whole when read.
//! While the run goes on, `Watch` notes its processes, so that a profile
//! another run writes in the same folder is not taken for this run's.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
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

/// The processes of this run, gathered while it runs: valgrind, what it
/// starts (with `--trace-children=yes`, each writes a profile of its own)
/// and the orphans this process adopts. Another run writing profiles in
/// the same folder at the same time is not among them.
pub struct Watch {
    seen: Arc<Mutex<Option<HashSet<u32>>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// How often the tree is looked at: a process under valgrind lives far
/// longer (valgrind's start alone takes a quarter of a second).
const WATCH_EVERY: Duration = Duration::from_millis(50);

impl Watch {
    /// Starts watching below `root` (valgrind) and this process, leaving
    /// out the children it had before (`before`).
    pub fn start(root: u32, before: Vec<u32>) -> Watch {
        let seen = Arc::new(Mutex::new(Some(HashSet::from([root]))));
        let stop = Arc::new(AtomicBool::new(false));
        let (seen_in, stop_in) = (Arc::clone(&seen), Arc::clone(&stop));
        let thread = std::thread::Builder::new()
            .name("descendants".into())
            .spawn(move || loop {
                let last = stop_in.load(Ordering::Acquire);
                look(root, &before, &seen_in);
                if last {
                    return;
                }
                std::thread::sleep(WATCH_EVERY);
            })
            .ok();
        Watch { seen, stop, thread }
    }

    /// Stops watching: the pids seen, or `None` where the kernel does not
    /// list a process's children (then every profile is taken).
    pub fn finish(mut self) -> Option<HashSet<u32>> {
        self.stop.store(true, Ordering::Release);
        let joined = self.thread.take().map(JoinHandle::join);
        if !matches!(joined, Some(Ok(()))) {
            return None;
        }
        self.seen.lock().ok()?.take()
    }
}

/// Adds the processes below `root` and below this one (but `before`) to
/// `seen`; empties it where /proc has no children lists.
fn look(root: u32, before: &[u32], seen: &Mutex<Option<HashSet<u32>>>) {
    let me = std::process::id();
    let Some(adopted) = children_of(me) else {
        if let Ok(mut seen) = seen.lock() {
            *seen = None;
        }
        return;
    };
    let mut todo: Vec<u32> = adopted
        .into_iter()
        .filter(|p| !before.contains(p))
        .collect();
    todo.push(root);
    let mut found = Vec::new();
    while let Some(pid) = todo.pop() {
        found.push(pid);
        todo.extend(children_of(pid).unwrap_or_default());
    }
    if let Some(seen) = seen.lock().ok().as_mut().and_then(|s| s.as_mut()) {
        seen.extend(found);
    }
}

/// The children of process `pid`, from each of its threads' `children`
/// list; `None` where there is none to read.
fn children_of(pid: u32) -> Option<Vec<u32>> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut children = Vec::new();
    let mut listed = false;
    for task in tasks.flatten() {
        let Ok(list) = std::fs::read_to_string(task.path().join("children")) else {
            continue;
        };
        listed = true;
        children.extend(
            list.split_whitespace()
                .filter_map(|p| p.parse::<u32>().ok()),
        );
    }
    listed.then_some(children)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_watch_sees_the_whole_tree_below_the_program_and_its_children() {
        let before: Vec<u32> = children().into_iter().map(|(pid, _)| pid).collect();
        let mut shell = std::process::Command::new("sh")
            .args(["-c", "sleep 30 & sleep 30 & wait"])
            .spawn()
            .unwrap();
        let watch = Watch::start(shell.id(), before);
        // Until the shell has started both, and the watch has looked.
        let started = Instant::now();
        let grandchildren = loop {
            let found = children_of(shell.id()).unwrap();
            if found.len() == 2 || started.elapsed() > Duration::from_secs(10) {
                break found;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        std::thread::sleep(WATCH_EVERY * 3);
        let mine = children();
        assert!(
            mine.iter()
                .any(|(pid, name)| *pid == shell.id() && name == "sh"),
            "{mine:?}"
        );
        let seen = watch.finish().unwrap();
        for pid in &grandchildren {
            // SAFETY: kill of a process this test started.
            unsafe { libc::kill(*pid as i32, libc::SIGKILL) };
        }
        shell.wait().unwrap();
        assert_eq!(grandchildren.len(), 2);
        assert!(seen.contains(&shell.id()), "{seen:?}");
        assert!(grandchildren.iter().all(|p| seen.contains(p)), "{seen:?}");
        // Not this process, nor its children from before.
        assert!(!seen.contains(&std::process::id()));
    }
}
