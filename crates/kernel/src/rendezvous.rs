//! The one IPC executor: send, receive, call and reply for every regime.
//!
//! Each operation is written once, against [`Exec`] (`exec.rs`): the slab
//! queues of the lock regimes and `lockfree`'s compare-and-swap words run
//! the same steps. The steps follow the ownership rule of `crate::lockfree`,
//! which the lock regimes satisfy trivially: a partner is touched only once
//! it was *taken* (popped from a queue or a reply object), and the caller is
//! touched no more once it is *published* (it waits in a queue or a reply
//! object). A blocking operation prepares the caller as blocked before it
//! offers itself; if the offer finds a partner instead, the preparation is
//! undone — the caller was never published.
//!
//! The lock regimes reach it after their resolvers have held what it
//! touches and offered the lock set (`syscall.rs`); `lockfree` reaches it
//! from its decoder directly. [`Ctx::execute`] is the one executor of a
//! decoded call; object invocations, which need the whole kernel, are
//! invoked by `syscall.rs` (`invoke_*` of each object file).

use crate::abi::{Error, MessageInfo, Word};
use crate::decode::{Decoded, RecvHalf, RecvPart};
use crate::exec::{Exec, RECEIVERS, SENDERS};
use crate::ipc::Msg;
use crate::object::reply::ReplyState;
use crate::object::thread::ThreadState;
use crate::object::{Endpoint, Ref, Reply, Tcb};
use crate::outcome::Outcome;
use crate::state::Ctx;
use crate::waits::Waits;

impl<W: Waits> Ctx<'_, W> {
    /// Execute a decoded system call of `caller` (this core's current
    /// thread): the point of no return. The lock regimes call it once
    /// their resolvers have held what it touches and the regime accepted
    /// the lock set (`syscall.rs`); `lockfree` straight after decoding.
    #[inline(always)]
    pub(crate) fn execute<E: Exec<W>>(&mut self, e: &E, caller: Ref<Tcb>, op: Decoded) -> Outcome {
        match op {
            Decoded::Yield => {
                self.yield_current(caller);
                Outcome::Done
            }
            Decoded::Fail(err) => Outcome::Error(err),
            Decoded::Send { ep, msg, blocking } => self.send(e, caller, ep, msg, blocking),
            Decoded::Signal { ntfn, badge } => {
                self.signal(e, ntfn, badge);
                Outcome::Done
            }
            Decoded::Recv(part) => self.receive(e, caller, part, None),
            Decoded::Reply { reply, grant_cap, info } => {
                self.reply(e, caller, reply, grant_cap, info, false);
                Outcome::Done
            }
            Decoded::ReplyRecv { reply, grant_cap, info, recv: RecvHalf::Now(recv) } => {
                // The receive names the same reply object: answer the caller
                // and claim the object for the receive in one step.
                let claim = matches!(recv, RecvPart::Ep { reply: Some(_), .. });
                let claimed = self.reply(e, caller, reply, grant_cap, info, claim);
                self.receive(e, caller, recv, claimed)
            }
            // The reply carries capabilities (whole entries only): the
            // receive half is decoded once they are transferred.
            Decoded::ReplyRecv { reply, grant_cap, info, recv: RecvHalf::AfterReply(a) } => {
                self.reply(e, caller, reply, grant_cap, info, false);
                let recv = if e.whole() {
                    self.decode_recv_after_reply(caller, a)
                } else {
                    RecvPart::Fail(Error::IllegalOperation)
                };
                self.receive(e, caller, recv, None)
            }
            Decoded::Subsys(call) => {
                let (out, woke) = self.run_subsys(caller, call, e.whole());
                if let (true, Some((n, badge))) = (woke, call.wakes()) {
                    if self.live(n) {
                        self.signal(e, n, badge);
                    }
                }
                out
            }
            // Decoded further and invoked by `syscall.rs` (a whole entry)
            // or by the regime's own decoder (`lockfree`'s shared path)
            // before execution.
            Decoded::Invocation { .. } => Outcome::Error(Error::IllegalOperation),
        }
    }

    /// `me` is about to be published as blocked in `state`.
    #[inline(always)]
    pub(crate) fn prepare_block<E: Exec<W>>(&mut self, e: &E, me: Ref<Tcb>, state: ThreadState) {
        if let Some(x) = self.get(me) {
            x.state = state;
        }
        e.running(self, me, false);
    }

    /// The offer found a partner instead: `me` runs on.
    #[inline(always)]
    pub(crate) fn unprepare_block<E: Exec<W>>(&mut self, e: &E, me: Ref<Tcb>) {
        if let Some(x) = self.get(me) {
            x.state = ThreadState::Running;
        }
        e.running(self, me, true);
    }

    /// Send (`Send`, `NBSend`, `Call`) on `ep`.
    #[inline(always)]
    pub(crate) fn send<E: Exec<W>>(
        &mut self,
        e: &E,
        me: Ref<Tcb>,
        ep: Ref<Endpoint>,
        msg: Msg,
        blocking: bool,
    ) -> Outcome {
        if let Some(r) = e.take(self, ep, RECEIVERS) {
            return self.deliver(e, me, ep, r, msg);
        }
        if !blocking {
            return Outcome::Done;
        }
        let blocked = ThreadState::BlockedOnSend {
            ep,
            badge: msg.badge,
            info: msg.info,
            grant: msg.grant,
            call: msg.call,
            fault: msg.fault,
        };
        self.prepare_block(e, me, blocked);
        match e.offer(self, ep, SENDERS, me) {
            None => {
                if e.whole() {
                    e.sender_waits(self, ep, msg);
                }
                Outcome::Blocked
            }
            Some(r) => {
                self.unprepare_block(e, me);
                self.deliver(e, me, ep, r, msg)
            }
        }
    }

    /// Hand `msg` from `me` to receiver `r`, just taken from `ep`.
    #[inline(always)]
    pub(crate) fn deliver<E: Exec<W>>(
        &mut self,
        e: &E,
        me: Ref<Tcb>,
        ep: Ref<Endpoint>,
        r: Ref<Tcb>,
        msg: Msg,
    ) -> Outcome {
        let Some(x) = self.get(r) else { return Outcome::Error(Error::InvalidCapability) };
        let reply = match x.state {
            ThreadState::BlockedOnRecv { reply, .. } => reply,
            _ => None,
        };
        x.state = ThreadState::Running;
        let (core, prio) = (x.core, x.prio);
        let reply = reply.filter(|&rp| self.live(rp));
        e.transfer(self, me, r, msg, Some(ep));
        if msg.call {
            if let Some(rp) = reply {
                // `rp` is `Receiver(r)`, ours with `r`: recording the caller
                // publishes it, so it is prepared first, and the receiver
                // is woken only once the caller can be answered.
                self.prepare_block(e, me, ThreadState::BlockedOnReply { reply: rp, fault: msg.fault });
                e.reply_set(self, rp, ReplyState::Caller(me, msg.grant));
                e.wake_on(self, r, core, prio);
                return Outcome::Blocked;
            }
            e.wake_on(self, r, core, prio);
            return Outcome::Error(Error::FailedLookup);
        }
        if let Some(rp) = reply {
            e.reply_set(self, rp, ReplyState::Empty);
        }
        e.wake_on(self, r, core, prio);
        Outcome::Done
    }

    /// Answer the caller waiting in `reply`, if any. With `claim`, the step
    /// that takes the caller also claims the object for `me`'s receive
    /// (`Receiver(me)`); the result then says whether the object is `me`'s
    /// now (`Some(false)`: another thread receives with it).
    #[inline(always)]
    pub(crate) fn reply<E: Exec<W>>(
        &mut self,
        e: &E,
        me: Ref<Tcb>,
        reply: Ref<Reply>,
        grant_cap: bool,
        info: MessageInfo,
        claim: bool,
    ) -> Option<bool> {
        let next = if claim { ReplyState::Receiver(me) } else { ReplyState::Empty };
        let seen = e.reply_update(self, reply, |st| match st {
            ReplyState::Caller(..) => Some(next),
            ReplyState::Empty if claim => Some(next),
            _ => None,
        });
        self.answer(e, me, seen, grant_cap, info, claim)
    }

    /// The rest of [`Ctx::reply`] once its update saw `seen`: answer the
    /// caller taken out of the object, if any.
    #[inline(always)]
    pub(crate) fn answer<E: Exec<W>>(
        &mut self,
        e: &E,
        me: Ref<Tcb>,
        seen: ReplyState,
        grant_cap: bool,
        info: MessageInfo,
        claim: bool,
    ) -> Option<bool> {
        match seen {
            ReplyState::Caller(c, grant) => {
                if self.get(c).is_some_and(|x| matches!(x.state, ThreadState::BlockedOnReply { fault: true, .. })) {
                    self.answer_fault(e, c, info.label());
                } else {
                    let msg = Msg { info, badge: 0, grant: grant && grant_cap, call: false, fault: false };
                    e.transfer(self, me, c, msg, None);
                    self.resume(e, c);
                }
                claim.then_some(true)
            }
            ReplyState::Empty => claim.then_some(true),
            ReplyState::Receiver(t) => claim.then_some(t == me),
        }
    }

    /// Make `reply` `Receiver(me)` unless it has a caller or another
    /// receiver (a receive's `IllegalOperation` check, made atomic).
    #[inline(always)]
    fn claim<E: Exec<W>>(&mut self, e: &E, reply: Ref<Reply>, me: Ref<Tcb>) -> bool {
        let seen = e.reply_update(self, reply, |st| match st {
            ReplyState::Empty => Some(ReplyState::Receiver(me)),
            _ => None,
        });
        match seen {
            ReplyState::Empty => true,
            ReplyState::Receiver(t) => t == me,
            ReplyState::Caller(..) => false,
        }
    }

    /// `me` no longer receives with `reply` (it was `Receiver(me)`).
    #[inline(always)]
    fn release<E: Exec<W>>(&mut self, e: &E, reply: Option<Ref<Reply>>) {
        if let Some(rp) = reply {
            e.reply_set(self, rp, ReplyState::Empty);
        }
    }

    /// The receive half: on a notification, a wait; on an endpoint, claim
    /// the reply object (unless `claimed` says the reply half did), serve
    /// an active bound notification, then receive.
    #[inline(always)]
    pub(crate) fn receive<E: Exec<W>>(
        &mut self,
        e: &E,
        me: Ref<Tcb>,
        part: RecvPart,
        claimed: Option<bool>,
    ) -> Outcome {
        match part {
            RecvPart::Fail(err) => Outcome::Error(err),
            RecvPart::Ntfn { ntfn, blocking } => self.wait(e, me, ntfn, blocking),
            RecvPart::Ep { ep, reply, blocking } => {
                if let Some(rp) = reply {
                    let mine = match claimed {
                        Some(c) => c,
                        None => self.claim(e, rp, me),
                    };
                    if !mine {
                        return Outcome::Error(Error::IllegalOperation);
                    }
                }
                if e.whole() {
                    if let Some(bits) = e.poll_bound(self, me) {
                        self.release(e, reply);
                        self.ipc(me).badge = bits;
                        return Outcome::Done;
                    }
                }
                self.receive_on(e, me, ep, reply, blocking)
            }
        }
    }

    /// Receive on `ep`; `reply`, if any, is `Receiver(me)`.
    #[inline(always)]
    fn receive_on<E: Exec<W>>(
        &mut self,
        e: &E,
        me: Ref<Tcb>,
        ep: Ref<Endpoint>,
        reply: Option<Ref<Reply>>,
        blocking: bool,
    ) -> Outcome {
        if !blocking {
            return match e.take(self, ep, SENDERS) {
                Some(s) => self.take_message(e, me, ep, s, reply),
                None => {
                    self.release(e, reply);
                    self.ipc(me).badge = 0;
                    Outcome::Done
                }
            };
        }
        self.prepare_block(e, me, ThreadState::BlockedOnRecv { ep, reply });
        match e.offer(self, ep, RECEIVERS, me) {
            None => Outcome::Blocked,
            Some(s) => {
                self.unprepare_block(e, me);
                self.take_message(e, me, ep, s, reply)
            }
        }
    }

    /// Take the message of sender `s`, just taken from `ep`.
    #[inline(always)]
    pub(crate) fn take_message<E: Exec<W>>(
        &mut self,
        e: &E,
        me: Ref<Tcb>,
        ep: Ref<Endpoint>,
        s: Ref<Tcb>,
        reply: Option<Ref<Reply>>,
    ) -> Outcome {
        let Some(x) = self.get(s) else { return Outcome::Error(Error::InvalidCapability) };
        let ThreadState::BlockedOnSend { badge, info, grant, call, fault, .. } = x.state else {
            return Outcome::Error(Error::InvalidCapability);
        };
        let msg = Msg { info, badge, grant, call, fault };
        if e.whole() {
            e.sender_taken(self, ep);
        }
        e.transfer(self, s, me, msg, Some(ep));
        if call {
            if let Some(rp) = reply {
                if let Some(x) = self.get(s) {
                    x.state = ThreadState::BlockedOnReply { reply: rp, fault };
                }
                e.reply_set(self, rp, ReplyState::Caller(s, grant));
                return Outcome::Received;
            }
            // Nothing can answer the call: a faulting thread stops (seL4's
            // double fault), a caller gets the error.
            if fault {
                self.stop_faulted(s);
            } else {
                self.finish_blocked(e, s, Error::FailedLookup.word());
            }
            return Outcome::Received;
        }
        self.release(e, reply);
        self.finish_blocked(e, s, 0);
        Outcome::Received
    }

    /// A blocked thread `t` (taken by this entry) finishes its call with
    /// error word `error` (0: success, no message) and runs again.
    #[inline(always)]
    pub(crate) fn finish_blocked<E: Exec<W>>(&mut self, e: &E, t: Ref<Tcb>, error: Word) {
        let b = self.ipc(t);
        b.error = error;
        b.restart = 0;
        b.tag = 0;
        self.resume(e, t);
    }

    /// A blocked thread `t` (taken by this entry, its results written) runs
    /// again.
    #[inline(always)]
    pub(crate) fn resume<E: Exec<W>>(&mut self, e: &E, t: Ref<Tcb>) {
        if let Some(x) = self.get(t) {
            x.state = ThreadState::Running;
            let (core, prio) = (x.core, x.prio);
            e.wake_on(self, t, core, prio);
        }
    }
}
