//! [`Lock`]: a raw kernel lock plus its statistics type.

use super::RawLock;
use crate::cycles;
use crate::profile::{LockStats, NoStats, Site};

/// A kernel lock `L` with statistics `S` (by default none, at zero cost).
///
/// `acquire` and `release` follow [`RawLock`]'s contract on core indices.
/// With `S::ENABLED`, acquisition sites are the callers' source locations.
#[derive(Debug)]
pub struct Lock<L: RawLock, S: LockStats = NoStats> {
    raw: L,
    stats: S,
    cores: usize,
}

impl<L: RawLock, S: LockStats> Lock<L, S> {
    /// A free lock for cores `0..cores`, named `name` in profiles.
    pub fn new(name: &'static str, cores: usize) -> Self {
        Self { raw: L::with_cores(cores), stats: S::new(name, cores), cores }
    }

    /// Panics, before any lock state changes, if `core` is out of range.
    #[inline]
    fn check_core(&self, core: usize) {
        assert!(core < self.cores, "core {core} out of range for lock built for {} cores", self.cores);
    }

    /// The underlying lock.
    pub fn raw(&self) -> &L {
        &self.raw
    }

    /// The statistics.
    pub fn stats(&self) -> &S {
        &self.stats
    }

    /// Acquire as `core`, calling `spin` while waiting; see [`RawLock::acquire`].
    #[inline]
    #[track_caller]
    pub fn acquire<F: FnMut()>(&self, core: usize, spin: F) {
        if S::ENABLED {
            let site: Site = core::panic::Location::caller();
            self.acquire_at(site, core, spin);
        } else {
            self.raw.acquire(core, spin);
        }
    }

    /// Acquire as `core`, attributing the acquisition to `site`.
    #[inline]
    pub fn acquire_at<F: FnMut()>(&self, site: Site, core: usize, spin: F) {
        if S::ENABLED {
            // Checked before taking the lock: the statistics index by core,
            // and a panic after the raw acquire would leave the lock held.
            self.check_core(core);
            self.timed(site, core, || (self.raw.acquire(core, spin), ()));
        } else {
            self.raw.acquire(core, spin);
        }
    }

    /// Run `acquire` (a raw acquire as `core`: whether it was contended,
    /// and what it returns) and record it at `site` with its wait.
    #[inline]
    fn timed<T>(&self, site: Site, core: usize, acquire: impl FnOnce() -> (bool, T)) -> T {
        let t0 = cycles::now();
        let (contended, out) = acquire();
        let t1 = cycles::now();
        self.stats.acquired(core, site, t1.saturating_sub(t0), contended, t1);
        out
    }

    /// Acquire as `core` if no waiting is needed.
    #[inline]
    #[track_caller]
    pub fn try_acquire(&self, core: usize) -> bool {
        if S::ENABLED {
            self.check_core(core);
        }
        let ok = self.raw.try_acquire(core);
        if S::ENABLED && ok {
            self.stats.acquired(core, core::panic::Location::caller(), 0, false, cycles::now());
        }
        ok
    }

    /// [`Lock::acquire`] for a `core` known to be in range: unprofiled, the
    /// raw lock's [`RawLock::acquire_unchecked`].
    ///
    /// # Safety
    /// `core` is below the `cores` the lock was built for.
    #[inline]
    #[track_caller]
    pub unsafe fn acquire_unchecked<F: FnMut()>(&self, core: usize, spin: F) {
        if S::ENABLED {
            self.acquire_at(core::panic::Location::caller(), core, spin);
        } else {
            // SAFETY: the caller's contract is the raw lock's.
            unsafe { self.raw.acquire_unchecked(core, spin) };
        }
    }

    /// [`Lock::release`] for a `core` known to be in range (see
    /// [`Lock::acquire_unchecked`]).
    ///
    /// # Safety
    /// `core` is below the `cores` the lock was built for.
    #[inline]
    pub unsafe fn release_unchecked(&self, core: usize) {
        if S::ENABLED {
            self.release(core);
        } else {
            // SAFETY: the caller's contract is the raw lock's.
            unsafe { self.raw.release_unchecked(core) };
        }
    }

    /// [`Lock::acquire_unchecked`], returning what the hold's
    /// [`Lock::release_held`] needs (see [`RawLock::acquire_held`]).
    ///
    /// # Safety
    /// `core` is below the `cores` the lock was built for.
    #[inline]
    #[track_caller]
    pub unsafe fn acquire_held<F: FnMut()>(&self, core: usize, spin: F) -> L::Held<'_> {
        if S::ENABLED {
            let site: Site = core::panic::Location::caller();
            // SAFETY: the caller's contract is the raw lock's.
            self.timed(site, core, || unsafe { self.raw.acquire_held(core, spin) })
        } else {
            // SAFETY: as above.
            unsafe { self.raw.acquire_held(core, spin) }.1
        }
    }

    /// End the hold [`Lock::acquire_held`] took as `core`, which returned
    /// `held`.
    ///
    /// # Safety
    /// `core` is below the `cores` the lock was built for.
    #[inline]
    pub unsafe fn release_held(&self, core: usize, held: L::Held<'_>) {
        if S::ENABLED {
            self.stats.releasing(core, cycles::now());
        }
        // SAFETY: the caller's contract is the raw lock's.
        unsafe { self.raw.release_held(core, held) };
    }

    /// The number of cores the lock was built for.
    pub fn cores(&self) -> usize {
        self.cores
    }

    /// Release the lock `core` holds.
    #[inline]
    pub fn release(&self, core: usize) {
        if S::ENABLED {
            self.check_core(core);
            self.stats.releasing(core, cycles::now());
        }
        self.raw.release(core);
    }

    /// Whether the lock is held.
    #[inline]
    pub fn is_locked(&self) -> bool {
        self.raw.is_locked()
    }
}
