//! The fast path, beside the meaning: the driver cuts chunks into lines
//! and passes over runs of plain cost lines; the lane copies the native
//! lines that stay as they are. Both decline whatever they are unsure of,
//! and the rewriter (`rewrite`) sees it, through the same functions as
//! every other line.

mod driver;
mod lane;

pub(in crate::callgrind) use driver::Driver;
