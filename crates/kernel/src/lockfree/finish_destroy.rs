//! Destroying a thread from `lockfree`'s shared path: seed
//! `004` §4.2's destroy ("mark the thread killed; the dispatcher that meets
//! it frees it") in granule's terms.
//!
//! `CNodeDelete` of the only capability to a thread other than the caller,
//! with no capability derived from it, runs shared (`decode.rs`
//! decides; a thread of the caller's own core is met at once if it is
//! ready, `lockfree/destroy.rs`):
//!
//! 1. **The thread is stopped** by Synthesis's `STOPME` request, as a
//!    shared suspend does (`lockfree/control.rs`): from the request on it
//!    starts no system call and receives nothing, and the destroy returns
//!    only after the thread's core has left the entry it was in. A thread
//!    with a request standing already (or holding stalled cores) is
//!    destroyed by management.
//! 2. **The slot dies by CAS** (`slot_cap.rs`): the capability goes, so no
//!    look-up finds the thread any more, but the slot keeps its place in
//!    the derivation tree, which only management changes. A dead slot
//!    reads as empty; a shared allocation into it goes to management.
//! 3. **Management frees it.** The slot and its capability go on the
//!    core's doomed list (`doomed.rs`). Every management entry that ends
//!    in an exit plan — a system call, an interrupt, a fault — starts by
//!    putting each doomed capability back and deleting it the ordinary way
//!    ([`Ctx::finish_doomed`]). The gate is the grace period: no shared
//!    path runs meanwhile, so nothing reads the thread after it is freed.
//!
//! Introspection entries (`Entry::Look`) finish nothing: a deletion may
//! change what a core runs, and they end in no exit plan that could tell
//! the platform. `thread_info` reports a doomed thread as the lock regimes
//! would after the deletion: gone, or a zombie while it is still current
//! on its core ([`Ctx::doomed`]); the invariant checker reads a dead slot
//! as holding its doomed capability ([`Ctx::doomed_cap`]). `start_info`
//! reads it the same way; `current_thread` shows it while it is still its
//! core's current thread, as it shows a zombie.
//!
//! Other objects that name the thread wait for management too, and a
//! shared call that would meet one goes there: a receive whose reply
//! object the thread claims, a wait on a notification bound to it
//! (`Scope::stopping`). A caller reads as gone from its reply object
//! (`lockfree/ipc.rs`), and a taker refuses the thread.

use super::doomed::Doom;
use super::shared::LfState;
use crate::object::slot_cap::SlotCap;
use crate::object::{Cap, CapObj, Ref, SlotAddr, Tcb};
use crate::state::Ctx;

impl Ctx<'_, LfState> {
    /// Finish every core's shared destroys: put each capability back in
    /// its dead slot, then delete it (management, before anything else).
    pub(crate) fn finish_doomed(&mut self) {
        for Doom { slot, cap, .. } in self.take_core_lists(|l| &mut l.doomed) {
            if let Some(s) = self.cap_slot(slot) {
                s.cap = SlotCap::new(cap);
            }
            self.delete_cap(slot);
        }
    }

    /// Whether thread `t`'s destroy is on some core's doomed list.
    pub(crate) fn doomed(&mut self, t: Ref<Tcb>) -> bool {
        (0..self.s.config.cores).any(|c| self.lists(c).doomed.iter().any(|d| d.cap.obj == CapObj::Tcb(t)))
    }

    /// The capability on a doomed list for dead slot `a` (the null
    /// capability if none has it).
    pub(crate) fn doomed_cap(&mut self, a: SlotAddr) -> Cap {
        let on_list = (0..self.s.config.cores).find_map(|c| self.lists(c).doomed.find(a));
        on_list.map_or(Cap::NULL, |d| d.cap)
    }
}
