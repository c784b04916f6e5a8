//! The shared path's IPC fast path: `Call` and `ReplyRecv` in their common
//! case (the partner runs next on this core), as the general fast path
//! (`fastpath.rs`) is for the other regimes.
//!
//! The general fast path checks everything first and then changes the
//! objects it holds. Here nothing is held: a partner is the caller's only
//! once the compare-and-swap that takes it out of its word has succeeded,
//! and its TCB may not be read before (the ownership rule, `mod.rs`). So the
//! guards that change nothing come first — an entry whose start has nothing
//! to do (no pending interrupt, no owed stop interrupt, an empty inbox), a
//! caller with no stop request, a call the one decoder decodes to a `Call`
//! on an endpoint or to a `ReplyRecv` whose reply object holds a caller
//! (the decoder sends a call that transfers capabilities to a management
//! entry, and a message is cut to `MSG_MAX_WORDS` here as everywhere) —,
//! then the take, which is the point of no return; the partner is looked at
//! only then. If it runs on this core and nothing ready outranks it, the
//! entry ends in a direct switch to it, with the state changes the one
//! executor's `deliver`, or `answer` and `receive`, make. If not, the call
//! goes on from the take in the one executor (`rendezvous.rs`), exactly as
//! the shared path would have run it after the same take. A declined call
//! (nothing changed) runs on the shared path as it would have.

use crate::abi::{MessageInfo, Sysno};
use crate::args::SyscallArgs;
use crate::decode::{CallerView, Decoded, RecvHalf, RecvPart, Scope};
use crate::exec::{Exec, RECEIVERS};
use crate::exit::ExitPlan;
use crate::ipc::Msg;
use crate::object::reply::ReplyState;
use crate::object::thread::ThreadState;
use crate::object::{Endpoint, Ref, Reply, Tcb};
use crate::sched::{Action, Direct};
use crate::state::{bump, Ctx};

use super::ipc::Words;
use super::shared::{published, LfState};

impl Ctx<'_, LfState> {
    /// Run `c`'s system call, a `Call` or a `ReplyRecv`, on the fast path if
    /// it is its case (see the module documentation); if not, nothing has
    /// changed and `declined` runs it. A direct switch is returned as the
    /// decision ([`Ended`]), for the entry to end in; any other
    /// end's plan is written into `slow`.
    #[inline(always)]
    pub(super) fn lf_fastpath<const C: bool>(
        &mut self,
        lf: &LfState,
        c: &CallerView,
        a: SyscallArgs,
        slow: &mut Option<ExitPlan>,
        declined: impl FnOnce(&mut Self) -> Option<ExitPlan>,
    ) -> Ended {
        // The caller runs only `Call` and `ReplyRecv` here.
        let call = a.sysno == Sysno::Call.word();
        debug_assert!(call || a.sysno == Sysno::ReplyRecv.word());
        // The entry's start (`lf_begin`) would do nothing but count it.
        if self.lf_begin_has_work() {
            return put(slow, declined(self));
        }
        let cs = self.own();
        if !matches!(cs.action, Action::Resume) || cs.held != 0 || lf.ctl_of(c.t).pending() {
            return put(slow, declined(self));
        }
        // The decoder, inlined once per system call with its number a
        // constant, keeps only that call's arm.
        if call {
            let a = SyscallArgs { sysno: Sysno::Call.word(), ..a };
            match self.decode_call(lf, c, a) {
                Ok(Decoded::Send { ep, msg, blocking: true }) if msg.call => {
                    self.lf_fast_call::<C>(lf, c.t, ep, msg, slow)
                }
                _ => put(slow, declined(self)),
            }
        } else if c.bound {
            put(slow, declined(self))
        } else {
            let a = SyscallArgs { sysno: Sysno::ReplyRecv.word(), ..a };
            match self.decode_call(&FastScope(lf), c, a) {
                Ok(Decoded::ReplyRecv {
                    reply,
                    grant_cap,
                    info,
                    recv: RecvHalf::Now(recv @ RecvPart::Ep { ep, reply: Some(_), blocking: true }),
                }) => self.lf_fast_reply_recv::<C>(lf, c.t, reply, grant_cap, info, ep, recv, slow, declined),
                _ => put(slow, declined(self)),
            }
        }
    }

    /// `Call` on `ep`: take the oldest receiver (the point of no return).
    #[inline(always)]
    fn lf_fast_call<const C: bool>(
        &mut self,
        lf: &LfState,
        me: Ref<Tcb>,
        ep: Ref<Endpoint>,
        msg: Msg,
        slow: &mut Option<ExitPlan>,
    ) -> Ended {
        self.lf_fast_counted();
        let Some(r) = (Words::<false, C> { lf }).take(self, ep, RECEIVERS) else {
            // Nobody receives: the one executor's send, which waits.
            return put(slow, Some(self.lf_fast_go_on::<C>(lf, me, GoOn::Send { ep, msg })));
        };
        // `r` is ours now.
        let core = self.core;
        // SAFETY: the take made `r` with `ref_at` from a live slot in this
        // entry (`Words::keep`), and a shared path frees no thread.
        let x = unsafe { self.get_live(r) };
        let direct = match x.state {
            ThreadState::BlockedOnRecv { reply: Some(rp), .. } if x.core == core => Some((rp, x.prio)),
            _ => None,
        };
        // (A thread the take refused and resumed would have made the
        // entry's action other than `Resume`: `lf_wake` then decides. The
        // receiver's reply object is live: destroying one takes its
        // receiver off it, an invariant the checker asserts, and only a
        // management entry destroys one.)
        let cs = self.own();
        let fast = match direct {
            Some((rp, prio)) if matches!(cs.action, Action::Resume) && !cs.ready.any_above(prio) => Some((rp, prio)),
            _ => None,
        };
        let Some((rp, prio)) = fast else {
            return put(slow, Some(self.lf_fast_go_on::<C>(lf, me, GoOn::Deliver { ep, r, msg })));
        };
        // `deliver`'s steps for a call, the receiver woken by a direct
        // switch (`lf_wake`, `lf_switch_to`).
        // SAFETY: as above.
        unsafe { self.get_live(r) }.state = ThreadState::Running;
        self.copy_words(me, r, msg);
        // SAFETY: the entry's start found the caller live.
        unsafe { self.get_live(me) }.state = ThreadState::BlockedOnReply { reply: rp, fault: false };
        self.own().current = None;
        lf.reply(rp).set(ReplyState::Caller(me, msg.grant));
        // SAFETY: `r` was found live above, and a shared entry frees no
        // thread (freeing is management's, which the gate excludes).
        let d = unsafe { Direct::new(r, prio) };
        self.lf_end_direct::<C>(lf, d, slow)
    }

    /// `ReplyRecv` with `reply`, which names a caller: take the caller and
    /// claim the object for the receive on `ep` in one CAS (the point of no
    /// return); `declined` (nothing changed here) if the word holds no
    /// caller or the CAS finds it changed. A caller with a stop pending is
    /// refused after the CAS, as the general update refuses it.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn lf_fast_reply_recv<const C: bool>(
        &mut self,
        lf: &LfState,
        me: Ref<Tcb>,
        reply: Ref<Reply>,
        grant_cap: bool,
        info: MessageInfo,
        ep: Ref<Endpoint>,
        recv: RecvPart,
        slow: &mut Option<ExitPlan>,
        declined: impl FnOnce(&mut Self) -> Option<ExitPlan>,
    ) -> Ended {
        let word = lf.reply(reply);
        let (raw, seen) = word.load();
        let ReplyState::Caller(caller, grant) = seen else { return put(slow, declined(self)) };
        if word.cas(raw, ReplyState::Receiver(me), lf.links::<C>(self.core)).is_err() {
            return put(slow, declined(self));
        }
        // The caller is ours now.
        self.lf_fast_counted();
        // A caller with a stop pending has abandoned its call: refused, it
        // was never there, and the object is claimed (what the general
        // update, `reply_update`, does with such a caller: the take and
        // the refusal, one look at its control word).
        if self.lf_refuse_taken::<false, C>(lf, caller) {
            let seen = ReplyState::Empty;
            return put(slow, Some(self.lf_fast_go_on::<C>(lf, me, GoOn::Answer { seen, grant_cap, info, recv })));
        }
        let core = self.core;
        let direct = match self.get(caller) {
            Some(x) => match x.state {
                ThreadState::BlockedOnReply { fault: false, .. } if x.core == core => Some(x.prio),
                _ => None,
            },
            None => None,
        };
        let fast = match direct {
            Some(p) if !self.own().ready.any_above(p) => Some(p),
            _ => None,
        };
        let Some(prio) = fast else {
            return put(slow, Some(self.lf_fast_go_on::<C>(lf, me, GoOn::Answer { seen, grant_cap, info, recv })));
        };
        // `answer`'s steps for an ordinary caller, then `receive_on`'s. The
        // caller is woken as `lf_wake` wakes it once `me` has stopped
        // running: the entry's direct switch.
        if let Some(x) = self.get(caller) {
            x.state = ThreadState::Running;
        }
        let msg = Msg { info, badge: 0, grant: grant && grant_cap, call: false, fault: false };
        self.copy_words(me, caller, msg);
        // SAFETY: the entry's start found the caller live, and a shared
        // path frees no thread.
        unsafe { self.get_live(me) }.state = ThreadState::BlockedOnRecv { ep, reply: Some(reply) };
        let cs = self.own();
        cs.current = None;
        cs.action = Action::Direct { to: caller, prio };
        if let Some(s) = (Words::<false, C> { lf }).offer(self, ep, RECEIVERS, me) {
            // A sender came: `me` runs on, and the woken caller is this
            // core's candidate.
            return put(slow, Some(self.lf_fast_go_on::<C>(lf, me, GoOn::Sender { ep, s, reply })));
        }
        // (A sender the offer refused and resumed went to the ready queue
        // with the caller, as `wake_on` queues a thread beside a direct
        // switch, and the action is `Choose`.)
        let cs = self.own();
        if !matches!(cs.action, Action::Direct { .. }) {
            return put(slow, Some(self.lf_fast_go_on::<C>(lf, me, GoOn::Finish)));
        }
        cs.action = Action::Resume;
        // SAFETY: `caller` was found live above, and a shared entry frees no
        // thread.
        let d = unsafe { Direct::new(caller, prio) };
        self.lf_end_direct::<C>(lf, d, slow)
    }

    /// The fast path's end in a direct switch to `d` (what
    /// [`Ctx::lf_finish`] does in that case): `d` returned, for the entry to
    /// end in ([`Ctx::finish_direct`]), once the published priority is
    /// raised.
    ///
    /// A raise of the published priority is made before the switch, so that
    /// the plan goes straight into the entry's result: the thread's priority
    /// is known, and nothing the switch writes is read by another core
    /// together with the priority (`lf_wake` reads only the priority). A
    /// lowering follows the switch, through `lf_publish`, and that plan goes
    /// into `slow`. The raise skips `lf_publish`'s debug check; the
    /// invariant checker's `lf-priority` still compares the two.
    #[inline(always)]
    fn lf_end_direct<const C: bool>(&mut self, lf: &LfState, d: Direct, slow: &mut Option<ExitPlan>) -> Ended {
        if self.lf_own().raise_prio(published(d.prio())) {
            return Some(d);
        }
        put(slow, Some(self.lf_end_direct_lowered::<C>(lf, d)))
    }

    /// [`Ctx::lf_end_direct`] where the published priority goes down (out
    /// of line: rare).
    #[cold]
    #[inline(never)]
    fn lf_end_direct_lowered<const C: bool>(&mut self, lf: &LfState, d: Direct) -> ExitPlan {
        let plan = self.finish_direct(d);
        self.lf_publish::<C>(lf, plan)
    }

    /// A fast-path call that is not its case after the take: the rest in
    /// the one executor, as the shared path runs it after the same take,
    /// and the entry's general end (out of line: rare).
    #[cold]
    #[inline(never)]
    fn lf_fast_go_on<const C: bool>(&mut self, lf: &LfState, me: Ref<Tcb>, go: GoOn) -> ExitPlan {
        let e = &Words::<false, C> { lf };
        let out = match go {
            GoOn::Send { ep, msg } => self.send(e, me, ep, msg, true),
            GoOn::Deliver { ep, r, msg } => self.deliver(e, me, ep, r, msg),
            GoOn::Answer { seen, grant_cap, info, recv } => {
                let claimed = self.answer(e, me, seen, grant_cap, info, true);
                self.receive(e, me, recv, claimed)
            }
            GoOn::Sender { ep, s, reply } => {
                self.unprepare_block(e, me);
                self.take_message(e, me, ep, s, Some(reply))
            }
            GoOn::Finish => return self.lf_finish::<C>(lf),
        };
        self.complete::<true>(me, out);
        self.lf_finish::<C>(lf)
    }

    /// The entry's start on the fast path: counted as a system call run on
    /// the shared path.
    #[inline(always)]
    fn lf_fast_counted(&mut self) {
        let cell = self.own_cell();
        bump(&cell.syscalls);
        bump(&cell.fastpath);
    }
}

/// The fast `ReplyRecv`'s decoding scope: the shared path's
/// ([`LfState`]'s), less its look at a reply object claimed by a stopping
/// receiver: the fast path goes on only where the reply object's word holds
/// a caller, never a receiver's claim, and otherwise declines to the shared
/// path, which decodes the call again with that look.
struct FastScope<'a>(&'a LfState);

impl Scope for FastScope<'_> {
    const WHOLE: bool = false;

    #[inline(always)]
    fn marked(&self, ep: Ref<Endpoint>) -> bool {
        self.0.marked(ep)
    }

    #[inline(always)]
    fn stopping(&self, t: Ref<Tcb>) -> bool {
        self.0.stopping(t)
    }
}

/// How a shared path's `Call` or `ReplyRecv` ended (see
/// [`Ctx::lf_fastpath`]): `Some` in a direct switch to this thread (the
/// published priority raised already, [`Ctx::lf_end_direct`]), which the
/// entry ends in by [`Ctx::finish_direct`], made by its caller straight
/// into the entry's result (a plan made here would be copied out); `None`
/// otherwise, its plan written in the slot the caller gave, or the slot
/// left empty if declined (nothing changed: a management entry runs it).
/// Sixteen bytes: returned in two registers.
pub(super) type Ended = Option<Direct>;

/// Put `plan`, if any, into the slot `slow`: how the call ended.
#[inline(always)]
pub(super) fn put(slow: &mut Option<ExitPlan>, plan: Option<ExitPlan>) -> Ended {
    *slow = plan;
    None
}

/// Where a fast-path call goes on in the one executor once its take found
/// it is not the fast path's case (see [`Ctx::lf_fast_go_on`]).
#[derive(Clone, Copy)]
enum GoOn {
    /// `Call` took no receiver: `send`, which looks again and waits.
    Send { ep: Ref<Endpoint>, msg: Msg },
    /// `Call` took receiver `r`: `deliver`.
    Deliver { ep: Ref<Endpoint>, r: Ref<Tcb>, msg: Msg },
    /// `ReplyRecv` took `seen` out of its reply object (`Empty`: a refused
    /// caller) and claimed it: `answer`, then `receive`.
    Answer { seen: ReplyState, grant_cap: bool, info: MessageInfo, recv: RecvPart },
    /// `ReplyRecv`'s receive took sender `s`: `me` runs on and takes its
    /// message.
    Sender { ep: Ref<Endpoint>, s: Ref<Tcb>, reply: Ref<Reply> },
    /// Only the entry's end is left: the general one.
    Finish,
}
