//! Test-and-test-and-set spin lock.
//!
//! Algorithm: Rudolph & Segall (1984). Word layout: one `AtomicBool`,
//! `true` = held, alone in its cache line. Waiters spin on a plain load (the
//! line stays shared in their caches) and only try `lock cmpxchg(false ->
//! true)` when they see the lock free. A compare-and-swap rather than `xchg`:
//! it costs the same on x86, and a failed attempt writes nothing, which keeps
//! the algorithm within what loom's memory model can check. Not fair, no per-core node; the baseline every queue lock is
//! compared with.

use crossbeam_utils::CachePadded;

use super::RawLock;
use crate::primitive::{spin_loop, AtomicBool, Ordering};

/// Test-and-test-and-set lock.
#[derive(Debug)]
pub struct Ttas {
    held: CachePadded<AtomicBool>,
}

impl Ttas {
    /// A free lock, in a `const` context (not available under loom).
    #[cfg(not(loom))]
    pub const fn new_const() -> Self {
        Self { held: CachePadded::new(AtomicBool::new(false)) }
    }

    /// A free lock.
    pub fn new() -> Self {
        Self { held: CachePadded::new(AtomicBool::new(false)) }
    }
}

impl Ttas {
    /// One attempt to take the free lock.
    #[inline(always)]
    fn grab(&self) -> bool {
        self.held.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).is_ok()
    }
}

impl Default for Ttas {
    fn default() -> Self {
        Self::new()
    }
}

impl RawLock for Ttas {
    const NAME: &'static str = "ttas";

    fn with_cores(_cores: usize) -> Self {
        Self::new()
    }

    #[inline]
    fn acquire<F: FnMut()>(&self, _core: usize, mut spin: F) -> bool {
        if self.grab() {
            return false;
        }
        loop {
            while self.held.load(Ordering::Relaxed) {
                spin();
                spin_loop();
            }
            if self.grab() {
                return true;
            }
        }
    }

    held_is_unit!();

    #[inline]
    fn try_acquire(&self, _core: usize) -> bool {
        !self.held.load(Ordering::Relaxed) && self.grab()
    }

    #[inline]
    fn release(&self, _core: usize) {
        self.held.store(false, Ordering::Release);
    }

    #[inline]
    fn is_locked(&self) -> bool {
        // Acquire: an elided critical section that saw the lock free must
        // see everything the last holder wrote.
        self.held.load(Ordering::Acquire)
    }
}
