//! The fast part of the suite, inside this package so that mutation
//! testing (`cargo mutants -p callgrind-jit`) rebuilds only a small test
//! binary per mutant: the golden cases and the oracle on the small real
//! fixtures. The files are the integration suite's own (tests/it), so
//! some of their helpers serve only the suite.
#![allow(dead_code)]

#[path = "../../tests/it/expand.rs"]
mod expand;
#[path = "../../tests/it/golden.rs"]
mod golden;
#[path = "../../tests/it/oracle/mod.rs"]
mod oracle;
#[path = "../../tests/it/rewriting.rs"]
mod rewriting;
