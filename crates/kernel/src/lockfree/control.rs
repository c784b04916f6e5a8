//! Suspend and resume without a lock: Synthesis's `STOPME` protocol
//! (Massalin & Pu, seed `004` §4.2) on each thread's
//! `StopWord` (granule-sync's `stop_word.rs`: layout, protocol, loom
//! models), kept in the thread's cell beside its link (`shared.rs`).
//!
//! # Who does what
//!
//! * **Suspend** (any core, on a shared path: `TcbSuspend` decodes to
//!   `SharedOp::Control` as `decode.rs`'s `Controls` says): request the stop
//!   with one CAS, then interrupt the home core. The call returns at once,
//!   as in Synthesis. A thread of the caller's own core is shared only if
//!   the core owns it: the caller itself, met where the entry ends, or a
//!   thread in the core's ready queue, met at once
//!   (`lf_stop_queued_here`); one waiting in an object's queue is
//!   management's.
//! * **Resume** (any core): claim a stopped thread with one CAS and make it
//!   runnable on its home core (an inbox push for another core, the general
//!   `wake` for this one), or cancel a request nobody has met yet.
//! * **The owner meets the request** — whoever owns the thread when it next
//!   comes by, under the ownership rule of `crate::lockfree`:
//!   * the core about to dispatch it (`lf_may_dispatch`, the `Waits` hook at
//!     the end of every entry that chooses from the ready queue or keeps its
//!     thread; a direct switch to a thread just taken, checked at the take,
//!     is left to the interrupt the request sent);
//!   * the core it traps on (`lf_stop_trapped`, after the call is decoded,
//!     which changes nothing, and before it runs: the call is restarted on
//!     resume);
//!   * the taker that has just removed it from an endpoint, notification or
//!     reply word (`lf_refuse_taken`: it is *refused* — given nothing, its
//!     call restarted — and the taker takes again).
//!
//!   It stops the thread (state `Inactive`, out of every queue), then
//!   publishes it stopped; a cancelled request is cleared instead (a
//!   refused waiter then runs again and restarts its call, which is seL4's
//!   suspend and resume of a blocked thread).
//!
//! The general code keeps the word right in management entries (creation,
//! faults, `WriteRegisters`, migration, its own suspend and resume) through
//! the `Waits` hooks `set_inactive`, `set_home`, `cancel_stop`.
//!
//! # Why it is linearizable
//!
//! A suspend takes effect at its CAS. After it the thread starts no system
//! call (a trapped call is stopped before it runs) and receives nothing;
//! it may run in user mode until its core takes the interrupt. A call its
//! core had already checked before the CAS completes *before the suspend
//! returns*: the requester waits until that core has left the entry it was
//! in (`LockFreeOf::wait_out_of_entry`, called by the shared entry; bounded
//! by one entry). Such a call may itself touch the thread's word: a thread
//! resuming itself does nothing (it runs; the request it could see came
//! after its call was checked, and must stand). Two cores suspending each
//! other's running threads at once cannot both succeed in any sequential
//! order: after its wait, the higher
//! core's suspender finds its own thread's stop requested and withdraws its
//! request, its call restarting (`lf_withdraw_suspend`). They would also
//! wait for each other: a waiter whose target core waits too gives up, and
//! the withdrawal settles which call stands (on more than two cores, a
//! longer cycle of waiters may still let a call complete after a suspend
//! returns). As for receiving: a taker's CAS that removes it from a
//! wait word comes after the suspend's in the total order of `SeqCst`
//! read-modify-writes (both are locked instructions on x86-64), so the
//! taker's load of the word sees the request. A taker whose CAS came first
//! delivered before the suspend, which is the order the two are linearized
//! in. Introspection reports a thread with a pending request as inactive,
//! and its blocked call as abandoned (`ThreadInfo::call_abandoned`).
//!
//! The differences from seL4, which stalls the other core first, are of
//! time, not results (`docs/synthesis.md`): the thread may go on computing
//! in user mode until its home core takes the interrupt; a refused waiter
//! keeps its place in its queue until a taker reaches it (seL4 would
//! restart its call and queue it again at the back, which is where the
//! restarted call goes); and a suspended receiver keeps its reply object
//! claimed until it is reached (a receive that would claim it runs as
//! management). A caller whose stop is pending reads as gone from its
//! reply object (`ipc.rs`).
//!
//! # Cost
//!
//! Suspend and resume: one CAS each (and the interrupt for a new request
//! of another core's thread, and the inbox push for a claimed thread of
//! another core; a suspend of a ready thread of this core adds the stop's
//! CAS and a walk of this core's ready queue). The owner's
//! stop is one CAS; dispatching, trapping and taking a thread add one load
//! of the word each, from the line of the link the core has just used. The
//! kernel test `lockfree_suspend_and_resume_count_their_atomics` counts
//! them.

use core::sync::atomic::Ordering;

use granule_sync::lockfree::{Resumed, Rmw, Suspended};

use crate::object::thread::ThreadState;
use crate::object::{Ref, Tcb};
use crate::outcome::Outcome;
use crate::sched::Action;
use crate::state::{bump, Ctx};

use super::ipc::Words;
use super::shared::LfState;

impl Ctx<'_, LfState> {
    /// `TcbSuspend` (`resume = false`) or `TcbResume` of live thread `t` by
    /// this core's current thread, on a shared path (`X = false`) or in a
    /// management entry.
    pub(crate) fn lf_control<const X: bool, const C: bool>(
        &mut self,
        lf: &LfState,
        t: Ref<Tcb>,
        resume: bool,
    ) -> Outcome {
        let core = self.core;
        let w = lf.ctl_of(t);
        let rmw = |op| lf.count::<C>(core, op);
        if !X {
            bump(&self.lf().cores[core].controls);
        }
        if resume {
            // A caller that resumes itself is running, so the resume does
            // nothing. A request its word shows came after the call was
            // checked (`lf_stop_trapped`): it is ordered after this call
            // and must stand, not be cancelled by it.
            if self.cs(core).current == Some(t) {
                return Outcome::Done;
            }
            let claimed = w.resume(rmw);
            self.lf_run_claimed::<X, C>(lf, t, claimed);
            return Outcome::Done;
        }
        let done = w.suspend(rmw);
        let home = match done {
            Suspended::Requested { home } => {
                self.lf_interrupt_home::<C>(lf, home);
                home
            }
            _ => w.home(),
        };
        self.lists(core).own_request = done != Suspended::Already;
        // A thread of this core other than the caller: the decoder found it
        // in this core's ready queue (`Controls::Here`), and it is still
        // there (since then the entry has only drained the inbox, which
        // adds threads), so this core owns it and need not walk again.
        if home == core && self.cs(core).current != Some(t) {
            self.lf_stop_ready(t);
        }
        Outcome::Done
    }

    /// After a resume (or a withdrawn kill, `destroy.rs`) did `done` to
    /// `t`: a claimed thread is ours until it is published on its core, and
    /// runs again.
    #[inline]
    pub(crate) fn lf_run_claimed<const X: bool, const C: bool>(&mut self, lf: &LfState, t: Ref<Tcb>, done: Resumed) {
        if done != Resumed::Claimed {
            return;
        }
        let slice = self.s.config.timeslice_ticks;
        if let Some(x) = self.get(t) {
            x.state = ThreadState::Running;
            x.slice = slice;
            let (core, prio) = (x.core, x.prio);
            self.lf_wake::<X, C>(lf, t, core, prio);
        }
    }

    /// `t`, a thread of this core whose stop this entry has just requested
    /// (a suspend's or a kill's), is met at once if it waits in this core's
    /// ready queue, which the entry owns: out of the queue and stopped, as
    /// the lock regimes' suspend and deletion take it out, so that the
    /// queue keeps seL4's order for the threads that remain (single-core
    /// programs schedule alike under every regime). A thread blocked
    /// elsewhere is met by the taker that removes it; one that is stopped
    /// already stays so; the caller is met where this entry ends. Whether
    /// it is queued here is found from the queue, not from its TCB: until
    /// then another core may own it (a taker or a resume that claimed it).
    pub(crate) fn lf_stop_queued_here(&mut self, t: Ref<Tcb>) {
        if self.queued_here(t) {
            self.lf_stop_ready(t);
        }
    }

    /// `t`, in this core's ready queue, with a stop requested by this
    /// entry: out of the queue and stopped (`lf_stop_queued_here`).
    fn lf_stop_ready(&mut self, t: Ref<Tcb>) {
        let core = self.core;
        if !self.get(t).is_some_and(|x| x.in_ready && x.core == core) {
            return;
        }
        self.dequeue(t);
        if self.lf_may_dispatch(t) {
            // Not stopped after all: a resume of another core cancelled the
            // request (a thread holding stalled cores, the one other case,
            // is excluded by the decoders). Suspended and resumed, it goes
            // to the back of its level, as seL4's resume queues it.
            self.enqueue(t, false);
        }
    }

    /// A new stop request (a suspend's or a kill's) stands for a thread of
    /// core `home`: interrupt it, so that its dispatcher meets the request.
    /// No IPI bit: any entry of that core meets the request where it ends
    /// (`finish_entry` checks the thread it is about to run); the core's
    /// `stop_ipi` flag records the owed interrupt. It is set by a `swap`,
    /// not a plain store: as a read-modify-write it continues the release
    /// sequence of an earlier requester's set, so the owner's acquiring
    /// take synchronises with every requester whose flag it clears (a plain
    /// store would end the earlier one's sequence, and that request could
    /// stay unseen by the entry that took its flag).
    pub(crate) fn lf_interrupt_home<const C: bool>(&mut self, lf: &LfState, home: usize) {
        // A thread of this core (a suspend's or a destroy's) is met by this
        // entry or a taker; a stale home would only cost a needless
        // interrupt.
        if home != self.core && home < self.s.config.cores {
            lf.count::<C>(self.core, Rmw::Xchg);
            lf.cores[home].stop_ipi.swap(true, Ordering::AcqRel);
            self.plan_ipi(home);
        }
    }

    /// `t`, this core's current thread, has just suspended `s` of a lower
    /// core while a suspend of `t` itself is pending: the two cores were
    /// suspending each other's threads at once, and no sequential order
    /// lets both calls complete. The higher core's call yields: its request
    /// is withdrawn (a resume: cancelled, or the stopped thread claimed and
    /// run again) and the call restarts, so the pending suspend stops `t`
    /// at the end of this entry as if it had come first. Only a request of
    /// the suspend's own is withdrawn (`CoreLists::own_request`): one that
    /// merged into another core's standing request has nothing to take
    /// back, and one that merged into this request after it (`MERGED` on
    /// the word) keeps it standing: the withdrawal then changes nothing.
    #[cold]
    pub(crate) fn lf_withdraw_suspend<const C: bool>(&mut self, lf: &LfState, t: Ref<Tcb>, s: Ref<Tcb>) {
        let core = self.core;
        let done = lf.ctl_of(s).withdraw(|op| lf.count::<C>(core, op));
        self.lf_run_claimed::<false, C>(lf, s, done);
        self.ipc(t).restart = 1;
    }

    /// Whether this core may run `t` (ours: the thread chosen at the end of
    /// an entry, out of the ready queue): if a suspend is pending, it is
    /// stopped here instead. A stall owner is left to its next trap, which
    /// is a management entry that releases its holds.
    #[inline(always)]
    pub(crate) fn lf_may_dispatch(&mut self, t: Ref<Tcb>) -> bool {
        let lf = self.lf();
        if !lf.ctl_of(t).pending() {
            return true;
        }
        self.lf_may_dispatch_slow(lf, t)
    }

    #[cold]
    fn lf_may_dispatch_slow(&mut self, lf: &LfState, t: Ref<Tcb>) -> bool {
        let Some(x) = self.get(t) else { return true };
        if !x.holds.is_empty() || x.state != ThreadState::Running {
            return true;
        }
        let core = self.core;
        let was_current = self.cs(core).current == Some(t);
        let set = move |ctx: &mut Self, state: ThreadState| {
            if let Some(x) = ctx.get(t) {
                x.state = state;
            }
            if was_current {
                ctx.cs(core).current = (state == ThreadState::Running).then_some(t);
            }
        };
        lf.ctl_of(t).meet(
            self,
            |ctx| set(ctx, ThreadState::Inactive),
            |ctx| set(ctx, ThreadState::Running),
            |op| lf.count::<true>(core, op),
        )
    }

    /// Before the system call of this core's current thread `t` is decoded:
    /// if a suspend is pending, stop `t` with its call restarted on resume
    /// (`true`: do not run the call).
    #[inline(always)]
    pub(crate) fn lf_stop_trapped<const C: bool>(&mut self, lf: &LfState, t: Ref<Tcb>) -> bool {
        if !lf.ctl_of(t).pending() {
            return false;
        }
        self.lf_stop_trapped_slow::<C>(lf, t)
    }

    #[cold]
    fn lf_stop_trapped_slow<const C: bool>(&mut self, lf: &LfState, t: Ref<Tcb>) -> bool {
        let core = self.core;
        let action = self.cs(core).action;
        !lf.ctl_of(t).meet(
            self,
            |ctx| {
                // A stall owner gives its cores back (it traps only into
                // management entries, which may touch them).
                if ctx.get(t).is_some_and(|x| !x.holds.is_empty()) {
                    ctx.release_holds(t);
                }
                ctx.ipc(t).restart = 1;
                if let Some(x) = ctx.get(t) {
                    x.state = ThreadState::Inactive;
                }
                ctx.cs(core).current = None;
                ctx.cs(core).action = Action::Choose { yielded: false };
            },
            |ctx| {
                ctx.ipc(t).restart = 0;
                if let Some(x) = ctx.get(t) {
                    x.state = ThreadState::Running;
                }
                ctx.cs(core).current = Some(t);
                ctx.cs(core).action = action;
            },
            |op| lf.count::<C>(core, op),
        )
    }

    /// `t` was just taken out of an endpoint, notification or reply word by
    /// this entry (ours, still in its blocked state): if a suspend is
    /// pending it is refused — its call restarted, and it stopped, or run
    /// again if a resume cancelled the suspend — and `true` tells the taker
    /// to take again.
    #[inline(always)]
    pub(crate) fn lf_refuse_taken<const X: bool, const C: bool>(&mut self, lf: &LfState, t: Ref<Tcb>) -> bool {
        if !lf.ctl_of(t).pending() {
            return false;
        }
        self.lf_refuse_slow::<X, C>(lf, t);
        true
    }

    #[cold]
    fn lf_refuse_slow<const X: bool, const C: bool>(&mut self, lf: &LfState, t: Ref<Tcb>) {
        // The call is abandoned: a receiver's claim on its reply object goes.
        self.lf_release_receive_claim(lf, t);
        self.ipc(t).restart = 1;
        let core = self.core;
        let stop = move |ctx: &mut Self| {
            if let Some(x) = ctx.get(t) {
                x.state = ThreadState::Inactive;
            }
        };
        if lf.ctl_of(t).meet(self, stop, |_| {}, |op| lf.count::<C>(core, op)) {
            self.resume(&Words::<X, C> { lf }, t);
        }
    }

    /// A management entry resumes `t`, which is not inactive: cancel a
    /// pending suspend (`true` if there was one), as `lf_control` does.
    pub(crate) fn lf_cancel_stop(&mut self, t: Ref<Tcb>) -> bool {
        let core = self.core;
        let lf = self.lf();
        lf.ctl_of(t).resume(|op| lf.count::<true>(core, op)) == Resumed::Cancelled
    }
}
