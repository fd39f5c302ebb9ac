//! The callgrind line format, in one place: the reference parsers
//! ([`line`](mod@line) for keys, names and counts; [`position`] for position and
//! cost columns), the one-pass variants the hot path uses ([`quick`],
//! each held to its reference by a test), and the block-wise marking of
//! plain cost lines ([`plain_lines`]). A change of format is made here.

pub mod line;
pub mod plain_lines;
pub mod pos;
pub mod position;
pub mod quick;
