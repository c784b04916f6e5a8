//! Big-reader lock: one reader lock per core; a writer takes them all.
//!
//! Algorithm: Linux's `brlock` (Corbet, "Big reader locks", LWN 378911;
//! `lglock` in later kernels), the lock the seeds' fine-grained seL4 puts
//! around the kernel. Layout: `cores` kernel locks `L` (any [`RawLock`],
//! a [`Ticket`] by default), each alone in its cache line(s), plus one word
//! naming the core that holds the write side (`usize::MAX` = none), written
//! only by that writer while it holds every reader lock.
//!
//! * `read_acquire(core)` takes lock `core` as `core`. With no writer around
//!   that lock is uncontended and its line stays in the core's cache: one
//!   atomic read-modify-write, no coherence traffic.
//! * `write_acquire(core)` takes locks `0, 1, …, cores - 1`, in that order, as
//!   `core`. **The index order is the lock order**: two writers meet at lock 0,
//!   so they cannot deadlock; a reader holds only one lock and never waits
//!   while holding it, so it cannot be part of a cycle either.
//! * `write_release` releases the locks (in index order; any order is correct).
//!
//! Every per-core lock may be taken by any core (its reader, or any writer),
//! so each is built for all `cores`: with CLH or MCS per-core locks the
//! brlock holds `cores` × (`cores` + 1) queue-node lines; with ticket or TTAS
//! locks, `cores` lines.
//!
//! Readers exclude writers and writers exclude everyone because every writer
//! holds every reader's lock. A writer waits for readers core by core; while it
//! is part way through, cores it already passed are locked out of reading.
//! Fairness is the per-core lock's: with a FIFO lock ([`Ticket`], CLH, MCS) a
//! reader that releases and comes back queues behind a waiting writer, so
//! neither side can starve the other; with TTAS either can.
//!
//! Statistics (`S`, [`NoStats`] by default, compiled away) record read and
//! write acquisitions like any kernel lock, by call site. A profiled brlock
//! writes shared counters on the read path, which costs the coherence traffic
//! the lock exists to avoid: profile to find out *who* takes it, not to time
//! its unprofiled read path.

use alloc::vec::Vec;
use core::panic::Location;

use crossbeam_utils::CachePadded;

use crate::cycles;
use crate::lock::{RawLock, Ticket};
use crate::primitive::{AtomicUsize, Ordering};
use crate::profile::{LockStats, NoStats, Site};

/// Value of the writer word when no core holds the write side.
const NO_WRITER: usize = usize::MAX;

/// Big-reader lock over per-core locks `L`, with statistics `S`.
///
/// Core indices follow [`RawLock`]'s contract: at most one thread acts as a
/// core at a time, and a core releases only what it holds. In addition a core
/// holding the read side must not ask for the write side (it would wait for
/// its own reader lock).
#[derive(Debug)]
pub struct BrLock<L: RawLock = Ticket, S: LockStats = NoStats> {
    /// Reader lock of core `i` at index `i`; also the write side's lock order.
    readers: Vec<CachePadded<L>>,
    /// The core holding the write side, or `NO_WRITER`. Informational (the
    /// reader locks do the excluding): written by the writer only while it
    /// holds every reader lock.
    writer: CachePadded<AtomicUsize>,
    stats: S,
}

impl<L: RawLock, S: LockStats> BrLock<L, S> {
    /// A free lock for cores `0..cores`, named `"brlock"` in profiles.
    ///
    /// # Panics
    /// If `cores` is 0.
    pub fn new(cores: usize) -> Self {
        Self::named("brlock", cores)
    }

    /// A free lock for cores `0..cores`, named `name` in profiles.
    ///
    /// # Panics
    /// If `cores` is 0.
    pub fn named(name: &'static str, cores: usize) -> Self {
        assert!(cores >= 1, "a lock needs at least one core");
        Self {
            // Every per-core lock may be taken by any core (its own reader or
            // any writer), so each is built for all `cores`.
            readers: (0..cores).map(|_| CachePadded::new(L::with_cores(cores))).collect(),
            writer: CachePadded::new(AtomicUsize::new(NO_WRITER)),
            stats: S::new(name, cores),
        }
    }

    /// The number of cores the lock was built for.
    pub fn cores(&self) -> usize {
        self.readers.len()
    }

    /// The statistics.
    pub fn stats(&self) -> &S {
        &self.stats
    }

    /// Core `core`'s reader lock (the word a reader on that core takes).
    ///
    /// # Panics
    /// If `core` is not below [`Self::cores`].
    pub fn reader_lock(&self, core: usize) -> &L {
        &self.readers[core]
    }

    // ---------------------------------------------------------------- read side

    /// Acquire the read side as `core`, calling `spin` while a writer holds
    /// (or is taking) this core's lock. Returns whether it had to wait.
    ///
    /// # Panics
    /// If `core` is not below [`Self::cores`].
    #[inline]
    #[track_caller]
    pub fn read_acquire<F: FnMut()>(&self, core: usize, spin: F) -> bool {
        self.read_acquire_at(Location::caller(), core, spin)
    }

    /// [`Self::read_acquire`], attributing the acquisition to `site`.
    #[inline]
    pub fn read_acquire_at<F: FnMut()>(&self, site: Site, core: usize, spin: F) -> bool {
        let lock = &self.readers[core];
        if S::ENABLED {
            let t0 = cycles::now();
            let contended = lock.acquire(core, spin);
            let t1 = cycles::now();
            self.stats.acquired(core, site, t1.saturating_sub(t0), contended, t1);
            contended
        } else {
            lock.acquire(core, spin)
        }
    }

    /// Acquire the read side as `core` if that needs no waiting.
    ///
    /// # Panics
    /// If `core` is not below [`Self::cores`].
    #[inline]
    #[track_caller]
    pub fn try_read_acquire(&self, core: usize) -> bool {
        let ok = self.readers[core].try_acquire(core);
        if S::ENABLED && ok {
            self.stats.acquired(core, Location::caller(), 0, false, cycles::now());
        }
        ok
    }

    /// Release the read side held by `core`.
    #[inline]
    pub fn read_release(&self, core: usize) {
        if S::ENABLED {
            self.stats.releasing(core, cycles::now());
        }
        self.readers[core].release(core);
    }

    // --------------------------------------------------------------- write side

    /// Acquire the write side as `core`: every core's reader lock, in index
    /// order, calling `spin` while waiting for any of them. Returns whether
    /// any of them was contended.
    ///
    /// # Panics
    /// If `core` is not below [`Self::cores`].
    #[inline]
    #[track_caller]
    pub fn write_acquire<F: FnMut()>(&self, core: usize, spin: F) -> bool {
        self.write_acquire_at(Location::caller(), core, spin)
    }

    /// [`Self::write_acquire`], attributing the acquisition to `site`.
    pub fn write_acquire_at<F: FnMut()>(&self, site: Site, core: usize, mut spin: F) -> bool {
        assert!(core < self.cores(), "core {core} out of range for a {}-core lock", self.cores());
        let t0 = if S::ENABLED { cycles::now() } else { 0 };
        let mut contended = false;
        for lock in &self.readers {
            contended |= lock.acquire(core, &mut spin);
        }
        self.writer.store(core, Ordering::Relaxed);
        if S::ENABLED {
            let t1 = cycles::now();
            self.stats.acquired(core, site, t1.saturating_sub(t0), contended, t1);
        }
        contended
    }

    /// Acquire the write side as `core` if no reader lock needs waiting for;
    /// on failure every lock taken so far is released again.
    ///
    /// # Panics
    /// If `core` is not below [`Self::cores`].
    #[track_caller]
    pub fn try_write_acquire(&self, core: usize) -> bool {
        assert!(core < self.cores(), "core {core} out of range for a {}-core lock", self.cores());
        for (i, lock) in self.readers.iter().enumerate() {
            if !lock.try_acquire(core) {
                for taken in &self.readers[..i] {
                    taken.release(core);
                }
                return false;
            }
        }
        self.writer.store(core, Ordering::Relaxed);
        if S::ENABLED {
            self.stats.acquired(core, Location::caller(), 0, false, cycles::now());
        }
        true
    }

    /// Release the write side held by `core`.
    pub fn write_release(&self, core: usize) {
        debug_assert_eq!(
            self.writer.load(Ordering::Relaxed),
            core,
            "brlock: write_release by a core that is not the writer"
        );
        if S::ENABLED {
            self.stats.releasing(core, cycles::now());
        }
        // Cleared while we still hold every reader lock, so a later writer's
        // store cannot be overwritten by ours.
        self.writer.store(NO_WRITER, Ordering::Relaxed);
        for lock in &self.readers {
            lock.release(core);
        }
    }

    // ------------------------------------------------------------------ queries

    /// The core holding the write side, if a writer has finished acquiring
    /// and not yet started releasing (a racy snapshot).
    #[inline]
    pub fn writer(&self) -> Option<usize> {
        match self.writer.load(Ordering::Relaxed) {
            NO_WRITER => None,
            core => Some(core),
        }
    }

    /// Whether a writer holds the write side (see [`Self::writer`]).
    #[inline]
    pub fn is_write_locked(&self) -> bool {
        self.writer().is_some()
    }

    /// Whether core `core`'s reader lock is held or queued for, by its reader
    /// or by a writer (a racy snapshot).
    ///
    /// # Panics
    /// If `core` is not below [`Self::cores`].
    #[inline]
    pub fn is_read_locked(&self, core: usize) -> bool {
        self.readers[core].is_locked()
    }

    /// Whether any reader lock is held or queued for: some reader or writer is
    /// inside or on its way in (a racy snapshot; reads every core's line).
    pub fn is_locked(&self) -> bool {
        self.readers.iter().any(|lock| lock.is_locked())
    }
}
