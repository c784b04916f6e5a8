//! The general kernel code's view of the lock-free words, for management
//! entries (which exclude every shared path, so the words can be walked and
//! unlinked sequentially).
//!
//! This is `lockfree`'s [`Waits`]: the general code asks it at the few
//! places where blocked threads wait in the CAS words instead of the
//! objects' own queues and reply fields (which stay empty under
//! `lockfree`).

// `Waits` is public because `Regime` names it, and sealed because its
// methods name kernel internals: see `crate::waits`.
#![allow(private_interfaces, private_bounds)]

use core::sync::atomic::Ordering::Relaxed;

use crate::abi::Word;
use crate::args::FaultKind;
use crate::hold::Never;
use crate::introspect::CoreStats;
use crate::object::thread::ThreadState;
use crate::object::{Cap, Endpoint, Notification, Ref, Reply, SlotAddr, Tcb};
use crate::outcome::Outcome;
use crate::state::Ctx;

use super::ipc::Words;
use super::shared::{LfCore, LfState, ReplyState};

use super::SENDERS;
use crate::state::WaitsHere;
use crate::violation::InvariantViolation;
use crate::waits::{CallerAndReceiver, Waits};

impl WaitsHere for LfState {
    type Here<'k> = &'k LfCore;

    #[inline(always)]
    unsafe fn here(&self, core: usize) -> &LfCore {
        debug_assert!(core < self.cores.len());
        // SAFETY: the caller's contract: `core` is below the configuration's
        // cores, which is the length of `cores` (`LfState::new`).
        unsafe { self.cores.get_unchecked(core) }
    }
}

impl Waits for LfState {
    // The shared paths allocate frames into slots, free them and kill
    // destroyed threads' slots while other cores look them up.
    const SHARED_CAP_WRITES: bool = true;

    #[inline(always)]
    fn asks(&self, core: usize) -> bool {
        LfState::asks(self, core)
    }

    /// Take `t` out of the endpoint, notification or reply word it waits
    /// in, and mark its call for restart; `None` if `t` is not blocked.
    fn detach(ctx: &mut Ctx<'_, Self>, t: Ref<Tcb>) -> Option<bool> {
        ctx.lf_detach(t)
    }

    /// The first waiter of `ep` (the oldest).
    fn ep_head(ctx: &mut Ctx<'_, Self>, ep: Ref<Endpoint>) -> Option<Option<Ref<Tcb>>> {
        let top = ctx.lf().ep(ep).snapshot().first;
        Some(top.and_then(|i| ctx.ref_at::<Tcb>(i)))
    }

    /// The waiters restart (`cancel_all_waits`) and the word is cleared for
    /// the slot's next object.
    fn cancel_waits(ctx: &mut Ctx<'_, Self>, n: Ref<Notification>) {
        let word = &ctx.lf().ntfn(n);
        while let Some(t) = word.state().waiter.and_then(|i| ctx.ref_at::<Tcb>(i)) {
            ctx.detach(t);
            ctx.restart_thread(t);
        }
        word.reset();
    }

    /// The caller and receiver (the general `rep.caller.take(),
    /// rep.receiver.take()`), the word cleared.
    fn take_reply(ctx: &mut Ctx<'_, Self>, r: Ref<Reply>) -> Option<CallerAndReceiver> {
        let word = &ctx.lf().reply(r);
        let st = word.load().1;
        word.set(ReplyState::Empty);
        Some(match st {
            ReplyState::Empty => (None, None),
            ReplyState::Caller(c, _) => (Some(c), None),
            ReplyState::Receiver(t) => (None, Some(t)),
        })
    }

    /// Whether threads wait in `n`'s word (binding requires none).
    fn has_waiters(ctx: &mut Ctx<'_, Self>, n: Ref<Notification>) -> bool {
        ctx.lf().ntfn(n).state().waiter.is_some()
    }

    /// Signal `n`'s word (interrupts: management entries).
    fn kernel_signal(ctx: &mut Ctx<'_, Self>, n: Ref<Notification>, badge: Word) -> bool {
        if ctx.live(n) {
            let lf = ctx.lf();
            ctx.signal(&super::ipc::Words::<true, true> { lf }, n, badge);
        }
        true
    }

    /// Only system calls change the derivation tree (invocations,
    /// capability transfer): frames allocated on shared paths join it
    /// first (`detached.rs`). A pending suspend stops the caller before
    /// its call runs.
    fn syscall_starts(ctx: &mut Ctx<'_, Self>, caller: Ref<Tcb>) -> bool {
        ctx.adopt_detached();
        let lf = ctx.lf();
        !ctx.lf_stop_trapped::<true>(lf, caller)
    }

    fn may_dispatch(ctx: &mut Ctx<'_, Self>, t: Ref<Tcb>) -> bool {
        ctx.lf_may_dispatch(t)
    }

    fn set_inactive(ctx: &mut Ctx<'_, Self>, t: Ref<Tcb>, inactive: bool) {
        // A stop may come from a shared path (a fault nobody can answer),
        // where requesters use the word too: publish it by CAS.
        if inactive {
            ctx.lf().ctl_of(t).stop(|_| {});
        } else {
            ctx.lf().ctl_of(t).set_inactive(false);
        }
    }

    fn binding_changed(ctx: &mut Ctx<'_, Self>, t: Ref<Tcb>) {
        ctx.lf_binding_changed(t);
    }

    fn created(ctx: &mut Ctx<'_, Self>, t: Ref<Tcb>, core: usize) {
        // A killed thread's word keeps its kill until the object is reused.
        ctx.lf().ctl_of(t).reset(core);
    }

    fn set_home(ctx: &mut Ctx<'_, Self>, t: Ref<Tcb>, core: usize) {
        ctx.lf().ctl_of(t).set_home(core);
    }

    fn cancel_stop(ctx: &mut Ctx<'_, Self>, t: Ref<Tcb>) -> bool {
        ctx.lf_cancel_stop(t)
    }

    fn stop_requested(ctx: &mut Ctx<'_, Self>, t: Ref<Tcb>) -> Option<bool> {
        ctx.lf().ctl_of(t).requested()
    }

    fn fault_call(ctx: &mut Ctx<'_, Self>, caller: Ref<Tcb>, kind: FaultKind) -> Option<Outcome> {
        let lf = ctx.lf();
        let run = |ctx: &mut Ctx<'_, Self>, op| Ok::<_, Never>(ctx.execute(&Words::<true, true> { lf }, caller, op));
        match ctx.fault_call_with(caller, kind, run) {
            Ok(out) => Some(out),
            Err(never) => match never {},
        }
    }

    fn destroying(ctx: &mut Ctx<'_, Self>, t: Ref<Tcb>) -> bool {
        ctx.doomed(t)
    }

    fn dead_cap(ctx: &mut Ctx<'_, Self>, a: SlotAddr) -> Cap {
        ctx.doomed_cap(a)
    }

    fn stats(&self, core: usize, stats: &mut CoreStats) {
        let Some(c) = self.cores.get(core) else { return };
        stats.shared_pages = c.pages.load(Relaxed);
        stats.shared_destroys = c.destroys.load(Relaxed);
        stats.bound_wakes = c.bound_wakes.load(Relaxed);
        stats.shared_controls = c.controls.load(Relaxed);
    }

    fn check(ctx: &mut Ctx<'_, Self>, places: &mut [u32]) -> Result<(), InvariantViolation> {
        ctx.lf_check(places)
    }
}

impl Ctx<'_, LfState> {
    /// `detach`'s blocked cases: take `t` out of the endpoint, notification
    /// or reply object it waits in, and mark its call for restart. `None` if
    /// `t` is not blocked (the general code goes on).
    fn lf_detach(&mut self, t: Ref<Tcb>) -> Option<bool> {
        let lf = self.lf();
        let state = self.get(t)?.state;
        let links = lf.links::<true>(self.core);
        match state {
            ThreadState::BlockedOnSend { ep, .. } => {
                lf.ep(ep).remove(links, t.index());
                self.lf_refresh_mark(lf, ep);
            }
            ThreadState::BlockedOnRecv { ep, .. } => {
                lf.ep(ep).remove(links, t.index());
                lf.ctl_of(t).clear_wait_bits(|op| lf.count::<true>(self.core, op));
                self.lf_release_receive_claim(lf, t);
            }
            ThreadState::BlockedOnReply { reply, .. } => {
                let word = &lf.reply(reply);
                if matches!(word.load().1, ReplyState::Caller(c, _) if c == t) {
                    word.set(ReplyState::Empty);
                }
            }
            ThreadState::BlockedOnNotification { ntfn } => {
                lf.ntfn(ntfn).remove(links, t.index());
            }
            ThreadState::Running | ThreadState::Inactive | ThreadState::Zombie => return None,
        }
        self.ipc(t).restart = 1;
        Some(true)
    }

    /// Recompute `ep`'s mark: set iff a waiting sender transfers
    /// capabilities (such a sender may only be received by a management
    /// entry). Management only.
    pub(crate) fn lf_refresh_mark(&mut self, lf: &LfState, ep: Ref<Endpoint>) {
        let queue = &lf.ep(ep);
        let top = queue.snapshot();
        let mut marked = false;
        if top.waiting == Some(SENDERS) {
            let limit = self.s.config.max_threads + 1;
            for i in queue.iter(lf.links::<true>(self.core), limit) {
                if let Some((_, x)) = self.at::<Tcb>(i) {
                    if let ThreadState::BlockedOnSend { grant: true, info, .. } = x.state {
                        marked |= info.extra_caps() > 0;
                    }
                }
            }
        }
        if marked != top.marked {
            queue.set_mark(lf.links::<true>(self.core), marked);
        }
    }
}
