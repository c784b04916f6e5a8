//! A signal that wakes its notification's bound thread out of an endpoint
//! receive, on `lockfree`'s shared path: seed `004` §4.2's thread signal
//! ("push the signal, set a flag the scheduler tests") where the thread
//! waits in an intrusive lock-free queue it cannot be taken out of from the
//! middle.
//!
//! seL4's rule: a signal to an idle notification whose bound thread waits
//! in an endpoint receive ends that receive with the badge. The thread's
//! node sits somewhere in the endpoint's `DualQueue`, and a Michael–Scott
//! queue has no lock-free removal from the middle. So the signal takes the
//! *thread* and leaves its *node*:
//!
//! 1. **Waiting.** A bound thread's receive blocks only in a management
//!    entry (the decoder sends it there). Queued, it gets `WAITING` on its
//!    stop word: a signal or a taker may claim it.
//! 2. **The claim.** A taker that removes a node whose word needs a second
//!    look clears `WAITING` by CAS (`Words::keep`); a signal turns
//!    `WAITING` into `GHOST` by CAS ([`Ctx::lf_claim_bound`]). Exactly one
//!    wins and owns the thread. The signal's winner ends the receive with
//!    the badge, releases its reply object claim, and wakes the thread
//!    (on another core through the inbox, whose link is a second word, so
//!    the node left in the endpoint does not collide with it).
//! 3. **The ghost.** The node left behind is collected by the next taker
//!    that removes it (`GHOST` cleared by CAS, take again), or by the next
//!    management entry ([`Ctx::lf_purge_ghosts`]), which takes it out of
//!    its queue with every shared path excluded. Until then the thread may
//!    run but may not wait anywhere (its link is in use): while it is a
//!    ghost, its entries run as management (`lf_shared_current`), which
//!    purges first.
//!
//! A signal finds no `WAITING` thread only if the thread is not waiting
//! in an endpoint receive, or a taker owns it: then the badge goes into the
//! notification's word. `WAITING` is set only by management, which no
//! shared path runs beside, so a signal's reading of the flag cannot race
//! with a receive that is about to block. A claimed thread with a suspend
//! pending is refused as a taker refuses it (`control.rs`), and the badge
//! goes into the word, where the restarted receive finds it.
//!
//! Cost, uncontended: the claim is one CAS on a line the signal would load
//! anyway; a taker of a thread with no bound notification pays nothing new
//! (its one load of the stop word tests two more bits).

use core::sync::atomic::Ordering;

use crate::object::thread::ThreadState;
use crate::object::{Endpoint, Ref, Tcb};
use crate::state::{bump, Ctx};

use super::shared::{LfState, ReplyState};

impl Ctx<'_, LfState> {
    /// Management has just queued `me` as a receiver on `ep`: if it has a
    /// bound notification, a signal may claim it from now on.
    pub(crate) fn lf_queued_receiver(&mut self, lf: &LfState, ep: Ref<Endpoint>, me: Ref<Tcb>) {
        if self.get(me).is_some_and(|x| x.bound.is_some()) {
            lf.ghost_ep(me.index()).store(ep.index(), Ordering::Relaxed);
            lf.ctl_of(me).set_waiting(|op| lf.count::<true>(self.core, op));
        }
    }

    /// Management bound `t` to a notification or unbound it: a thread
    /// already waiting in an endpoint receive becomes claimable, or stops
    /// being so.
    pub(crate) fn lf_binding_changed(&mut self, t: Ref<Tcb>) {
        let lf = self.lf();
        let core = self.core;
        let Some(state) = self.get(t).map(|x| x.state) else { return };
        lf.ctl_of(t).clear_wait_bits(|op| lf.count::<true>(core, op));
        if let ThreadState::BlockedOnRecv { ep, .. } = state {
            self.lf_queued_receiver(lf, ep, t);
        }
    }

    /// A signal to the notification bound to `t`: claim `t` if it waits in
    /// an endpoint receive (`true`: ours, its receive to be ended with the
    /// badge). A claimed thread with a suspend pending is refused instead
    /// (`false`, as if unclaimed: the badge goes into the word).
    pub(crate) fn lf_claim_bound<const X: bool, const C: bool>(&mut self, lf: &LfState, t: Ref<Tcb>) -> bool {
        let core = self.core;
        if !lf.ctl_of(t).claim_for_signal(|op| lf.count::<C>(core, op)) {
            return false;
        }
        // Only this core adds to its count (and management, which no shared
        // path runs beside, resets it): no read-modify-write needed.
        let ghosts = &lf.cores[core].ghosts;
        ghosts.store(ghosts.load(Ordering::Relaxed).saturating_add(1), Ordering::Relaxed);
        if self.lf_refuse_taken::<X, C>(lf, t) {
            return false;
        }
        self.lf_release_receive_claim(lf, t);
        bump(&self.lf().cores[core].bound_wakes);
        true
    }

    /// `t` (ours) leaves its receive: its claim on its reply object goes.
    pub(crate) fn lf_release_receive_claim(&mut self, lf: &LfState, t: Ref<Tcb>) {
        if let Some(ThreadState::BlockedOnRecv { reply: Some(r), .. }) = self.get(t).map(|x| x.state) {
            let word = &lf.reply(r);
            if word.load().1 == ReplyState::Receiver(t) {
                word.set(ReplyState::Empty);
            }
        }
    }

    /// Start of every management entry: take every node a signal left
    /// behind out of its endpoint's queue.
    pub(crate) fn lf_purge_ghosts(&mut self) {
        let lf = self.lf();
        let cores = self.s.config.cores;
        if (0..cores).all(|c| lf.cores[c].ghosts.load(Ordering::Relaxed) == 0) {
            return;
        }
        let links = lf.links::<true>(self.core);
        for i in 0..self.s.config.max_threads as u32 {
            let w = lf.ctl(i);
            if w.is_ghost() {
                let ep = lf.ghost_ep(i).load(Ordering::Relaxed);
                lf.eps[ep as usize].remove(links, i);
                w.clear_wait_bits(|op| lf.count::<true>(self.core, op));
            }
        }
        for c in 0..cores {
            lf.cores[c].ghosts.store(0, Ordering::Relaxed);
        }
    }
}
