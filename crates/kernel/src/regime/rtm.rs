//! The `rtm` regime: every kernel entry is one hardware transaction.
//!
//! The seeds' design (Peters et al., §3.4): the whole entry — decode and
//! execute — runs inside one Intel RTM transaction; the big CLH lock is the
//! fallback. Inside the transaction the lock word is read (so a core taking
//! the lock aborts every running transaction) and an explicit abort fires if
//! it is held; after an abort the core waits for the lock to be free before
//! retrying; after the retry budget ([`RetryPolicy`], default: 3 conflict
//! retries, none for capacity, 3 for lock-busy, 1 other, 5 attempts in all)
//! it takes the lock. All of that is granule-sync's [`Elided`].
//!
//! What keeps the transaction small and clean is the kernel's structure:
//! hardware effects (IPIs, IRQ acknowledgements, the context switch) are
//! *planned* inside and performed by the platform after the commit; the
//! profiler's counters are written outside; nothing on the IPC paths
//! allocates or calls the host. Operations that would allocate or touch an
//! unbounded number of objects (retype, delete, revoke, TCB configuration,
//! capability transfer…) are *exclusive* in their lock set: this regime then
//! aborts with [`NO_RETRY`] and runs them under the fallback lock at once.
//!
//! Where the CPU has no usable RTM, [`Transactional::new`] refuses with the
//! detection result; tests and `granule verify` can still run the regime's
//! fallback path with an explicit test HTM ([`Transactional::with_htm`]).

use granule_sync::lock::Clh;
use granule_sync::profile::{LockStats, NoStats};
use granule_sync::rtm::{Elided, Htm, Mode, RetryPolicy, Rtm, RtmUnavailable};

use super::{LockSet, Queues, Regime, WholeChecked};

pub use granule_sync::rtm::NO_RETRY as NEEDS_LOCK;

/// The `rtm` regime over HTM `H` (real RTM by default), profiled by `S`
/// (commits, aborts by cause, fallbacks, and the fallback lock's table).
#[derive(Debug)]
pub struct Transactional<H: Htm = Rtm, S: LockStats = NoStats> {
    elided: Elided<Clh, S, H>,
}

impl<S: LockStats> Transactional<Rtm, S> {
    /// The regime for `cores` cores over real RTM with the default policy.
    ///
    /// # Errors
    /// [`RtmUnavailable`] (with the reason) where RTM does not work.
    pub fn new(cores: usize) -> Result<Self, RtmUnavailable> {
        Self::with_policy(cores, RetryPolicy::DEFAULT)
    }

    /// As [`Transactional::new`], with retry policy `policy`.
    ///
    /// # Errors
    /// As [`Transactional::new`].
    pub fn with_policy(cores: usize, policy: RetryPolicy) -> Result<Self, RtmUnavailable> {
        Ok(Self::with_htm(cores, Rtm::new()?, policy))
    }
}

impl<H: Htm, S: LockStats> Transactional<H, S> {
    /// The regime over an explicit HTM (a test HTM, or a fault-injecting
    /// wrapper around RTM).
    pub fn with_htm(cores: usize, htm: H, policy: RetryPolicy) -> Self {
        Self { elided: Elided::with_htm("kernel", cores.max(1), htm, policy) }
    }

    /// The elided lock's statistics (they hold the abort causes). (The lock
    /// itself is not handed out: a call of its `release` as a core inside
    /// the kernel would break the regime's mutual exclusion.)
    pub fn stats(&self) -> &S {
        self.elided.stats()
    }
}

// SAFETY: `Elided` gives mutual exclusion between lock holders and atomicity
// of every committed transaction against every other transaction and lock
// holder (its `Htm` contract): each entry runs either alone under the lock
// or as a transaction that aborts, rolling back every effect, if another
// core touches what it read or wrote. Lock hand-over is acquire/release and a
// commit is ordered like a locked instruction. Allocation and other effects
// outside memory never run inside a transaction: exclusive operations, and
// operations marked `outside_transactions` (the subsystem calls), abort to
// the lock first (`lock_set`).
unsafe impl<H: Htm + 'static, S: LockStats + 'static> Regime for Transactional<H, S> {
    const NAME: &'static str = "rtm";
    type Drive = WholeChecked;
    /// Whether the entry runs as a transaction or holds the fallback lock.
    type Held<'a> = Mode;
    type Waits = Queues;

    fn cores(&self) -> usize {
        self.elided.lock().cores()
    }

    #[inline(always)]
    #[track_caller]
    unsafe fn enter<F: FnMut()>(&self, core: usize, spin: F) -> Mode {
        self.elided.acquire(core, spin)
    }

    #[inline(always)]
    unsafe fn lock_set(&self, _core: usize, set: &LockSet) -> bool {
        if (set.exclusive() || set.outside_transactions()) && self.elided.htm().in_transaction() {
            // Does not return inside a transaction (the `Htm` contract).
            self.elided.htm().abort(NEEDS_LOCK);
        }
        true
    }

    #[inline(always)]
    unsafe fn exit(&self, core: usize, mode: Mode) {
        self.elided.release(core, mode);
    }
}
