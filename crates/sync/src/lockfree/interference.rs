//! The interference hook: a test's or benchmark's hand between a read and
//! its compare-and-swap.
//!
//! Every lock-free operation in this module is a loop of *read, compute,
//! CAS*. Synthesis measured the "1 retry" column of its Table 1 with special
//! hardware (the Quamachine's PGA) that wrote to memory between the initial
//! read and the CAS. We have no such hardware, so every operation that has a
//! read-then-CAS takes a hook, called once per attempt that reaches its CAS,
//! after the read and immediately before the CAS, with the attempt number (0
//! for the first attempt, 1 for the first retry, …). In the array queues an
//! attempt that finds its slot already taken re-reads the position without
//! reaching a CAS, and calls no hook; its attempt number is still consumed,
//! so a hook keyed on attempt 0 fires only if the first read reached the CAS
//! (always the case with no concurrent operations, as in the benchmark). A hook that performs one
//! conflicting write on attempt 0 — each object's `interfere()` is the
//! cheapest such write — makes the first CAS fail and the second succeed,
//! which is exactly the seed's "Opt., 1 retry" case.
//!
//! [`NoInterference`] is a zero-sized type whose hook is empty and
//! `#[inline(always)]`: monomorphised code with it is the plain algorithm.
//! Every closure `FnMut(u32)` is a hook, and [`OnFirstAttempt`] wraps a
//! closure `FnMut()` to run only on attempt 0.
//!
//! Operations report their retries in a [`Retried`] so tests can assert
//! "exactly one retry happened" rather than infer it from timings.

/// Called by a lock-free operation between its read and its CAS.
pub trait Interference {
    /// `attempt` is 0 on the first try and counts up by one per retry.
    fn before_cas(&mut self, attempt: u32);
}

/// The hook that does nothing; compiles to nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NoInterference;

impl Interference for NoInterference {
    #[inline(always)]
    fn before_cas(&mut self, _attempt: u32) {}
}

impl<F: FnMut(u32)> Interference for F {
    #[inline(always)]
    fn before_cas(&mut self, attempt: u32) {
        self(attempt)
    }
}

/// Runs the wrapped closure before the first CAS only (attempt 0): one
/// injected conflicting write per operation.
#[derive(Clone, Copy, Debug)]
pub struct OnFirstAttempt<F>(pub F);

impl<F: FnMut()> Interference for OnFirstAttempt<F> {
    #[inline(always)]
    fn before_cas(&mut self, attempt: u32) {
        if attempt == 0 {
            (self.0)()
        }
    }
}

/// The result of an operation together with the number of retries it took
/// (0 when the first attempt succeeded).
#[must_use]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retried<T> {
    /// What the operation returned.
    pub value: T,
    /// How many times the operation went around its retry loop.
    pub retries: u32,
}

impl<T> Retried<T> {
    /// Apply `f` to the value, keeping the retry count.
    #[inline(always)]
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Retried<U> {
        Retried { value: f(self.value), retries: self.retries }
    }

    /// Add `more` retries (of a second loop in the same operation).
    #[inline(always)]
    pub(crate) fn add_retries(mut self, more: u32) -> Self {
        self.retries += more;
        self
    }
}
