//! The TCB invocations: configure, priority, affinity, suspend, resume,
//! registers, notification binding, fault handler (the TCB itself is
//! `thread.rs`, fault delivery `fault.rs`).

use crate::abi::{Error, InvocationLabel, MessageInfo, Word, MAX_PRIORITY, NUM_REGS};
use crate::exit::CoreMask;
use crate::object::{CNode, CapObj, Notification, Ref, VSpace};
use crate::state::Ctx;
use crate::waits::Waits;

use super::thread::{Tcb, ThreadState};
use crate::args::Args;
use crate::outcome::Outcome;

/// A decoded TCB invocation.
#[derive(Clone, Copy, Debug)]
pub(crate) enum TcbOp {
    ReadRegisters { t: Ref<Tcb>, count: usize },
    WriteRegisters { t: Ref<Tcb>, resume: bool, count: usize },
    Configure { t: Ref<Tcb>, cspace: Ref<CNode>, vspace: Option<Ref<VSpace>> },
    SetPriority { t: Ref<Tcb>, prio: u8 },
    SetAffinity { t: Ref<Tcb>, core: usize },
    Suspend { t: Ref<Tcb> },
    Resume { t: Ref<Tcb> },
    Bind { t: Ref<Tcb>, ntfn: Ref<Notification> },
    Unbind { t: Ref<Tcb>, ntfn: Ref<Notification> },
    SetFaultHandler { t: Ref<Tcb>, cptr: Word },
}

impl TcbOp {
    pub fn target(&self) -> Ref<Tcb> {
        match *self {
            TcbOp::ReadRegisters { t, .. }
            | TcbOp::WriteRegisters { t, .. }
            | TcbOp::Configure { t, .. }
            | TcbOp::SetPriority { t, .. }
            | TcbOp::SetAffinity { t, .. }
            | TcbOp::Suspend { t }
            | TcbOp::Resume { t }
            | TcbOp::Bind { t, .. }
            | TcbOp::Unbind { t, .. }
            | TcbOp::SetFaultHandler { t, .. } => t,
        }
    }

    /// Whether the target must not be running on another core meanwhile.
    fn needs_stall(&self) -> bool {
        matches!(self, TcbOp::WriteRegisters { .. } | TcbOp::SetAffinity { .. } | TcbOp::Suspend { .. })
    }
}

impl<W: Waits> Ctx<'_, W> {
    /// Decode a TCB invocation by `caller` on TCB `t`.
    pub(crate) fn decode_tcb(
        &mut self,
        caller: Ref<Tcb>,
        t: Ref<Tcb>,
        label: InvocationLabel,
        args: &Args,
    ) -> Result<TcbOp, Error> {
        if !self.live(t) {
            return Err(Error::InvalidCapability);
        }
        let op = match label {
            InvocationLabel::TcbReadRegisters => {
                let count = args.word(0)?;
                if count > NUM_REGS as Word {
                    return Err(Error::RangeError);
                }
                TcbOp::ReadRegisters { t, count: count as usize }
            }
            InvocationLabel::TcbWriteRegisters => {
                let resume = args.word(0)? != 0;
                let count = args.word(1)?;
                if count > NUM_REGS as Word {
                    return Err(Error::RangeError);
                }
                if args.len() < 2 + count as usize {
                    return Err(Error::TruncatedMessage);
                }
                if t == caller {
                    return Err(Error::IllegalOperation);
                }
                TcbOp::WriteRegisters { t, resume, count: count as usize }
            }
            InvocationLabel::TcbConfigure => {
                let cs = args.word(0)?;
                let vs = args.word(1)?;
                let cspace = match self.lookup_arg(caller, cs)?.obj {
                    CapObj::CNode(c) => c,
                    _ => return Err(Error::InvalidCapability),
                };
                let vspace = if vs == 0 {
                    None
                } else {
                    match self.lookup_arg(caller, vs)?.obj {
                        CapObj::VSpace(v) => Some(v),
                        _ => return Err(Error::InvalidCapability),
                    }
                };
                TcbOp::Configure { t, cspace, vspace }
            }
            InvocationLabel::TcbSetPriority => {
                let p = args.word(0)?;
                if p > MAX_PRIORITY {
                    return Err(Error::RangeError);
                }
                TcbOp::SetPriority { t, prio: p as u8 }
            }
            InvocationLabel::TcbSetAffinity => {
                let c = args.word(0)?;
                if c >= self.s.config.cores as Word {
                    return Err(Error::RangeError);
                }
                TcbOp::SetAffinity { t, core: c as usize }
            }
            InvocationLabel::TcbSuspend => TcbOp::Suspend { t },
            InvocationLabel::TcbResume => TcbOp::Resume { t },
            InvocationLabel::TcbBindNotification => {
                let n = args.word(0)?;
                let ntfn = match self.lookup_arg(caller, n)?.obj {
                    CapObj::Notification(n) => n,
                    _ => return Err(Error::InvalidCapability),
                };
                if self.get(t).is_some_and(|x| x.bound.is_some()) {
                    return Err(Error::IllegalOperation);
                }
                // Waiters may be in the wait representation (`lockfree`).
                let word_waiters = W::has_waiters(self, ntfn);
                let nt = self.get(ntfn).ok_or(Error::InvalidCapability)?;
                if nt.bound.is_some() || !nt.queue.is_empty() || word_waiters {
                    return Err(Error::IllegalOperation);
                }
                TcbOp::Bind { t, ntfn }
            }
            InvocationLabel::TcbUnbindNotification => {
                let bound = self.get(t).and_then(|x| x.bound);
                match bound {
                    Some(ntfn) if self.live(ntfn) => TcbOp::Unbind { t, ntfn },
                    _ => return Err(Error::IllegalOperation),
                }
            }
            // Looked up in the thread's CSpace when it faults (seL4).
            InvocationLabel::TcbSetFaultHandler => TcbOp::SetFaultHandler { t, cptr: args.word(0)? },
            _ => return Err(Error::IllegalOperation),
        };
        Ok(op)
    }

    /// Cores that must be stalled before `op` may run (empty: run it now).
    pub(crate) fn tcb_op_blockers(&mut self, op: &TcbOp) -> CoreMask {
        let mut m = CoreMask::EMPTY;
        if op.needs_stall() {
            if let Some(c) = self.running_elsewhere(op.target()) {
                m.insert(c);
            }
        }
        m
    }

    /// Execute a decoded TCB invocation (cannot fail).
    pub(crate) fn invoke_tcb(&mut self, caller: Ref<Tcb>, op: TcbOp) -> Outcome {
        match op {
            TcbOp::ReadRegisters { t, count } => {
                let regs = self.get(t).map_or([0; NUM_REGS], |x| x.regs);
                let buf = self.ipc(caller);
                buf.msg[..count].copy_from_slice(&regs[..count]);
                Outcome::Reply(MessageInfo::new(0, 0, 0, count as Word))
            }
            TcbOp::WriteRegisters { t, resume, count } => {
                let mut vals = [0; NUM_REGS];
                vals[..count].copy_from_slice(&self.ipc(caller).msg[2..2 + count]);
                // A thread with a suspend pending (`lockfree`) counts as
                // inactive, as introspection reports it.
                let stopping = W::stop_requested(self, t) == Some(false);
                self.detach(t);
                let Some(x) = self.get(t) else { return Outcome::Done };
                x.regs[..count].copy_from_slice(&vals[..count]);
                x.fresh = true;
                // A fresh start abandons whatever the thread was doing.
                let was_active = x.state != ThreadState::Inactive && !stopping;
                x.state = ThreadState::Inactive;
                W::set_inactive(self, t, true);
                if was_active || resume {
                    self.make_runnable(t);
                }
                Outcome::Done
            }
            TcbOp::Configure { t, cspace, vspace } => {
                if let Some(x) = self.get(t) {
                    x.cspace = Some(cspace);
                    x.vspace = vspace;
                }
                Outcome::Done
            }
            TcbOp::SetFaultHandler { t, cptr } => {
                if let Some(x) = self.get(t) {
                    x.fault_handler = cptr;
                }
                Outcome::Done
            }
            TcbOp::SetPriority { t, prio } => {
                self.set_priority(t, prio);
                Outcome::Done
            }
            TcbOp::SetAffinity { t, core } => {
                self.set_affinity(t, core);
                Outcome::Done
            }
            TcbOp::Suspend { t } => {
                self.suspend(t);
                Outcome::Done
            }
            TcbOp::Resume { t } => {
                if self.get(t).is_some_and(|x| x.state == ThreadState::Inactive) {
                    self.make_runnable(t);
                } else {
                    W::cancel_stop(self, t);
                }
                Outcome::Done
            }
            TcbOp::Bind { t, ntfn } => {
                if let Some(x) = self.get(t) {
                    x.bound = Some(ntfn);
                }
                if let Some(n) = self.get(ntfn) {
                    n.bound = Some(t);
                }
                W::binding_changed(self, t);
                Outcome::Done
            }
            TcbOp::Unbind { t, ntfn } => {
                if let Some(x) = self.get(t) {
                    x.bound = None;
                }
                if let Some(n) = self.get(ntfn) {
                    n.bound = None;
                }
                W::binding_changed(self, t);
                Outcome::Done
            }
        }
    }

    /// Stop `t`: abandon its blocking call (restarted on resume) and make it
    /// inactive. `t` is not running on another core (the caller stalled it).
    pub(crate) fn suspend(&mut self, t: Ref<Tcb>) {
        self.detach(t);
        self.release_holds(t);
        if let Some(x) = self.get(t) {
            if x.state != ThreadState::Zombie {
                x.state = ThreadState::Inactive;
                W::set_inactive(self, t, true);
            }
        }
    }

    /// Make the inactive thread `t` runnable on its core.
    pub(crate) fn make_runnable(&mut self, t: Ref<Tcb>) {
        let slice = self.s.config.timeslice_ticks;
        if let Some(x) = self.get(t) {
            x.state = ThreadState::Running;
            x.slice = slice;
            W::set_inactive(self, t, false);
            self.wake(t);
        }
    }

    fn set_priority(&mut self, t: Ref<Tcb>, prio: u8) {
        let Some(x) = self.get(t) else { return };
        let (core, ready) = (x.core, x.in_ready);
        if ready {
            self.dequeue(t);
            if let Some(x) = self.get(t) {
                x.prio = prio;
            }
            self.wake(t);
            return;
        }
        x.prio = prio;
        if self.cs(core).current == Some(t) {
            self.cs(core).current_prio = prio;
            if core == self.core {
                self.request_reschedule();
            } else {
                self.send_ipi(core, crate::state::IPI_RESCHEDULE);
            }
        }
    }

    fn set_affinity(&mut self, t: Ref<Tcb>, core: usize) {
        let Some(x) = self.get(t) else { return };
        let (old, state, ready, holds) = (x.core, x.state, x.in_ready, !x.holds.is_empty());
        if old == core {
            return;
        }
        // A stall owner moved (perhaps onto a core it holds idle) gives its
        // cores back; its restarted call asks again from its new core.
        if holds {
            self.release_holds(t);
        }
        let current_here = self.cs(old).current == Some(t);
        if ready {
            self.dequeue(t);
        } else if current_here && old != self.core {
            // Current on a trapped core (the caller checked): take it away;
            // an interrupted system call is restarted on the new core.
            self.detach(t);
        }
        if let Some(x) = self.get(t) {
            x.core = core;
        }
        W::set_home(self, t, core);
        if state == ThreadState::Running && !(current_here && old == self.core) {
            self.wake(t);
        }
        // The caller migrating itself stays current here until this entry
        // ends; `finish_entry` moves it to its new core.
    }
}
