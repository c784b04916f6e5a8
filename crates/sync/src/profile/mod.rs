//! The lock profiler: per lock and per acquisition site, what FreeBSD's
//! `LOCK_PROFILING` and Linux's `lock_stat` record, plus lock-elision outcomes.
//!
//! Profiling is a type parameter of every lock ([`LockStats`]); [`NoStats`]
//! has `ENABLED = false`, so the branches that time and record are removed at
//! compile time and a lock without profiling carries no extra code or data.
//! There is no global switch tested on the hot path.
//!
//! [`Profile`] keeps a fixed table of acquisition sites (the caller's source
//! location, through `#[track_caller]`), each with atomic counters, so
//! recording never allocates or locks. Times are in cycles of
//! [`crate::cycles::now`]. Holding information (when and where each core took
//! the lock) is kept per core, so hold times need no shared writes beyond the
//! counters themselves.

mod print;
mod site;

pub use print::{freebsd_table, lock_stat_table, seed_table, to_json_lines};
pub use site::{Profile, SiteRecord, MAX_SITES};

use core::panic::Location;

/// Source location of an acquisition (`file:line`), as `#[track_caller]` gives it.
pub type Site = &'static Location<'static>;

/// Why a hardware transaction aborted (Intel SDM vol. 1, §16.3.5, EAX bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AbortCause {
    /// Another core wrote (or read) a line in our read (write) set.
    Conflict,
    /// The transaction's footprint overflowed the hardware's tracking.
    Capacity,
    /// We aborted ourselves with `xabort` because the fallback lock was held.
    LockBusy,
    /// Anything else: interrupt, page fault, unsupported instruction, debug,
    /// nested overflow, or an explicit abort with another code.
    Other,
}

impl AbortCause {
    /// Every cause, in the order statistics arrays use.
    pub const ALL: [AbortCause; 4] = [Self::Conflict, Self::Capacity, Self::LockBusy, Self::Other];

    /// Index into per-cause arrays.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// Name used in tables and JSON.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Conflict => "conflict",
            Self::Capacity => "capacity",
            Self::LockBusy => "lock_busy",
            Self::Other => "other",
        }
    }
}

/// What happened to one elided acquisition attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElisionEvent {
    /// The critical section committed as a transaction.
    Commit,
    /// One transaction attempt aborted.
    Abort(AbortCause),
    /// The retry policy gave up and the real lock was taken.
    Fallback,
}

/// Statistics collected by a lock; a type parameter of every lock.
///
/// Implementations must be cheap and must never block or allocate: they run
/// inside kernel critical sections.
pub trait LockStats: Send + Sync {
    /// `false` for [`NoStats`]: callers skip timing entirely.
    const ENABLED: bool;

    /// Statistics for lock `name` taken by cores `0..cores`.
    fn new(name: &'static str, cores: usize) -> Self
    where
        Self: Sized;

    /// `core` acquired the lock at `site` after waiting `wait` cycles;
    /// `contended` says whether it found the lock held. `now` is the time of
    /// acquisition (the start of the hold).
    fn acquired(&self, core: usize, site: Site, wait: u64, contended: bool, now: u64);

    /// `core` is about to release the lock at time `now`.
    fn releasing(&self, core: usize, now: u64);

    /// An elision outcome at `site`.
    fn elision(&self, site: Site, event: ElisionEvent);
}

/// No profiling: every method is empty and `ENABLED` is false.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoStats;

impl LockStats for NoStats {
    const ENABLED: bool = false;
    #[inline(always)]
    fn new(_name: &'static str, _cores: usize) -> Self {
        NoStats
    }
    #[inline(always)]
    fn acquired(&self, _: usize, _: Site, _: u64, _: bool, _: u64) {}
    #[inline(always)]
    fn releasing(&self, _: usize, _: u64) {}
    #[inline(always)]
    fn elision(&self, _: Site, _: ElisionEvent) {}
}
