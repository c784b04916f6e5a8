//! What the invariant checker reports (a leaf: the checker, the wait
//! representations and the public API all name it).

use alloc::string::String;

/// A violated kernel invariant: which one, and the evidence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvariantViolation {
    /// Short name of the invariant.
    pub invariant: &'static str,
    /// What was found.
    pub detail: String,
}

impl core::fmt::Display for InvariantViolation {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "kernel invariant `{}` violated: {}", self.invariant, self.detail)
    }
}

/// `Err` of the violation of `invariant`, with `detail`.
pub(crate) fn fail<T>(invariant: &'static str, detail: String) -> Result<T, InvariantViolation> {
    Err(InvariantViolation { invariant, detail })
}

/// Return the violation of invariant `$inv` (the `format!` arguments
/// after it say what was found) unless `$cond` holds: the invariant
/// checker's one check, in `invariants.rs` and in the hooks it calls.
macro_rules! ensure {
    ($cond:expr, $inv:literal, $($fmt:tt)+) => {
        if !$cond {
            return $crate::violation::fail($inv, alloc::format!($($fmt)+));
        }
    };
}
pub(crate) use ensure;
