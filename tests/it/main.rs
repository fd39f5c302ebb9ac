//! Integration tests: one binary, one module per topic.

mod identity;
mod jit_client;
mod util;
