//! The `bkl` regime: one big kernel lock.

use granule_sync::lock::{Clh, Lock, Mcs, RawLock, Ticket};
use granule_sync::profile::{LockStats, NoStats};

use super::{Queues, Regime, Whole};

/// One lock around the whole kernel except entry and exit (seL4's big kernel
/// lock). `L` is the lock algorithm ([`Clh`] by default, [`Ticket`] or
/// [`Mcs`]), `S` its profiler ([`NoStats`] compiles to nothing).
#[derive(Debug)]
pub struct BigLock<L: RawLock = Clh, S: LockStats = NoStats> {
    lock: Lock<L, S>,
}

impl<L: RawLock, S: LockStats> BigLock<L, S> {
    /// A big lock for cores `0..cores`.
    pub fn new(cores: usize) -> Self {
        Self { lock: Lock::new("kernel", cores) }
    }

    /// The lock's profiler statistics. (The lock itself is not handed out:
    /// a call of its `release` as a core inside the kernel would break the
    /// regime's mutual exclusion.)
    pub fn stats(&self) -> &S {
        self.lock.stats()
    }
}

/// The big lock with its default CLH algorithm.
pub type BigLockClh<S = NoStats> = BigLock<Clh, S>;
/// The big lock with a ticket lock.
pub type BigLockTicket<S = NoStats> = BigLock<Ticket, S>;
/// The big lock with an MCS lock.
pub type BigLockMcs<S = NoStats> = BigLock<Mcs, S>;

// SAFETY: the lock admits one core at a time between `enter` and `exit`, and
// its acquire/release pair synchronises each critical section with the next
// (granule-sync's `RawLock` contract), so every kernel entry has the whole
// kernel to itself.
unsafe impl<L: RawLock + 'static, S: LockStats + 'static> Regime for BigLock<L, S> {
    const NAME: &'static str = match L::NAME.as_bytes() {
        b"clh" => "bkl",
        b"ticket" => "bkl-ticket",
        b"mcs" => "bkl-mcs",
        _ => "bkl-other",
    };
    type Drive = Whole;
    type Waits = Queues;

    fn cores(&self) -> usize {
        self.lock.cores()
    }

    /// The lock's own (CLH's queued node; `()` for the others).
    type Held<'a> = L::Held<'a>;

    #[inline(always)]
    #[track_caller]
    unsafe fn enter<F: FnMut()>(&self, core: usize, spin: F) -> L::Held<'_> {
        // SAFETY: `core` is below `cores()`, the lock's cores (`enter`'s
        // contract).
        unsafe { self.lock.acquire_held(core, spin) }
    }

    #[inline(always)]
    unsafe fn exit(&self, core: usize, held: L::Held<'_>) {
        // SAFETY: as in `enter`; `held` is its hold's (`exit`'s contract).
        unsafe { self.lock.release_held(core, held) };
    }
}
