//! jit-client: tell Valgrind and perf about code a JIT generates.
//!
//! At each code commit the JIT calls [`Session::code_loaded`]. The session
//! writes a jitdump record (name, code bytes, line table) to
//! `jit-PID.dump`, a line to `/tmp/perf-PID.map`, and asks Valgrind to drop
//! stale translations of the range. `callgrind-jit annotate` then names the
//! JIT's functions in callgrind profiles; `perf inject --jit` reads the
//! same files.
//!
//! The session is on under Valgrind, or with `CALLGRIND_JIT=1`; off, every
//! call returns at once.
//!
//! ```
//! use jit_client::{Activation, LineEntry, Options, Session};
//!
//! let dir = std::env::temp_dir().join(format!("jit-client-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let session = Session::open(
//!     Options::from_env().activation(Activation::On).jitdump_dir(&dir).perf_map_dir(&dir),
//! );
//! // Pretend these bytes are freshly committed machine code.
//! let code: Vec<u8> = vec![0x90; 32];
//! let lines = [LineEntry::new(0, 1, 1, "demo.toy"), LineEntry::new(16, 2, 5, "demo.toy")];
//! session.code_loaded(&code, b"main", &lines).unwrap();
//! session.close().unwrap();
//! assert!(dir.join(format!("jit-{}.dump", std::process::id())).exists());
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```
#![warn(missing_docs)]

pub mod epochs;
mod error;
pub mod ffi;
mod global;
#[cfg(feature = "image")]
pub mod image;
#[cfg(feature = "live")]
mod live;
pub mod live_folder;
mod names;
mod options;
pub mod perfmap;
mod session;
mod sys;
#[cfg(test)]
mod tests;
mod valgrind;
mod writer;

pub use error::{Error, ErrorKind, Result};
pub use global::global;
pub use live_folder::dir_for as live_dir;
pub use options::{Activation, Options};
pub use session::Session;
pub use valgrind::running_on_valgrind;
pub use writer::LineEntry;
