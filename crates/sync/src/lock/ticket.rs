//! Ticket lock.
//!
//! Algorithm: Mellor-Crummey & Scott (1991), §2.2. Word layout: two
//! `AtomicU32` in one cache line, `next` (the next ticket to hand out) and
//! `serving` (the ticket now holding the lock). Acquire is one `lock xadd` on
//! `next`; release is a plain store to `serving`, because only the holder
//! ever writes it. Tickets wrap modulo 2^32, which is safe while fewer than
//! 2^32 cores wait at once.
//!
//! FIFO, no per-core node, but every waiter spins on the same line: each
//! hand-off invalidates every waiter's copy, so the hand-off cost grows with
//! the number of waiters (Boyd-Wickizer et al., "Non-scalable locks are
//! dangerous", 2012) — the effect the simulator models.

use crossbeam_utils::CachePadded;

use super::RawLock;
use crate::primitive::{spin_loop, AtomicU32, Ordering};

#[derive(Debug)]
struct Words {
    next: AtomicU32,
    serving: AtomicU32,
}

/// Ticket lock (FIFO).
#[derive(Debug)]
pub struct Ticket {
    words: CachePadded<Words>,
}

impl Ticket {
    /// A free lock, in a `const` context (not available under loom).
    #[cfg(not(loom))]
    pub const fn new_const() -> Self {
        Self { words: CachePadded::new(Words { next: AtomicU32::new(0), serving: AtomicU32::new(0) }) }
    }

    /// A free lock.
    pub fn new() -> Self {
        Self { words: CachePadded::new(Words { next: AtomicU32::new(0), serving: AtomicU32::new(0) }) }
    }

    /// Number of cores holding or waiting for the lock (a racy snapshot).
    pub fn queue_length(&self) -> u32 {
        let serving = self.words.serving.load(Ordering::Relaxed);
        self.words.next.load(Ordering::Relaxed).wrapping_sub(serving)
    }
}

impl Default for Ticket {
    fn default() -> Self {
        Self::new()
    }
}

impl RawLock for Ticket {
    const NAME: &'static str = "ticket";

    fn with_cores(_cores: usize) -> Self {
        Self::new()
    }

    #[inline]
    fn acquire<F: FnMut()>(&self, _core: usize, mut spin: F) -> bool {
        let mine = self.words.next.fetch_add(1, Ordering::Relaxed);
        if self.words.serving.load(Ordering::Acquire) == mine {
            return false;
        }
        while self.words.serving.load(Ordering::Acquire) != mine {
            spin();
            spin_loop();
        }
        true
    }

    // Nothing held: keeping the ticket drawn across a kernel entry, to
    // store the next one without reading `serving`, cost the round trip
    // four instructions more than reading it.
    held_is_unit!();

    #[inline]
    fn try_acquire(&self, _core: usize) -> bool {
        let serving = self.words.serving.load(Ordering::Acquire);
        self.words.next.compare_exchange(serving, serving.wrapping_add(1), Ordering::Acquire, Ordering::Relaxed).is_ok()
    }

    #[inline]
    fn release(&self, _core: usize) {
        let serving = self.words.serving.load(Ordering::Relaxed);
        self.words.serving.store(serving.wrapping_add(1), Ordering::Release);
    }

    #[inline]
    fn is_locked(&self) -> bool {
        // Acquire (free on x86): an elided critical section that saw the
        // lock free must see everything the last holder wrote.
        let serving = self.words.serving.load(Ordering::Acquire);
        self.words.next.load(Ordering::Acquire) != serving
    }
}
