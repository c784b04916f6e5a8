//! Kernel locks: mutual exclusion between cores, with a per-core queue node
//! kept inside the lock (seL4's CLH layout) and a spin hook.
//!
//! A kernel lock is always taken *by a core*, named by its index `0..cores`
//! (the lock is built for a fixed number of cores). The contract every
//! [`RawLock`] relies on, and that callers must keep:
//!
//! * at most one thread acts as a given core at any moment, and
//! * a core never acquires a lock it already holds, and releases only a lock
//!   it holds.
//!
//! Breaking the contract can deadlock or break mutual exclusion, but it can
//! never cause undefined behaviour inside the lock through the safe calls:
//! every algorithm here is safe code over atomics, except CLH's node
//! pointers, which only ever point into the lock's own node array (see
//! `clh.rs`). [`RawLock::acquire_unchecked`] and
//! [`RawLock::release_unchecked`] skip the check that `core` is in range, for
//! a kernel whose core numbers are in range by construction, and are
//! `unsafe` to call for that reason.
//!
//! While waiting, `acquire` calls the caller's spin hook once per spin
//! iteration, so a core waiting for the kernel lock keeps serving IPIs (a
//! remote core that asked it to stall would otherwise deadlock with it).
//!
//! | lock | acquire | release | fair | per-core node |
//! |---|---|---|---|---|
//! | [`Ttas`] | `lock cmpxchg` after a read | store | no | none |
//! | [`Ticket`] | `lock xadd` | store | FIFO | none |
//! | [`Clh`] | `xchg` of the tail | store | FIFO | yes (swapped) |
//! | [`Mcs`] | `xchg` of the tail | CAS or store | FIFO | yes |

/// [`RawLock::Held`] as `()`, for a lock whose release needs nothing more
/// than the core: the held calls are the unchecked ones.
macro_rules! held_is_unit {
    () => {
        type Held<'a> = ();

        #[inline(always)]
        unsafe fn acquire_held<F: FnMut()>(&self, core: usize, spin: F) -> (bool, ()) {
            // SAFETY: the caller's contract is `acquire_unchecked`'s.
            (unsafe { self.acquire_unchecked(core, spin) }, ())
        }

        #[inline(always)]
        unsafe fn release_held(&self, core: usize, (): ()) {
            // SAFETY: as in `acquire_held`.
            unsafe { self.release_unchecked(core) };
        }
    };
}

mod clh;
mod mcs;
mod profiled;
#[cfg(not(loom))]
mod raw_mutex;
mod ticket;
mod ttas;

pub use clh::Clh;
#[cfg(loom)]
pub use clh::LOOM_TRY_WAITS;
pub use mcs::Mcs;
pub use profiled::Lock;
#[cfg(not(loom))]
pub use raw_mutex::{RawTicket, RawTtas, TicketMutex, TtasMutex};
pub use ticket::Ticket;
pub use ttas::Ttas;

/// A mutual-exclusion lock taken by numbered cores (see the module docs for
/// the contract on core indices).
pub trait RawLock: Send + Sync {
    /// Short name used in tables and on the command line.
    const NAME: &'static str;

    /// A lock for cores `0..cores`. `cores` must be at least 1.
    fn with_cores(cores: usize) -> Self
    where
        Self: Sized;

    /// Acquire the lock as `core`, calling `spin` once per iteration while
    /// waiting. Returns whether the lock was contended (the caller had to wait
    /// for, or queue behind, another holder).
    ///
    /// # Panics
    /// If `core` is not below the `cores` the lock was built for (a bug in the
    /// caller, never something user input reaches).
    fn acquire<F: FnMut()>(&self, core: usize, spin: F) -> bool;

    /// [`RawLock::acquire`] without checking `core`: a kernel's path, which
    /// knows its core is in range, saves the bounds check (the locks with
    /// per-core state override it; the others' is `acquire`).
    ///
    /// # Safety
    /// `core` is below the `cores` the lock was built for.
    #[inline(always)]
    unsafe fn acquire_unchecked<F: FnMut()>(&self, core: usize, spin: F) -> bool {
        self.acquire(core, spin)
    }

    /// What [`RawLock::acquire_held`] hands the [`RawLock::release_held`]
    /// that ends the hold: a word the release needs that the acquire had in
    /// hand (CLH's queued node), so a kernel's path does
    /// not store it in the lock and load it back; `()` for a lock whose
    /// release needs nothing more than the core.
    type Held<'a>: Copy
    where
        Self: 'a;

    /// [`RawLock::acquire_unchecked`], also returning what the hold's
    /// release needs. Whether it was contended comes first.
    ///
    /// The hold ends with [`RawLock::release_held`] given the returned
    /// value, never with [`RawLock::release`] (which may not find what this
    /// acquire did not store: the lock would stay held, or another core's
    /// hold would end).
    ///
    /// # Safety
    /// `core` is below the `cores` the lock was built for.
    unsafe fn acquire_held<F: FnMut()>(&self, core: usize, spin: F) -> (bool, Self::Held<'_>);

    /// Release the hold that [`RawLock::acquire_held`] took as `core` and
    /// that returned `held`.
    ///
    /// # Safety
    /// `core` is below the `cores` the lock was built for.
    unsafe fn release_held(&self, core: usize, held: Self::Held<'_>);

    /// Acquire the lock as `core` if that needs no waiting.
    fn try_acquire(&self, core: usize) -> bool;

    /// Release the lock held by `core`.
    fn release(&self, core: usize);

    /// [`RawLock::release`] without checking `core` (see
    /// [`RawLock::acquire_unchecked`]).
    ///
    /// # Safety
    /// `core` is below the `cores` the lock was built for.
    #[inline(always)]
    unsafe fn release_unchecked(&self, core: usize) {
        self.release(core);
    }

    /// Whether some core holds the lock (or is queued for it). Lock elision
    /// reads this inside a transaction, which adds the lock word to the
    /// transaction's read set.
    fn is_locked(&self) -> bool;
}

/// Spin hook that does nothing (for callers with no IPIs to serve).
#[inline(always)]
pub fn no_hook() {}
