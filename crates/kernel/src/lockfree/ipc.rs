//! Endpoint IPC on the lock-free words: send, receive, call, reply.
//!
//! Each operation follows the general path's `invoke_*` (`ipc.rs`), with
//! the queue operations replaced by the dual queue's CASes and the
//! ownership rule of `crate::lockfree`: a partner is touched only after the
//! CAS that took it, and the caller is touched no more after the CAS or
//! store that published it. A blocking operation prepares the caller as
//! blocked (and no longer this core's current thread) *before* its CAS; if
//! the CAS finds a partner instead, the preparation is undone — the caller
//! was never published.
//!
//! `X` = running in a management entry: capabilities are then transferred
//! (the general `transfer`), bound notifications served, the endpoint's mark
//! maintained, and wake-ups go straight into ready queues.

use crate::abi::{Error, MessageInfo, Word};
use crate::ipc::Msg;
use crate::object::thread::ThreadState;
use crate::object::{Endpoint, Ref, Reply, Tcb};
use crate::outcome::Outcome;
use crate::state::Ctx;

use crate::decode::{Decoded, RecvHalf, RecvPart};

use super::shared::{LfState, ReplyState};
use super::{RECEIVERS, SENDERS};

impl Ctx<'_, LfState> {
    /// Execute a decoded operation of `caller` (this core's current thread).
    #[inline(always)]
    pub(crate) fn lf_execute<const X: bool, const C: bool>(
        &mut self,
        lf: &LfState,
        caller: Ref<Tcb>,
        op: Decoded,
    ) -> Outcome {
        match op {
            Decoded::Yield => {
                self.yield_current(caller);
                Outcome::Done
            }
            Decoded::Fail(e) => Outcome::Error(e),
            Decoded::Send { ep, msg, blocking } => self.lf_send::<X, C>(lf, caller, ep, msg, blocking),
            Decoded::Signal { ntfn, badge } => {
                self.lf_signal::<X, C>(lf, ntfn, badge);
                Outcome::Done
            }
            Decoded::Recv(part) => self.lf_recv_part::<X, C>(lf, caller, part, None),
            Decoded::Reply { reply, grant_cap, info } => {
                self.lf_reply::<X, C>(lf, caller, reply, grant_cap, info, false);
                Outcome::Done
            }
            Decoded::ReplyRecv { reply, grant_cap, info, recv: RecvHalf::Now(recv) } => {
                // The receive names the same reply object: answer the caller
                // and claim the object for the receive in one CAS.
                let claim = matches!(recv, RecvPart::Ep { reply: Some(_), .. });
                let claimed = self.lf_reply::<X, C>(lf, caller, reply, grant_cap, info, claim);
                self.lf_recv_part::<X, C>(lf, caller, recv, claimed)
            }
            // The reply carries capabilities (management entries only): the
            // receive half is decoded once they are transferred.
            Decoded::ReplyRecv { reply, grant_cap, info, recv: RecvHalf::AfterReply(a) } => {
                self.lf_reply::<X, C>(lf, caller, reply, grant_cap, info, false);
                // Only a management entry (`X`) has capabilities to transfer.
                let recv =
                    if X { self.decode_recv_after_reply(caller, a) } else { RecvPart::Fail(Error::IllegalOperation) };
                self.lf_recv_part::<X, C>(lf, caller, recv, None)
            }
            // Routed to the general path before execution.
            Decoded::Invocation { .. } => Outcome::Error(Error::IllegalOperation),
        }
    }

    /// This core stops (`false`) or resumes (`true`) running `t`, its
    /// current thread, around a publication (see the module documentation).
    #[inline(always)]
    pub(crate) fn lf_set_current(&mut self, t: Ref<Tcb>, on: bool) {
        let core = self.core;
        self.cs(core).current = on.then_some(t);
    }

    /// Send (`Send`, `NBSend`, `Call`) on `ep`.
    #[inline(always)]
    fn lf_send<const X: bool, const C: bool>(
        &mut self,
        lf: &LfState,
        me: Ref<Tcb>,
        ep: Ref<Endpoint>,
        msg: Msg,
        blocking: bool,
    ) -> Outcome {
        let queue = &lf.eps[ep.index() as usize];
        let links = lf.links::<C>(self.core);
        if let Some(r) = queue.take(links, RECEIVERS) {
            return self.lf_deliver::<X, C>(lf, me, ep, r, msg);
        }
        if !blocking {
            return Outcome::Done;
        }
        let blocked =
            ThreadState::BlockedOnSend { ep, badge: msg.badge, info: msg.info, grant: msg.grant, call: msg.call };
        self.lf_prepare_block(me, blocked);
        match queue.offer(links, SENDERS, me.index()) {
            None => {
                if X && msg.grant && msg.info.extra_caps() > 0 {
                    queue.set_mark(links, true);
                }
                Outcome::Blocked
            }
            Some(r) => {
                self.lf_unprepare_block(me);
                self.lf_deliver::<X, C>(lf, me, ep, r, msg)
            }
        }
    }

    /// `me` is about to be published as blocked in `state`.
    #[inline(always)]
    fn lf_prepare_block(&mut self, me: Ref<Tcb>, state: ThreadState) {
        if let Some(x) = self.get(me) {
            x.state = state;
        }
        self.lf_set_current(me, false);
    }

    /// The CAS found a partner instead: `me` runs on.
    #[inline(always)]
    fn lf_unprepare_block(&mut self, me: Ref<Tcb>) {
        if let Some(x) = self.get(me) {
            x.state = ThreadState::Running;
        }
        self.lf_set_current(me, true);
    }

    /// Hand `msg` from `me` to receiver `r`, just popped from `ep`.
    #[inline(always)]
    fn lf_deliver<const X: bool, const C: bool>(
        &mut self,
        lf: &LfState,
        me: Ref<Tcb>,
        ep: Ref<Endpoint>,
        r: u32,
        msg: Msg,
    ) -> Outcome {
        let Some((r, x)) = self.at::<Tcb>(r) else { return Outcome::Error(Error::InvalidCapability) };
        let reply = match x.state {
            ThreadState::BlockedOnRecv { reply, .. } => reply,
            _ => None,
        };
        x.state = ThreadState::Running;
        let reply = reply.filter(|&rp| self.live(rp));
        if X {
            self.transfer(me, r, msg, Some(ep));
        } else {
            self.copy_message(me, r, msg.info, msg.badge);
        }
        if msg.call {
            if let Some(rp) = reply {
                // `rp` is `Receiver(r)`, ours with `r`: record the caller,
                // which publishes it — so it is prepared first, and the
                // receiver is woken only once the caller can be answered.
                self.lf_prepare_block(me, ThreadState::BlockedOnReply { reply: rp });
                lf.replies[rp.index() as usize].set(ReplyState::Caller(me, msg.grant));
                self.lf_wake::<X, C>(lf, r);
                return Outcome::Blocked;
            }
            self.lf_wake::<X, C>(lf, r);
            return Outcome::Error(Error::FailedLookup);
        }
        if let Some(rp) = reply {
            lf.replies[rp.index() as usize].set(ReplyState::Empty);
        }
        self.lf_wake::<X, C>(lf, r);
        Outcome::Done
    }

    /// Answer the caller waiting in `reply`, if any. With `claim`, the CAS
    /// that takes the caller also claims the object for `me`'s receive
    /// (`Receiver(me)`); the result then says whether the object is `me`'s
    /// now (`Some(false)`: another thread receives with it).
    #[inline(always)]
    fn lf_reply<const X: bool, const C: bool>(
        &mut self,
        lf: &LfState,
        me: Ref<Tcb>,
        reply: Ref<Reply>,
        grant_cap: bool,
        info: MessageInfo,
        claim: bool,
    ) -> Option<bool> {
        let word = &lf.replies[reply.index() as usize];
        let next = if claim { ReplyState::Receiver(me) } else { ReplyState::Empty };
        let (mut raw, mut st) = word.load();
        loop {
            let r = match st {
                ReplyState::Caller(c, grant) => match word.cas(raw, next, lf.links::<C>(self.core)) {
                    Ok(()) => {
                        self.lf_answer::<X, C>(lf, me, c, grant && grant_cap, info);
                        return claim.then_some(true);
                    }
                    Err(now) => now,
                },
                ReplyState::Empty if claim => match word.cas(raw, next, lf.links::<C>(self.core)) {
                    Ok(()) => return Some(true),
                    Err(now) => now,
                },
                ReplyState::Empty => return None,
                ReplyState::Receiver(t) => return claim.then_some(t == me),
            };
            (raw, st) = r;
        }
    }

    /// `c`, just taken from a reply object, gets `me`'s answer.
    #[inline(always)]
    fn lf_answer<const X: bool, const C: bool>(
        &mut self,
        lf: &LfState,
        me: Ref<Tcb>,
        c: Ref<Tcb>,
        grant: bool,
        info: MessageInfo,
    ) {
        if X {
            self.transfer(me, c, Msg { info, badge: 0, grant, call: false }, None);
        } else {
            self.copy_message(me, c, info, 0);
        }
        if let Some(x) = self.get(c) {
            x.state = ThreadState::Running;
        }
        self.lf_wake::<X, C>(lf, c);
    }

    /// Make `reply` `Receiver(me)` unless it has a caller or another
    /// receiver (the general path's `IllegalOperation` check, made atomic).
    #[inline(always)]
    fn lf_claim<const C: bool>(&mut self, lf: &LfState, reply: Ref<Reply>, me: Ref<Tcb>) -> bool {
        let word = &lf.replies[reply.index() as usize];
        let (mut raw, mut st) = word.load();
        loop {
            match st {
                ReplyState::Empty => match word.cas(raw, ReplyState::Receiver(me), lf.links::<C>(self.core)) {
                    Ok(()) => return true,
                    Err(now) => (raw, st) = now,
                },
                ReplyState::Receiver(t) => return t == me,
                ReplyState::Caller(..) => return false,
            }
        }
    }

    /// The receive half: on a notification, a wait; on an endpoint, claim
    /// the reply object (unless `claimed` says the reply half did), then
    /// receive.
    #[inline(always)]
    fn lf_recv_part<const X: bool, const C: bool>(
        &mut self,
        lf: &LfState,
        me: Ref<Tcb>,
        part: RecvPart,
        claimed: Option<bool>,
    ) -> Outcome {
        match part {
            RecvPart::Fail(e) => Outcome::Error(e),
            RecvPart::Ntfn { ntfn, blocking } => self.lf_wait::<C>(lf, me, ntfn, blocking),
            RecvPart::Ep { ep, reply, blocking } => {
                if let Some(rp) = reply {
                    let mine = match claimed {
                        Some(c) => c,
                        None => self.lf_claim::<C>(lf, rp, me),
                    };
                    if !mine {
                        return Outcome::Error(Error::IllegalOperation);
                    }
                }
                if X {
                    let bound = self.get(me).and_then(|x| x.bound);
                    if let Some(bits) = bound.and_then(|n| lf.ntfns[n.index() as usize].poll(lf.links::<C>(self.core)))
                    {
                        self.lf_release(lf, reply);
                        self.ipc(me.index()).badge = bits;
                        return Outcome::Done;
                    }
                }
                self.lf_recv::<X, C>(lf, me, ep, reply, blocking)
            }
        }
    }

    /// `me` no longer receives with `reply` (it was `Receiver(me)`).
    #[inline(always)]
    fn lf_release(&mut self, lf: &LfState, reply: Option<Ref<Reply>>) {
        if let Some(rp) = reply {
            lf.replies[rp.index() as usize].set(ReplyState::Empty);
        }
    }

    /// Receive on `ep`; `reply`, if any, is `Receiver(me)`.
    #[inline(always)]
    fn lf_recv<const X: bool, const C: bool>(
        &mut self,
        lf: &LfState,
        me: Ref<Tcb>,
        ep: Ref<Endpoint>,
        reply: Option<Ref<Reply>>,
        blocking: bool,
    ) -> Outcome {
        let queue = &lf.eps[ep.index() as usize];
        let links = lf.links::<C>(self.core);
        if !blocking {
            return match queue.take(links, SENDERS) {
                Some(s) => self.lf_take::<X, C>(lf, me, ep, s, reply),
                None => {
                    self.lf_release(lf, reply);
                    self.ipc(me.index()).badge = 0;
                    Outcome::Done
                }
            };
        }
        self.lf_prepare_block(me, ThreadState::BlockedOnRecv { ep, reply });
        match queue.offer(links, RECEIVERS, me.index()) {
            None => Outcome::Blocked,
            Some(s) => {
                self.lf_unprepare_block(me);
                self.lf_take::<X, C>(lf, me, ep, s, reply)
            }
        }
    }

    /// Take the message of sender `s`, just popped from `ep`.
    #[inline(always)]
    fn lf_take<const X: bool, const C: bool>(
        &mut self,
        lf: &LfState,
        me: Ref<Tcb>,
        ep: Ref<Endpoint>,
        s: u32,
        reply: Option<Ref<Reply>>,
    ) -> Outcome {
        let Some((s, x)) = self.at::<Tcb>(s) else { return Outcome::Error(Error::InvalidCapability) };
        let ThreadState::BlockedOnSend { badge, info, grant, call, .. } = x.state else {
            return Outcome::Error(Error::InvalidCapability);
        };
        let msg = Msg { info, badge, grant, call };
        if X {
            self.lf_refresh_mark(lf, ep);
            self.transfer(s, me, msg, Some(ep));
        } else {
            self.copy_message(s, me, info, badge);
        }
        if call {
            if let Some(rp) = reply {
                if let Some(x) = self.get(s) {
                    x.state = ThreadState::BlockedOnReply { reply: rp };
                }
                lf.replies[rp.index() as usize].set(ReplyState::Caller(s, grant));
                return Outcome::Received;
            }
            self.lf_finish_blocked::<X, C>(lf, s, Error::FailedLookup.word());
            return Outcome::Received;
        }
        self.lf_release(lf, reply);
        self.lf_finish_blocked::<X, C>(lf, s, 0);
        Outcome::Received
    }

    /// A blocked thread `t` (ours) finishes its call with error word `error`
    /// (0: success) and is woken (`fail_thread`, or a sender's completion).
    #[inline(always)]
    fn lf_finish_blocked<const X: bool, const C: bool>(&mut self, lf: &LfState, t: Ref<Tcb>, error: Word) {
        let b = self.ipc(t.index());
        b.error = error;
        b.restart = 0;
        b.tag = 0;
        if let Some(x) = self.get(t) {
            x.state = ThreadState::Running;
        }
        self.lf_wake::<X, C>(lf, t);
    }
}
