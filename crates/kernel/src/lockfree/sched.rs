//! Scheduling on the shared paths: cross-core wake-ups through inboxes, and
//! the published priority that decides whether they interrupt.
//!
//! Under `lockfree` a core's scheduler state (current thread, ready queues)
//! is its own: shared paths of other cores never touch it. A thread woken
//! for another core is pushed on that core's [`granule_sync::lockfree::Inbox`]
//! (one CAS), and the core moves its inbox into its ready queues at the
//! start of every entry (one load when empty). Management entries, which
//! may touch every core's state, first drain every inbox (`entry.rs`);
//! looks (introspection, the invariant checker) leave them.
//!
//! **Whether to interrupt.** `bkl` interrupts the target core if it is
//! idle or the woken thread outranks its current thread, reading that
//! core's state under the lock. Here each core publishes the priority it
//! runs at (`LfCore::prio`, `0` = idle) when an entry ends, and a waker
//! interrupts if the woken thread's priority is above the published one.
//! The published value can be stale, in two directions:
//!
//! * too low (the core has since switched to a higher priority): the waker
//!   interrupts needlessly; the core re-chooses and keeps its thread.
//! * too high (the core is switching to a lower priority, or to idle): the
//!   waker would not interrupt, and the woken thread could wait in the
//!   inbox while a lower-priority thread — or nothing — runs. So a core
//!   *lowering* its published priority does it Dekker-style: store the new
//!   priority, `fence(SeqCst)`, look at its inbox; the waker pushes,
//!   `fence(SeqCst)`, reads the priority. The two fences are ordered one
//!   way or the other, so either the waker sees the lowered priority (and
//!   interrupts), or the core sees the pushed thread (and drains and
//!   re-chooses before leaving) — the handshake is model-checked in
//!   granule-sync's `tests/loom_lockfree.rs` (loom checks `SeqCst` fences,
//!   not `SeqCst` accesses). The fence is a locked `or` to the stack on
//!   x86-64 (what rustc emits for it): the one extra barrier of an entry
//!   that lowers the priority, and of a cross-core wake-up. Raising or
//!   keeping it is a plain store (or none).
//!
//! **No pending bit.** A wake-up sets none of the core's IPI bits: the
//! inbox itself is what its entries test (one load when empty), as
//! Synthesis's dispatcher tests a pending flag. `Kernel::pending_ipi`
//! reports a non-empty inbox as pending; a management entry that drains
//! another core's inbox sets that core's `RESCHEDULE` bit for it.

use core::sync::atomic::{fence, Ordering};

use crate::exit::ExitPlan;
use crate::object::{Ref, Tcb};
use crate::sched::Action;
use crate::state::Ctx;

use super::shared::{published, LfState, IDLE};

impl Ctx<'_, LfState> {
    /// `t` (ours: runnable, in no queue) is woken. On this core (or in a
    /// management entry, which owns every core) this is the general
    /// `wake`; for another core, a push on its inbox, and an IPI if `t`
    /// outranks what that core publishes it runs (no pending bit: the
    /// inbox is the flag its entries test). `t` is not ours after. `core`
    /// and `prio` are `t`'s home core and priority, which the caller read
    /// from its TCB as it made `t` runnable.
    #[inline(always)]
    pub(crate) fn lf_wake<const X: bool, const C: bool>(&mut self, lf: &LfState, t: Ref<Tcb>, core: usize, prio: u8) {
        if core == self.core && !X {
            // The general `wake`'s common case: a switch candidate, and a
            // direct switch if the caller has stopped running already.
            if self.own().action == Action::Resume {
                let action = self.lf_switch_to(t, prio);
                self.own().action = action;
                return;
            }
        }
        if X || core == self.core {
            return self.wake_on(t, core, prio);
        }
        // The inbox is the core's pending flag: every entry drains it and
        // re-chooses if it took anything, so no IPI bit is set.
        let cell = &lf.cores[core];
        cell.inbox.push(lf.wake_links::<C>(self.core), t.index());
        fence(Ordering::SeqCst);
        if published(prio) > cell.prio.load(Ordering::Relaxed) {
            self.plan_ipi(core);
        }
    }

    /// How the entry ends for `t` (of priority `prio`), woken on this core
    /// by a shared path (ours, runnable, in no queue): a direct switch
    /// (`Action::Direct`, no re-check at the end) if this core's current
    /// thread has stopped running — it was prepared as blocked and
    /// published —, no core is held and nothing ready outranks `t`, which
    /// is what `finish_entry` would establish; else `SwitchTo`, decided at
    /// the end. The executor's `running` keeps it right if the current
    /// thread stops or goes on running later in the entry
    /// (`lockfree/ipc.rs`).
    #[inline(always)]
    pub(crate) fn lf_switch_to(&mut self, t: Ref<Tcb>, prio: u8) -> Action {
        let cs = self.own();
        if cs.current.is_none() && cs.held == 0 && !cs.ready.any_above(prio) {
            Action::Direct { to: t, prio }
        } else {
            Action::SwitchTo(t)
        }
    }

    /// Move this core's inbox into its ready queues (at the back, as the
    /// general `wake` queues a thread woken remotely) and, if there was
    /// anything, re-choose at the end of the entry. Returns whether there was.
    ///
    /// The common case of an idle core woken for one thread (a signal, a
    /// resume, a cross-core call) skips the queue: the entry ends in a
    /// direct switch to it, which is what re-choosing would pick (nothing
    /// runs, nothing ready outranks it — an idle core with no core held has
    /// nothing ready —, nothing asked to re-choose)
    /// once its stop word shows no request; with one, it is queued and
    /// met by the choice as before.
    #[inline(always)]
    pub(crate) fn lf_drain<const C: bool>(&mut self, lf: &LfState) -> bool {
        let mut drained = self.lf_own().inbox.take_all(lf.wake_links::<C>(self.core));
        let Some(first) = drained.next() else { return false };
        let second = drained.next();
        let first = self.ref_at::<Tcb>(first);
        if second.is_none() {
            if let Some(t) = first {
                if self.lf_direct_from_inbox(lf, t) {
                    return true;
                }
            }
        }
        if let Some(t) = first {
            self.enqueue(t, false);
        }
        for i in second.into_iter().chain(drained) {
            if let Some(t) = self.ref_at::<Tcb>(i) {
                self.enqueue(t, false);
            }
        }
        self.request_reschedule();
        true
    }

    /// See [`Ctx::lf_drain`]: `t`, the one thread drained, becomes this
    /// entry's direct switch if the core is idle and nothing else is to be
    /// chosen (`true`).
    #[inline(always)]
    fn lf_direct_from_inbox(&mut self, lf: &LfState, t: Ref<Tcb>) -> bool {
        let cs = self.own();
        if cs.current.is_some() || cs.action != Action::Resume || lf.ctl_of(t).pending() {
            return false;
        }
        let Some(prio) = self.get(t).map(|x| x.prio) else { return false };
        match self.lf_switch_to(t, prio) {
            direct @ Action::Direct { .. } => {
                self.own().action = direct;
                true
            }
            _ => false,
        }
    }

    /// End a shared entry: the general `finish_entry`, then publish this
    /// core's priority (see the module documentation); a wake-up that raced
    /// with lowering it is drained and the choice made again.
    #[inline(always)]
    pub(crate) fn lf_finish<const C: bool>(&mut self, lf: &LfState) -> ExitPlan {
        let plan = self.finish_entry();
        self.lf_publish::<C>(lf, plan)
    }

    /// The end of a shared entry after the general end made `plan`:
    /// publish this core's priority (see [`Ctx::lf_finish`]).
    #[inline(always)]
    pub(crate) fn lf_publish<const C: bool>(&mut self, lf: &LfState, mut plan: ExitPlan) -> ExitPlan {
        let cell = self.lf_own();
        loop {
            // The thread to run is live (each choice found it so, and a
            // shared path frees no thread), and the entry's end noted its
            // priority as this core's.
            let p = match plan.run {
                Some(_) => published(self.own().current_prio),
                None => IDLE,
            };
            debug_assert_eq!(
                plan.run.map(|t| self.thread_mut(t).map_or(IDLE, |x| published(x.prio))),
                plan.run.map(|_| p),
                "a shared entry publishes its thread's priority"
            );
            if cell.raise_prio(p) {
                return plan;
            }
            cell.prio.store(p, Ordering::Relaxed);
            fence(Ordering::SeqCst);
            if cell.inbox.is_empty() || !self.lf_drain::<C>(lf) {
                return plan;
            }
            self.lf_unstart(plan);
            plan = self.finish_entry();
        }
    }

    /// The end of an entry is run again: the thread the first run chose,
    /// still this core's current thread (ours), gets back the fresh start
    /// that run reported, so that the second run reports it again if it
    /// keeps the thread, and the thread keeps it otherwise. (Giving it back
    /// after the second run would write a thread that run may have stopped
    /// and published: `control.rs`.)
    #[cold]
    fn lf_unstart(&mut self, first: ExitPlan) {
        if let (Some(t), Some(_)) = (first.run, first.start) {
            if let Some(x) = self.thread_mut(t) {
                x.fresh = true;
            }
        }
    }
}
