//! Fault delivery: a thread's fault becomes a `Call` to its fault handler.
//!
//! As in seL4, a thread names its handler by a capability pointer
//! (`TcbSetFaultHandler`) that is looked up in the thread's *own* CSpace
//! when it faults. An endpoint capability with the write right there gets a
//! fault message (label [`FaultKind::label`], words [`FaultKind::words`],
//! the capability's badge), sent as a `Call` the kernel makes on the
//! thread's behalf: the thread blocks exactly as a caller does, through the
//! one IPC executor (`rendezvous.rs`) of its regime, so under `lockfree`
//! the handler's receive and reply take it through the lock-free words.
//! Anything else — no handler, a failed look-up, a handler that receives
//! without a reply object — stops the thread (seL4's double fault).
//!
//! The handler answers with `Reply`: label 0 lets the thread go on (where it
//! faulted if the fault is resumable, from its entry otherwise), any other
//! label leaves it stopped until a `TcbResume`. Nothing the handler sends
//! is written to the thread's message words. A delivery cancelled on the
//! way (the endpoint or reply object deleted, a suspend) restarts the
//! faulting access, which faults again: the restart flag of the thread's IPC
//! buffer tells its trap to re-raise it.
//!
//! The thread's state says that its call is a fault (`BlockedOnSend` and
//! `BlockedOnReply` with `fault`); [`Tcb::fault`] keeps the kind for the
//! message and the answer, and needs no clearing.

use crate::abi::{Error, MessageInfo, Word};
use crate::args::FaultKind;
use crate::decode::Decoded;
use crate::exec::Exec;
use crate::hold::{AllHeld, Hold};
use crate::object::thread::ThreadState;
use crate::object::{Ref, Tcb};
use crate::outcome::Outcome;
use crate::sched::Action;
use crate::state::Ctx;
use crate::waits::Queues;
use crate::waits::Waits;

impl<W: Waits> Ctx<'_, W> {
    /// The current thread faulted (a whole entry): send the fault to its
    /// handler, or stop it. (`lockfree` runs the same steps on a shared
    /// path when it can, `lockfree/entry.rs`.)
    pub(crate) fn handle_fault<G: Hold>(&mut self, kind: FaultKind, guard: &mut G) -> Result<(), G::Stop> {
        let core = self.core;
        let Some(cur) = self.cs(core).current else { return Ok(()) };
        self.release_holds(cur);
        self.begin_fault(cur, kind);
        // A suspend nobody has met (`lockfree`) stops the thread before its
        // fault's call, as the shared path does: resumed, it faults again.
        if W::stop_requested(self, cur) == Some(false) {
            self.stop_faulted(cur);
            return Ok(());
        }
        // The wait representation may run the call on its own words
        // (`lockfree`); otherwise the general path resolves and runs it.
        let out = match W::fault_call(self, cur, kind) {
            Some(out) => out,
            None => self.fault_call_with(cur, kind, |ctx, op| {
                ctx.dispatch_decoded(&Queues, cur, op, MessageInfo::default(), None, guard)
            })?,
        };
        self.end_fault(cur, out);
        Ok(())
    }

    /// The `Call` fault `kind` of `t` makes, decoded in a whole scope and
    /// run by `run`; `FailedLookup` if `t` has no usable handler.
    pub(crate) fn fault_call_with<E>(
        &mut self,
        t: Ref<Tcb>,
        kind: FaultKind,
        run: impl FnOnce(&mut Self, Decoded) -> Result<Outcome, E>,
    ) -> Result<Outcome, E> {
        let Some(view) = self.caller_view(t) else { return Ok(Outcome::Error(Error::FailedLookup)) };
        // A whole scope never falls back.
        match self.decode_fault(&AllHeld, &view, kind).unwrap_or(None) {
            Some(op) => run(self, op),
            None => Ok(Outcome::Error(Error::FailedLookup)),
        }
    }

    /// Record fault `kind` of `t` (this core's current thread) before its
    /// call is made.
    #[inline]
    pub(crate) fn begin_fault(&mut self, t: Ref<Tcb>, kind: FaultKind) {
        if let Some(x) = self.get(t) {
            x.fault = Some(kind);
            // Code that cannot go on where it stopped starts afresh, whether
            // the handler restarts it or a `TcbResume` does.
            x.fresh = !kind.resumable();
        }
    }

    /// The fault's call of `t` ended with `out`: blocked (published: not
    /// touched), or not taken by anyone who can answer it (`t` stops).
    #[inline]
    pub(crate) fn end_fault(&mut self, t: Ref<Tcb>, out: Outcome) {
        if out != Outcome::Blocked {
            self.stop_faulted(t);
        }
    }

    /// The handler answered `t`'s fault (taken from the reply object) with
    /// `label`: 0 lets it go on, anything else stops it.
    #[cold]
    pub(crate) fn answer_fault<E: Exec<W>>(&mut self, e: &E, t: Ref<Tcb>, label: Word) {
        if label != 0 {
            return self.stop_faulted(t);
        }
        // Its call completes with no message, as any finished blocked call.
        self.finish_blocked(e, t, 0);
    }

    /// `t` (this core's: current, or just taken) stops with its fault
    /// unanswered; run again by a `TcbResume`, it re-raises a resumable
    /// fault and starts afresh otherwise. A current thread stops being
    /// current first, and the stop is published last (`lockfree`: another
    /// core may claim it at once).
    #[cold]
    pub(crate) fn stop_faulted(&mut self, t: Ref<Tcb>) {
        let b = self.ipc(t);
        b.error = 0;
        b.restart = 1;
        b.tag = 0;
        if let Some(x) = self.get(t) {
            x.state = ThreadState::Inactive;
        }
        let core = self.core;
        if self.cs(core).current == Some(t) {
            self.cs(core).current = None;
            if self.cs(core).action == Action::Resume {
                self.cs(core).action = Action::Choose { yielded: false };
            }
        }
        W::set_inactive(self, t, true);
    }
}
