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
//! Only regimes that ignore lock sets take the fast path (a `fine` regime
//! must see every operation's objects; it would have its own fast path).

use crate::abi::{CapRights, MessageInfo, Sysno, Word, MSG_MAX_WORDS};
use crate::kernel::SyscallArgs;
use crate::object::endpoint::EpState;
use crate::object::tcb::ThreadState;
use crate::object::{CapObj, Endpoint, Ref, Tcb};
use crate::sched::Action;
use crate::state::{bump, Ctx};

impl Ctx<'_> {
    /// Try the fast path for this core's current thread; `true` if the call
    /// was completely handled.
    #[inline(always)]
    pub(crate) fn fastpath(&mut self, a: SyscallArgs) -> bool {
        let info = MessageInfo(a.info);
        if info.extra_caps() != 0 || info.length() as usize > MSG_MAX_WORDS {
            return false;
        }
        let core = self.core;
        let cs = self.cs(core);
        let Some(me) = cs.current else { return false };
        if cs.action != Action::Resume || cs.held != 0 {
            return false;
        }
        let done = if a.sysno == Sysno::Call.word() {
            self.fast_call(me, a.cptr, info)
        } else if a.sysno == Sysno::ReplyRecv.word() {
            self.fast_reply_recv(me, a.cptr, a.reply, info)
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
        if !x.holds.is_empty() {
            return None;
        }
        let cap = self.read(cspace)?.slots.get(usize::try_from(cptr).ok()?)?.cap;
        match cap.obj {
            CapObj::Endpoint(ep) => Some((ep, cap.badge, cap.rights)),
            _ => None,
        }
    }

    #[inline(always)]
    fn fast_call(&mut self, me: Ref<Tcb>, cptr: Word, info: MessageInfo) -> bool {
        let core = self.core;
        let Some((ep, badge, rights)) = self.fast_ep(me, cptr) else { return false };
        if !rights.contains(CapRights::WRITE) {
            return false;
        }
        let Some(e) = self.get(ep) else { return false };
        if e.state != EpState::Recv {
            return false;
        }
        let head = e.queue.head;
        let Some((dest, d)) = self.at::<Tcb>(head) else { return false };
        let ThreadState::BlockedOnRecv { reply: Some(reply), .. } = d.state else { return false };
        // The caller blocks: the receiver runs if nothing ready outranks it.
        if d.core != core {
            return false;
        }
        let dest_prio = d.prio;
        if self.cs(core).ready.highest().is_some_and(|p| p > dest_prio) {
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
    fn fast_reply_recv(&mut self, me: Ref<Tcb>, cptr: Word, reply_cptr: Word, info: MessageInfo) -> bool {
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
        let Some(e) = self.get(ep) else { return false };
        if e.state == EpState::Send {
            return false;
        }
        let Some(r) = self.get(reply) else { return false };
        let (Some(caller), None) = (r.caller, r.receiver) else { return false };
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
