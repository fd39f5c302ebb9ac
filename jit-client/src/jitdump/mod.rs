//! The jitdump format: its layout ([`format`]) and an encoder ([`write`]).

pub mod format;
pub mod write;
