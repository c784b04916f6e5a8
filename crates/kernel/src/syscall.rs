//! System call dispatch: decode → lock set → execute.
//!
//! [`Ctx::handle_syscall`] is the single safe handler every system call goes
//! through. It looks up the capability, *decodes* (validates every argument
//! word and reads the state, holding each object through the regime's guard
//! before it reads it (`hold.rs`), producing a typed [`Error`] or an [`Op`]
//! that names every object it touches), offers the op's [`LockSet`] to the regime,
//! checks whether a remote core must be stalled first (then the call is
//! restarted), and *executes* (which cannot fail). Finally the caller's
//! results are written to its IPC buffer — unless it blocked, in which case
//! whoever wakes it writes them.

use crate::abi::{Error, InvocationLabel, MessageInfo, MSG_MAX_WORDS};
use crate::args::{Args, SyscallArgs};
use crate::decode::{CallerView, Decoded, RecvHalf, RecvPart};
use crate::exec::Exec;
use crate::exit::CoreMask;
use crate::fastpath::Fast;
use crate::hold::{AllHeld, Halt, Hold};
use crate::ids::ObjectId;
use crate::ipc::{RecvOp, ReplyOp, SendOp};
use crate::object::cnode::CNodeOp;
use crate::object::frame::FrameOp;
use crate::object::irq::IrqOp;
use crate::object::notification::{SignalOp, WaitOp};
use crate::object::tcb::TcbOp;
use crate::object::thread::ThreadState;
use crate::object::untyped::RetypeOp;
use crate::object::{Cap, CapObj, Ref, Reply, SlotAddr, Tcb};
use crate::outcome::Outcome;
use crate::regime::LockSet;
use crate::sched::Direct;
use crate::state::Ctx;
use crate::waits::Waits;

/// A decoded operation: what will happen and to which objects.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Op {
    Send(SendOp),
    Recv(RecvOp),
    Signal(SignalOp),
    Wait(WaitOp),
    Tcb(TcbOp),
    CNode(CNodeOp),
    Retype(RetypeOp),
    Irq(IrqOp),
    Frame(FrameOp),
}

fn oid(obj: CapObj) -> Option<ObjectId> {
    obj.id()
}

impl Op {
    /// The locks the operation needs: the objects it touches and the cores
    /// of the threads it moves (a thread is held with the place it sits
    /// in, `hold.rs`), with the caller's core `core`.
    pub fn lock_set<W: Waits>(&self, core: usize, ctx: &mut Ctx<'_, W>) -> LockSet {
        let mut s = LockSet::default();
        s.cores.insert(core);
        let core_of = |s: &mut LockSet, ctx: &mut Ctx<'_, W>, t: Ref<Tcb>| {
            if let Some(x) = ctx.get(t) {
                s.cores.insert(x.core);
            }
        };
        let add = |s: &mut LockSet, o: CapObj| {
            if let Some(id) = oid(o) {
                s.add(id);
            }
        };
        match *self {
            Op::Send(SendOp::Deliver { ep, receiver, reply, msg }) => {
                add(&mut s, CapObj::Endpoint(ep));
                core_of(&mut s, ctx, receiver);
                if let Some(r) = reply {
                    add(&mut s, CapObj::Reply(r));
                }
                // Capability transfer touches CNodes: no fine-grained path.
                if msg.grant && msg.info.extra_caps() > 0 {
                    s.set_exclusive();
                }
            }
            Op::Send(SendOp::Block { ep, .. }) => add(&mut s, CapObj::Endpoint(ep)),
            Op::Send(SendOp::Drop) => {}
            Op::Recv(RecvOp::Nothing { reply, .. }) => {
                if let Some(r) = reply {
                    add(&mut s, CapObj::Reply(r));
                }
            }
            Op::Recv(RecvOp::Take { ep, sender, reply }) => {
                add(&mut s, CapObj::Endpoint(ep));
                core_of(&mut s, ctx, sender);
                if let Some(r) = reply {
                    add(&mut s, CapObj::Reply(r));
                }
                if let Some(x) = ctx.get(sender) {
                    if let ThreadState::BlockedOnSend { grant, info, .. } = x.state {
                        if grant && info.extra_caps() > 0 {
                            s.set_exclusive();
                        }
                    }
                }
            }
            Op::Recv(RecvOp::Signal { ntfn, reply, .. }) => {
                add(&mut s, CapObj::Notification(ntfn));
                if let Some(r) = reply {
                    add(&mut s, CapObj::Reply(r));
                }
            }
            Op::Recv(RecvOp::Block { ep, reply }) => {
                add(&mut s, CapObj::Endpoint(ep));
                if let Some(r) = reply {
                    add(&mut s, CapObj::Reply(r));
                }
            }
            Op::Signal(SignalOp::Wake { ntfn, waiter, .. }) => {
                add(&mut s, CapObj::Notification(ntfn));
                core_of(&mut s, ctx, waiter);
            }
            Op::Signal(SignalOp::WakeBound { ntfn, tcb: t, .. }) => {
                add(&mut s, CapObj::Notification(ntfn));
                core_of(&mut s, ctx, t);
                s.set_exclusive();
            }
            Op::Signal(SignalOp::Accumulate { ntfn, .. }) => add(&mut s, CapObj::Notification(ntfn)),
            Op::Wait(WaitOp::Take { ntfn } | WaitOp::Block { ntfn } | WaitOp::Nothing { ntfn }) => {
                add(&mut s, CapObj::Notification(ntfn))
            }
            Op::Tcb(op) => {
                core_of(&mut s, ctx, op.target());
                s.set_exclusive();
            }
            Op::CNode(_) | Op::Retype(_) | Op::Irq(_) | Op::Frame(_) => s.set_exclusive(),
        }
        s
    }
}

impl<W: Waits> Ctx<'_, W> {
    /// Begin the entry (`begin_entry`) and handle a system call of this
    /// core's current thread, holding each object through `guard` before
    /// reading it; stops (changing nothing) when a lock cannot be had or
    /// the call needs the whole kernel. `fast`: try the IPC fast path
    /// first, on `begin_entry`'s view of the caller. `Some`: the fast
    /// path's direct switch, which ends the entry ([`Ctx::finish_direct`]);
    /// `None`: the scheduler chooses ([`Ctx::finish_entry`]).
    #[inline]
    pub(crate) fn handle_syscall<G: Hold, E: Exec<W>>(
        &mut self,
        e: &E,
        a: SyscallArgs,
        lock: Option<&dyn Fn(&LockSet) -> bool>,
        fast: bool,
        guard: &mut G,
    ) -> Result<Option<Direct>, G::Stop> {
        let view = self.begin_entry(guard)?;
        if fast {
            match self.fastpath(a, view, guard)? {
                Fast::Declined => {}
                Fast::Done => return Ok(None),
                Fast::Direct(d) => return Ok(Some(d)),
            }
        }
        let Some(caller) = self.own().current else { return Ok(None) };
        if !W::syscall_starts(self, caller) {
            return Ok(None);
        }
        let outcome = self.dispatch(e, caller, a, lock, guard)?;
        self.complete::<false>(caller, outcome);
        Ok(None)
    }

    /// Write the caller's results, for every regime and path. `SHARED`:
    /// a `lockfree` shared path, where a caller that blocked has been
    /// published to whoever wakes it and is no longer this core's to touch,
    /// and which never runs a stall owner. Otherwise a stall owner's held
    /// cores are released once its call is complete.
    #[inline]
    pub(crate) fn complete<const SHARED: bool>(&mut self, caller: Ref<Tcb>, outcome: Outcome) {
        if SHARED && outcome == Outcome::Blocked {
            return;
        }
        // The shared path reads nothing more of the caller's TCB.
        let holds = if SHARED {
            false
        } else {
            match self.get(caller) {
                Some(x) => !x.holds.is_empty(),
                None => return,
            }
        };
        let b = self.ipc(caller);
        match outcome {
            Outcome::Done => {
                b.error = 0;
                b.restart = 0;
                b.tag = 0;
            }
            Outcome::Reply(info) => {
                b.error = 0;
                b.restart = 0;
                b.tag = info.word();
            }
            Outcome::Received | Outcome::Blocked => {}
            Outcome::Restart => {
                b.restart = 1;
                return;
            }
            Outcome::Error(e) => {
                b.error = e.word();
                b.restart = 0;
                b.tag = 0;
            }
        }
        // A stall owner always holds at least one core.
        if !SHARED && holds {
            self.release_holds(caller);
        }
    }

    /// Kept out of line: the fast path's entry then saves no more
    /// registers than it uses.
    #[inline(never)]
    fn dispatch<G: Hold, E: Exec<W>>(
        &mut self,
        e: &E,
        caller: Ref<Tcb>,
        a: SyscallArgs,
        lock: Option<&dyn Fn(&LockSet) -> bool>,
        guard: &mut G,
    ) -> Result<Outcome, G::Stop> {
        let info = MessageInfo(a.info);
        let view = self.caller_view(caller).unwrap_or(CallerView::dead(caller));
        // A whole scope never falls back; were it to, the call fails cleanly.
        let Ok(decoded) = self.decode_call(&AllHeld, &view, a) else {
            return Ok(Outcome::Error(Error::IllegalOperation));
        };
        self.dispatch_decoded(e, caller, decoded, info, lock, guard)
    }

    /// Run a system call decoded for `caller` (`info`: its message info),
    /// holding what it touches through `guard` and offering the lock set
    /// to `lock`; also the `Call` a fault makes (`fault.rs`).
    #[inline]
    pub(crate) fn dispatch_decoded<G: Hold, E: Exec<W>>(
        &mut self,
        e: &E,
        caller: Ref<Tcb>,
        decoded: Decoded,
        info: MessageInfo,
        lock: Option<&dyn Fn(&LockSet) -> bool>,
        guard: &mut G,
    ) -> Result<Outcome, G::Stop> {
        // An executor that takes what it needs itself has nothing to resolve.
        if !E::RESOLVED && !matches!(decoded, Decoded::Invocation { .. }) {
            return Ok(self.execute(e, caller, decoded));
        }
        // What the executor runs once the resolvers have held what it
        // touches (the receive half alone, for `ReplyRecv`).
        let mut exec = decoded;
        let op = match decoded {
            Decoded::Yield => {
                self.yield_current(caller);
                return Ok(Outcome::Done);
            }
            Decoded::Fail(e) => return Ok(Outcome::Error(e)),
            Decoded::Invocation { slot, cap } => {
                guard.need_whole()?;
                self.decode_invocation(caller, slot, cap, info).map_err(Halt::Fail)
            }
            Decoded::Subsys(call) => {
                if call.whole {
                    guard.need_whole()?;
                }
                // Hold what waking the log's reader touches before anything
                // changes (a dead notification wakes nobody).
                let wake = match call.wakes().map(|(n, _)| self.resolve_signal(n, guard)) {
                    Some(Ok(op)) => Some(op),
                    Some(Err(Halt::Stop(s))) => return Err(s),
                    Some(Err(Halt::Fail(_))) | None => None,
                };
                // The set is offered before anything changes, so the wake-up
                // below cannot be refused after the append; the call
                // allocates and spins on the subsystem's own locks, so it
                // runs outside any hardware transaction (`rtm`).
                let offered = self.offer(lock, |s, ctx| {
                    if let Some(op) = wake {
                        let core = ctx.core;
                        s.extend(&Op::Signal(op).lock_set(core, ctx));
                    }
                    s.set_outside_transactions();
                });
                if !offered {
                    return Ok(Outcome::Restart);
                }
                let (out, woke) = self.run_subsys(caller, call, guard.whole());
                // The wake-up resolved above signals what the call names.
                if let (true, Some(_), Some((ntfn, badge))) = (woke, wake, call.wakes()) {
                    self.signal(e, ntfn, badge);
                }
                return Ok(out);
            }
            Decoded::Send { ep, msg, blocking } => self.resolve_send(ep, msg, blocking, guard).map(Op::Send),
            Decoded::Signal { ntfn, .. } => self.resolve_signal(ntfn, guard).map(Op::Signal),
            Decoded::Recv(part) => self.resolve_receive(caller, part, guard),
            Decoded::Reply { reply, grant_cap, info } => {
                if !self.reply_now(e, caller, reply, grant_cap, info, lock, guard)? {
                    return Ok(Outcome::Restart);
                }
                return Ok(Outcome::Done);
            }
            Decoded::ReplyRecv { reply, grant_cap, info, recv } => {
                if !self.reply_now(e, caller, reply, grant_cap, info, lock, guard)? {
                    return Ok(Outcome::Restart);
                }
                let part = match recv {
                    RecvHalf::Now(part) => part,
                    RecvHalf::AfterReply(a) => self.decode_recv_after_reply(caller, a),
                };
                exec = Decoded::Recv(part);
                match self.resolve_receive(caller, part, guard) {
                    // The reply is delivered: past the point of no return,
                    // the receive restarts from the user side (`hold.rs`).
                    Err(Halt::Stop(_)) => {
                        guard.escalate();
                        return Ok(Outcome::Restart);
                    }
                    op => op,
                }
            }
        };
        match op {
            Ok(op) => Ok(self.run(e, caller, op, exec, lock)),
            Err(Halt::Fail(e)) => Ok(Outcome::Error(e)),
            Err(Halt::Stop(s)) => Err(s),
        }
    }

    /// Answer the caller waiting on `reply` (if any) with `caller`'s
    /// message, after holding what it touches and offering the lock set;
    /// `Ok(false)` if the regime refused the set (the call must restart;
    /// nothing changed).
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn reply_now<G: Hold, E: Exec<W>>(
        &mut self,
        e: &E,
        caller: Ref<Tcb>,
        reply: Ref<Reply>,
        grant_cap: bool,
        info: MessageInfo,
        lock: Option<&dyn Fn(&LockSet) -> bool>,
        guard: &mut G,
    ) -> Result<bool, G::Stop> {
        let op = self.resolve_reply(reply, grant_cap, guard)?;
        if let ReplyOp::Answer { grant: true, .. } = op {
            if info.extra_caps() > 0 {
                // Capability transfer writes CNodes.
                guard.need_whole()?;
            }
        }
        if !self.offer(lock, |s, ctx| reply_lock_set(s, ctx, &op, info)) {
            return Ok(false);
        }
        self.reply(e, caller, reply, grant_cap, info, false);
        Ok(true)
    }

    /// The queue-reading half of a receive decoded by `decode_recv_part`.
    fn resolve_receive<G: Hold>(
        &mut self,
        caller: Ref<Tcb>,
        part: RecvPart,
        guard: &mut G,
    ) -> Result<Op, Halt<G::Stop>> {
        match part {
            RecvPart::Fail(e) => Err(Halt::Fail(e)),
            RecvPart::Ep { ep, reply, blocking } => self.resolve_recv(caller, ep, reply, blocking, guard).map(Op::Recv),
            RecvPart::Ntfn { ntfn, blocking } => self.resolve_wait(ntfn, blocking, guard).map(Op::Wait),
        }
    }

    /// Decode an object invocation (`Call`/`Send` on a non-IPC capability).
    fn decode_invocation(
        &mut self,
        caller: Ref<Tcb>,
        slot: SlotAddr,
        cap: Cap,
        info: MessageInfo,
    ) -> Result<Op, Error> {
        let label = InvocationLabel::from_word(info.label()).ok_or(Error::IllegalOperation)?;
        let len = (info.length() as usize).min(MSG_MAX_WORDS);
        let args = Args::copied(&self.ipc(caller).msg, len);
        match cap.obj {
            CapObj::Tcb(t) => self.decode_tcb(caller, t, label, &args).map(Op::Tcb),
            CapObj::CNode(c) => self.decode_cnode(caller, c, label, &args).map(Op::CNode),
            CapObj::Untyped(u) => self.decode_untyped(caller, u, slot, label, &args).map(Op::Retype),
            CapObj::Frame(f) => self.decode_frame(caller, f, label, &args).map(Op::Frame),
            CapObj::IrqControl | CapObj::IrqHandler(_) => {
                self.decode_irq(caller, slot, cap.obj, label, &args).map(Op::Irq)
            }
            CapObj::Reply(_) | CapObj::VSpace(_) => Err(Error::IllegalOperation),
            CapObj::Null | CapObj::Endpoint(_) | CapObj::Notification(_) => Err(Error::InvalidCapability),
        }
    }

    /// Offer a lock set to the regime (only regimes that use it pay for it);
    /// `false` if the regime refused it (the call must restart).
    #[inline(always)]
    fn offer(&mut self, lock: Option<&dyn Fn(&LockSet) -> bool>, f: impl FnOnce(&mut LockSet, &mut Self)) -> bool {
        let Some(l) = lock else { return true };
        let mut s = LockSet::default();
        s.cores.insert(self.core);
        f(&mut s, self);
        l(&s)
    }

    /// Lock set, stall check, then the point of no return: an invocation
    /// is invoked, anything else is `exec` on the one executor
    /// (`rendezvous.rs`), on the objects' own queues, everything it touches
    /// held.
    #[inline]
    fn run<E: Exec<W>>(
        &mut self,
        e: &E,
        caller: Ref<Tcb>,
        op: Op,
        exec: Decoded,
        lock: Option<&dyn Fn(&LockSet) -> bool>,
    ) -> Outcome {
        if let Some(l) = lock {
            let core = self.core;
            let s = op.lock_set(core, self);
            if !l(&s) {
                return Outcome::Restart;
            }
        }
        let blockers = match &op {
            Op::Tcb(t) => self.tcb_op_blockers(t),
            Op::CNode(c) => self.cnode_op_blockers(c),
            _ => CoreMask::EMPTY,
        };
        if !blockers.is_empty() {
            self.request_stall(caller, blockers);
            return Outcome::Restart;
        }
        // Nothing below fails.
        match op {
            Op::Tcb(op) => self.invoke_tcb(caller, op),
            Op::CNode(op) => self.invoke_cnode(op),
            Op::Retype(op) => self.invoke_untyped(caller, op),
            Op::Irq(op) => self.invoke_irq(op),
            Op::Frame(op) => self.invoke_frame(caller, op, &|_| {}),
            Op::Send(_) | Op::Recv(_) | Op::Signal(_) | Op::Wait(_) => self.execute(e, caller, exec),
        }
    }
}

fn reply_lock_set<W: Waits>(s: &mut LockSet, ctx: &mut Ctx<'_, W>, op: &ReplyOp, info: MessageInfo) {
    if let ReplyOp::Answer { reply, caller, grant } = *op {
        if let Some(id) = CapObj::Reply(reply).id() {
            s.add(id);
        }
        if let Some(x) = ctx.get(caller) {
            s.cores.insert(x.core);
        }
        if grant && info.extra_caps() > 0 {
            s.set_exclusive();
        }
    }
}
