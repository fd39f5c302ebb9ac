//! The fast path, beside the meaning: the driver cuts the chunks
//! (`chunks`) into lines, passes over runs of plain cost lines and copies
//! the native lines that stay as they are (the lane: name lines in `names`,
//! call groups held in the driver until their callee is known). Whatever
//! it is unsure of, the rewriter (`rewrite`) sees, through the same
//! functions as every other line.

mod chunks;
mod driver;
mod names;

pub(in crate::callgrind) use driver::Driver;
