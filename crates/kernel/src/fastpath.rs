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

use crate::abi::{CapRights, MessageInfo, ObjectType, Sysno, Word, MSG_MAX_WORDS};
use crate::args::SyscallArgs;
use crate::ids::ObjectId;
use crate::object::endpoint::EpState;
use crate::object::thread::ThreadState;
use crate::object::{CapObj, Endpoint, Ref, Tcb};
use crate::regime::LockTarget;
use crate::sched::Action;
use crate::state::{bump, Ctx};

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

impl Ctx<'_> {
    /// Try the fast path for this core's current thread; `true` if the call
    /// was completely handled.
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
        let done = if a.sysno == Sysno::Call.word() {
            self.fast_call(me, a.cptr, info, locks)
        } else if a.sysno == Sysno::ReplyRecv.word() {
            self.fast_reply_recv(me, a.cptr, a.reply, info, locks)
        } else {
            false
        };
        if done {
            bump(&self.cell(core).fastpath);
        }
        done
    }

    /// The endpoint `cptr` names in `me`'s CSpace, with its badge and rights.
    #[inline(always)]
    fn fast_ep(&self, me: Ref<Tcb>, cptr: Word) -> Option<(Ref<Endpoint>, Word, CapRights)> {
        let x = self.read(me)?;
        let cspace = x.cspace?;
        // Not a zombie (the general path reaps it) nor a stall owner.
        if x.state != ThreadState::Running || !x.holds.is_empty() {
            return None;
        }
        let cap = self.read(cspace)?.slots.get(usize::try_from(cptr).ok()?)?.cap;
        match cap.obj {
            CapObj::Endpoint(ep) => Some((ep, cap.badge, cap.rights)),
            _ => None,
        }
    }

    #[inline(always)]
    fn fast_call(&mut self, me: Ref<Tcb>, cptr: Word, info: MessageInfo, locks: &mut impl FastLocks) -> bool {
        let core = self.core;
        let Some((ep, badge, rights)) = self.fast_ep(me, cptr) else { return false };
        if !rights.contains(CapRights::WRITE) || !hold(locks, ObjectType::Endpoint, ep.index()) {
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
        r.grant = rights.contains(CapRights::GRANT);
        self.ep_remove(ep, dest);
        self.fast_transfer(me, dest, info, badge);
        if let Some(d) = self.get(dest) {
            d.state = ThreadState::Running;
        }
        if let Some(x) = self.get(me) {
            x.state = ThreadState::BlockedOnReply { reply };
        }
        self.cs(core).action = Action::SwitchTo(dest);
        true
    }

    #[inline(always)]
    fn fast_reply_recv(
        &mut self,
        me: Ref<Tcb>,
        cptr: Word,
        reply_cptr: Word,
        info: MessageInfo,
        locks: &mut impl FastLocks,
    ) -> bool {
        let core = self.core;
        let Some((ep, _, rights)) = self.fast_ep(me, cptr) else { return false };
        if !rights.contains(CapRights::READ) {
            return false;
        }
        let Some(x) = self.get(me) else { return false };
        if x.bound.is_some() {
            return false;
        }
        let Some(cspace) = x.cspace else { return false };
        let Some(rcap) = self.read(cspace).and_then(|c| c.slots.get(usize::try_from(reply_cptr).ok()?)) else {
            return false;
        };
        let CapObj::Reply(reply) = rcap.cap.obj else { return false };
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
        if c.state != (ThreadState::BlockedOnReply { reply }) || c.core != core {
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
        self.fast_transfer(me, caller, info, 0);
        if let Some(c) = self.get(caller) {
            c.state = ThreadState::Running;
        }
        if let Some(x) = self.get(me) {
            x.state = ThreadState::BlockedOnRecv { ep, reply: Some(reply) };
        }
        self.ep_append(ep, me, EpState::Recv);
        self.cs(core).action = Action::SwitchTo(caller);
        true
    }

    /// Copy the message words (no capabilities) and the receiver's results.
    #[inline(always)]
    fn fast_transfer(&mut self, src: Ref<Tcb>, dst: Ref<Tcb>, info: MessageInfo, badge: Word) {
        let len = info.length() as usize;
        let Some((s, d)) = self.ipc_pair(src.index(), dst.index()) else { return };
        d.msg[..len].copy_from_slice(&s.msg[..len]);
        d.tag = MessageInfo::new(info.label(), 0, 0, len as Word).word();
        d.badge = badge;
        d.error = 0;
        d.restart = 0;
    }
}
