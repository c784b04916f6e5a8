//! The `lockfree` regime's kernel side: IPC without locks (Synthesis style).
//!
//! # What runs lock-free, and how
//!
//! The *shared paths* — `Send`, `NBSend`, `Call`, `Recv`, `NBRecv`,
//! `Reply`, `ReplyRecv`, `Signal`, `Wait`, `Poll`, `Yield`, timer ticks,
//! IPIs, interrupts on lines without a handler notification, and faults of
//! a thread with a fault handler (the `Call` the fault makes, `fault.rs`)
//! — run on any
//! number of cores at once behind the [`LockFree`] gate's reader side (one
//! `xchg`). They synchronise only through words changed by compare-and-swap
//! (`shared.rs`, objects from `granule_sync::lockfree`):
//!
//! * an endpoint is a [`DualQueue`] word: the waiting senders or the
//!   waiting receivers, both first-in first-out as in seL4, linked through
//!   per-thread link words. A sender takes a waiting receiver, or waits
//!   itself, in one CAS when uncontended (two to take the only remaining
//!   waiter, or to wait behind others); receivers likewise.
//! * a notification is a [`SignalStack`] (128-bit: badge bits, active flag,
//!   FIFO of waiters), signalled and waited on with one `cmpxchg16b` when
//!   uncontended (plus a link CAS to wake the only remaining waiter, or to
//!   wait behind others).
//! * a reply object is a [`shared::ReplyWord`]: empty, the receiver that
//!   will record a caller in it, or the caller waiting for its answer.
//! * a thread woken for another core is pushed on that core's
//!   [`Inbox`]; the core drains it into its private ready queues at every
//!   entry. Scheduler state is private to its core.
//!
//! `TcbSuspend` and `TcbResume` run shared too: Synthesis's `STOPME` on the
//! thread's stop word (`control.rs`), for a thread of another core, and for
//! one of the caller's core that this core owns (`decode.rs`'s
//! `Controls`); so
//! does deleting the only capability to such a thread, which kills the
//! slot by CAS, stops the thread and leaves freeing it to the next
//! management entry (`finish_destroy.rs`); so do frame map, unmap
//! and address queries, and allocating and freeing a 4 KiB frame
//! (`pages.rs`).
//!
//! Everything else — object invocations (retype and delete of anything but
//! one 4 KiB frame or a thread with one capability, revoke, copy,
//! configure, suspend of a thread of the caller's core that waits in an
//! object's queue …), capability transfer, a bound thread's receive from
//! an endpoint (`bound.rs`), faults without a usable handler,
//! interrupts that signal a handler, stall owners, zombie reaping and
//! introspection — is a
//! *management* operation ([`LockFree`]'s `enter`/`exit`): serialised, and
//! with every shared path of every other core excluded. It runs the
//! ordinary kernel code, which reaches the lock-free representation through
//! a few marked hooks (`manage.rs`).
//!
//! # Ownership: the rule that makes the shared paths sound
//!
//! Kernel memory that is not an atomic is touched by one core at a time,
//! and which core is decided by the lock-free words:
//!
//! * **A core owns** its scheduler state, its current thread, the threads
//!   in its ready queues, and any thread it has just *taken* out of a
//!   lock-free word: taken from an endpoint or notification, taken from a
//!   reply object by the CAS that moves `Caller(t)` out, or drained from its
//!   inbox. Owning a thread means owning its TCB slot and its IPC buffer
//!   (the thread is not running: it is blocked, or trapped on this core).
//! * **Taking is the claim.** The CAS that removes a blocked thread from the
//!   only word that names it is the single point at which it changes hands;
//!   nothing reads its TCB before (not even its state), so no separate
//!   "claimed" mark is needed. Synthesis marks a thread before touching it
//!   because other CPUs may reach it through the run queue or a `STOPME`
//!   request at any time; here a `STOPME` request touches only the thread's
//!   stop word (an atomic), and whoever takes the thread next acts on it
//!   (`control.rs`), and the other routes to a blocked thread (delete,
//!   migrate, cancel) are management operations, which exclude the shared
//!   paths. A stopped thread is claimed by the CAS that clears its
//!   `INACTIVE` mark.
//! * **Publishing is the release.** A core gives a thread away by the CAS or
//!   release store that makes it reachable (queueing it on an endpoint,
//!   notification or inbox, storing it in a reply word), and touches it no
//!   more: everything the thread needs (state, message) is written first,
//!   and a blocking caller stops being its core's current thread *before*
//!   it is published, so that the end of the entry does not look at it.
//! * **Read-only while shared**: capability slots, endpoint / notification /
//!   reply slab slots (liveness, bindings), IRQ slots. Only management
//!   writes them — except a 4 KiB frame's allocation into an empty slot and
//!   its free, which claim and clear the slot by CAS of its sequence lock
//!   (`object/slot_cap.rs`), and the frame itself, owned by the core that
//!   popped it from its untyped's free list or, after a grace period, by
//!   the core that freed it (`pages.rs`). A shared path never reads another core's TCB: a
//!   capability to anything but an endpoint, notification or reply object
//!   sends the call to the management path, except a suspend or resume of
//!   a thread of another core, or a destroy, which read only the TCB slot's
//!   generation and capability count (written by management alone) and the
//!   thread's stop word. A destroy kills the slot by CAS too, as a frame's
//!   free clears it.
//!
//! A shared path decides first (`crate::decode`, the one decoder: look-ups and guard checks,
//! no state change) whether it can run shared; if not, it leaves the gate
//! and the whole entry reruns as a management operation. It never waits
//! once inside.
//!
//! # Why management excludes the shared paths, and the grace period
//!
//! The capability slots, the thread fields other than the lock-free words,
//! and the slab allocators are plain memory: the shared paths read them
//! without synchronisation, which is only sound if nobody writes them
//! meanwhile. Management writes them, so it runs alone. The same exclusion
//! is the grace period: a management operation starts only when every other
//! core is outside its shared path, i.e. has passed a kernel exit since it
//! last read anything, and the shared paths keep no reference to kernel
//! memory across an exit (an event-based kernel has no per-thread kernel
//! stacks; what survives an exit is stored in the lock-free words, which
//! management updates). So an object deleted by a management operation is
//! unreachable by the time any shared path runs again, and its slot can be
//! reused at once. Slabs are type-stable besides (slots are never returned
//! to the host allocator), so a stale link read by a taker that loses its
//! CAS reads a link word, never freed memory.
//!
//! # Cost on the ping-pong path (client and server on one core)
//!
//! | call | atomic read-modify-writes |
//! |---|---|
//! | `Call` | gate `lock add`; taking the waiting server (the endpoint's last waiter): CAS closing its link, CAS emptying the word |
//! | `ReplyRecv` | gate `lock add`; reply-word CAS (`Caller(client)` → `Receiver(server)`); endpoint CAS queueing the server |
//!
//! Six per round trip (3 per call), as `LockFree::counting` counts them
//! (the kernel test `lockfree_counts_the_atomics_of_its_ping_pong_path`).
//! The shared paths' functions take `const C: bool`, the regime's
//! `LockFreeOf<COUNTING>`: only with it do the lock-free objects' reports
//! through [`shared::CoreLinks`] reach the counters; management passes
//! `true` and the counters' absence decides.
//!
//! Recording the caller in the reply object, leaving the gate and
//! publishing the core's priority are plain stores; the wake-up is local
//! (a direct switch), so no inbox push and no IPI. A wake-up for another
//! core adds the inbox CAS and a `SeqCst` fence; when it outranks the
//! core's current thread the core is interrupted, but no pending-IPI bit
//! is set (`bkl`'s `fetch_or` and the target's `xchg` that takes it): the
//! inbox is the flag every entry tests. A core that lowers its published
//! priority (or goes idle) pays one fence (see `sched.rs`). A sender
//! waiting behind other
//! senders, and taking the last waiting sender, are two CASes (`DualQueue`).
//!
//! The operations themselves are the general path's one executor
//! (`rendezvous.rs`, `object/notification.rs`), run on these words through
//! [`ipc::Words`], its `Exec` implementation. `Call` and `ReplyRecv` whose
//! partner runs next on this core take a fast path first (`fastpath.rs`):
//! the same decoder and the same take, then the executor's state changes
//! for that case and a direct switch; any other taken partner goes on in
//! the executor.
//!
//! Files: `shared.rs` (the words), `entry.rs` (shared entries, management
//! hooks around every management entry), `fastpath.rs` (the fast path of
//! `Call` and `ReplyRecv`), `ipc.rs` (the words as the
//! executor's wait representation), `sched.rs` (inboxes and priorities),
//! `manage.rs` (hooks of the general code), `control.rs` (suspend and
//! resume), `destroy.rs` (destroy), `bound.rs` (signals to bound
//! receivers), `check.rs` (invariants). Design notes:
//! `docs/lockfree-kernel.md`.
//!
//! [`LockFree`]: crate::regime::LockFree
//! [`DualQueue`]: granule_sync::lockfree::DualQueue
//! [`SignalStack`]: granule_sync::lockfree::SignalStack
//! [`Inbox`]: granule_sync::lockfree::Inbox

mod bound;
mod check;
mod control;
mod core_list;
mod decode;
mod destroy;
mod detached;
mod doomed;
mod entry;
mod fastpath;
mod finish_destroy;
mod gate;
pub(crate) mod ipc;
mod manage;
mod pages;
mod sched;
pub(crate) mod shared;

pub use entry::Shared;
pub(crate) use gate::Tallies;
pub use gate::{CountingLockFree, LockFree, LockFreeOf, RmwCounts};
pub(crate) use shared::LfState;

use alloc::vec::Vec;
use core::sync::atomic::Ordering;

use granule_sync::lockfree::Rmw;

use crate::state::Ctx;

use core_list::{CoreList, Slotted};

pub(crate) use crate::exec::SENDERS;

/// The most threads a `lockfree` kernel can have: endpoint words hold
/// 16-bit thread indices (`granule_sync::lockfree::DualQueue`).
pub(crate) const MAX_THREADS: usize = granule_sync::lockfree::MAX_WAITER as usize + 1;

impl<'k> Ctx<'k, LfState> {
    /// The lock-free representation of the wait state.
    #[inline(always)]
    pub(crate) fn lf(&self) -> &'k LfState {
        &self.s.waits
    }

    /// This core's lock-free cell (`lf().cores[self.core]`, found when the
    /// context was made).
    #[inline(always)]
    pub(crate) fn lf_own(&self) -> &'k shared::LfCore {
        self.waits_here()
    }

    /// An entry of this core begins: it takes the interrupt a stop request
    /// owed it (`LfCore::stop_ipi`). One load when none is owed.
    #[inline(always)]
    pub(crate) fn lf_take_stop_ipi<const COUNTING: bool>(&self) {
        let owed = &self.lf_own().stop_ipi;
        if owed.load(Ordering::Relaxed) {
            self.lf().count::<COUNTING>(self.core, Rmw::Xchg);
            owed.swap(false, Ordering::Acquire);
        }
    }

    /// Core `c`'s [`CoreLists`](shared::CoreLists): this core's on its
    /// shared paths, any core's in a management entry.
    #[inline(always)]
    pub(crate) fn lists(&mut self, c: usize) -> &mut shared::CoreLists {
        // SAFETY: a shared path asks only for its own core's lists (the
        // platform's `CoreHandle` makes it the only thread acting as that
        // core), and a management entry, which may ask for any core's, runs
        // with every shared path excluded by the gate (whose reader and
        // writer sides are acquire/release pairs); `&mut self` makes this
        // the only reference this context hands out.
        unsafe { &mut *self.lf().cores[c].lists.get() }
    }

    /// Empty one list of every core (management), returning what was on
    /// them: `list` picks the list from a core's lists.
    pub(crate) fn take_core_lists<T: Slotted, const N: usize>(
        &mut self,
        list: impl Fn(&mut shared::CoreLists) -> &mut CoreList<T, N>,
    ) -> Vec<T> {
        let mut all = Vec::new();
        for c in 0..self.s.config.cores {
            let l = list(self.lists(c));
            if !l.is_empty() {
                all.extend(l.take_all());
            }
        }
        all
    }
}
