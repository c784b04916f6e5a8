//! The IPC fast path (seL4's `fastpath.c`): `Call` and `ReplyRecv` in their
//! common case, as guard checks followed by a marked point of no return.
//!
//! The guards establish everything the general path would decode — valid
//! capabilities with the right rights, a partner waiting on this core, a free
//! reply object, no capability transfer, nothing that would make the
//! scheduler choose differently — and on any doubt return `false`, leaving
//! the call to the general path (which then decodes it from scratch). After
//! the point of no return the state changes are exactly those the general
//! path's `invoke_*` would make, followed by a direct switch to the partner.
//! The invariants checked after every entry in tests cover both paths.
//!
//! `Signal` and a blocking `Wait` have a fast path too (as seL4's
//! `fastpath_signal`): after the same decode, a guard that the waiter, if
//! any, waits for this core and that no bound thread is involved, then the
//! one executor's own `signal` or `wait` — the general path without its
//! resolver, lock set and dispatch. What runs next is the scheduler's
//! choice after any wake-up or block (`finish_entry`), as on the general
//! path.
//!
//! # Locking as the guards walk
//!
//! Every read of an object is preceded by a hold of it through the regime's
//! guard (`hold.rs`), in the order the guards meet them: the endpoint (and
//! the partner waiting in it), then the partner's reply object (`Call`), or
//! the endpoint, then the reply object (and the caller waiting on it,
//! `ReplyRecv`). The caller is held with this core's scheduler, by the
//! entry's start. Regimes
//! that grant the whole kernel pass `AllHeld`, whose holds compile away;
//! `fine` passes its object locks, so its fast path takes its locks as it
//! goes (as in the seeds' fine-grained seL4). A lock that cannot be had
//! stops the entry before the point of no return ([`Stop::Retry`]): nothing
//! has been written, and the entry runs again. Capability slots are read
//! without a lock (they change only under the exclusive side).

use crate::abi::{MessageInfo, Sysno, Word, MSG_MAX_WORDS};
use crate::args::SyscallArgs;
use crate::decode::{CallerView, Decoded, RecvHalf, RecvPart};
use crate::hold::{AllHeld, Hold};
use crate::ipc::Msg;
use crate::object::endpoint::EpState;
use crate::object::thread::ThreadState;
use crate::object::{Endpoint, Notification, Ref, Reply, Tcb};
use crate::outcome::Outcome;
use crate::sched::Action;
use crate::state::{bump, Ctx};
use crate::waits::{Queues, Waits};

impl<W: Waits> Ctx<'_, W> {
    /// Try the fast path for this core's current thread; `Ok(true)` if the
    /// call was completely handled, `Ok(false)` if the general path takes it
    /// (nothing changed); stops if a lock cannot be had.
    ///
    /// The call is decoded by the one decoder (`decode.rs`, whole scope:
    /// under `fine` it reads only the caller, held by now, and what changes
    /// under the exclusive side); the guards below then check the state the
    /// general path's `resolve_*` would read, holding each object first.
    #[inline(always)]
    pub(crate) fn fastpath<G: Hold>(&mut self, a: SyscallArgs, guard: &mut G) -> Result<bool, G::Stop> {
        let info = MessageInfo(a.info);
        let call = a.sysno == Sysno::Call.word();
        let ipc = call || a.sysno == Sysno::ReplyRecv.word();
        let done = if ipc {
            if info.extra_caps() != 0 || info.length() as usize > MSG_MAX_WORDS {
                return Ok(false);
            }
            let Some((me, view)) = self.fast_caller() else { return Ok(false) };
            match self.decode_call(&AllHeld, &view, a) {
                Ok(Decoded::Send { ep, msg, blocking: true }) if call && msg.call => {
                    self.fast_call(me, ep, msg, guard)?
                }
                Ok(Decoded::ReplyRecv {
                    reply,
                    info,
                    recv: RecvHalf::Now(RecvPart::Ep { ep, reply: Some(_), blocking: true }),
                    ..
                }) if !call && !view.bound => self.fast_reply_recv(me, ep, reply, info, guard)?,
                _ => false,
            }
        } else {
            self.fast_notification(a, guard)?
        };
        if done {
            bump(&self.own_cell().fastpath);
        }
        Ok(done)
    }

    /// The current thread, if the fast path may run its call: it is running
    /// (not a zombie, which the general path reaps) and holds no stalled
    /// cores, and nothing is pending that would make the scheduler choose
    /// differently. This core's scheduler and its current thread are held
    /// by the entry (`begin_entry`).
    #[inline(always)]
    fn fast_caller(&mut self) -> Option<(Ref<Tcb>, CallerView)> {
        let cs = self.own();
        let me = cs.current?;
        if cs.action != Action::Resume || cs.held != 0 {
            return None;
        }
        let x = self.get(me)?;
        if !matches!(x.state, ThreadState::Running) || !x.holds.is_empty() {
            return None;
        }
        Some((me, CallerView::of(me, x)))
    }

    /// `Signal` and a blocking `Wait` (kept out of line, so that the IPC
    /// fast path saves no more registers than it uses).
    #[inline(never)]
    fn fast_notification<G: Hold>(&mut self, a: SyscallArgs, guard: &mut G) -> Result<bool, G::Stop> {
        let signal = a.sysno == Sysno::Signal.word();
        if !signal && a.sysno != Sysno::Wait.word() {
            return Ok(false);
        }
        let Some((me, view)) = self.fast_caller() else { return Ok(false) };
        match self.decode_call(&AllHeld, &view, a) {
            Ok(Decoded::Signal { ntfn, badge }) if signal => self.fast_signal(me, ntfn, badge, guard),
            Ok(Decoded::Recv(RecvPart::Ntfn { ntfn, blocking: true })) if !signal => self.fast_wait(me, ntfn, guard),
            _ => Ok(false),
        }
    }

    #[inline(always)]
    fn fast_call<G: Hold>(
        &mut self,
        me: Ref<Tcb>,
        ep: Ref<Endpoint>,
        msg: Msg,
        guard: &mut G,
    ) -> Result<bool, G::Stop> {
        let core = self.core;
        guard.object(ep)?;
        let Some(e) = self.get(ep) else { return Ok(false) };
        if e.state != EpState::Recv {
            return Ok(false);
        }
        let head = e.queue.head;
        // The receiver waits in the endpoint's queue: held with it.
        let Some(dest) = self.ref_at::<Tcb>(head) else { return Ok(false) };
        let Some(d) = self.get(dest) else { return Ok(false) };
        let ThreadState::BlockedOnRecv { reply: Some(reply), .. } = d.state else { return Ok(false) };
        // The caller blocks: the receiver runs if nothing ready outranks it.
        if d.core != core {
            return Ok(false);
        }
        let dest_prio = d.prio;
        if self.own().ready.any_above(dest_prio) {
            return Ok(false);
        }
        guard.object(reply)?;
        let Some(r) = self.get(reply) else { return Ok(false) };
        if r.caller.is_some() {
            return Ok(false);
        }
        // ---- point of no return ----
        r.receiver = None;
        r.caller = Some(me);
        r.grant = msg.grant;
        self.ep_remove_as(ep, dest, ThreadState::Running);
        self.copy_message(me, dest, msg.info, msg.badge);
        if let Some(x) = self.get(me) {
            x.state = ThreadState::BlockedOnReply { reply, fault: false };
        }
        self.own().action = Action::Direct { to: dest, prio: dest_prio };
        Ok(true)
    }

    #[inline(always)]
    fn fast_reply_recv<G: Hold>(
        &mut self,
        me: Ref<Tcb>,
        ep: Ref<Endpoint>,
        reply: Ref<Reply>,
        info: MessageInfo,
        guard: &mut G,
    ) -> Result<bool, G::Stop> {
        let core = self.core;
        guard.object(ep)?;
        let Some(e) = self.get(ep) else { return Ok(false) };
        if e.state == EpState::Send {
            return Ok(false);
        }
        guard.object(reply)?;
        let Some(r) = self.get(reply) else { return Ok(false) };
        // The caller waits on the reply object: held with it.
        let (Some(caller), None) = (r.caller, r.receiver) else { return Ok(false) };
        let best = self.own().ready.highest();
        let Some((r, c)) = self.get_pair(reply, caller) else { return Ok(false) };
        // The replier blocks: the caller runs if nothing ready outranks it.
        if !matches!(c.state, ThreadState::BlockedOnReply { reply: r, fault: false } if r == reply) || c.core != core {
            return Ok(false);
        }
        let caller_prio = c.prio;
        if best.is_some_and(|p| p > caller_prio) {
            return Ok(false);
        }
        // ---- point of no return ----
        r.caller = None;
        r.receiver = Some(me);
        c.state = ThreadState::Running;
        self.copy_message(me, caller, info, 0);
        self.ep_append_as(ep, me, EpState::Recv, ThreadState::BlockedOnRecv { ep, reply: Some(reply) });
        self.own().action = Action::Direct { to: caller, prio: caller_prio };
        Ok(true)
    }

    /// `Signal`: its notification's first waiter, if it waits for this
    /// core, is woken (the scheduler then chooses as after any wake-up);
    /// with no waiter and no bound thread the badge accumulates. A remote
    /// waiter (its core's lock) and a bound thread (the whole kernel) are
    /// the general path's. The state changes are the one executor's own
    /// (`Ctx::signal`).
    #[inline(always)]
    fn fast_signal<G: Hold>(
        &mut self,
        me: Ref<Tcb>,
        ntfn: Ref<Notification>,
        badge: Word,
        guard: &mut G,
    ) -> Result<bool, G::Stop> {
        let core = self.core;
        guard.object(ntfn)?;
        let Some(n) = self.get(ntfn) else { return Ok(false) };
        let (head, bound) = (n.queue.head, n.bound);
        // The waiter waits in the notification's queue: held with it.
        let here = match self.ref_at::<Tcb>(head) {
            Some(w) => self.get(w).is_some_and(|x| x.core == core),
            None => bound.is_none(),
        };
        if !here {
            return Ok(false);
        }
        // ---- point of no return ----
        self.signal(&Queues, ntfn, badge);
        self.complete::<false>(me, Outcome::Done);
        Ok(true)
    }

    /// A blocking `Wait`: take the notification's word if it is active,
    /// else wait in its queue (the scheduler then chooses the next thread
    /// as after any block). The state changes are the one executor's own
    /// (`Ctx::wait`).
    #[inline(always)]
    fn fast_wait<G: Hold>(&mut self, me: Ref<Tcb>, ntfn: Ref<Notification>, guard: &mut G) -> Result<bool, G::Stop> {
        guard.object(ntfn)?;
        if self.get(ntfn).is_none() {
            return Ok(false);
        }
        // ---- point of no return ----
        let out = self.wait(&Queues, me, ntfn, true);
        self.complete::<false>(me, out);
        Ok(true)
    }
}
