//! Statistics counters written by one core only (kernel entries, switches,
//! fast-path calls, regime tallies): a plain load and store, no
//! read-modify-write, since nobody else writes them.

use core::sync::atomic::{AtomicU64, Ordering};

/// Bump a counter only its own core writes.
#[inline(always)]
pub(crate) fn bump(c: &AtomicU64) {
    c.store(c.load(Ordering::Relaxed).wrapping_add(1), Ordering::Relaxed);
}
