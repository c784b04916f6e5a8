//! The IPC fast path (seL4's `fastpath.c`): `Call` and `ReplyRecv` in their
//! common case, as guard checks followed by a marked point of no return.
//!
//! The guards establish everything the general path would decode — valid
//! capabilities with the right rights, a partner waiting on this core, a free
//! reply object, no capability transfer, nothing that would make the
//! scheduler choose differently — and on any doubt decline ([`Fast::Declined`]),
//! leaving the call to the general path (which then decodes it from
//! scratch). After the point of no return the state changes are exactly
//! those the general path's `invoke_*` would make, and the fast path returns
//! its decision, a direct switch to the partner ([`Direct`]), which ends
//! the entry (`Ctx::finish_direct`). The caller is the view `begin_entry`
//! read of the current thread, so the fast path reads its TCB no more.
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
//! # Known to be live
//!
//! An object is looked at through its generation once per entry: the
//! decoder's look-up checks the endpoint and reply object, `begin_entry` the
//! caller, `ref_at` a queued thread as it names it. Later steps reach them
//! with [`Ctx::get_live`], without checking again: outside `lockfree`'s
//! shared paths (which never take this path) objects are freed only by
//! whole-kernel entries, which run beside no other, and the fast path frees
//! nothing. The thread it switches to is one of those ([`Direct::new`]).
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
use crate::object::{CNode, Endpoint, Notification, Ref, Reply, Tcb};
use crate::outcome::Outcome;
use crate::sched::{Action, Direct};
use crate::state::{bump, Ctx};
use crate::waits::{Queues, Waits};

/// What the fast path did with a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fast {
    /// Not its case: the general path takes the call (nothing changed).
    Declined,
    /// Handled; the scheduler chooses what runs next (`finish_entry`).
    Done,
    /// Handled, and the partner runs next.
    Direct(Direct),
}

impl<W: Waits> Ctx<'_, W> {
    /// Try the fast path for this core's current thread, whose view
    /// `begin_entry` read (`None`: it is not running, or holds stalled
    /// cores); stops if a lock cannot be had.
    ///
    /// The call is decoded by the one decoder (`decode.rs`, whole scope:
    /// under `fine` it reads only the caller, held by now, and what changes
    /// under the exclusive side); the guards below then check the state the
    /// general path's `resolve_*` would read, holding each object first.
    #[inline(always)]
    pub(crate) fn fastpath<G: Hold>(
        &mut self,
        a: SyscallArgs,
        caller: Option<CallerView>,
        guard: &mut G,
    ) -> Result<Fast, G::Stop> {
        let info = MessageInfo(a.info);
        let call = a.sysno == Sysno::Call.word();
        let ipc = call || a.sysno == Sysno::ReplyRecv.word();
        let fast = if ipc {
            if info.extra_caps() != 0 || info.length() as usize > MSG_MAX_WORDS {
                return Ok(Fast::Declined);
            }
            let Some(view) = self.fast_caller(caller) else { return Ok(Fast::Declined) };
            let me = view.t;
            let direct = match self.decode_call(&AllHeld, &view, a) {
                Ok(Decoded::Send { ep, msg, blocking: true }) if call && msg.call => {
                    self.fast_call(me, ep, msg, guard)?
                }
                Ok(Decoded::ReplyRecv {
                    reply,
                    info,
                    recv: RecvHalf::Now(RecvPart::Ep { ep, reply: Some(_), blocking: true }),
                    ..
                }) if !call && !view.bound => self.fast_reply_recv(me, ep, reply, info, guard)?,
                _ => None,
            };
            direct.map_or(Fast::Declined, Fast::Direct)
        } else {
            let Some(view) = self.fast_caller(caller) else { return Ok(Fast::Declined) };
            if self.fast_notification(a, view.t, view.cspace, view.bound, guard)? {
                Fast::Done
            } else {
                Fast::Declined
            }
        };
        if fast != Fast::Declined {
            bump(&self.own_cell().fastpath);
        }
        Ok(fast)
    }

    /// The caller, if the fast path may run its call: `begin_entry` found
    /// it running (not a zombie, which the general path reaps) with no
    /// stalled cores, and nothing is pending that would make the scheduler
    /// choose differently. This core's scheduler and its current thread are
    /// held by the entry.
    #[inline(always)]
    fn fast_caller(&mut self, caller: Option<CallerView>) -> Option<CallerView> {
        let view = caller?;
        let cs = self.own();
        if cs.action != Action::Resume || cs.held != 0 {
            return None;
        }
        Some(view)
    }

    /// `Signal` and a blocking `Wait` (kept out of line, so that the IPC
    /// fast path saves no more registers than it uses).
    #[inline(never)]
    fn fast_notification<G: Hold>(
        &mut self,
        a: SyscallArgs,
        me: Ref<Tcb>,
        cspace: Option<Ref<CNode>>,
        bound: bool,
        guard: &mut G,
    ) -> Result<bool, G::Stop> {
        let signal = a.sysno == Sysno::Signal.word();
        if !signal && a.sysno != Sysno::Wait.word() {
            return Ok(false);
        }
        // The view in parts: passed whole, it would go through memory.
        let view = CallerView { t: me, cspace, bound };
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
    ) -> Result<Option<Direct>, G::Stop> {
        let core = self.core;
        guard.object(ep)?;
        // SAFETY: the decoder's look-up found `ep` live in this entry, which
        // frees nothing (module documentation, "Known to be live").
        let e = unsafe { self.get_live(ep) };
        if e.state != EpState::Recv {
            return Ok(None);
        }
        let head = e.queue.head;
        // The receiver waits in the endpoint's queue: held with it.
        let Some(dest) = self.ref_at::<Tcb>(head) else { return Ok(None) };
        // SAFETY: `ref_at` made `dest` from a live slot, in this entry.
        let d = unsafe { self.get_live(dest) };
        let ThreadState::BlockedOnRecv { reply: Some(reply), .. } = d.state else { return Ok(None) };
        // The caller blocks: the receiver runs if nothing ready outranks it.
        if d.core != core {
            return Ok(None);
        }
        let dest_prio = d.prio;
        if self.own().ready.any_above(dest_prio) {
            return Ok(None);
        }
        guard.object(reply)?;
        // SAFETY: a receiver's reply object is live (destroying one takes its
        // receiver off it first, `cancel_reply`; an invariant the checker
        // asserts), and `dest` was found live above.
        let r = unsafe { self.get_live(reply) };
        if r.caller.is_some() {
            return Ok(None);
        }
        // ---- point of no return ----
        r.receiver = None;
        r.caller = Some(me);
        r.grant = msg.grant;
        // SAFETY: `ep` and `dest` were found live above.
        unsafe { self.ep_remove_as(ep, dest, ThreadState::Running) };
        self.copy_message(me, dest, msg.info, msg.badge);
        // SAFETY: `begin_entry` found the caller live.
        unsafe { self.get_live(me) }.state = ThreadState::BlockedOnReply { reply, fault: false };
        // SAFETY: `dest` was found live above, and stays so to the entry's
        // end, which frees nothing.
        Ok(Some(unsafe { Direct::new(dest, dest_prio) }))
    }

    #[inline(always)]
    fn fast_reply_recv<G: Hold>(
        &mut self,
        me: Ref<Tcb>,
        ep: Ref<Endpoint>,
        reply: Ref<Reply>,
        info: MessageInfo,
        guard: &mut G,
    ) -> Result<Option<Direct>, G::Stop> {
        let core = self.core;
        guard.object(ep)?;
        // SAFETY: the decoder's look-ups found `ep` and `reply` live in this
        // entry, which frees nothing (module documentation).
        let e = unsafe { self.get_live(ep) };
        if e.state == EpState::Send {
            return Ok(None);
        }
        guard.object(reply)?;
        // SAFETY: as above.
        let r = unsafe { self.get_live(reply) };
        // The caller waits on the reply object: held with it.
        let (Some(caller), None) = (r.caller, r.receiver) else { return Ok(None) };
        let best = self.own().ready.highest();
        // SAFETY: as above, for `reply`; the caller is checked.
        let Some((r, c)) = (unsafe { self.get_live_and(reply, caller) }) else { return Ok(None) };
        // The replier blocks: the caller runs if nothing ready outranks it.
        if !matches!(c.state, ThreadState::BlockedOnReply { reply: r, fault: false } if r == reply) || c.core != core {
            return Ok(None);
        }
        let caller_prio = c.prio;
        if best.is_some_and(|p| p > caller_prio) {
            return Ok(None);
        }
        // ---- point of no return ----
        r.caller = None;
        r.receiver = Some(me);
        c.state = ThreadState::Running;
        self.copy_message(me, caller, info, 0);
        // SAFETY: the decoder found `ep` live, and `begin_entry` the caller.
        unsafe { self.ep_append_as(ep, me, EpState::Recv, ThreadState::BlockedOnRecv { ep, reply: Some(reply) }) };
        // SAFETY: `caller` was found live above, and stays so to the
        // entry's end, which frees nothing.
        Ok(Some(unsafe { Direct::new(caller, caller_prio) }))
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
