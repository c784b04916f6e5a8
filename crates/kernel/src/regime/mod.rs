//! Concurrency-control regimes: how cores are kept from corrupting the kernel.
//!
//! Every kernel entry point is `enter → (decode → lock set → execute) → exit`.
//! A [`Regime`] supplies `enter`, `lock_set` and `exit`; the kernel is
//! generic over it ([`crate::Kernel<R>`]) and monomorphised, so the `none`
//! regime has no lock code at all, not a lock that is skipped at run time.
//!
//! * [`NoLock`] (`none`): nothing. Sound only if no two cores ever touch the
//!   same kernel object at the same time, a promise made by whoever
//!   constructs it (`unsafe`). This is the ideal baseline of the seeds.
//! * [`BigLock`] (`bkl`): one lock around the whole kernel except the entry
//!   and exit code, CLH by default, ticket or MCS selectable, with the
//!   granule-sync profiler as a type parameter.
//! * [`LockFree`] (`lockfree`): IPC and notification paths without locks
//!   (`crate::lockfree`); every other operation is a management operation
//!   behind a gate ([`Regime::enter`]/[`Regime::exit`]) that excludes them.
//!
//! The lock set of the operation (the objects it touches, see [`LockSet`]) is
//! offered to the regime between decode and execute; the regimes here
//! ignore it (a future `fine` regime locks exactly these objects).

mod biglock;
mod lockfree;
mod none;

pub use biglock::{BigLock, BigLockClh, BigLockMcs, BigLockTicket};
pub use lockfree::LockFree;
pub use none::NoLock;

use crate::exit::CoreMask;

/// What a kernel entry touches: objects by kind and slab index, plus the
/// ready queues of `cores`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LockSet {
    objects: [ObjectId; LockSet::MAX],
    len: usize,
    /// Cores whose scheduler state (ready queue, current thread) is touched.
    pub cores: CoreMask,
    /// The operation may create or destroy objects, or touch an unbounded
    /// number of them (retype, delete, revoke…): it needs the whole kernel.
    pub exclusive: bool,
}

/// An object named in a [`LockSet`]: its kind and slab index.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectId {
    /// The kind ([`crate::abi::ObjectType`] as a number, or 8 for an IRQ handler).
    pub kind: u8,
    /// Index in the kind's slab.
    pub index: u32,
}

impl LockSet {
    /// Most objects an operation names; more makes the set exclusive.
    pub const MAX: usize = 8;

    /// Add an object (duplicates are ignored).
    pub fn add(&mut self, id: ObjectId) {
        if self.objects[..self.len].contains(&id) {
            return;
        }
        if self.len == Self::MAX {
            self.exclusive = true;
        } else {
            self.objects[self.len] = id;
            self.len += 1;
        }
    }

    /// The objects, in address (kind, index) order as the `fine` regime
    /// acquires them.
    pub fn objects(&self) -> impl Iterator<Item = ObjectId> + '_ {
        let mut v = self.objects;
        v[..self.len].sort_unstable();
        (0..self.len).map(move |i| v[i])
    }
}

/// A concurrency-control regime (see the module documentation).
///
/// # Safety
///
/// The kernel's soundness rests on this promise: between `enter(core, _)` and
/// the following `exit(core)`, no other core is between its own `enter` and
/// `exit` *and touching the same kernel object* — for a lock regime, because
/// at most one core is inside; for [`NoLock`], because its constructor's
/// caller promised disjoint objects. `enter` must synchronise-with the
/// previous `exit` (acquire/release), so that kernel memory written by one
/// core is visible to the next.
pub unsafe trait Regime: Send + Sync + 'static {
    /// Name on the command line and in tables (`none`, `bkl`, `bkl-ticket`…).
    const NAME: &'static str;

    /// Whether [`Regime::lock_set`] does anything: when `false` the kernel
    /// does not even build the lock set.
    const USES_LOCK_SET: bool = false;

    /// Begin a kernel entry as `core`, calling `spin` while waiting.
    fn enter<F: FnMut()>(&self, core: usize, spin: F);

    /// The objects the decoded operation touches (ignored by `none`/`bkl`).
    #[inline(always)]
    fn lock_set(&self, _core: usize, _set: &LockSet) {}

    /// End the kernel entry of `core`.
    fn exit(&self, core: usize);

    /// `lockfree` only: the IPC paths run lock-free outside `enter`/`exit`
    /// (which then mean "management operation"). Every other regime leaves
    /// this `false`, and the kernel's `if R::LOCK_FREE` branches compile away.
    const LOCK_FREE: bool = false;

    /// The [`LockFree`] regime itself (its shared-path gate), `None` for
    /// every other regime.
    #[inline(always)]
    fn lock_free(&self) -> Option<&LockFree> {
        None
    }
}
