//! The `none` regime: no concurrency control at all.

use super::{Queues, Regime, Whole};

/// No lock code: `enter` and `exit` compile to nothing.
///
/// Correct only when cores never touch the same kernel object at the same
/// time — e.g. one independent ping-pong pair per core whose objects were all
/// created while the other cores stayed out of the kernel. It is the ideal
/// baseline the other regimes are measured against.
#[derive(Debug)]
pub struct NoLock(());

impl NoLock {
    /// # Safety
    ///
    /// The caller (the platform, on behalf of the experiment) promises that no
    /// two cores are ever inside the kernel at the same time touching the same
    /// kernel object unless both only *read* it, including the shared
    /// allocators (no two cores create or destroy objects concurrently) and
    /// each other's scheduler state (no cross-core wake-up, migration,
    /// suspension, or IPI-delivering operation while the target core is in
    /// the kernel). Breaking it is a data race.
    ///
    /// What the kernel reads or writes for the IPC and notification system
    /// calls: the caller's TCB and IPC buffer; the caller's CSpace root CNode
    /// and the capability slots looked up (read only — a CNode shared by all
    /// cores is fine); the endpoint / notification / reply object; the
    /// partner's TCB and IPC buffer; this core's scheduler state; and the
    /// core bit of the address space's "has run here" bitmap (an atomic). So
    /// one ping-pong pair per core, each pair with its own endpoint, reply
    /// object and threads on that core, is correct under `none` once set up.
    pub unsafe fn new() -> Self {
        Self(())
    }
}

// SAFETY: `NoLock::new`'s caller promised that concurrent kernel entries touch
// disjoint objects, which is exactly `Regime`'s contract; no memory is shared
// through the regime itself, so no synchronisation is needed from it.
unsafe impl Regime for NoLock {
    const NAME: &'static str = "none";
    type Drive = Whole;
    type Waits = Queues;

    /// Any number: there is no per-core state.
    fn cores(&self) -> usize {
        usize::MAX
    }

    type Held<'a> = ();

    #[inline(always)]
    unsafe fn enter<F: FnMut()>(&self, _core: usize, _spin: F) {}

    #[inline(always)]
    unsafe fn exit(&self, _core: usize, (): ()) {}
}
