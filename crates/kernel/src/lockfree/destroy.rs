//! The `lockfree` side of a shared thread destroy
//! (`object/shared_destroy.rs`): the slot's death by CAS and the thread's
//! `STOPME` request, and their withdrawal when two cores destroy (or
//! suspend) each other's threads at once (as `control.rs` withdraws a
//! suspend).

use crate::object::doomed::Doom;
use crate::object::{Cap, Ref, SlotAddr, Tcb};
use crate::outcome::Outcome;
use crate::state::{bump, Ctx};

use granule_sync::lockfree::Suspended;

use super::shared::LfState;

impl Ctx<'_, LfState> {
    /// Destroy thread `t` through `cap` in `slot`: request the stop, then
    /// kill the slot and note it for management. The stop comes first, so
    /// that no call of `t` starts once the capability is seen gone, and a
    /// second destroyer of the same slot finds the request standing. The
    /// decoder sent a thread with a request standing to management; one
    /// that appeared since (another core's suspend or destroy) makes this
    /// call run again, to be decoded anew. A stopped thread stays stopped.
    pub(crate) fn lf_destroy<const C: bool>(&mut self, lf: &LfState, t: Ref<Tcb>, slot: SlotAddr, cap: Cap) -> Outcome {
        let core = self.core;
        let rmw = |op| lf.count::<C>(core, op);
        match self.lf_request_stop::<C>(lf, t) {
            Suspended::Requested { .. } => {}
            Suspended::Already if lf.ctl(t.index()).is_inactive() => {}
            Suspended::Already => return Outcome::Restart,
        }
        // Only a destroy of this slot, which finds the request standing,
        // could change the slot meanwhile; decode checked the list's room.
        if self.cap_ref(slot).is_some_and(|s| s.cap.kill_shared(cap, &rmw))
            && self.cs(core).doomed.push(Doom { slot, cap })
        {
            bump(&self.cell(core).shared_destroys);
        }
        Outcome::Done
    }

    /// Undo this core's destroy of `s` through `cap` in `slot` (the caller
    /// `t`'s own stop was requested meanwhile by a core that yields to
    /// none): the slot lives again and `t`'s call restarts. `fresh`: the
    /// destroy's stop request was the only one, so it is withdrawn too.
    #[cold]
    pub(crate) fn lf_withdraw_destroy<const C: bool>(
        &mut self,
        lf: &LfState,
        (t, s): (Ref<Tcb>, Ref<Tcb>),
        (slot, cap): (SlotAddr, Cap),
        fresh: bool,
    ) {
        let core = self.core;
        if !self.cs(core).doomed.remove(slot) {
            return;
        }
        let rmw = |op| lf.count::<C>(core, op);
        if let Some(x) = self.cap_ref(slot) {
            x.cap.revive_shared(cap, &rmw);
        }
        if fresh {
            self.lf_withdraw_suspend::<C>(lf, t, s);
        } else {
            self.ipc(t.index()).restart = 1;
        }
    }
}
