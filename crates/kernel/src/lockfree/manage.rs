//! The general kernel code's view of the lock-free words, for management
//! entries (which exclude every shared path, so the words can be walked and
//! unlinked sequentially).
//!
//! Each function here is called from one marked place in the general code
//! (`lockfree:` comments in `sched.rs`, `object/*.rs`) and does nothing
//! (returns `None`/`false`) unless the kernel runs under `lockfree`, where
//! the general code's own queues and reply fields stay empty.

use crate::abi::Word;
use crate::object::thread::ThreadState;
use crate::object::{Endpoint, Notification, Ref, Reply, Tcb};
use crate::state::Ctx;

use super::shared::{LfState, ReplyState};

/// A reply object's caller and receiver, as the general code keeps them.
pub(crate) type CallerAndReceiver = (Option<Ref<Tcb>>, Option<Ref<Tcb>>);
use super::SENDERS;

impl Ctx<'_> {
    /// `detach`'s blocked cases: take `t` out of the endpoint, notification
    /// or reply object it waits in, and mark its call for restart. `None` if
    /// not under `lockfree` or `t` is not blocked (the general code goes on).
    pub(crate) fn lf_detach(&mut self, t: Ref<Tcb>) -> Option<bool> {
        let lf = self.lf()?;
        let state = self.get(t)?.state;
        let links = lf.links::<true>(self.core);
        match state {
            ThreadState::BlockedOnSend { ep, .. } => {
                lf.eps[ep.index() as usize].remove(links, t.index());
                self.lf_refresh_mark(lf, ep);
            }
            ThreadState::BlockedOnRecv { ep, reply } => {
                lf.eps[ep.index() as usize].remove(links, t.index());
                if let Some(r) = reply {
                    let word = &lf.replies[r.index() as usize];
                    if word.load().1 == ReplyState::Receiver(t) {
                        word.set(ReplyState::Empty);
                    }
                }
            }
            ThreadState::BlockedOnReply { reply } => {
                let word = &lf.replies[reply.index() as usize];
                if matches!(word.load().1, ReplyState::Caller(c, _) if c == t) {
                    word.set(ReplyState::Empty);
                }
            }
            ThreadState::BlockedOnNotification { ntfn } => {
                lf.ntfns[ntfn.index() as usize].remove(links, t.index());
            }
            ThreadState::Running | ThreadState::Inactive | ThreadState::Zombie => return None,
        }
        self.ipc(t.index()).restart = 1;
        Some(true)
    }

    /// Recompute `ep`'s mark: set iff a waiting sender transfers
    /// capabilities (such a sender may only be received by a management
    /// entry). Management only.
    pub(crate) fn lf_refresh_mark(&mut self, lf: &LfState, ep: Ref<Endpoint>) {
        let queue = &lf.eps[ep.index() as usize];
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

    /// `ep_head` under `lockfree`: the first waiter of `ep` (the oldest).
    pub(crate) fn lf_ep_head(&mut self, ep: Ref<Endpoint>) -> Option<Option<Ref<Tcb>>> {
        let lf = self.lf()?;
        let top = lf.eps[ep.index() as usize].snapshot().first;
        Some(top.and_then(|i| self.ref_at::<Tcb>(i)))
    }

    /// A notification is destroyed: its waiters restart (`cancel_all_waits`)
    /// and its word is cleared for the slot's next object.
    pub(crate) fn lf_cancel_waits(&mut self, n: Ref<Notification>) {
        let Some(lf) = self.lf() else { return };
        let word = &lf.ntfns[n.index() as usize];
        while let Some(t) = word.state().waiter.and_then(|i| self.ref_at::<Tcb>(i)) {
            self.detach(t);
            self.restart_thread(t);
        }
        word.reset();
    }

    /// A reply object is destroyed: its caller and receiver (the general
    /// `rep.caller.take(), rep.receiver.take()`), the word cleared.
    pub(crate) fn lf_take_reply(&mut self, r: Ref<Reply>) -> Option<CallerAndReceiver> {
        let lf = self.lf()?;
        let word = &lf.replies[r.index() as usize];
        let st = word.load().1;
        word.set(ReplyState::Empty);
        Some(match st {
            ReplyState::Empty => (None, None),
            ReplyState::Caller(c, _) => (Some(c), None),
            ReplyState::Receiver(t) => (None, Some(t)),
        })
    }

    /// Whether threads wait on `n` in its lock-free word (binding requires
    /// none).
    pub(crate) fn lf_has_waiters(&mut self, n: Ref<Notification>) -> bool {
        self.lf().is_some_and(|lf| lf.ntfns[n.index() as usize].state().waiter.is_some())
    }

    /// `kernel_signal` under `lockfree` (interrupts: management entries);
    /// `false` if not under `lockfree`.
    pub(crate) fn lf_kernel_signal(&mut self, n: Ref<Notification>, badge: Word) -> bool {
        let Some(lf) = self.lf() else { return false };
        if self.live(n) {
            self.lf_signal::<true, true>(lf, n, badge);
        }
        true
    }
}
