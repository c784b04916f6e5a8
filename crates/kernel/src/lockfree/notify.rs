//! Notifications on the lock-free word: signal, wait, poll.
//!
//! The general path's `resolve_signal`/`invoke_signal` and `invoke_wait`
//! (`object/notification.rs`), with the word and the waiter queue replaced
//! by one [`granule_sync::lockfree::SignalStack`] changed by `cmpxchg16b`:
//! "wake the oldest waiter, or accumulate" and "consume, or wait" are
//! each decided by one CAS (waking the only remaining waiter closes its
//! link first, waiting behind others links to the tail first), so a
//! signal and a wait racing on two cores can neither both wait nor lose
//! the badge. A bound thread (seL4's notification binding)
//! is served only by management entries (`crate::decode` sends such signals
//! there), where the order is the general path's: waiter, then bound
//! thread, then accumulate.

use granule_sync::lockfree::Waited;

use crate::abi::Word;
use crate::object::thread::ThreadState;
use crate::object::{Notification, Ref, Tcb};
use crate::outcome::Outcome;
use crate::state::Ctx;

use super::shared::LfState;

impl Ctx<'_, LfState> {
    /// Signal `ntfn` with `badge`.
    pub(crate) fn lf_signal<const X: bool, const C: bool>(
        &mut self,
        lf: &LfState,
        ntfn: Ref<Notification>,
        badge: Word,
    ) {
        let word = &lf.ntfns[ntfn.index() as usize];
        let links = lf.links::<C>(self.core);
        if X {
            if let Some(w) = word.pop_waiter(links) {
                return self.lf_complete_wait::<X, C>(lf, w, badge);
            }
            let bound = self.read(ntfn).and_then(|n| n.bound);
            if let Some(t) = bound {
                if self.get(t).is_some_and(|t| matches!(t.state, ThreadState::BlockedOnRecv { .. })) {
                    self.detach(t);
                    return self.lf_complete_wait::<X, C>(lf, t.index(), badge);
                }
            }
        }
        if let Some(w) = word.signal(links, badge) {
            self.lf_complete_wait::<X, C>(lf, w, badge);
        }
    }

    /// Waiter `w` (just taken, ours) gets `badge` and runs again.
    fn lf_complete_wait<const X: bool, const C: bool>(&mut self, lf: &LfState, w: u32, badge: Word) {
        let Some(t) = self.ref_at::<Tcb>(w) else { return };
        self.wait_done(t, badge);
        self.lf_wake::<X, C>(lf, t);
    }

    /// `Wait` (blocking) or `Poll` on `ntfn` by `me`.
    pub(crate) fn lf_wait<const C: bool>(
        &mut self,
        lf: &LfState,
        me: Ref<Tcb>,
        ntfn: Ref<Notification>,
        blocking: bool,
    ) -> Outcome {
        let word = &lf.ntfns[ntfn.index() as usize];
        if !blocking {
            self.ipc(me.index()).badge = word.poll(lf.links::<C>(self.core)).unwrap_or(0);
            return Outcome::Done;
        }
        if let Some(x) = self.get(me) {
            x.state = ThreadState::BlockedOnNotification { ntfn };
        }
        self.lf_set_current(me, false);
        match word.wait(lf.links::<C>(self.core), me.index()) {
            Waited::Pushed => Outcome::Blocked,
            Waited::Took(bits) => {
                if let Some(x) = self.get(me) {
                    x.state = ThreadState::Running;
                }
                self.lf_set_current(me, true);
                self.ipc(me.index()).badge = bits;
                Outcome::Done
            }
        }
    }
}
