//! Integration tests: one binary, one module per topic.

mod cli;
mod identity;
mod jit_client;
mod rewrite;
mod util;
