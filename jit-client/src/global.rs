//! The process-wide session the C ABI uses: opened from the environment
//! on first use, closed at process exit.

use std::sync::OnceLock;

use crate::{Options, Session};

static GLOBAL: OnceLock<Session> = OnceLock::new();

/// The process-wide session, opened from the environment on first use
/// ([`Options::from_env`]) and closed at process exit. The C ABI uses it.
pub fn global() -> &'static Session {
    GLOBAL.get_or_init(|| {
        // SAFETY: registering a plain extern "C" function without captures.
        unsafe { libc::atexit(close_global_at_exit) };
        Session::open(Options::from_env())
    })
}

/// The process-wide session if it was opened already.
pub(crate) fn global_if_open() -> Option<&'static Session> {
    GLOBAL.get()
}

extern "C" fn close_global_at_exit() {
    if let Some(session) = GLOBAL.get() {
        session.close_at_exit();
    }
}
