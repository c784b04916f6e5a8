//! Notifications: a word of signal bits plus a queue of waiters, optionally
//! bound to one TCB (a signal then also wakes that thread from an endpoint
//! receive). Signal/Wait/Poll decode and execute here.

use crate::abi::{Error, Word};
use crate::exec::Exec;
use crate::hold::{Halt, Hold};
use crate::object::endpoint::Queue;
use crate::object::thread::ThreadState;
use crate::object::{Ref, Tcb};
use crate::outcome::Outcome;
use crate::state::Ctx;
use crate::waits::Queues;
use crate::waits::Waits;

/// A notification object.
#[derive(Debug)]
pub(crate) struct Notification {
    /// Accumulated badges (OR of the signallers' badges) while active.
    pub word: Word,
    /// Signalled and not yet consumed.
    pub active: bool,
    pub queue: Queue,
    pub bound: Option<Ref<Tcb>>,
}

impl Notification {
    pub fn new() -> Self {
        Self { word: 0, active: false, queue: Queue::EMPTY, bound: None }
    }
}

/// What a signal will touch, as its resolver found it with each object
/// held: the source of its lock set (the executor, [`Ctx::signal`], runs
/// the signal itself).
#[derive(Clone, Copy, Debug)]
pub(crate) enum SignalOp {
    /// Wake the first waiter.
    Wake { ntfn: Ref<Notification>, waiter: Ref<Tcb> },
    /// Wake the bound thread out of its endpoint receive.
    WakeBound { ntfn: Ref<Notification>, tcb: Ref<Tcb> },
    /// Nobody waits: accumulate.
    Accumulate { ntfn: Ref<Notification> },
}

/// A decoded wait or poll.
#[derive(Clone, Copy, Debug)]
pub(crate) enum WaitOp {
    Take { ntfn: Ref<Notification> },
    Block { ntfn: Ref<Notification> },
    Nothing { ntfn: Ref<Notification> },
}

impl<W: Waits> Ctx<'_, W> {
    /// A signal decoded by `decode_call`, against the waiters: wake the
    /// first, or the bound thread out of its receive, or accumulate.
    pub(crate) fn resolve_signal<G: Hold>(
        &mut self,
        ntfn: Ref<Notification>,
        guard: &mut G,
    ) -> Result<SignalOp, Halt<G::Stop>> {
        guard.object(ntfn)?;
        let n = self.get(ntfn).ok_or(Error::InvalidCapability)?;
        let (head, bound) = (n.queue.head, n.bound);
        if let Some(waiter) = self.ref_at::<Tcb>(head) {
            let (_, core) = self.waiting_thread(waiter)?;
            guard.core(core)?;
            return Ok(SignalOp::Wake { ntfn, waiter });
        }
        if let Some(tcb) = bound {
            // Waking a bound thread pulls it out of an endpoint queue.
            guard.need_whole()?;
            if self.get(tcb).is_some_and(|t| matches!(t.state, ThreadState::BlockedOnRecv { .. })) {
                return Ok(SignalOp::WakeBound { ntfn, tcb });
            }
        }
        Ok(SignalOp::Accumulate { ntfn })
    }

    /// Signal `ntfn` with `badge`, for every wait representation (`Exec`):
    /// in a whole entry the oldest waiter, else the bound thread receiving
    /// on an endpoint, else accumulate; elsewhere the bound thread if the
    /// representation claims it from its receive, else the
    /// representation's signal decides between the oldest waiter and
    /// accumulating.
    #[inline(always)]
    pub(crate) fn signal<E: Exec<W>>(&mut self, e: &E, ntfn: Ref<Notification>, badge: Word) {
        if e.whole() {
            if let Some(w) = e.pop_waiter(self, ntfn) {
                return self.complete_wait(e, w, badge);
            }
            let bound = self.read(ntfn).and_then(|n| n.bound);
            if let Some(t) = bound {
                if self.get(t).is_some_and(|t| matches!(t.state, ThreadState::BlockedOnRecv { .. })) {
                    if W::stop_requested(self, t) == Some(false) {
                        // A suspend nobody has met yet (`lockfree`): this
                        // whole entry carries it out (its receive restarts on
                        // resume, and finds the signal), and the signal stays
                        // in the word.
                        self.suspend(t);
                    } else {
                        // Out of its endpoint queue.
                        self.detach(t);
                        return self.complete_wait(e, t, badge);
                    }
                }
            }
        } else if let Some(t) = self.read(ntfn).and_then(|n| n.bound) {
            // The representation claims a waiting bound receiver (its
            // bound notification has no waiters then: only it may wait
            // there).
            if e.claim_bound(self, t) {
                return self.complete_wait(e, t, badge);
            }
        }
        if let Some(w) = e.signal(self, ntfn, badge) {
            self.complete_wait(e, w, badge);
        }
    }

    /// `t` (taken by this entry) ends its wait with `badge` and runs again.
    #[inline(always)]
    fn complete_wait<E: Exec<W>>(&mut self, e: &E, t: Ref<Tcb>, badge: Word) {
        let b = self.ipc(t);
        b.badge = badge;
        b.tag = 0;
        b.error = 0;
        b.restart = 0;
        self.resume(e, t);
    }

    /// `Wait` (blocking) or `Poll` on `ntfn` by `me`, for every wait
    /// representation.
    #[inline(always)]
    pub(crate) fn wait<E: Exec<W>>(&mut self, e: &E, me: Ref<Tcb>, ntfn: Ref<Notification>, blocking: bool) -> Outcome {
        if !blocking {
            self.ipc(me).badge = e.poll(self, ntfn).unwrap_or(0);
            return Outcome::Done;
        }
        self.prepare_block(e, me, ThreadState::BlockedOnNotification { ntfn });
        match e.wait(self, ntfn, me) {
            None => Outcome::Blocked,
            Some(bits) => {
                self.unprepare_block(e, me);
                self.ipc(me).badge = bits;
                Outcome::Done
            }
        }
    }

    /// A wait or poll decoded by `decode_recv_part`, against the word.
    pub(crate) fn resolve_wait<G: Hold>(
        &mut self,
        ntfn: Ref<Notification>,
        blocking: bool,
        guard: &mut G,
    ) -> Result<WaitOp, Halt<G::Stop>> {
        guard.object(ntfn)?;
        let n = self.get(ntfn).ok_or(Error::InvalidCapability)?;
        Ok(if n.active {
            WaitOp::Take { ntfn }
        } else if blocking {
            WaitOp::Block { ntfn }
        } else {
            WaitOp::Nothing { ntfn }
        })
    }

    /// Consume an active notification's word.
    pub(crate) fn take_signal(&mut self, ntfn: Ref<Notification>) -> Word {
        let Some(n) = self.get(ntfn) else { return 0 };
        let w = n.word;
        n.word = 0;
        n.active = false;
        w
    }

    /// Remove waiter `t` from `ntfn`'s queue.
    pub(crate) fn ntfn_remove(&mut self, ntfn: Ref<Notification>, t: Ref<Tcb>) {
        let Some(n) = self.get(ntfn) else { return };
        let q = n.queue;
        let q = self.q_remove(q, t.index());
        if let Some(n) = self.get(ntfn) {
            n.queue = q;
        }
    }

    /// Resolve a signal from the kernel (interrupts: no capability, just a
    /// badge), holding what it touches; `before` runs between the last hold
    /// and the signal (the interrupt marks its line pending).
    pub(crate) fn kernel_signal<G: Hold>(
        &mut self,
        ntfn: Ref<Notification>,
        badge: Word,
        guard: &mut G,
        before: impl FnOnce(&mut Self),
    ) -> Result<(), G::Stop> {
        match self.resolve_signal(ntfn, guard) {
            Ok(_) => {}
            Err(Halt::Stop(s)) => return Err(s),
            Err(Halt::Fail(_)) => return Ok(()),
        }
        before(self);
        // The wait representation may deliver it (`lockfree`).
        if !W::kernel_signal(self, ntfn, badge) {
            self.signal(&Queues, ntfn, badge);
        }
        Ok(())
    }
}
