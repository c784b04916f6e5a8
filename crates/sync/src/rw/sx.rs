//! Shared/exclusive lock after FreeBSD's `sx(9)`, spinning only.
//!
//! Algorithm: FreeBSD's lockless sx (`sys/kern/kern_sx.c`, `sys/sys/sx.h`),
//! reduced to what a kernel spin lock needs: no sleep queues, no owner
//! pointer, no recursion. Readers and writers meet in one
//! word, alone in its cache line:
//!
//! ```text
//!  63                                   2   1   0
//! +--------------------------------------+---+---+
//! |         sharer count (62 bits)       | W | X |
//! +--------------------------------------+---+---+
//!  X  EXCLUSIVE       a writer holds the lock (the sharer count is then 0)
//!  W  WRITER_WAITING  at least one writer is spinning in `xlock`
//! ```
//!
//! (FreeBSD keeps the owning thread in the upper bits while exclusively
//! held; a kernel spin lock taken by cores has no use for it.)
//!
//! * `slock`: CAS `count + 1` while neither X nor W is set.
//!   `sunlock`: `fetch_sub` one sharer.
//! * `xlock`: CAS to `X` (clearing W) when X and the count are both clear;
//!   while the lock is held, set W first. `xunlock`: clear X, keep W.
//! * `try_upgrade`: CAS `count == 1` to `X` (keeping W), as `sx_try_upgrade`:
//!   it succeeds only for the sole sharer, which must be the caller.
//! * `downgrade`: CAS `X` to `count == 1` (keeping W) in one step, so no
//!   other writer can come between the exclusive and the shared hold.
//!
//! **Policy: writers first.** Like FreeBSD's `sx_can_share`, a shared
//! acquisition never passes a waiting writer: once a writer has set W no new
//! sharer enters, the sharer count only drains, and the writer gets the lock
//! when it reaches zero. A stream of readers therefore cannot starve writers;
//! a stream of writers can starve readers, and writers among themselves are
//! unordered (whoever's CAS lands first). `try_xlock`, `try_upgrade` and
//! `downgrade` keep W as they found it.
//!
//! W is one bit for any number of waiting writers: the writer that gets the
//! lock clears it (it cannot know whether others wait), and every writer still
//! waiting sets it again on its next spin iteration. So W is only ever set by
//! a writer that has not yet acquired, and a waiting reader never waits for a
//! writer that does not exist.
//!
//! Orderings: acquisitions are `Acquire` CASes, releases (`sunlock`,
//! `xunlock`, `downgrade`) `Release` RMWs, so every hold happens-after the
//! release of every conflicting earlier hold (later RMWs continue the release
//! sequence of earlier ones). Setting W is `Relaxed`: it protects no data.
//!
//! Not recursive: a sharer that calls `slock` again deadlocks if a writer is
//! waiting in between, and a sharer that calls `xlock` deadlocks with itself
//! (use `try_upgrade`).

use crossbeam_utils::CachePadded;

use crate::primitive::{spin_loop, AtomicU64, Ordering};

/// A writer holds the lock.
const EXCLUSIVE: u64 = 1;
/// At least one writer is waiting in `xlock`.
const WRITER_WAITING: u64 = 1 << 1;
/// One sharer in the count field.
const ONE_SHARER: u64 = 1 << 2;
/// The sharer count field.
const SHARERS: u64 = !(EXCLUSIVE | WRITER_WAITING);

/// FreeBSD-style shared/exclusive spin lock (see the module documentation for
/// the word layout and the writers-first policy).
///
/// The lock has no notion of owner: any thread may release a hold, and a
/// release of a hold nobody has breaks the lock (for everyone) but is never
/// undefined behaviour; debug builds assert against it.
#[derive(Debug)]
pub struct Sx {
    word: CachePadded<AtomicU64>,
}

impl Default for Sx {
    fn default() -> Self {
        Self::new()
    }
}

impl Sx {
    /// A free lock.
    pub fn new() -> Self {
        Self { word: CachePadded::new(AtomicU64::new(0)) }
    }

    /// A free lock, in a `const` context (not available under loom).
    #[cfg(not(loom))]
    pub const fn new_const() -> Self {
        Self { word: CachePadded::new(AtomicU64::new(0)) }
    }

    /// The word with one more sharer.
    #[inline]
    fn plus_sharer(word: u64) -> u64 {
        word.checked_add(ONE_SHARER).expect("sx: sharer count overflow")
    }

    // ------------------------------------------------------------------ shared

    /// Acquire a shared hold, calling `spin` once per iteration while a writer
    /// holds or waits for the lock. Returns whether it had to wait.
    #[inline]
    pub fn slock<F: FnMut()>(&self, mut spin: F) -> bool {
        let mut contended = false;
        let mut cur = self.word.load(Ordering::Relaxed);
        loop {
            if cur & (EXCLUSIVE | WRITER_WAITING) == 0 {
                match self.word.compare_exchange(cur, Self::plus_sharer(cur), Ordering::Acquire, Ordering::Relaxed) {
                    Ok(_) => return contended,
                    // Another sharer came or went, or a writer arrived: look again.
                    Err(now) => {
                        cur = now;
                        continue;
                    }
                }
            }
            contended = true;
            spin();
            spin_loop();
            cur = self.word.load(Ordering::Relaxed);
        }
    }

    /// Acquire a shared hold if no writer holds or waits for the lock.
    #[inline]
    pub fn try_slock(&self) -> bool {
        let mut cur = self.word.load(Ordering::Relaxed);
        while cur & (EXCLUSIVE | WRITER_WAITING) == 0 {
            match self.word.compare_exchange(cur, Self::plus_sharer(cur), Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => return true,
                Err(now) => cur = now,
            }
        }
        false
    }

    /// Release a shared hold.
    #[inline]
    pub fn sunlock(&self) {
        let prev = self.word.fetch_sub(ONE_SHARER, Ordering::Release);
        debug_assert!(prev & SHARERS != 0, "sx: sunlock without a shared hold (word {prev:#x})");
    }

    // --------------------------------------------------------------- exclusive

    /// Acquire the exclusive hold, calling `spin` once per iteration while
    /// the lock is held. Announces the waiting writer (W) so that no new
    /// sharer enters. Returns whether it had to wait.
    #[inline]
    pub fn xlock<F: FnMut()>(&self, mut spin: F) -> bool {
        let mut contended = false;
        let mut cur = self.word.load(Ordering::Relaxed);
        loop {
            if cur & (EXCLUSIVE | SHARERS) == 0 {
                // Free (W may be set, by us or another writer): take it and
                // clear W; writers still waiting set it again.
                match self.word.compare_exchange(cur, EXCLUSIVE, Ordering::Acquire, Ordering::Relaxed) {
                    Ok(_) => return contended,
                    Err(now) => {
                        cur = now;
                        continue;
                    }
                }
            }
            contended = true;
            if cur & WRITER_WAITING == 0 {
                // Announce ourselves; the lock may have become free meanwhile,
                // so decide again on the value we replaced.
                cur = self.word.fetch_or(WRITER_WAITING, Ordering::Relaxed) | WRITER_WAITING;
                continue;
            }
            spin();
            spin_loop();
            cur = self.word.load(Ordering::Relaxed);
        }
    }

    /// Acquire the exclusive hold if the lock is free (a waiting writer does
    /// not stop it; W is kept for that writer).
    #[inline]
    pub fn try_xlock(&self) -> bool {
        self.take_exclusive_while(self.word.load(Ordering::Relaxed), |w| w & (EXCLUSIVE | SHARERS) == 0)
    }

    /// CAS the word from `cur` to "exclusive, W kept" for as long as `may`
    /// holds of the word we last saw; whether it succeeded. Acquire: the
    /// previous holders' releases happen-before our writes.
    #[inline]
    fn take_exclusive_while(&self, mut cur: u64, may: impl Fn(u64) -> bool) -> bool {
        while may(cur) {
            match self.word.compare_exchange(
                cur,
                EXCLUSIVE | (cur & WRITER_WAITING),
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(now) => cur = now,
            }
        }
        false
    }

    /// Release the exclusive hold (W, if set by a waiting writer, stays).
    #[inline]
    pub fn xunlock(&self) {
        let prev = self.word.fetch_and(!EXCLUSIVE, Ordering::Release);
        debug_assert!(prev & EXCLUSIVE != 0, "sx: xunlock without the exclusive hold (word {prev:#x})");
    }

    // ------------------------------------------------------ upgrade, downgrade

    /// Turn the caller's shared hold into the exclusive hold, if the caller is
    /// the only sharer (`sx_try_upgrade`). On failure the caller still holds
    /// its shared hold.
    #[inline]
    pub fn try_upgrade(&self) -> bool {
        let cur = self.word.load(Ordering::Relaxed);
        debug_assert!(cur & SHARERS != 0, "sx: try_upgrade without a shared hold (word {cur:#x})");
        // The count can only change by other sharers arriving (then we fail)
        // or by W flipping (then we retry).
        self.take_exclusive_while(cur, |w| w & SHARERS == ONE_SHARER)
    }

    /// Turn the caller's exclusive hold into a shared hold in one atomic step:
    /// readers may enter (unless a writer is waiting), writers may not until
    /// the caller's `sunlock`.
    #[inline]
    pub fn downgrade(&self) {
        let mut cur = self.word.load(Ordering::Relaxed);
        // While X is set only W can change (other writers announcing).
        while cur & EXCLUSIVE != 0 {
            match self.word.compare_exchange(
                cur,
                ONE_SHARER | (cur & WRITER_WAITING),
                Ordering::Release,
                Ordering::Relaxed,
            ) {
                Ok(_) => return,
                Err(now) => cur = now,
            }
        }
        // Only reached when X was clear: a downgrade by a non-writer, which
        // leaves the word untouched.
        debug_assert!(cur & EXCLUSIVE != 0, "sx: downgrade without the exclusive hold (word {cur:#x})");
    }

    // ------------------------------------------------------------------ queries

    /// Whether anyone holds the lock, shared or exclusive (a racy snapshot).
    #[inline]
    pub fn is_locked(&self) -> bool {
        self.word.load(Ordering::Relaxed) & (EXCLUSIVE | SHARERS) != 0
    }

    /// Whether a writer holds the lock (FreeBSD's `sx_xlocked`, without the
    /// owner check; a racy snapshot).
    #[inline]
    pub fn is_xlocked(&self) -> bool {
        self.word.load(Ordering::Relaxed) & EXCLUSIVE != 0
    }

    /// The number of shared holders (a racy snapshot).
    #[inline]
    pub fn sharers(&self) -> u64 {
        (self.word.load(Ordering::Relaxed) & SHARERS) / ONE_SHARER
    }

    /// Whether a writer has announced that it waits (a racy snapshot).
    #[inline]
    pub fn writer_waiting(&self) -> bool {
        self.word.load(Ordering::Relaxed) & WRITER_WAITING != 0
    }
}

#[cfg(not(loom))]
pub use self::lock_api_adapter::{RawSx, SxRwLock};

#[cfg(not(loom))]
mod lock_api_adapter {
    use super::Sx;

    /// [`Sx`] as a `lock_api` raw reader-writer lock.
    #[derive(Debug, Default)]
    pub struct RawSx(Sx);

    /// `RwLock<T>` over the shared/exclusive lock; write guards can
    /// `downgrade`. Recursive `read` can deadlock behind a waiting writer.
    pub type SxRwLock<T> = lock_api::RwLock<RawSx, T>;

    // SAFETY: `lock_shared`/`try_lock_shared` return (true) only with a shared
    // hold, `lock_exclusive`/`try_lock_exclusive` only with the exclusive hold,
    // and `Sx` lets a shared hold coexist only with other shared holds. The
    // lock has no owner identity, so guards may be released on another thread
    // (`GuardSend`).
    unsafe impl lock_api::RawRwLock for RawSx {
        #[allow(clippy::declare_interior_mutable_const)]
        const INIT: Self = Self(Sx::new_const());
        type GuardMarker = lock_api::GuardSend;

        fn lock_shared(&self) {
            self.0.slock(|| {});
        }

        fn try_lock_shared(&self) -> bool {
            self.0.try_slock()
        }

        unsafe fn unlock_shared(&self) {
            self.0.sunlock();
        }

        fn lock_exclusive(&self) {
            self.0.xlock(|| {});
        }

        fn try_lock_exclusive(&self) -> bool {
            self.0.try_xlock()
        }

        unsafe fn unlock_exclusive(&self) {
            self.0.xunlock();
        }

        fn is_locked(&self) -> bool {
            self.0.is_locked()
        }

        fn is_locked_exclusive(&self) -> bool {
            self.0.is_xlocked()
        }
    }

    // SAFETY: `downgrade` turns the exclusive hold into a shared hold in one
    // atomic step, as the trait requires.
    unsafe impl lock_api::RawRwLockDowngrade for RawSx {
        unsafe fn downgrade(&self) {
            self.0.downgrade();
        }
    }
}
