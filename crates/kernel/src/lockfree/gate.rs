//! The `lockfree` regime: lock-free IPC paths behind a management gate.
//!
//! The IPC, notification, yield, tick and IPI paths run *shared*: any
//! number of cores at once, synchronising through the lock-free objects of
//! `crate::lockfree` (compare-and-swap on endpoint, notification and reply
//! words, per-core wake-up inboxes) — never through a lock. Everything else
//! is a *management* operation: serialised among management operations,
//! and excluding the shared paths of every other core while it runs. Why
//! exclusion is needed, and why it is also the grace period for deleted
//! objects, is explained in `crate::lockfree` and `docs/lockfree-kernel.md`.
//!
//! **The gate** (a Dekker-style handshake, like a big-reader lock whose
//! reader side is one locked add on a core-private line):
//!
//! * shared entry of core `c`: `active[c].fetch_add(1, SeqCst)` (the word
//!   counts entries and exits: odd inside), then `exclusive.load(SeqCst)`;
//!   if a management operation is running or waiting, `active[c]` = the
//!   next even value and spin until it is done, then retry.
//! * shared exit: `active[c].store(even, Release)`.
//! * management entry ([`Regime::enter`]): take the management ticket lock,
//!   `exclusive.store(true, SeqCst)`, then wait until `active[d]` is even
//!   (`SeqCst` load) for every other core `d`.
//! * management exit: `exclusive.store(false, Release)`, release the lock.
//!
//! With all four accesses of the handshake `SeqCst`, in their single total
//! order either the reader's add precedes the manager's load of
//! `active[c]` (the manager waits for the reader's exit), or the manager's
//! store precedes the reader's load (the reader backs off): never both
//! inside. The manager's acquire of `active[c] == 0` synchronises with the
//! reader's release at exit, and the reader's acquire of `exclusive ==
//! false` with the manager's release at its exit, so each side sees all the
//! other wrote. On x86-64 the reader pays one `lock add` per entry (the
//! only read-modify-write of the gate; the exit is a plain store). (It was
//! an `xchg` of the word's next value, which needs a load of the word
//! first: two instructions more on every entry, and no cheaper a barrier.)
//!
//! A core waiting at the gate has already published that it trapped
//! (`CoreCell::trapped`), exactly like a core waiting for the big lock, so
//! the stall protocol of `sched.rs` needs nothing more. Shared paths wait
//! for nothing but another core's *shared* entry to end (a suspend,
//! `wait_out_of_entry`), which itself waits for nothing, so a manager
//! waiting for `active[d]` cannot deadlock with core `d`.
//!
//! **Counting.** [`CountingLockFree`] (from [`LockFree::counting`]) is the
//! same regime counting every atomic read-modify-write instruction its
//! paths execute, per core and by instruction
//! ([`CountingLockFree::rmw_counts`]): the gate's `lock add`s (counted as
//! `lock xadd`, the same locked add that also returns the old value), a
//! management entry's `lock xadd` (the ticket) and `xchg` (the `SeqCst`
//! store of `exclusive`), and everything the lock-free objects report
//! through the kernel's link view (`crate::lockfree`), failed CAS attempts
//! included; beside them, the management entries themselves.
//! The IPI protocol's `fetch_or` and `swap` of pending bits, which every
//! regime shares and a one-core ping-pong never executes, are not counted.
//! Whether the shared paths count is the type's constant parameter
//! ([`LockFreeOf`]`<COUNTING>`), so [`LockFree`]'s shared paths compile
//! without any counting code (testing a run-time flag at every report cost
//! its kernel-only round trip 38 more instructions).

use alloc::boxed::Box;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crossbeam_utils::CachePadded;
use granule_sync::lock::{RawLock, Ticket};
use granule_sync::lockfree::Rmw;

use crate::counter::bump;
use crate::regime::Regime;

use super::shared::LfState;
use super::Shared;

/// Atomic read-modify-write instructions executed, by instruction (see
/// the module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RmwCounts {
    /// `xchg`.
    pub xchg: u64,
    /// `lock xadd`.
    pub xadd: u64,
    /// `lock cmpxchg` (failed attempts included).
    pub cmpxchg: u64,
    /// `lock cmpxchg16b` (failed attempts included).
    pub cmpxchg16b: u64,
    /// Not an instruction: the management entries begun (each one's
    /// ticket `lock xadd` and `SeqCst` store, an `xchg`, are counted
    /// above). How a count tells a lock-free operation from one that
    /// needed the whole kernel.
    pub management: u64,
}

impl core::ops::AddAssign for RmwCounts {
    /// Per instruction.
    fn add_assign(&mut self, more: RmwCounts) {
        self.xchg += more.xchg;
        self.xadd += more.xadd;
        self.cmpxchg += more.cmpxchg;
        self.cmpxchg16b += more.cmpxchg16b;
        self.management += more.management;
    }
}

impl RmwCounts {
    /// `self - earlier`, per instruction.
    pub fn since(&self, earlier: &RmwCounts) -> RmwCounts {
        RmwCounts {
            xchg: self.xchg.wrapping_sub(earlier.xchg),
            xadd: self.xadd.wrapping_sub(earlier.xadd),
            cmpxchg: self.cmpxchg.wrapping_sub(earlier.cmpxchg),
            cmpxchg16b: self.cmpxchg16b.wrapping_sub(earlier.cmpxchg16b),
            management: self.management.wrapping_sub(earlier.management),
        }
    }

    /// All the instructions (not the management entries).
    pub fn total(&self) -> u64 {
        self.xchg + self.xadd + self.cmpxchg + self.cmpxchg16b
    }
}

/// One core's counters, written by the thread acting as that core only:
/// one per instruction, then its management entries.
#[derive(Debug, Default)]
pub(crate) struct RmwTally([AtomicU64; 5]);

/// [`RmwTally`]'s counter of management entries.
const MANAGEMENT: usize = 4;

impl RmwTally {
    #[inline(always)]
    fn of(&self, op: Rmw) -> &AtomicU64 {
        &self.0[match op {
            Rmw::Xchg => 0,
            Rmw::Xadd => 1,
            Rmw::Cmpxchg => 2,
            Rmw::Cmpxchg16b => 3,
        }]
    }

    /// One `op` was executed.
    #[inline(always)]
    pub(crate) fn add(&self, op: Rmw) {
        bump(self.of(op));
    }

    /// The management entries begun.
    fn management(&self) -> &AtomicU64 {
        &self.0[MANAGEMENT]
    }
}

/// Every core's counters (shared with the kernel's lock-free state).
pub(crate) type Tallies = Arc<[CachePadded<RmwTally>]>;

/// The `lockfree` regime (see the module documentation); `COUNTING`: its
/// paths count their atomic read-modify-writes. Use the aliases
/// [`LockFree`] and [`CountingLockFree`].
pub struct LockFreeOf<const COUNTING: bool> {
    /// Per core: odd while the core is inside a shared (lock-free) path or
    /// trying to enter one; each entry and exit adds one, so another core
    /// can wait for one particular entry to end (`wait_out_of_entry`).
    active: Box<[CachePadded<AtomicU64>]>,
    /// Per core: it waits in `wait_out_of_entry` for another core.
    waiting: Box<[CachePadded<AtomicBool>]>,
    /// A management operation runs, or waits for the shared paths to leave.
    exclusive: CachePadded<AtomicBool>,
    /// Serialises management operations among themselves.
    manage: Ticket,
    /// Per core: the read-modify-writes counted (empty unless counting).
    tally: Tallies,
}

/// The `lockfree` regime, counting nothing.
pub type LockFree = LockFreeOf<false>;

/// The `lockfree` regime counting its atomic read-modify-writes (see the
/// module documentation); made by [`LockFree::counting`].
pub type CountingLockFree = LockFreeOf<true>;

impl<const COUNTING: bool> core::fmt::Debug for LockFreeOf<COUNTING> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("LockFree").field("cores", &self.active.len()).field("counting", &COUNTING).finish()
    }
}

impl LockFree {
    /// The regime for cores `0..cores` (at least 1), counting nothing.
    pub fn new(cores: usize) -> Self {
        Self::build(cores)
    }

    /// The regime for cores `0..cores`, counting every atomic
    /// read-modify-write its paths execute.
    pub fn counting(cores: usize) -> CountingLockFree {
        CountingLockFree::build(cores)
    }
}

impl CountingLockFree {
    /// The read-modify-writes counted so far, summed over the cores.
    pub fn rmw_counts(&self) -> RmwCounts {
        let sum = |op: Rmw| self.tally.iter().map(|t| t.of(op).load(Ordering::Relaxed)).sum();
        RmwCounts {
            xchg: sum(Rmw::Xchg),
            xadd: sum(Rmw::Xadd),
            cmpxchg: sum(Rmw::Cmpxchg),
            cmpxchg16b: sum(Rmw::Cmpxchg16b),
            management: self.tally.iter().map(|t| t.management().load(Ordering::Relaxed)).sum(),
        }
    }
}

impl<const COUNTING: bool> LockFreeOf<COUNTING> {
    /// Whether this regime counts its atomic read-modify-writes.
    pub const COUNTING: bool = COUNTING;

    fn build(cores: usize) -> Self {
        let cores = cores.max(1);
        let active: Vec<CachePadded<AtomicU64>> = (0..cores).map(|_| CachePadded::new(AtomicU64::new(0))).collect();
        let counters = if COUNTING { cores } else { 0 };
        Self {
            active: active.into_boxed_slice(),
            waiting: (0..cores).map(|_| CachePadded::new(AtomicBool::new(false))).collect(),
            exclusive: CachePadded::new(AtomicBool::new(false)),
            manage: Ticket::with_cores(cores),
            tally: (0..counters).map(|_| CachePadded::new(RmwTally::default())).collect(),
        }
    }

    /// The counters, for the kernel's lock-free state to count into
    /// (`None` unless counting).
    pub(crate) fn tallies(&self) -> Option<Tallies> {
        COUNTING.then(|| self.tally.clone())
    }

    #[inline(always)]
    fn count(&self, core: usize, op: Rmw) {
        if COUNTING {
            self.tally[core].add(op);
        }
    }

    /// Enter a shared path as `core`, waiting while a management operation
    /// runs (or waits to run); counting its locked adds if counting.
    ///
    /// # Safety
    /// As [`Regime::enter`]'s: `core` is below [`Regime::cores`] (the
    /// length of `active`) and no other thread acts as `core` meanwhile.
    #[inline(always)]
    pub(crate) unsafe fn enter_shared(&self, core: usize) {
        // SAFETY: `core < self.active.len()` (this method's contract).
        let me = unsafe { self.active_of(core) };
        // Only this core writes its word: it is even here, and the add
        // makes it odd (one `lock add`: no load of the word first).
        loop {
            self.count(core, Rmw::Xadd);
            me.fetch_add(1, Ordering::SeqCst);
            if !self.exclusive.load(Ordering::SeqCst) {
                return;
            }
            // Back off: leave again (the word even), then wait.
            // SAFETY: this method's contract, for the `core` that just
            // entered.
            unsafe { self.exit_shared(core) };
            while self.exclusive.load(Ordering::Relaxed) {
                core::hint::spin_loop();
            }
        }
    }

    /// The entry word of `core`, without a bounds check.
    ///
    /// # Safety
    /// `core < self.active.len()`.
    #[inline(always)]
    unsafe fn active_of(&self, core: usize) -> &AtomicU64 {
        debug_assert!(core < self.active.len());
        // SAFETY: the caller's contract.
        unsafe { self.active.get_unchecked(core) }
    }

    /// Leave the shared path entered by `core`.
    ///
    /// # Safety
    /// As [`Self::enter_shared`]'s, for the `core` that entered.
    #[inline(always)]
    pub(crate) unsafe fn exit_shared(&self, core: usize) {
        // SAFETY: `core < self.active.len()` (this method's contract).
        let me = unsafe { self.active_of(core) };
        me.store(me.load(Ordering::Relaxed) + 1, Ordering::Release);
    }

    /// As `me`, wait until the shared entry `core` is in now (if any) has
    /// ended. Called from a shared path after a read-modify-write that an
    /// entry of `core` checks after its own entering locked add: either that
    /// entry saw the write, or this sees the entry (both are locked
    /// instructions, so x86-64 orders each one's later load after it).
    /// An entry that backs off for a management operation changes the word
    /// too. Two cores waiting for each other (or any cycle of waiters) must
    /// not deadlock: a waiter gives up when the core it waits for waits
    /// itself (`false`; then that entry may still be in progress).
    #[cold]
    pub(crate) fn wait_out_of_entry(&self, me: usize, core: usize) -> bool {
        let (Some(w), Some(mine), Some(theirs)) = (self.active.get(core), self.waiting.get(me), self.waiting.get(core))
        else {
            return true;
        };
        mine.store(true, Ordering::SeqCst);
        let v = w.load(Ordering::SeqCst);
        let mut ended = true;
        if v & 1 != 0 {
            while w.load(Ordering::Acquire) == v {
                if theirs.load(Ordering::SeqCst) {
                    ended = false;
                    break;
                }
                core::hint::spin_loop();
            }
        }
        mine.store(false, Ordering::Release);
        ended
    }
}

// SAFETY: `enter` (management) returns only when this core holds the
// management lock and every other core is outside its shared path and will
// stay out (it sees `exclusive` and backs off) until `exit`: the kernel is
// this core's alone, with acquire/release edges to every earlier shared or
// management section (module documentation). Shared sections are entered
// only through `enter_shared`, by the `Shared` drive (`crate::lockfree`),
// whose code touches shared state only as its ownership protocol allows
// (see `crate::lockfree`). The counters are core-private relaxed words that
// order nothing.
unsafe impl<const COUNTING: bool> Regime for LockFreeOf<COUNTING> {
    const NAME: &'static str = "lockfree";
    type Drive = Shared;
    type Waits = LfState;

    fn cores(&self) -> usize {
        self.active.len()
    }

    type Held<'a> = ();

    #[inline]
    unsafe fn enter<F: FnMut()>(&self, core: usize, mut spin: F) {
        if COUNTING {
            bump(self.tally[core].management());
        }
        self.count(core, Rmw::Xadd);
        self.manage.acquire(core, &mut spin);
        // A `SeqCst` store is an `xchg` on x86-64.
        self.count(core, Rmw::Xchg);
        self.exclusive.store(true, Ordering::SeqCst);
        for (d, a) in self.active.iter().enumerate() {
            if d != core {
                while a.load(Ordering::SeqCst) & 1 != 0 {
                    spin();
                }
            }
        }
    }

    #[inline]
    unsafe fn exit(&self, core: usize, (): ()) {
        self.exclusive.store(false, Ordering::Release);
        self.manage.release(core);
    }
}
