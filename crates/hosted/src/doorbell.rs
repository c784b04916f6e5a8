//! A core's interrupt line: the pending word other cores ring, and the
//! wake-up of a core that parked in its idle loop.
//!
//! Hardware delivers an IPI by raising a line that the target core samples
//! between instructions. The hosted platform has no such thing, so a core
//! samples its *doorbell* at kernel entry and in its idle loop:
//!
//! * `pending` is a word of [`Ring`] bits (IPI, device interrupt, timer,
//!   shutdown, context hand-off). Ringers `fetch_or` a bit; the owner core `swap`s the
//!   word to 0 when it sees it non-zero (a plain load on the hot path, so an
//!   un-rung doorbell costs one cache hit).
//! * `sleeping` says the owner parked (or is about to). A ringer that sees it
//!   unparks the owner's OS thread. The owner publishes `sleeping = true`, then
//!   re-reads `pending` before parking; the ringer publishes `pending`, then
//!   reads `sleeping`. Both sides put a `SeqCst` fence between their store and
//!   their load (Dekker's pattern), so at least one of them sees the other's
//!   store: either the owner sees the bell and does not park, or the ringer
//!   sees `sleeping` and unparks it. `std::thread::park` keeps an unpark that
//!   arrives before the park as a token, so that unpark is never lost either.
//!
//! Parking is the hosted idle core's `hlt`: it gives the CPU back to Linux,
//! which matters on a machine shared with other work, and it is what makes a
//! cross-core wake-up cost a futex wake when the target is asleep.

use std::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::thread::Thread;

/// Why a doorbell rang (bits of the pending word).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Ring {
    /// An inter-processor interrupt planned by the kernel.
    Ipi = 1,
    /// A device interrupt line was raised (see [`crate::irq`]).
    Irq = 2,
    /// The machine is shutting down.
    Shutdown = 4,
    /// Another core wants user contexts this core holds (see [`crate::context`]).
    Handoff = 8,
    /// The core's virtual timer fired.
    Timer = 16,
}

/// One core's doorbell.
#[derive(Debug, Default)]
pub struct Doorbell {
    pending: AtomicU32,
    sleeping: AtomicBool,
    parks: AtomicU64,
    thread: OnceLock<Thread>,
}

impl Doorbell {
    /// Record the OS thread that acts as this core (called once by that thread).
    pub fn bind_current(&self) {
        let _ = self.thread.set(std::thread::current());
    }

    /// Ring: set `why` and wake the owner if it is parked.
    pub fn ring(&self, why: Ring) {
        self.pending.fetch_or(why as u32, Ordering::Release);
        fence(Ordering::SeqCst);
        if self.sleeping.load(Ordering::Relaxed) {
            if let Some(t) = self.thread.get() {
                t.unpark();
            }
        }
    }

    /// Whether anything is pending (a plain load: the hot-path check).
    #[inline(always)]
    pub fn is_rung(&self) -> bool {
        self.pending.load(Ordering::Relaxed) != 0
    }

    /// Take every pending reason (the owner's acknowledgement).
    #[inline]
    pub fn take(&self) -> u32 {
        if self.is_rung() {
            self.pending.swap(0, Ordering::Acquire)
        } else {
            0
        }
    }

    /// Whether the owner is parked (or about to park, or just woke).
    pub fn is_sleeping(&self) -> bool {
        self.sleeping.load(Ordering::Relaxed)
    }

    /// How many times the owner parked its OS thread (only the owner parks,
    /// so the count is exact; anyone may read it).
    pub fn parks(&self) -> u64 {
        self.parks.load(Ordering::Relaxed)
    }

    /// Take one pending reason, leaving the others pending.
    #[inline]
    pub fn take_only(&self, why: Ring) -> bool {
        self.pending.load(Ordering::Relaxed) & why as u32 != 0
            && self.pending.fetch_and(!(why as u32), Ordering::Acquire) & why as u32 != 0
    }

    /// Park the calling (owner) thread until the doorbell rings or `timeout`
    /// passes (`None`: no timeout). Returns at once if it already rang.
    /// Spurious returns are possible; callers loop.
    pub fn park(&self, timeout: Option<std::time::Duration>) {
        self.sleeping.store(true, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        if !self.is_rung() {
            self.parks.store(self.parks.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
            match timeout {
                Some(t) => std::thread::park_timeout(t),
                None => std::thread::park(),
            }
        }
        self.sleeping.store(false, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_ring_wakes_a_parked_owner_and_is_taken_once() {
        let bell = Arc::new(Doorbell::default());
        let b = bell.clone();
        let owner = std::thread::spawn(move || {
            b.bind_current();
            let mut got = 0;
            while got & Ring::Ipi as u32 == 0 {
                b.park(None);
                got |= b.take();
            }
            got
        });
        // Give the owner a chance to park; correctness does not depend on it.
        std::thread::sleep(std::time::Duration::from_millis(20));
        bell.ring(Ring::Ipi);
        assert_eq!(owner.join().unwrap() & Ring::Ipi as u32, Ring::Ipi as u32);
        assert_eq!(bell.take(), 0);
    }
}
