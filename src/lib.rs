//! Placeholder library so the root package builds; see tests/ and examples/.
