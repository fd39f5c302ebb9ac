//! When a session is on, and where its files go.

use std::ffi::OsString;
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
    /// Settings from `CALLGRIND_JIT`, `CALLGRIND_JIT_PERF_MAP`,
    /// `CALLGRIND_JIT_LIVE` and `JITDUMPDIR`.
    pub fn from_env() -> Self {
        Options::from_vars(|name| std::env::var_os(name))
    }

    /// [`Options::from_env`] with the variables `var` gives.
    fn from_vars(var: impl Fn(&str) -> Option<OsString>) -> Self {
        let flag = |name| flag(var(name));
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
        if let Some(dir) = var("JITDUMPDIR").filter(|d| !d.is_empty()) {
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

/// A variable's value as a switch: `1`, `on` or `yes` is true, `0`,
/// `off` or `no` false; anything else (or unset) says nothing.
fn flag(value: Option<OsString>) -> Option<bool> {
    match value?.as_encoded_bytes() {
        b"1" | b"on" | b"yes" => Some(true),
        b"0" | b"off" | b"no" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Options from the variables `vars` (name, value).
    fn with(vars: &[(&str, &str)]) -> Options {
        Options::from_vars(|name| {
            let value = vars.iter().find(|(n, _)| *n == name);
            value.map(|(_, v)| OsString::from(v))
        })
    }

    #[test]
    fn each_variable_sets_its_option_and_others_leave_the_defaults() {
        let none = with(&[]);
        assert_eq!(none.activation, Activation::Auto);
        assert!(none.perf_map && !none.live);
        assert_eq!(none.jitdump_dir, PathBuf::from("."));
        assert_eq!(none.perf_map_dir, PathBuf::from("/tmp"));
        for (value, want) in [
            ("1", Activation::On),
            ("on", Activation::On),
            ("yes", Activation::On),
            ("0", Activation::Off),
            ("off", Activation::Off),
            ("no", Activation::Off),
            ("maybe", Activation::Auto),
            ("", Activation::Auto),
        ] {
            assert_eq!(
                with(&[("CALLGRIND_JIT", value)]).activation,
                want,
                "{value}"
            );
        }
        assert!(!with(&[("CALLGRIND_JIT_PERF_MAP", "0")]).perf_map);
        assert!(with(&[("CALLGRIND_JIT_PERF_MAP", "1")]).perf_map);
        assert!(with(&[("CALLGRIND_JIT_LIVE", "1")]).live);
        assert!(!with(&[("CALLGRIND_JIT_LIVE", "2")]).live);
        let dir = with(&[("JITDUMPDIR", "/var/jit")]);
        assert_eq!(dir.jitdump_dir, PathBuf::from("/var/jit"));
        assert_eq!(with(&[("JITDUMPDIR", "")]).jitdump_dir, PathBuf::from("."));
        // One variable does not set another's option.
        let on = with(&[("CALLGRIND_JIT", "1")]);
        assert!(on.perf_map && !on.live);
    }

    #[test]
    fn the_setters_set_what_they_name() {
        // SAFETY: no session is opened with these options.
        let opts = unsafe { Options::default().live(true) };
        let opts = opts.perf_map(false).perf_map_dir("/m").jitdump_dir("/d");
        let opts = opts.activation(Activation::Off);
        assert!(opts.live && !opts.perf_map);
        assert_eq!(
            (opts.perf_map_dir, opts.jitdump_dir),
            ("/m".into(), "/d".into())
        );
        assert_eq!(opts.activation, Activation::Off);
    }
}
