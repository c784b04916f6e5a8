//! Endpoints: synchronous rendezvous. An endpoint is idle, or has a queue of
//! blocked senders, or a queue of blocked receivers (never both). The queues
//! are intrusive FIFO lists through the TCBs' `ep_next`/`ep_prev` links, which
//! notification wait queues share (a thread waits in at most one queue).

use crate::object::thread::ThreadState;
use crate::object::{Ref, Tcb, NIL};
use crate::state::Ctx;
use crate::waits::Waits;

/// What an endpoint's queue holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EpState {
    Idle,
    Send,
    Recv,
}

/// A FIFO of threads (slab indices), linked through `ep_next`/`ep_prev`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Queue {
    pub head: u32,
    pub tail: u32,
}

impl Queue {
    pub const EMPTY: Queue = Queue { head: NIL, tail: NIL };

    pub fn is_empty(&self) -> bool {
        self.head == NIL
    }

    /// The queue with `x` (thread `t`) appended, and the old tail, whose
    /// `ep_next` must now name `t` (unless it is `NIL`).
    #[inline(always)]
    fn append(self, x: &mut Tcb, t: u32) -> (Queue, u32) {
        x.ep_next = NIL;
        x.ep_prev = self.tail;
        let head = if self.tail == NIL { t } else { self.head };
        (Queue { head, tail: t }, self.tail)
    }

    /// The queue without member `x`, and `x`'s old neighbours, which must
    /// now name each other (where they are not `NIL`).
    #[inline(always)]
    fn remove(mut self, x: &mut Tcb) -> (Queue, u32, u32) {
        let (prev, next) = (x.ep_prev, x.ep_next);
        x.ep_next = NIL;
        x.ep_prev = NIL;
        if prev == NIL {
            self.head = next;
        }
        if next == NIL {
            self.tail = prev;
        }
        (self, prev, next)
    }
}

/// A synchronous IPC endpoint.
#[derive(Debug)]
pub(crate) struct Endpoint {
    pub state: EpState,
    pub queue: Queue,
}

impl Endpoint {
    pub fn new() -> Self {
        Self { state: EpState::Idle, queue: Queue::EMPTY }
    }
}

impl<W: Waits> Ctx<'_, W> {
    /// Append thread `t` to `q`.
    #[inline]
    pub(crate) fn q_append(&mut self, q: Queue, t: u32) -> Queue {
        let (q, tail) = q.append(self.tcb_at(t), t);
        self.link_after(tail, t);
        q
    }

    /// Remove thread `t` (a member) from `q`.
    #[inline]
    pub(crate) fn q_remove(&mut self, q: Queue, t: u32) -> Queue {
        let (q, prev, next) = q.remove(self.tcb_at(t));
        self.link_neighbours(prev, next);
        q
    }

    /// `t`, just appended after `tail`, becomes `tail`'s successor.
    #[inline(always)]
    fn link_after(&mut self, tail: u32, t: u32) {
        if tail != NIL {
            self.tcb_at(tail).ep_next = t;
        }
    }

    /// A member between `prev` and `next` has left: link the two.
    #[inline(always)]
    fn link_neighbours(&mut self, prev: u32, next: u32) {
        if prev != NIL {
            self.tcb_at(prev).ep_next = next;
        }
        if next != NIL {
            self.tcb_at(next).ep_prev = prev;
        }
    }

    /// Queue `t` on endpoint `ep` in state `state` (`Send` or `Recv`).
    #[inline]
    pub(crate) fn ep_append(&mut self, ep: Ref<Endpoint>, t: Ref<Tcb>, state: EpState) {
        // SAFETY: `LIVE` is false: both are checked.
        unsafe { self.ep_append_with::<false>(ep, t, state, |_| {}) };
    }

    /// [`Ctx::ep_append`] of `t` to `ep`, both known to be live, the
    /// thread's state becoming `ts` in the same access (the fast path's).
    ///
    /// # Safety
    /// As for [`Ctx::get_live`], for `ep` and `t`.
    #[inline(always)]
    pub(crate) unsafe fn ep_append_as(&mut self, ep: Ref<Endpoint>, t: Ref<Tcb>, state: EpState, ts: ThreadState) {
        // SAFETY: by the caller's contract.
        unsafe { self.ep_append_with::<true>(ep, t, state, |x| x.state = ts) };
    }

    /// `ep` and `t`: with `LIVE` known to be live, without checked (`None`
    /// if either is dead).
    ///
    /// # Safety
    /// With `LIVE`, as for [`Ctx::get_live`], for `ep` and `t`.
    #[inline(always)]
    unsafe fn ep_and_thread<const LIVE: bool>(
        &mut self,
        ep: Ref<Endpoint>,
        t: Ref<Tcb>,
    ) -> Option<(&mut Endpoint, &mut Tcb)> {
        if LIVE {
            // SAFETY: by the caller's contract.
            Some(unsafe { self.get_pair_live(ep, t) })
        } else {
            self.get_pair(ep, t)
        }
    }

    /// # Safety
    /// With `LIVE`, as for [`Ctx::get_live`], for `ep` and `t` (without,
    /// none: a dead one is ignored).
    #[inline(always)]
    unsafe fn ep_append_with<const LIVE: bool>(
        &mut self,
        ep: Ref<Endpoint>,
        t: Ref<Tcb>,
        state: EpState,
        f: impl FnOnce(&mut Tcb),
    ) {
        // SAFETY: by the caller's contract.
        let Some((e, x)) = (unsafe { self.ep_and_thread::<LIVE>(ep, t) }) else { return };
        f(x);
        let tail;
        (e.queue, tail) = e.queue.append(x, t.index());
        e.state = state;
        self.link_after(tail, t.index());
    }

    /// Remove `t` from `ep`'s queue (it must be in it, if `ep` is live).
    #[inline]
    pub(crate) fn ep_remove(&mut self, ep: Ref<Endpoint>, t: Ref<Tcb>) {
        // SAFETY: `LIVE` is false: both are checked.
        unsafe { self.ep_remove_with::<false>(ep, t, |_| {}) };
    }

    /// [`Ctx::ep_remove`] of `t` from `ep`, both known to be live, the
    /// thread's state becoming `ts` in the same access (the fast path's).
    ///
    /// # Safety
    /// As for [`Ctx::get_live`], for `ep` and `t`.
    #[inline(always)]
    pub(crate) unsafe fn ep_remove_as(&mut self, ep: Ref<Endpoint>, t: Ref<Tcb>, ts: ThreadState) {
        // SAFETY: by the caller's contract.
        unsafe { self.ep_remove_with::<true>(ep, t, |x| x.state = ts) };
    }

    /// # Safety
    /// With `LIVE`, as for [`Ctx::get_live`], for `ep` and `t` (without,
    /// none: a dead one is ignored).
    #[inline(always)]
    unsafe fn ep_remove_with<const LIVE: bool>(&mut self, ep: Ref<Endpoint>, t: Ref<Tcb>, f: impl FnOnce(&mut Tcb)) {
        // SAFETY: by the caller's contract.
        let Some((e, x)) = (unsafe { self.ep_and_thread::<LIVE>(ep, t) }) else { return };
        f(x);
        let (prev, next);
        (e.queue, prev, next) = e.queue.remove(x);
        if e.queue.is_empty() {
            e.state = EpState::Idle;
        }
        self.link_neighbours(prev, next);
    }

    /// The thread at the head of `ep`'s queue.
    pub(crate) fn ep_head(&mut self, ep: Ref<Endpoint>) -> Option<Ref<Tcb>> {
        // The wait representation may hold the queue (`lockfree`).
        if let Some(head) = W::ep_head(self, ep) {
            return head;
        }
        let h = self.get(ep)?.queue.head;
        self.ref_at::<Tcb>(h)
    }
}
