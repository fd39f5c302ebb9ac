//! While valgrind runs, `record` must survive the signals that stop a run
//! (so it can annotate what valgrind wrote) and pass on those sent to it
//! alone. A Ctrl-C from the terminal reaches valgrind directly (one process
//! group); a `kill` aimed at `record` (by `timeout`, say) is forwarded.

use std::sync::atomic::{AtomicI32, Ordering};

/// The signals a run is stopped with.
const STOPPING: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// The child to forward to (0: none).
static CHILD: AtomicI32 = AtomicI32::new(0);
/// The last stopping signal received (0: none).
static RECEIVED: AtomicI32 = AtomicI32::new(0);

type Handler = extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void);

const HANDLER: Handler = on_signal;

extern "C" fn on_signal(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    RECEIVED.store(sig, Ordering::Relaxed);
    let child = CHILD.load(Ordering::Relaxed);
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let code = unsafe { (*info).si_code };
    // SI_USER/SI_QUEUE: sent by a process, to us alone; a terminal's
    // signal (SI_KERNEL) has reached valgrind already.
    if child > 0 && (code == libc::SI_USER || code == libc::SI_QUEUE) {
        // SAFETY: kill is async-signal-safe.
        unsafe { libc::kill(child, sig) };
    }
}

/// Forwards stopping signals to `child` until dropped, then restores the
/// previous handlers.
pub struct Forwarding {
    previous: Vec<(libc::c_int, libc::sigaction)>,
}

impl Forwarding {
    /// Starts forwarding to `child`.
    pub fn start(child: u32) -> Forwarding {
        CHILD.store(child as i32, Ordering::Relaxed);
        RECEIVED.store(0, Ordering::Relaxed);
        let mut previous = Vec::new();
        for sig in STOPPING {
            // SAFETY: a zeroed sigaction is a valid starting point; the
            // handler is an extern "C" fn of the SA_SIGINFO shape.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = HANDLER as usize;
                action.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
                libc::sigemptyset(&mut action.sa_mask);
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, &action, &mut old) == 0 {
                    previous.push((sig, old));
                }
            }
        }
        Forwarding { previous }
    }

    /// The last stopping signal `record` received, if any.
    pub fn received(&self) -> Option<libc::c_int> {
        Some(RECEIVED.load(Ordering::Relaxed)).filter(|&s| s != 0)
    }
}

impl Drop for Forwarding {
    fn drop(&mut self) {
        CHILD.store(0, Ordering::Relaxed);
        for (sig, old) in &self.previous {
            // SAFETY: restores an action sigaction gave us.
            unsafe { libc::sigaction(*sig, old, std::ptr::null_mut()) };
        }
    }
}

/// A signal's name for messages: `SIGINT`, or `signal 42`.
pub fn name(sig: libc::c_int) -> String {
    let known = [
        (libc::SIGHUP, "SIGHUP"),
        (libc::SIGINT, "SIGINT"),
        (libc::SIGQUIT, "SIGQUIT"),
        (libc::SIGILL, "SIGILL"),
        (libc::SIGABRT, "SIGABRT"),
        (libc::SIGBUS, "SIGBUS"),
        (libc::SIGFPE, "SIGFPE"),
        (libc::SIGKILL, "SIGKILL"),
        (libc::SIGSEGV, "SIGSEGV"),
        (libc::SIGPIPE, "SIGPIPE"),
        (libc::SIGTERM, "SIGTERM"),
    ];
    known
        .iter()
        .find(|(s, _)| *s == sig)
        .map_or_else(|| format!("signal {sig}"), |(_, n)| n.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    #[test]
    fn a_stopping_signal_sent_to_record_is_noted_and_passed_on() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let forwarding = Forwarding::start(child.id());
        assert_eq!(forwarding.received(), None);
        // SAFETY: a signal to this process, whose handler is installed.
        unsafe { libc::kill(libc::getpid(), libc::SIGTERM) };
        let waited = std::time::Instant::now();
        while forwarding.received().is_none() && waited.elapsed().as_secs() < 10 {
            std::thread::yield_now();
        }
        assert_eq!(forwarding.received(), Some(libc::SIGTERM));
        let status = child.wait().unwrap();
        assert_eq!(status.signal(), Some(libc::SIGTERM));
        drop(forwarding);
        // The previous action is back: SIGTERM's default, not ours.
        // SAFETY: reads the current action into a zeroed sigaction.
        let action = unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            libc::sigaction(libc::SIGTERM, std::ptr::null(), &mut old);
            old
        };
        assert_eq!(action.sa_sigaction, libc::SIG_DFL);
    }

    #[test]
    fn signals_are_named_as_the_shell_names_them() {
        assert_eq!(name(libc::SIGINT), "SIGINT");
        assert_eq!(name(libc::SIGSEGV), "SIGSEGV");
        assert_eq!(name(libc::SIGTERM), "SIGTERM");
        assert_eq!(name(42), "signal 42");
    }
}
