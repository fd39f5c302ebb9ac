//! [`Session`]: the JIT-facing API, safe to call from any thread.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

use crate::error::{Error, ErrorKind, Result};
use crate::options::{Activation, Options};
use crate::valgrind;
use crate::writer::{Failure, LineEntry, Writer};

/// A process's connection to the profilers: it writes `jit-PID.dump` and
/// `perf-PID.map` and tells Valgrind about new code.
///
/// Failures never reach the JIT as panics: the first one is reported on
/// stderr (and in Valgrind's log), later ones stay quiet, and the session
/// simply stops writing the file that failed.
pub struct Session {
    enabled: AtomicBool,
    /// Set by [`Session::close`]: later loads get [`ErrorKind::Closed`].
    closed: AtomicBool,
    /// A load after close was reported (once).
    closed_reported: AtomicBool,
    live: AtomicBool,
    state: Mutex<State>,
}

struct State {
    options: Options,
    writer: Option<Writer>,
    reported: bool,
    #[cfg(feature = "live")]
    live: Option<crate::live::Live>,
    #[cfg(feature = "live")]
    live_warned: bool,
}

impl Session {
    /// Opens a session. With the activation off (or `Auto` outside
    /// Valgrind) nothing is created and every call returns at once.
    pub fn open(options: Options) -> Session {
        let on = match options.activation {
            Activation::On => true,
            Activation::Off => false,
            Activation::Auto => valgrind::running_on_valgrind(),
        };
        let live = AtomicBool::new(options.live && on && valgrind::running_on_valgrind());
        let mut state = State {
            options,
            writer: None,
            reported: false,
            #[cfg(feature = "live")]
            live: None,
            #[cfg(feature = "live")]
            live_warned: false,
        };
        if on {
            crate::sys::watch_forks();
            state.create_writer();
        }
        let enabled = AtomicBool::new(state.writer.is_some());
        Session {
            enabled,
            closed: AtomicBool::new(false),
            closed_reported: AtomicBool::new(false),
            live,
            state: Mutex::new(state),
        }
    }

    /// True once [`Session::close`] (or process exit) closed the files: a
    /// session is not opened again (a process's jitdump has one writer).
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Relaxed)
    }

    /// True while the session writes at least one file.
    #[inline]
    pub fn is_enabled(&self) -> bool {
        // Acquire: a caller that sees the session off also sees `closed`,
        // stored before it (see `close_with`).
        self.enabled.load(Ordering::Acquire)
    }

    /// Registers freshly committed machine code: call it once the code is
    /// final (after the last `mprotect`), before it runs. `code` is the code
    /// in place: its address is the function's address. `lines` gives the
    /// source position of each instruction range, by offset.
    ///
    /// On return the records are in the files (one `write`), and Valgrind
    /// has dropped any stale translation of the range. Code loaded over code
    /// registered before first ends an epoch: callgrind dumps the profile
    /// so far (see [`crate::epochs`]).
    ///
    /// Errors: [`ErrorKind::InvalidArgument`] for empty code, a range that
    /// wraps around, or records over the format's 4 GiB (nothing written);
    /// [`ErrorKind::Closed`] after [`Session::close`]; [`ErrorKind::Io`]
    /// when a file failed (reported once, that file no longer written).
    pub fn code_loaded(&self, code: &[u8], name: &[u8], lines: &[LineEntry]) -> Result<()> {
        if !self.is_enabled() {
            return self.off_status();
        }
        checked_range(code.as_ptr() as usize, code.len())?;
        if !crate::writer::records_fit(code.len(), name, lines) {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                "the load's records would exceed the jitdump's 4 GiB record size",
            ));
        }
        let result = self.with_writer(|w| w.code_loaded(code, name, lines));
        if self.live.load(Ordering::Relaxed) {
            self.map_live(code, name, lines);
        }
        valgrind::discard_translations(code.as_ptr() as usize, code.len());
        result
    }

    /// What a call gets while no file is written: nothing to report, unless
    /// the session was closed (a load after close is lost, and says so).
    #[cold]
    pub fn off_status(&self) -> Result<()> {
        if !self.closed.load(Ordering::Acquire) {
            return Ok(());
        }
        let message = "code registered after the session was closed (close() or process exit) \
                       is not written";
        if !self.closed_reported.swap(true, Ordering::Relaxed) {
            eprintln!("callgrind-jit: {message}");
            valgrind::log(message);
        }
        Err(Error::new(ErrorKind::Closed, message))
    }

    /// Turns live mode on or off (it only ever turns on under Valgrind).
    /// Returns whether it is on now.
    ///
    /// # Safety
    /// As for [`Options::live`]: the JIT owns every page holding registered
    /// code whole, and changes it only in place.
    pub unsafe fn set_live(&self, on: bool) -> bool {
        let on =
            on && cfg!(feature = "live") && self.is_enabled() && valgrind::running_on_valgrind();
        self.live.store(on, Ordering::Relaxed);
        on
    }

    #[cfg(feature = "live")]
    fn map_live(&self, code: &[u8], name: &[u8], lines: &[LineEntry]) {
        let mut state = self.lock();
        let made = match state.live.take() {
            None => crate::live::Live::new(crate::sys::pid()),
            // After fork: the parent's folder is not the child's to write.
            Some(parents) if parents.is_parents() => parents.for_child(crate::sys::pid()),
            Some(live) => Ok(live),
        };
        match made {
            Ok(live) => state.live = Some(live),
            Err(e) => return self.live_failed(&mut state, &format!("live mode off: {e}")),
        }
        let name = crate::writer::function_name(name, code.as_ptr() as u64);
        let result = state.live.as_mut().map(|live| live.map(code, &name, lines));
        match result {
            Some(Err(crate::live::LiveError::Refused(why))) => {
                state.warn_live(&format!(
                    "live mode skips code whose pages it may not map over ({}); \
                     the jitdump names it",
                    why.reason()
                ));
            }
            Some(Err(crate::live::LiveError::Failed(e))) => {
                self.live_failed(&mut state, &format!("live mode off: {e}"))
            }
            _ => {}
        }
    }

    #[cfg(feature = "live")]
    fn live_failed(&self, state: &mut State, message: &str) {
        self.live.store(false, Ordering::Relaxed);
        state.warn(message);
    }

    #[cfg(not(feature = "live"))]
    fn map_live(&self, _code: &[u8], _name: &[u8], _lines: &[LineEntry]) {}

    /// Tells Valgrind the code at `[addr, addr+size)` is gone, so it drops
    /// its translations before the memory is reused.
    pub fn code_unloaded(&self, addr: usize, size: usize) -> Result<()> {
        if !self.is_enabled() {
            return self.off_status();
        }
        checked_range(addr, size)?;
        valgrind::discard_translations(addr, size);
        self.with_writer(|w| {
            w.code_unloaded(addr as u64, size as u64);
            Ok(())
        })
    }

    /// Writes CODE_CLOSE and closes the files; later calls do nothing.
    pub fn close(&self) -> Result<()> {
        self.close_with(self.lock())
    }

    /// Like [`Session::close`], but gives up if another thread holds the
    /// session (used at process exit, where waiting could hang).
    pub(crate) fn close_at_exit(&self) {
        let state = match self.state.try_lock() {
            Ok(s) => s,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return,
        };
        let _ = self.close_with(Locked::new(state));
    }

    fn close_with(&self, mut state: Locked<'_>) -> Result<()> {
        // `closed` first: a load that finds the session off must find it
        // closed too, or it would answer Ok for code it did not write.
        if state.writer.is_some() {
            self.closed.store(true, Ordering::Release);
        }
        self.enabled.store(false, Ordering::Release);
        let Some(writer) = state.writer.take() else {
            return Ok(());
        };
        if writer.generation != crate::sys::fork_generation() {
            writer.abandon();
            return Ok(());
        }
        writer
            .close()
            .map_err(|e| state.report(Failure::Jitdump(e)))
    }

    /// The paths being written, if the session is on.
    pub fn paths(&self) -> Option<(std::path::PathBuf, std::path::PathBuf)> {
        let state = self.lock();
        let w = state.writer.as_ref()?;
        Some((w.jitdump_path.clone(), w.perf_map_path.clone()))
    }

    fn with_writer(
        &self,
        f: impl FnOnce(&mut Writer) -> std::result::Result<(), Failure>,
    ) -> Result<()> {
        let mut state = self.lock();
        state.follow_fork();
        let Some(writer) = state.writer.as_mut() else {
            // Closed between the caller's check and the lock: the load is
            // not written, and says so.
            drop(state);
            return self.off_status();
        };
        let result = f(writer);
        let open = writer.is_open();
        let result = result.map_err(|failure| state.report(failure));
        if !open {
            state.writer = None;
            self.enabled.store(false, Ordering::Relaxed);
        }
        result
    }

    fn lock(&self) -> Locked<'_> {
        let guard = self
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        Locked::new(guard)
    }
}

/// The session's lock, announced to Valgrind's thread checkers: helgrind
/// and DRD understand pthread mutexes, not the futex under `std::sync::Mutex`,
/// so acquiring and releasing are declared as happens-after/before edges.
struct Locked<'a> {
    guard: MutexGuard<'a, State>,
}

impl<'a> Locked<'a> {
    fn new(guard: MutexGuard<'a, State>) -> Self {
        valgrind::happens_after(lock_key(&guard));
        Locked { guard }
    }
}

fn lock_key(guard: &MutexGuard<'_, State>) -> usize {
    &**guard as *const State as usize
}

impl std::ops::Deref for Locked<'_> {
    type Target = State;
    fn deref(&self) -> &State {
        &self.guard
    }
}

impl std::ops::DerefMut for Locked<'_> {
    fn deref_mut(&mut self) -> &mut State {
        &mut self.guard
    }
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        valgrind::happens_before(lock_key(&self.guard));
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.close();
    }
}

impl State {
    fn create_writer(&mut self) {
        let (writer, problems) = Writer::create(&self.options);
        for problem in problems {
            self.warn(&problem);
        }
        if writer.is_open() {
            let mut message = String::from("writing ");
            for (i, path) in writer.open_paths().iter().enumerate() {
                if i > 0 {
                    message.push_str(" and ");
                }
                message.push_str(&path.to_string_lossy());
            }
            valgrind::log(&message);
            self.writer = Some(writer);
        }
    }

    /// After `fork`, the child starts files of its own and leaves the
    /// parent's alone.
    fn follow_fork(&mut self) {
        if self
            .writer
            .as_ref()
            .is_some_and(|w| w.generation != crate::sys::fork_generation())
        {
            if let Some(parent) = self.writer.take() {
                parent.abandon();
            }
            self.create_writer();
        }
    }

    fn report(&mut self, failure: Failure) -> Error {
        let (path, err) = match (&failure, self.writer.as_ref()) {
            (Failure::Jitdump(e), Some(w)) => (w.jitdump_path.display().to_string(), e),
            (Failure::PerfMap(e), Some(w)) => (w.perf_map_path.display().to_string(), e),
            (Failure::Jitdump(e) | Failure::PerfMap(e), None) => ("jit files".to_string(), e),
        };
        let message = format!("cannot write {path}: {err}; no longer writing it");
        self.warn(&message);
        Error::new(ErrorKind::Io, message)
    }

    /// The live-mode fallback notice, once.
    #[cfg(feature = "live")]
    fn warn_live(&mut self, message: &str) {
        if !std::mem::replace(&mut self.live_warned, true) {
            eprintln!("callgrind-jit: {message}");
            valgrind::log(message);
        }
    }

    fn warn(&mut self, message: &str) {
        if !self.reported {
            self.reported = true;
            eprintln!("callgrind-jit: {message}");
            valgrind::log(message);
        }
    }
}

/// A code range must hold at least one byte and not wrap around.
pub(crate) fn checked_range(addr: usize, size: usize) -> Result<()> {
    if size == 0 {
        return Err(Error::new(ErrorKind::InvalidArgument, "zero-size code"));
    }
    match addr.checked_add(size) {
        Some(_) => Ok(()),
        None => Err(Error::new(
            ErrorKind::InvalidArgument,
            "code range wraps around the address space",
        )),
    }
}
