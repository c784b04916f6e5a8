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

use crate::abi::{MessageInfo, Sysno, MSG_MAX_WORDS};
use crate::args::SyscallArgs;
use crate::decode::{CallerView, Decoded, RecvHalf, RecvPart};
use crate::hold::{AllHeld, Hold};
use crate::ipc::Msg;
use crate::object::endpoint::EpState;
use crate::object::thread::ThreadState;
use crate::object::{Endpoint, Ref, Reply, Tcb};
use crate::sched::Action;
use crate::state::{bump, Ctx};
use crate::waits::Waits;

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
        if info.extra_caps() != 0
            || info.length() as usize > MSG_MAX_WORDS
            || !call && a.sysno != Sysno::ReplyRecv.word()
        {
            return Ok(false);
        }
        // This core's scheduler and its current thread are held by the entry
        // (`begin_entry`).
        let cs = self.own();
        let Some(me) = cs.current else { return Ok(false) };
        if cs.action != Action::Resume || cs.held != 0 {
            return Ok(false);
        }
        let Some(x) = self.get(me) else { return Ok(false) };
        // Not a zombie (the general path reaps it) nor a stall owner.
        if !matches!(x.state, ThreadState::Running) || !x.holds.is_empty() {
            return Ok(false);
        }
        let view = CallerView::of(me, x);
        let done = match self.decode_call(&AllHeld, &view, a) {
            Ok(Decoded::Send { ep, msg, blocking: true }) if call && msg.call => self.fast_call(me, ep, msg, guard)?,
            Ok(Decoded::ReplyRecv {
                reply,
                info,
                recv: RecvHalf::Now(RecvPart::Ep { ep, reply: Some(_), blocking: true }),
                ..
            }) if !call && !view.bound => self.fast_reply_recv(me, ep, reply, info, guard)?,
            _ => false,
        };
        if done {
            bump(&self.own_cell().fastpath);
        }
        Ok(done)
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
}
