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
//! # Locking as the guards walk
//!
//! Every read of an object is preceded by a [`FastLocks::hold`] of it, in
//! the order the guards meet them: this core's scheduler, the caller, the
//! endpoint, then the partner and its reply object (`Call`), or the reply
//! object and the caller waiting on it (`ReplyRecv`). Regimes that grant the
//! whole kernel pass [`AllHeld`], whose `hold` is `true` and compiles away.
//! `fine` passes its object locks, so its fast path is fused with its
//! locking (as in the seeds' fine-grained seL4): no separate planning pass,
//! and every lookup is made once. A lock that cannot be had is a guard that
//! fails: nothing has been written yet, so the caller releases what is held
//! and runs the general path. Capability slots are read without a lock (they
//! change only under the exclusive side).

use crate::abi::{MessageInfo, ObjectType, Sysno, MSG_MAX_WORDS};
use crate::args::SyscallArgs;
use crate::decode::{CallerView, Decoded, RecvHalf, RecvPart, Whole};
use crate::ids::ObjectId;
use crate::ipc::Msg;
use crate::object::endpoint::EpState;
use crate::object::thread::ThreadState;
use crate::object::{Endpoint, Ref, Reply, Tcb};
use crate::regime::LockTarget;
use crate::sched::Action;
use crate::state::{bump, Ctx};
use crate::waits::Waits;

/// How the fast path holds each object before it reads it.
pub(crate) trait FastLocks {
    /// Hold `target`; `false` if it cannot be had (the fast path gives up).
    #[track_caller]
    fn hold(&mut self, target: LockTarget) -> bool;
}

/// Everything is held already (the regime granted the whole kernel).
pub(crate) struct AllHeld;

impl FastLocks for AllHeld {
    #[inline(always)]
    #[track_caller]
    fn hold(&mut self, _target: LockTarget) -> bool {
        true
    }
}

/// Hold the lock of the object of type `kind` at slab index `index`
/// (profiles name the fast-path line that asked).
#[inline(always)]
#[track_caller]
fn hold(locks: &mut impl FastLocks, kind: ObjectType, index: u32) -> bool {
    locks.hold(LockTarget::Object(ObjectId { kind: kind as u8, index }))
}

impl<W: Waits> Ctx<'_, W> {
    /// Try the fast path for this core's current thread; `true` if the call
    /// was completely handled.
    ///
    /// The call is decoded by the one decoder (`decode.rs`, whole scope:
    /// under `fine` it reads only the caller, held by now, and what changes
    /// under the exclusive side); the guards below then check the state the
    /// general path's `resolve_*` would read, holding each object first.
    #[inline(always)]
    pub(crate) fn fastpath(&mut self, a: SyscallArgs, locks: &mut impl FastLocks) -> bool {
        let info = MessageInfo(a.info);
        if info.extra_caps() != 0 || info.length() as usize > MSG_MAX_WORDS {
            return false;
        }
        let core = self.core;
        if !locks.hold(LockTarget::Core(core)) {
            return false;
        }
        let cs = self.cs(core);
        let Some(me) = cs.current else { return false };
        if cs.action != Action::Resume || cs.held != 0 || !hold(locks, ObjectType::Tcb, me.index()) {
            return false;
        }
        let Some(x) = self.get(me) else { return false };
        // Not a zombie (the general path reaps it) nor a stall owner.
        if !matches!(x.state, ThreadState::Running) || !x.holds.is_empty() {
            return false;
        }
        let view = CallerView::of(me, x);
        let call = a.sysno == Sysno::Call.word();
        if !call && a.sysno != Sysno::ReplyRecv.word() {
            return false;
        }
        let done = match self.decode_call(&Whole, &view, a) {
            Ok(Decoded::Send { ep, msg, blocking: true }) if call && msg.call => self.fast_call(me, ep, msg, locks),
            Ok(Decoded::ReplyRecv {
                reply,
                info,
                recv: RecvHalf::Now(RecvPart::Ep { ep, reply: Some(_), blocking: true }),
                ..
            }) if !call && !view.bound => self.fast_reply_recv(me, ep, reply, info, locks),
            _ => false,
        };
        if done {
            bump(&self.cell(core).fastpath);
        }
        done
    }

    #[inline(always)]
    fn fast_call(&mut self, me: Ref<Tcb>, ep: Ref<Endpoint>, msg: Msg, locks: &mut impl FastLocks) -> bool {
        let core = self.core;
        if !hold(locks, ObjectType::Endpoint, ep.index()) {
            return false;
        }
        let Some(e) = self.get(ep) else { return false };
        if e.state != EpState::Recv {
            return false;
        }
        let head = e.queue.head;
        let Some(dest) = self.at::<Tcb>(head).map(|(dest, _)| dest) else { return false };
        if !hold(locks, ObjectType::Tcb, dest.index()) {
            return false;
        }
        let Some(d) = self.get(dest) else { return false };
        let ThreadState::BlockedOnRecv { reply: Some(reply), .. } = d.state else { return false };
        // The caller blocks: the receiver runs if nothing ready outranks it.
        if d.core != core {
            return false;
        }
        let dest_prio = d.prio;
        if self.cs(core).ready.highest().is_some_and(|p| p > dest_prio)
            || !hold(locks, ObjectType::Reply, reply.index())
        {
            return false;
        }
        let Some(r) = self.get(reply) else { return false };
        if r.caller.is_some() {
            return false;
        }
        // ---- point of no return ----
        r.receiver = None;
        r.caller = Some(me);
        r.grant = msg.grant;
        self.ep_remove(ep, dest);
        self.copy_message(me, dest, msg.info, msg.badge);
        if let Some(d) = self.get(dest) {
            d.state = ThreadState::Running;
        }
        if let Some(x) = self.get(me) {
            x.state = ThreadState::BlockedOnReply { reply };
        }
        self.cs(core).action = Action::Direct { to: dest, prio: dest_prio };
        true
    }

    #[inline(always)]
    fn fast_reply_recv(
        &mut self,
        me: Ref<Tcb>,
        ep: Ref<Endpoint>,
        reply: Ref<Reply>,
        info: MessageInfo,
        locks: &mut impl FastLocks,
    ) -> bool {
        let core = self.core;
        if !hold(locks, ObjectType::Endpoint, ep.index()) {
            return false;
        }
        let Some(e) = self.get(ep) else { return false };
        if e.state == EpState::Send || !hold(locks, ObjectType::Reply, reply.index()) {
            return false;
        }
        let Some(r) = self.get(reply) else { return false };
        let (Some(caller), None) = (r.caller, r.receiver) else { return false };
        if !hold(locks, ObjectType::Tcb, caller.index()) {
            return false;
        }
        let Some(c) = self.get(caller) else { return false };
        // The replier blocks: the caller runs if nothing ready outranks it.
        if !matches!(c.state, ThreadState::BlockedOnReply { reply: r } if r == reply) || c.core != core {
            return false;
        }
        let caller_prio = c.prio;
        if self.cs(core).ready.highest().is_some_and(|p| p > caller_prio) {
            return false;
        }
        // ---- point of no return ----
        if let Some(r) = self.get(reply) {
            r.caller = None;
            r.receiver = Some(me);
        }
        self.copy_message(me, caller, info, 0);
        if let Some(c) = self.get(caller) {
            c.state = ThreadState::Running;
        }
        if let Some(x) = self.get(me) {
            x.state = ThreadState::BlockedOnRecv { ep, reply: Some(reply) };
        }
        self.ep_append(ep, me, EpState::Recv);
        self.cs(core).action = Action::Direct { to: caller, prio: caller_prio };
        true
    }
}
