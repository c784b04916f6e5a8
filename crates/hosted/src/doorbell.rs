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

use std::cell::Cell;
use std::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::Thread;

use crate::idle_work::IdleWork;

thread_local! {
    /// The doorbell whose owner this thread is while it runs that owner's
    /// idle work (null otherwise): a ring from inside the work need not wake
    /// anyone, since the owner looks at its bell when the work returns.
    static IN_IDLE_WORK: Cell<*const Doorbell> = const { Cell::new(std::ptr::null()) };
}

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
#[derive(Default)]
pub struct Doorbell {
    pending: AtomicU32,
    sleeping: AtomicBool,
    parks: AtomicU64,
    thread: OnceLock<Thread>,
    /// What the owner does instead of parking (see [`crate::idle_work`]).
    work: OnceLock<Arc<dyn IdleWork>>,
}

impl std::fmt::Debug for Doorbell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Doorbell")
            .field("pending", &self.pending)
            .field("sleeping", &self.sleeping)
            .field("parks", &self.parks)
            .field("idle_work", &self.work.get().is_some())
            .finish_non_exhaustive()
    }
}

impl Doorbell {
    /// Record the OS thread that acts as this core (called once by that thread).
    pub fn bind_current(&self) {
        let _ = self.thread.set(std::thread::current());
    }

    /// Give the owner idle work: it waits in [`IdleWork::wait`] instead of
    /// parking, and a ring while it sleeps calls [`IdleWork::wake`] (once,
    /// before the owner's first park; later calls are ignored).
    pub fn bind_idle_work(&self, work: Arc<dyn IdleWork>) {
        let _ = self.work.set(work);
    }

    /// The owner's idle work, if any.
    pub fn idle_work(&self) -> Option<&Arc<dyn IdleWork>> {
        self.work.get()
    }

    /// Ring: set `why` and wake the owner if it is parked.
    pub fn ring(&self, why: Ring) {
        self.pending.fetch_or(why as u32, Ordering::Release);
        fence(Ordering::SeqCst);
        if self.sleeping.load(Ordering::Relaxed) {
            // The owner rang its own bell from its idle work (a packet it
            // delivered raised an interrupt): no wake-up, which would cost
            // the idle work a system call and its next wait a spurious return.
            if std::ptr::eq(IN_IDLE_WORK.get(), self) {
                return;
            }
            if let Some(w) = self.work.get() {
                w.wake();
            }
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
    /// Spurious returns are possible; callers loop. With idle work and no
    /// timeout, the owner waits in [`IdleWork::wait`] instead.
    pub fn park(&self, timeout: Option<std::time::Duration>) {
        self.sleeping.store(true, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        if !self.is_rung() {
            self.parks.store(self.parks.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
            match (timeout, self.work.get()) {
                (Some(t), _) => std::thread::park_timeout(t),
                (None, Some(work)) => {
                    IN_IDLE_WORK.set(self);
                    work.wait();
                    IN_IDLE_WORK.set(std::ptr::null());
                }
                (None, None) => std::thread::park(),
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

    /// Idle work that counts its waits and wake-ups; a wait returns once a
    /// wake-up is owed (a flag, like an eventfd).
    #[derive(Default)]
    struct Counting {
        owed: std::sync::Mutex<bool>,
        cv: std::sync::Condvar,
        waits: AtomicU64,
        wakes: AtomicU64,
    }

    impl IdleWork for Counting {
        fn wait(&self) {
            self.waits.fetch_add(1, Ordering::SeqCst);
            let mut owed = self.owed.lock().unwrap();
            while !*owed {
                owed = self.cv.wait(owed).unwrap();
            }
            *owed = false;
        }
        fn wake(&self) {
            self.wakes.fetch_add(1, Ordering::SeqCst);
            *self.owed.lock().unwrap() = true;
            self.cv.notify_all();
        }
    }

    /// Idle work that rings its owner's bell, as a far side that delivers a
    /// packet raises an interrupt.
    #[derive(Default)]
    struct RingsItsOwner {
        bell: OnceLock<std::sync::Weak<Doorbell>>,
        wakes: AtomicU64,
    }

    impl IdleWork for RingsItsOwner {
        fn wait(&self) {
            if let Some(bell) = self.bell.get().and_then(std::sync::Weak::upgrade) {
                bell.ring(Ring::Irq);
            }
        }
        fn wake(&self) {
            self.wakes.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn a_ring_from_the_owners_own_idle_work_wakes_nobody() {
        let bell = Arc::new(Doorbell::default());
        let work = Arc::new(RingsItsOwner::default());
        let _ = work.bell.set(Arc::downgrade(&bell));
        bell.bind_idle_work(work.clone());
        bell.bind_current();
        bell.park(None);
        assert_eq!(bell.take(), Ring::Irq as u32, "the ring is pending when the work returns");
        assert_eq!(work.wakes.load(Ordering::SeqCst), 0, "no wake-up of the work that rang");
        // Outside its idle work the owner's ring still takes the usual way.
        bell.sleeping.store(true, Ordering::Relaxed);
        bell.ring(Ring::Irq);
        assert_eq!(work.wakes.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_ring_ends_the_idle_work_of_a_sleeping_owner() {
        let bell = Arc::new(Doorbell::default());
        let work = Arc::new(Counting::default());
        bell.bind_idle_work(work.clone());
        let b = bell.clone();
        let owner = std::thread::spawn(move || {
            b.bind_current();
            let mut got = 0;
            while got & Ring::Irq as u32 == 0 {
                b.park(None);
                got |= b.take();
            }
            got
        });
        std::thread::sleep(std::time::Duration::from_millis(20));
        bell.ring(Ring::Irq);
        assert_eq!(owner.join().unwrap() & Ring::Irq as u32, Ring::Irq as u32);
        // Either the owner waited and the ring woke it, or it saw the ring first.
        let (waits, wakes) = (work.waits.load(Ordering::SeqCst), work.wakes.load(Ordering::SeqCst));
        assert!(waits <= wakes, "{waits} waits, {wakes} wake-ups");
    }
}
