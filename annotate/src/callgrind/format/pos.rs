//! A position: the values of a part's position columns.

/// Most columns a `positions:` line may list.
pub const MAX_COLUMNS: usize = 3;

/// Absolute values of all columns.
pub type Pos = [u64; MAX_COLUMNS];
