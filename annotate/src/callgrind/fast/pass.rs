//! What the fast lane did with a line.

/// What the lane did with a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Pass {
    /// Handled: the output line is the input line.
    Copied,
    /// A call's `cob=`/`cfi=`/`cfn=` line, held until the callee is known
    /// to be native (then copied as it is).
    Held,
    /// Not for the lane: the rewriter must see it, after the held lines.
    Declined,
}
