//! The `lockfree` side of a shared thread destroy
//! (`object/shared_destroy.rs`): the slot's death by CAS and the thread's
//! `STOPME` request, and their withdrawal when two cores destroy (or
//! suspend) each other's threads at once (as `control.rs` withdraws a
//! suspend).

use crate::object::doomed::Doom;
use crate::object::{Cap, Ref, SlotAddr, Tcb};
use crate::outcome::Outcome;
use crate::state::{bump, Ctx};

use super::shared::LfState;

impl Ctx<'_, LfState> {
    /// Destroy thread `t` through `cap` in `slot`: kill the slot, note it
    /// for management, request the stop. Another core that killed the slot
    /// first did the deletion: this one, of what is now an empty slot,
    /// does nothing, as a deletion of an empty slot does.
    pub(crate) fn lf_destroy<const X: bool, const C: bool>(
        &mut self,
        lf: &LfState,
        t: Ref<Tcb>,
        slot: SlotAddr,
        cap: Cap,
    ) -> Outcome {
        let core = self.core;
        let rmw = |op| lf.count::<C>(core, op);
        let killed = self.cap_ref(slot).is_some_and(|s| s.cap.kill_shared(cap, &rmw));
        // Decode checked the list has room.
        if killed && self.cs(core).doomed.push(Doom { slot, cap }) {
            bump(&self.cell(core).shared_destroys);
            let _ = self.lf_control::<X, C>(lf, t, false);
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
