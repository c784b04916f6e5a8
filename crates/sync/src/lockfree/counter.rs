//! The lock-free counter: Synthesis's "increment counter" row.
//!
//! **Word layout:** one `AtomicU64` holding the count, alone in its cache
//! line. Arithmetic wraps modulo 2^64.
//!
//! **Algorithm** (Massalin & Pu 1991, §3.1, "Stack Pop is implemented in
//! almost the same way as a counter increment"): read the value into a
//! private variable, compute the new value, CAS it in; on failure retry with
//! the value the CAS saw. x86 could do this with one `lock xadd`, which never
//! retries; the CAS loop is kept because it is the seed's algorithm, because
//! it is the shape of every other object here, and because it lets a hook
//! interfere between the read and the CAS. Orderings: the CAS is `AcqRel`,
//! so a count can publish what its incrementer wrote before.

use crossbeam_utils::CachePadded;

use super::interference::{Interference, NoInterference, Retried};
use crate::primitive::{AtomicU64, Ordering};

/// A lock-free 64-bit counter.
#[derive(Debug)]
pub struct Counter {
    value: CachePadded<AtomicU64>,
}

impl Counter {
    /// A counter holding `value`.
    pub fn new(value: u64) -> Self {
        Self { value: CachePadded::new(AtomicU64::new(value)) }
    }

    /// A counter holding `value`, in a `const` context (not under loom).
    #[cfg(not(loom))]
    pub const fn new_const(value: u64) -> Self {
        Self { value: CachePadded::new(AtomicU64::new(value)) }
    }

    /// The current value.
    #[inline]
    pub fn get(&self) -> u64 {
        self.value.load(Ordering::Acquire)
    }

    /// Add one; returns the new value.
    #[inline]
    pub fn increment(&self) -> u64 {
        self.add_with(1, &mut NoInterference).value
    }

    /// Add `delta` (wrapping); returns the new value.
    #[inline]
    pub fn add(&self, delta: u64) -> u64 {
        self.add_with(delta, &mut NoInterference).value
    }

    /// Add one, calling `hook` between the read and each CAS.
    #[inline]
    pub fn increment_with<I: Interference + ?Sized>(&self, hook: &mut I) -> Retried<u64> {
        self.add_with(1, hook)
    }

    /// Add `delta` (wrapping), calling `hook` between the read and each CAS;
    /// returns the new value and the number of retries.
    #[inline]
    pub fn add_with<I: Interference + ?Sized>(&self, delta: u64, hook: &mut I) -> Retried<u64> {
        let mut attempt = 0;
        let mut old = self.value.load(Ordering::Relaxed);
        loop {
            let new = old.wrapping_add(delta);
            hook.before_cas(attempt);
            match self.value.compare_exchange(old, new, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => return Retried { value: new, retries: attempt },
                Err(now) => {
                    old = now;
                    attempt += 1;
                }
            }
        }
    }

    /// One conflicting write: as if another core incremented the counter
    /// (one atomic add, so the count stays exact). Makes an in-flight CAS
    /// fail.
    #[inline]
    pub fn interfere(&self) {
        self.value.fetch_add(1, Ordering::AcqRel);
    }
}

impl Default for Counter {
    fn default() -> Self {
        Self::new(0)
    }
}

/// The counter without synchronisation (the "No Sync" column): the same
/// word, a plain load, add and store.
#[derive(Clone, Debug, Default)]
pub struct SeqCounter {
    value: u64,
}

impl SeqCounter {
    /// A counter holding `value`.
    pub const fn new(value: u64) -> Self {
        Self { value }
    }

    /// The current value.
    #[inline]
    pub fn get(&self) -> u64 {
        self.value
    }

    /// Add one; returns the new value.
    #[inline]
    pub fn increment(&mut self) -> u64 {
        self.value = self.value.wrapping_add(1);
        self.value
    }
}
