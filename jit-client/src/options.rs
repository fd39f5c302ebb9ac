//! When a session is on, and where its files go.

use std::path::PathBuf;

/// Whether the session writes anything.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activation {
    /// On when the process runs under Valgrind, off otherwise.
    Auto,
    /// Always on (perf users get the same files).
    On,
    /// Always off: every call returns at once.
    Off,
}

/// Session settings. [`Options::from_env`] reads the documented variables.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Options {
    /// When to write. Default: [`Activation::Auto`]; `CALLGRIND_JIT=1`/`0`
    /// force it on or off.
    pub activation: Activation,
    /// Directory of `jit-PID.dump`. Default: `$JITDUMPDIR`, else the
    /// current directory (perf's convention).
    pub jitdump_dir: PathBuf,
    /// Directory of `perf-PID.map`. Default: `/tmp`, where perf looks.
    pub perf_map_dir: PathBuf,
    /// Whether to write the perf map at all. Default: yes;
    /// `CALLGRIND_JIT_PERF_MAP=0` turns it off (one system call per load
    /// instead of two).
    pub perf_map: bool,
    /// Live mode (only under Valgrind): Valgrind names JIT functions
    /// itself. Default: off; `CALLGRIND_JIT_LIVE=1` (the person running
    /// the JIT vouches for it) or the `unsafe` [`Options::live`] turn it on.
    pub(crate) live: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            activation: Activation::Auto,
            jitdump_dir: PathBuf::from("."),
            perf_map_dir: PathBuf::from("/tmp"),
            perf_map: true,
            live: false,
        }
    }
}

impl Options {
    /// Settings from `CALLGRIND_JIT` and `JITDUMPDIR`.
    pub fn from_env() -> Self {
        let mut opts = Options::default();
        match flag("CALLGRIND_JIT") {
            Some(true) => opts.activation = Activation::On,
            Some(false) => opts.activation = Activation::Off,
            None => {}
        }
        if flag("CALLGRIND_JIT_PERF_MAP") == Some(false) {
            opts.perf_map = false;
        }
        opts.live = flag("CALLGRIND_JIT_LIVE") == Some(true);
        if let Some(dir) = std::env::var_os("JITDUMPDIR").filter(|d| !d.is_empty()) {
            opts.jitdump_dir = PathBuf::from(dir);
        }
        opts
    }

    /// Builder-style setter for [`Options::activation`].
    pub fn activation(mut self, activation: Activation) -> Self {
        self.activation = activation;
        self
    }

    /// Builder-style setter for [`Options::jitdump_dir`].
    pub fn jitdump_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.jitdump_dir = dir.into();
        self
    }

    /// Turns live mode on or off.
    ///
    /// # Safety
    /// Live mode maps a file over every page that holds registered code. The
    /// JIT must own each such page whole (nothing else lives on it) and,
    /// once it is registered, change it only through `mprotect` and writes to
    /// the same addresses (never through another mapping of the same memory).
    /// Pages that are writable, shared or file-backed are detected and left
    /// alone; other sharing cannot be seen from here.
    pub unsafe fn live(mut self, on: bool) -> Self {
        self.live = on;
        self
    }

    /// Builder-style setter for [`Options::perf_map`].
    pub fn perf_map(mut self, on: bool) -> Self {
        self.perf_map = on;
        self
    }

    /// Builder-style setter for [`Options::perf_map_dir`].
    pub fn perf_map_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.perf_map_dir = dir.into();
        self
    }
}

/// Environment variable `name` as a switch: `1`, `on` or `yes` is true,
/// `0`, `off` or `no` false; anything else (or unset) says nothing.
fn flag(name: &str) -> Option<bool> {
    let value = std::env::var_os(name)?;
    match value.as_encoded_bytes() {
        b"1" | b"on" | b"yes" => Some(true),
        b"0" | b"off" | b"no" => Some(false),
        _ => None,
    }
}
