//! Integration tests: one binary, one module per topic.

mod attribution;
mod clean;
mod cli;
mod client_safety;
mod corrupt;
mod every_fixture;
mod expand;
mod golden;
mod identity;
mod inputs;
mod install;
mod jit_client;
mod live;
mod live_pages;
mod oracle;
mod perf;
mod provenance;
mod record;
mod record_run;
mod reliability;
mod rewrite;
mod rewriting;
mod safe_files;
mod symbols;
mod util;
mod wasmtime;
