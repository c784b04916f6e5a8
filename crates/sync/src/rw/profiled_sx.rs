//! [`ProfiledSx`]: an [`Sx`] lock whose holds the lock profiler records, per
//! acquisition site and per mode, like [`crate::lock::Lock`] does for the
//! mutual-exclusion locks.
//!
//! FreeBSD's `LOCK_PROFILING` names a shared/exclusive acquisition by its
//! mode (`sx:` for a shared hold, `ex:` for an exclusive one, as in seed
//! `003`'s tables); here each mode has its own statistics, named
//! `"<name> (shared)"` and `"<name> (exclusive)"` by the caller. A shared
//! hold's hold time is measured per core: a core holds at most one hold of
//! one lock at a time (the locks are not recursive).

use crate::cycles;
use crate::profile::{LockStats, Site};

use super::Sx;

/// A shared/exclusive lock with statistics `S` for each mode.
#[derive(Debug)]
pub struct ProfiledSx<S: LockStats> {
    sx: Sx,
    shared: S,
    exclusive: S,
    cores: usize,
}

impl<S: LockStats> ProfiledSx<S> {
    /// A free lock for cores `0..cores`; `shared` and `exclusive` name the
    /// two modes in profiles.
    pub fn new(shared: &'static str, exclusive: &'static str, cores: usize) -> Self {
        Self { sx: Sx::new(), shared: S::new(shared, cores), exclusive: S::new(exclusive, cores), cores }
    }

    /// The statistics of shared holds.
    pub fn shared_stats(&self) -> &S {
        &self.shared
    }

    /// The statistics of exclusive holds.
    pub fn exclusive_stats(&self) -> &S {
        &self.exclusive
    }

    /// Panics, before any lock state changes, if `core` is out of range
    /// (the statistics index by core).
    #[inline]
    fn check_core(&self, core: usize) {
        assert!(core < self.cores, "core {core} out of range for lock built for {} cores", self.cores);
    }

    /// A shared hold as `core`, attributed to the caller's source location.
    #[inline]
    #[track_caller]
    pub fn slock<F: FnMut()>(&self, core: usize, spin: F) {
        let site: Site = core::panic::Location::caller();
        self.timed(&self.shared, site, core, |sx| sx.slock(spin));
    }

    /// Release `core`'s shared hold.
    #[inline]
    pub fn sunlock(&self, core: usize) {
        self.untimed(&self.shared, core);
        self.sx.sunlock();
    }

    /// The exclusive hold as `core`, attributed to the caller's source location.
    #[inline]
    #[track_caller]
    pub fn xlock<F: FnMut()>(&self, core: usize, spin: F) {
        let site: Site = core::panic::Location::caller();
        self.timed(&self.exclusive, site, core, |sx| sx.xlock(spin));
    }

    /// Release `core`'s exclusive hold.
    #[inline]
    pub fn xunlock(&self, core: usize) {
        self.untimed(&self.exclusive, core);
        self.sx.xunlock();
    }

    #[inline]
    fn timed(&self, stats: &S, site: Site, core: usize, take: impl FnOnce(&Sx) -> bool) {
        if S::ENABLED {
            self.check_core(core);
            let t0 = cycles::now();
            let contended = take(&self.sx);
            let t1 = cycles::now();
            stats.acquired(core, site, t1.saturating_sub(t0), contended, t1);
        } else {
            take(&self.sx);
        }
    }

    #[inline]
    fn untimed(&self, stats: &S, core: usize) {
        if S::ENABLED {
            self.check_core(core);
            stats.releasing(core, cycles::now());
        }
    }

    /// Whether any hold is taken.
    pub fn is_locked(&self) -> bool {
        self.sx.is_locked()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::profile::Profile;

    #[test]
    fn each_mode_counts_its_own_acquisitions_at_its_site() {
        let l: ProfiledSx<Profile> = ProfiledSx::new("t (shared)", "t (exclusive)", 2);
        l.slock(0, || {});
        l.slock(1, || {});
        l.sunlock(1);
        l.sunlock(0);
        l.xlock(1, || {});
        assert!(l.is_locked());
        l.xunlock(1);
        assert!(!l.is_locked());
        let s: u64 = l.shared_stats().snapshot().iter().map(|r| r.acquisitions).sum();
        let x: u64 = l.exclusive_stats().snapshot().iter().map(|r| r.acquisitions).sum();
        assert_eq!((s, x), (2, 1));
        assert!(l.exclusive_stats().snapshot().iter().all(|r| r.file.ends_with("profiled_sx.rs")));
    }
}
