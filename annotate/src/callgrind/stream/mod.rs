//! Input and output on threads of their own: the [`reader`] fills chunks
//! ahead of the rewriter (and marks their plain cost lines), the
//! [`writer`] writes batches that [`out`] gathers; [`shared`] lets the
//! rewriter read part of the input again.

pub mod out;
pub mod reader;
pub mod shared;
pub mod writer;
