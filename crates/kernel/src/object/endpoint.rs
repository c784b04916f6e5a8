//! Endpoints: synchronous rendezvous. An endpoint is idle, or has a queue of
//! blocked senders, or a queue of blocked receivers (never both). The queues
//! are intrusive FIFO lists through the TCBs' `ep_next`/`ep_prev` links, which
//! notification wait queues share (a thread waits in at most one queue).

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
        let x = self.tcb_at(t);
        x.ep_next = NIL;
        x.ep_prev = q.tail;
        if q.tail == NIL {
            Queue { head: t, tail: t }
        } else {
            self.tcb_at(q.tail).ep_next = t;
            Queue { head: q.head, tail: t }
        }
    }

    /// Remove thread `t` (a member) from `q`.
    #[inline]
    pub(crate) fn q_remove(&mut self, mut q: Queue, t: u32) -> Queue {
        let x = self.tcb_at(t);
        let (next, prev) = (x.ep_next, x.ep_prev);
        x.ep_next = NIL;
        x.ep_prev = NIL;
        if prev == NIL {
            q.head = next;
        } else {
            self.tcb_at(prev).ep_next = next;
        }
        if next == NIL {
            q.tail = prev;
        } else {
            self.tcb_at(next).ep_prev = prev;
        }
        q
    }

    /// Queue `t` on endpoint `ep` in state `state` (`Send` or `Recv`).
    #[inline]
    pub(crate) fn ep_append(&mut self, ep: Ref<Endpoint>, t: Ref<Tcb>, state: EpState) {
        let Some(e) = self.get(ep) else { return };
        let q = e.queue;
        let q = self.q_append(q, t.index());
        if let Some(e) = self.get(ep) {
            e.queue = q;
            e.state = state;
        }
    }

    /// Remove `t` from `ep`'s queue (it must be in it, if `ep` is live).
    #[inline]
    pub(crate) fn ep_remove(&mut self, ep: Ref<Endpoint>, t: Ref<Tcb>) {
        let Some(e) = self.get(ep) else { return };
        let q = e.queue;
        let q = self.q_remove(q, t.index());
        if let Some(e) = self.get(ep) {
            e.queue = q;
            if q.is_empty() {
                e.state = EpState::Idle;
            }
        }
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
