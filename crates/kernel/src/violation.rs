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
