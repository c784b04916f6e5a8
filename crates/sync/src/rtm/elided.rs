//! [`Elided`]: a kernel lock whose critical sections run as hardware
//! transactions, with the lock as the fallback.
//!
//! Acquire (Rajwar & Goodman 2001; the seed paper's Figure 1):
//!
//! ```text
//! loop, while the retry policy allows another attempt:
//!     begin a transaction
//!     inside: read the lock word (it joins the read set);
//!             free → run the critical section transactionally   (Mode::Elided)
//!             held → xabort(LOCK_BUSY)
//!     aborted: record the cause; unless the section asked for the lock
//!              (explicit abort with NO_RETRY) and if the policy allows a retry,
//!              wait (spin hook) until the lock is free, then loop
//! take the lock                                                  (Mode::Locked)
//! ```
//!
//! Release ends the transaction (`xend`) or releases the lock. Statistics
//! are written only *outside* transactions — after an abort, before the
//! fallback, after the commit — because a write to a shared counter inside a
//! transaction would put the counter in every core's write set and make
//! every pair of elided sections conflict.

use alloc::vec::Vec;
use core::panic::Location;
use core::ptr;

use crossbeam_utils::CachePadded;

use super::htm::{Htm, Rtm, LOCK_BUSY, NO_RETRY};
use super::policy::{Attempts, Next, RetryPolicy};
use super::RtmUnavailable;
use crate::lock::{Lock, RawLock};
use crate::primitive::{spin_loop, AtomicPtr, Ordering};
use crate::profile::{ElisionEvent, LockStats, NoStats, Site};

/// How a critical section was entered; pass it back to [`Elided::release`].
#[must_use = "an elided acquisition must be released with the mode it returned"]
#[derive(Debug, PartialEq, Eq)]
pub enum Mode {
    /// Running inside a hardware transaction; the lock was only read.
    Elided,
    /// The retry policy gave up (or allowed no transaction) and the lock is held.
    Locked,
}

/// Lock `L` elided with hardware transactions `H`, statistics `S`.
///
/// The only ways to build one are [`Elided::new`] / [`Elided::with_policy`],
/// which need working RTM and refuse otherwise, and [`Elided::with_htm`],
/// which takes an explicit [`Htm`] value — and an [`Rtm`] value only exists
/// where RTM works. So an `Elided<_, _, Rtm>` never quietly degrades into the
/// plain lock.
///
/// Core indices follow [`RawLock`]'s contract (one thread per core at a
/// time; a core does not acquire a lock it holds).
#[derive(Debug)]
pub struct Elided<L: RawLock, S: LockStats = NoStats, H: Htm = Rtm> {
    lock: Lock<L, S>,
    htm: H,
    policy: RetryPolicy,
    cores: usize,
    /// With `S::ENABLED`: per core, the acquisition site of its current
    /// elided critical section, so the commit is recorded against the site
    /// that acquired (empty otherwise). Only ever holds pointers obtained
    /// from `&'static Location<'static>`; written before the transaction
    /// starts and read after it ends, never inside it.
    sites: Vec<CachePadded<AtomicPtr<Location<'static>>>>,
}

impl<L: RawLock, S: LockStats> Elided<L, S, Rtm> {
    /// Lock `name` for cores `0..cores`, elided with RTM under the default
    /// [`RetryPolicy`].
    ///
    /// # Errors
    /// [`RtmUnavailable`], carrying the detection result, when this machine
    /// cannot run RTM transactions. There is no silent fallback.
    pub fn new(name: &'static str, cores: usize) -> Result<Self, RtmUnavailable> {
        Self::with_policy(name, cores, RetryPolicy::DEFAULT)
    }

    /// As [`Elided::new`], with `policy`.
    ///
    /// # Errors
    /// [`RtmUnavailable`] as for [`Elided::new`].
    pub fn with_policy(name: &'static str, cores: usize, policy: RetryPolicy) -> Result<Self, RtmUnavailable> {
        Ok(Self::with_htm(name, cores, Rtm::new()?, policy))
    }
}

impl<L: RawLock, S: LockStats, H: Htm> Elided<L, S, H> {
    /// Lock `name` for cores `0..cores`, elided with `htm` under `policy`.
    ///
    /// This is how a test HTM such as [`super::AlwaysAbort`] is chosen; it is
    /// never chosen implicitly.
    pub fn with_htm(name: &'static str, cores: usize, htm: H, policy: RetryPolicy) -> Self {
        let sites = if S::ENABLED {
            (0..cores).map(|_| CachePadded::new(AtomicPtr::new(ptr::null_mut()))).collect()
        } else {
            Vec::new()
        };
        Self { lock: Lock::new(name, cores), htm, policy, cores, sites }
    }

    /// The fallback lock (with its statistics).
    pub fn lock(&self) -> &Lock<L, S> {
        &self.lock
    }

    /// The statistics: lock acquisitions on fallback, elision outcomes.
    pub fn stats(&self) -> &S {
        self.lock.stats()
    }

    /// The hardware transactional memory, e.g. to [`Htm::abort`] from inside
    /// a critical section.
    pub fn htm(&self) -> &H {
        &self.htm
    }

    /// The retry policy.
    pub fn policy(&self) -> &RetryPolicy {
        &self.policy
    }

    /// Whether the fallback lock is held (or queued for).
    pub fn is_locked(&self) -> bool {
        self.lock.is_locked()
    }

    /// Enter the critical section as `core`: as a transaction if the retry
    /// policy gets one started with the lock free, else by taking the lock.
    /// `spin` runs once per iteration of every wait.
    ///
    /// # Panics
    /// If `core` is not below the `cores` the lock was built for.
    #[inline]
    #[track_caller]
    pub fn acquire<F: FnMut()>(&self, core: usize, spin: F) -> Mode {
        self.acquire_at(Location::caller(), core, spin)
    }

    /// [`Elided::acquire`], attributing statistics to `site`.
    ///
    /// # Panics
    /// As [`Elided::acquire`].
    #[inline]
    pub fn acquire_at<F: FnMut()>(&self, site: Site, core: usize, mut spin: F) -> Mode {
        assert!(core < self.cores, "core {core} out of range for a lock built for {} cores", self.cores);
        if S::ENABLED {
            let p = site as *const Location<'static> as *mut Location<'static>;
            self.sites[core].store(p, Ordering::Relaxed);
        }
        let mut attempts = Attempts::new(&self.policy);
        while attempts.start() == Next::Attempt {
            match self.htm.begin() {
                Ok(()) => {
                    // Transactional from here. Reading the lock word puts it
                    // in the read set: a core that takes the lock from now on
                    // aborts us, so we never run beside a lock holder.
                    if !self.lock.is_locked() {
                        return Mode::Elided;
                    }
                    self.htm.abort(LOCK_BUSY);
                    // By `Htm`'s contract (2) `abort` inside a transaction
                    // does not return.
                    unreachable!("Htm::abort returned inside a transaction");
                }
                Err(status) => {
                    let cause = status.cause();
                    if S::ENABLED {
                        self.lock.stats().elision(site, ElisionEvent::Abort(cause));
                    }
                    if status.code() == Some(NO_RETRY) || attempts.aborted(cause) == Next::Fallback {
                        break;
                    }
                    // Retrying while the lock is held would only abort again
                    // (the lemming effect): wait for it to be free first.
                    while self.lock.is_locked() {
                        spin();
                        spin_loop();
                    }
                }
            }
        }
        if S::ENABLED {
            self.lock.stats().elision(site, ElisionEvent::Fallback);
        }
        self.lock.acquire_at(site, core, spin);
        Mode::Locked
    }

    /// Leave the critical section `core` entered with `mode`: commit the
    /// transaction, or release the lock.
    ///
    /// # Panics
    /// If `mode` is [`Mode::Elided`] but the thread is not in a transaction
    /// (a mode from another acquisition, or from another lock's).
    #[inline]
    pub fn release(&self, core: usize, mode: Mode) {
        match mode {
            Mode::Elided => {
                assert!(self.htm.in_transaction(), "Elided::release(Mode::Elided) outside a transaction");
                // SAFETY: the thread is inside a transaction of this HTM
                // (checked just above), `end`'s precondition.
                unsafe { self.htm.end() };
                if S::ENABLED {
                    let p = self.sites[core].load(Ordering::Relaxed);
                    // SAFETY: `sites` only ever holds null or pointers made
                    // from `&'static Location<'static>` (see the field), valid
                    // for the whole program and immutable.
                    if let Some(site) = unsafe { p.as_ref() } {
                        self.lock.stats().elision(site, ElisionEvent::Commit);
                    }
                }
            }
            Mode::Locked => self.lock.release(core),
        }
    }

    /// Run `f` as `core`'s critical section and return its result.
    ///
    /// With a real HTM, `f` may *start* more than once: a run that aborts is
    /// rolled back completely (memory and registers), so exactly one run has
    /// any effect. `f` must not panic: as with [`Lock`], a panic leaves the
    /// lock held (inside a transaction, the panic machinery's system calls
    /// abort the transaction first, and the retry or fallback run panics).
    #[inline]
    #[track_caller]
    pub fn with<R, F: FnMut(), C: FnOnce() -> R>(&self, core: usize, spin: F, f: C) -> R {
        let mode = self.acquire_at(Location::caller(), core, spin);
        let r = f();
        self.release(core, mode);
        r
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use loom::cell::UnsafeCell;
    use loom::sync::Arc;

    use super::*;
    use crate::lock::{no_hook, Mcs};
    use crate::profile::AbortCause;
    use crate::rtm::AlwaysAbort;

    /// The fallback path excludes: two cores, every transaction aborts (one
    /// retry, so the wait for a free lock is explored too), the critical
    /// section is an unsynchronised read-modify-write. The fallback is MCS;
    /// preemption bound 3, as the lock models in `tests/loom_locks.rs`. Run
    /// with `RUSTFLAGS="--cfg loom" cargo test -p granule-sync --release --lib rtm`.
    #[test]
    fn fallback_is_mutually_exclusive() {
        let mut builder = loom::model::Builder::new();
        builder.preemption_bound = Some(3);
        builder.check(|| {
            let lock = Arc::new(Elided::<Mcs, NoStats, AlwaysAbort>::with_htm(
                "loom",
                2,
                AlwaysAbort::new(AbortCause::Conflict),
                RetryPolicy { conflict: 1, capacity: 0, lock_busy: 0, other: 0, max_attempts: 2 },
            ));
            let data = Arc::new(UnsafeCell::new(0u32));
            let bump = |lock: &Elided<Mcs, NoStats, AlwaysAbort>, data: &UnsafeCell<u32>, core| {
                // SAFETY: the lock excludes the other core; whether it really
                // does is what the model checks (loom reports unordered
                // accesses to its `UnsafeCell`).
                lock.with(core, no_hook, || data.with_mut(|p| unsafe { *p += 1 }));
            };
            let other = {
                let (lock, data) = (lock.clone(), data.clone());
                loom::thread::spawn(move || bump(&lock, &data, 1))
            };
            bump(&lock, &data, 0);
            other.join().unwrap();
            // SAFETY: the other thread has been joined.
            assert_eq!(unsafe { data.with(|p| *p) }, 2);
        });
    }
}
