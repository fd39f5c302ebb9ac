//! annotate
