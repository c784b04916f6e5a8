//! The compare-and-swap words as the one executor's wait representation:
//! [`Words`] implements [`Exec`] for `lockfree`.
//!
//! The executor (`rendezvous.rs`, and `object/notification.rs` for
//! notifications) is the general path's; here are only the word
//! operations it runs on:
//!
//! * endpoints: the [`granule_sync::lockfree::DualQueue`] of each endpoint —
//!   "take the oldest waiter of a side" and "offer, or take the oldest
//!   waiter of the other side" are each one CAS;
//! * reply objects: the reply word (`ReplyWord`, `shared.rs`), updated by
//!   CAS in a loop (the `ReplyRecv` hand-over — answer the caller, claim
//!   the object — is one CAS), set by its owner otherwise;
//! * notifications: the [`granule_sync::lockfree::SignalStack`] of each
//!   notification — "wake the oldest waiter, or accumulate" and "consume,
//!   or wait" are each one `cmpxchg16b`, so a signal and a wait racing on
//!   two cores can neither both wait nor lose the badge.
//!
//! `X` = a management entry (the whole kernel held): capabilities are then
//! transferred, bound notifications served, the endpoint's mark maintained
//! (a sender waiting there transfers capabilities, which only a management
//! entry may receive), and wake-ups go straight into ready queues. `C` =
//! the regime counts read-modify-writes.

use granule_sync::lockfree::{Claim, Side, Waited};

use crate::abi::Word;
use crate::exec::{Exec, RECEIVERS};
use crate::ipc::Msg;
use crate::object::reply::ReplyState;
use crate::object::{Endpoint, Notification, Ref, Reply, Tcb};
use crate::sched::Action;
use crate::state::Ctx;

use super::shared::LfState;

impl<const X: bool, const C: bool> Words<'_, X, C> {
    /// `t`, just taken out of a word, is refused because a suspend is
    /// pending (`control.rs`): take again.
    #[inline(always)]
    fn refused(&self, ctx: &mut Ctx<'_, LfState>, t: Ref<Tcb>) -> bool {
        ctx.lf_refuse_taken::<X, C>(self.lf, t)
    }

    /// Thread slot `i`, just taken out of a word (of endpoint `ep`, if
    /// one): `Some(Some(t))` to keep, `Some(None)` if it was refused for a
    /// pending suspend (take again), `None` for no thread there.
    #[inline(always)]
    fn keep(&self, ctx: &mut Ctx<'_, LfState>, ep: Option<Ref<Endpoint>>, i: u32) -> Option<Option<Ref<Tcb>>> {
        let t = ctx.ref_at::<Tcb>(i)?;
        let w = self.lf.ctl_of(t);
        if !w.needs_look() {
            return Some(Some(t));
        }
        // A bound receiver: claim it from its signal, or collect the node
        // a signal left behind (`bound.rs`).
        if w.claim_taken(|op| self.lf.count::<C>(ctx.core, op)) == Claim::Ghost {
            return Some(None);
        }
        if !self.refused(ctx, t) {
            return Some(Some(t));
        }
        // A refused sender may have been the one that marked the word.
        if let (true, Some(ep)) = (X, ep) {
            ctx.lf_refresh_mark(self.lf, ep);
        }
        Some(None)
    }
}

/// The CAS words of `lf`, on a shared path (`X = false`) or in a
/// management entry (`X = true`); see the module documentation.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Words<'a, const X: bool, const C: bool> {
    pub lf: &'a LfState,
}

impl<const X: bool, const C: bool> Exec<LfState> for Words<'_, X, C> {
    const RESOLVED: bool = false;

    #[inline(always)]
    fn whole(&self) -> bool {
        X
    }

    #[inline(always)]
    fn take(&self, ctx: &mut Ctx<'_, LfState>, ep: Ref<Endpoint>, side: Side) -> Option<Ref<Tcb>> {
        let q = &self.lf.ep(ep);
        loop {
            if let Some(t) = self.keep(ctx, Some(ep), q.take(self.lf.links::<C>(ctx.core), side)?)? {
                return Some(t);
            }
        }
    }

    #[inline(always)]
    fn offer(&self, ctx: &mut Ctx<'_, LfState>, ep: Ref<Endpoint>, side: Side, me: Ref<Tcb>) -> Option<Ref<Tcb>> {
        let q = &self.lf.ep(ep);
        loop {
            let Some(i) = q.offer(self.lf.links::<C>(ctx.core), side, me.index()) else {
                // Queued. Only management queues a bound receiver.
                if X && side == RECEIVERS {
                    ctx.lf_queued_receiver(self.lf, ep, me);
                }
                return None;
            };
            if let Some(t) = self.keep(ctx, Some(ep), i)? {
                return Some(t);
            }
        }
    }

    #[inline(always)]
    fn claim_bound(&self, ctx: &mut Ctx<'_, LfState>, t: Ref<Tcb>) -> bool {
        !X && ctx.lf_claim_bound::<X, C>(self.lf, t)
    }

    #[inline(always)]
    fn sender_waits(&self, ctx: &mut Ctx<'_, LfState>, ep: Ref<Endpoint>, msg: Msg) {
        if msg.grant && msg.info.extra_caps() > 0 {
            self.lf.ep(ep).set_mark(self.lf.links::<C>(ctx.core), true);
        }
    }

    #[inline(always)]
    fn sender_taken(&self, ctx: &mut Ctx<'_, LfState>, ep: Ref<Endpoint>) {
        ctx.lf_refresh_mark(self.lf, ep);
    }

    #[inline(always)]
    fn reply_update(
        &self,
        ctx: &mut Ctx<'_, LfState>,
        r: Ref<Reply>,
        mut f: impl FnMut(ReplyState) -> Option<ReplyState>,
    ) -> ReplyState {
        let word = &self.lf.reply(r);
        let (mut raw, mut st) = word.load();
        loop {
            // A caller whose stop is pending has abandoned its call, as a
            // suspend or destroy under the lock regimes takes it out of the
            // object at once: to `f` the word is empty already, and the
            // caller is taken out and refused whatever `f` does. (A
            // receiver with a stop pending may still be completing a call
            // checked before the request: the decoder sends a claim of its
            // object to management instead, `Scope::stopping`.)
            let stale = matches!(st, ReplyState::Caller(t, _) if self.lf.ctl_of(t).pending());
            let seen = if stale { ReplyState::Empty } else { st };
            let new = match f(seen) {
                Some(new) => new,
                None if stale => ReplyState::Empty,
                None => return seen,
            };
            match word.cas(raw, new, self.lf.links::<C>(ctx.core)) {
                // A refused caller was never there: the word was empty.
                Ok(()) => {
                    return match st {
                        ReplyState::Caller(c, _) if self.refused(ctx, c) => ReplyState::Empty,
                        _ => seen,
                    }
                }
                Err(now) => (raw, st) = now,
            }
        }
    }

    #[inline(always)]
    fn reply_set(&self, _ctx: &mut Ctx<'_, LfState>, r: Ref<Reply>, st: ReplyState) {
        self.lf.reply(r).set(st);
    }

    #[inline(always)]
    fn wake_on(&self, ctx: &mut Ctx<'_, LfState>, t: Ref<Tcb>, core: usize, prio: u8) {
        ctx.lf_wake::<X, C>(self.lf, t, core, prio);
    }

    #[inline(always)]
    fn transfer(&self, ctx: &mut Ctx<'_, LfState>, src: Ref<Tcb>, dst: Ref<Tcb>, msg: Msg, ep: Option<Ref<Endpoint>>) {
        if X {
            ctx.transfer(src, dst, msg, ep);
        } else {
            // The decoder sent every capability transfer to a management
            // entry.
            ctx.copy_words(src, dst, msg);
        }
    }

    /// A thread about to be published is no longer this core's current
    /// thread (its new owner may run it at once), until the offer finds a
    /// partner instead. On a shared path a thread woken here earlier in the
    /// entry becomes a direct switch once the current thread stops
    /// (`lf_switch_to`), and stops being one if it goes on running.
    #[inline(always)]
    fn running(&self, ctx: &mut Ctx<'_, LfState>, me: Ref<Tcb>, on: bool) {
        ctx.own().current = on.then_some(me);
        if X {
            return;
        }
        match ctx.own().action {
            Action::SwitchTo(t) if !on => {
                // `t` is ours: woken on this core by this entry.
                if let Some(prio) = ctx.get(t).map(|x| x.prio) {
                    let action = ctx.lf_switch_to(t, prio);
                    ctx.own().action = action;
                }
            }
            Action::Direct { to, .. } if on => ctx.own().action = Action::SwitchTo(to),
            _ => {}
        }
    }

    #[inline(always)]
    fn pop_waiter(&self, ctx: &mut Ctx<'_, LfState>, n: Ref<Notification>) -> Option<Ref<Tcb>> {
        let w = &self.lf.ntfn(n);
        loop {
            if let Some(t) = self.keep(ctx, None, w.pop_waiter(self.lf.links::<C>(ctx.core))?)? {
                return Some(t);
            }
        }
    }

    /// A refused waiter took the signal out of the word: it is signalled
    /// again, to the next waiter or into the word.
    #[inline(always)]
    fn signal(&self, ctx: &mut Ctx<'_, LfState>, n: Ref<Notification>, badge: Word) -> Option<Ref<Tcb>> {
        let w = &self.lf.ntfn(n);
        loop {
            if let Some(t) = self.keep(ctx, None, w.signal(self.lf.links::<C>(ctx.core), badge)?)? {
                return Some(t);
            }
        }
    }

    #[inline(always)]
    fn poll(&self, ctx: &mut Ctx<'_, LfState>, n: Ref<Notification>) -> Option<Word> {
        self.lf.ntfn(n).poll(self.lf.links::<C>(ctx.core))
    }

    #[inline(always)]
    fn wait(&self, ctx: &mut Ctx<'_, LfState>, n: Ref<Notification>, me: Ref<Tcb>) -> Option<Word> {
        match self.lf.ntfn(n).wait(self.lf.links::<C>(ctx.core), me.index()) {
            Waited::Pushed => None,
            Waited::Took(bits) => Some(bits),
        }
    }
}
