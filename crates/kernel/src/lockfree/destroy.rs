//! The `lockfree` side of a shared thread destroy
//! (`finish_destroy.rs`): the slot's death by CAS and the thread's
//! kill (`STOPME|KILLED` on its stop word, granule-sync's `stop_word.rs`),
//! and their withdrawal when two cores destroy (or suspend) each other's
//! threads at once (as `control.rs` withdraws a suspend).

use super::doomed::Doom;
use crate::object::{Cap, Ref, SlotAddr, Tcb};
use crate::outcome::Outcome;
use crate::state::{bump, Ctx};

use granule_sync::lockfree::Killed;

use super::shared::LfState;

impl Ctx<'_, LfState> {
    /// Destroy thread `t` through `cap` in `slot`: mark it killed — a stop
    /// request no resume can cancel, so that a resume checked before the
    /// destroy never runs it again — then kill the slot and note it for
    /// management. The kill comes first, so that no call of `t` starts once
    /// the capability is seen gone, and a second destroyer of the same slot
    /// finds the request standing. The decoder sent a thread with a request
    /// standing to management; one that appeared since (another core's
    /// suspend or destroy) makes this call run again, to be decoded anew. A
    /// stopped thread stays stopped.
    pub(crate) fn lf_destroy<const C: bool>(&mut self, lf: &LfState, t: Ref<Tcb>, slot: SlotAddr, cap: Cap) -> Outcome {
        let core = self.core;
        let rmw = |op| lf.count::<C>(core, op);
        let (requested, here) = match lf.ctl_of(t).kill(rmw) {
            Killed::Requested { home } => {
                self.lf_interrupt_home::<C>(lf, home);
                (true, home == core)
            }
            Killed::Stopped => (false, false),
            Killed::Already => return Outcome::Restart,
        };
        // Only a destroy of this slot, which finds the request standing,
        // could change the slot meanwhile, and decode checked the list's
        // room: the kill is taken back if either failed all the same.
        let dead = self.cap_ref(slot).is_some_and(|s| s.cap.kill_shared(cap, &rmw));
        if dead && self.lists(core).doomed.push(Doom { slot, cap, requested }) {
            bump(&lf.cores[core].destroys);
            // Only now, so that a kill taken back below never finds the
            // thread stopped by this entry.
            if here {
                self.lf_stop_queued_here(t);
            }
            return Outcome::Done;
        }
        if dead {
            if let Some(x) = self.cap_ref(slot) {
                x.cap.revive_shared(cap, &rmw);
            }
        }
        self.lf_take_back_kill::<C>(lf, t, requested);
        Outcome::Restart
    }

    /// Undo this core's destroy through `slot` (the caller `t`'s own stop
    /// was requested meanwhile by a core that yields to none): the slot
    /// lives again, the kill of `s` is taken back, and `t`'s call restarts.
    #[cold]
    pub(crate) fn lf_withdraw_destroy<const C: bool>(
        &mut self,
        lf: &LfState,
        (t, s): (Ref<Tcb>, Ref<Tcb>),
        slot: SlotAddr,
    ) {
        let core = self.core;
        let Some(Doom { cap, requested, .. }) = self.lists(core).doomed.remove(slot) else { return };
        let rmw = |op| lf.count::<C>(core, op);
        if let Some(x) = self.cap_ref(slot) {
            x.cap.revive_shared(cap, &rmw);
        }
        self.lf_take_back_kill::<C>(lf, s, requested);
        self.ipc(t).restart = 1;
    }

    /// Take back a kill of `t` (`requested`: with the stop request it
    /// made, as a resume would: cancelled, or the stopped thread claimed
    /// and run again).
    fn lf_take_back_kill<const C: bool>(&mut self, lf: &LfState, t: Ref<Tcb>, requested: bool) {
        let core = self.core;
        let done = lf.ctl_of(t).unkill(requested, |op| lf.count::<C>(core, op));
        self.lf_run_claimed::<false, C>(lf, t, done);
    }
}
