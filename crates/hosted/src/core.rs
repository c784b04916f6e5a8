//! The loop of a core's OS thread: the kernel's entry and exit.
//!
//! ```text
//! boot:  ipi() → plan
//! loop:  doorbell rung?  → serve it (timer tick, device IRQs, IPI, hand-off,
//!                          shutdown): each is a kernel entry → plan
//!        plan.run = None → idle loop (spin, then park; a core with idle
//!                          work waits in it at once, see `idle_work`) until
//!                          the doorbell rings
//!        plan.run = t    → resume t's context until it traps
//!                          syscall(args) or fault(kind) → plan
//! plan:  ring the IPI targets' doorbells, unmask acked IRQ lines, create
//!        the context of a fresh thread — all after the kernel returned, i.e.
//!        after the regime released its lock.
//! ```
//!
//! **Preemption happens at kernel entry only.** A hosted core notices its
//! doorbell (an IPI, its timer) when its user thread traps or when it is idle;
//! a user thread that computes without system calls is not interrupted. On
//! real hardware the interrupt would arrive mid-computation. Every experiment
//! here traps often (ping-pong), so the difference is latency, never
//! correctness; it is why shutdown is bounded rather than guaranteed.
//!
//! The hot path (a system call that switches between two threads of this core)
//! costs: one load of the doorbell word, one load of the context slot's owner,
//! the coroutine switch in and out, the kernel entry, and three emptiness
//! checks on the plan.

use std::sync::Arc;

use core_affinity::CoreId;
use granule_kernel::abi::NUM_IRQS;
use granule_kernel::{CoreHandle, ExitPlan, FaultKind, Regime, StartInfo, ThreadId, Word};

use crate::clock::now;
use crate::context::Owned;
use crate::doorbell::Ring;
use crate::machine::{FaultRecord, Shared};
use crate::thread::{Trap, UserContext};

const SHUTDOWN: u32 = Ring::Shutdown as u32;
const HANDOFF: u32 = Ring::Handoff as u32;
const TIMER: u32 = Ring::Timer as u32;
const IRQ: u32 = Ring::Irq as u32;
const IPI: u32 = Ring::Ipi as u32;

/// Run `f`, adding the cycles it took to `total` (written by this core only).
#[inline(always)]
fn timed<T>(total: &std::sync::atomic::AtomicU64, f: impl FnOnce() -> T) -> T {
    use std::sync::atomic::Ordering::Relaxed;
    let t0 = now();
    let r = f();
    total.store(total.load(Relaxed) + now().wrapping_sub(t0), Relaxed);
    r
}

/// The body of core `handle.index()`'s OS thread.
pub(crate) fn run<R: Regime>(shared: Arc<Shared<R>>, handle: CoreHandle, cpu: Option<CoreId>) {
    if let Some(cpu) = cpu {
        core_affinity::set_for_current(cpu);
    }
    let me = handle.index();
    shared.bells[me].bind_current();
    // SAFETY: this thread holds the kernel's only `CoreHandle` for core `me`
    // (the kernel makes one per core and boot moved it here), so it is the
    // only thread acting as `me`, and this is the only `Owned` made for `me`.
    let owned = unsafe { Owned::for_core(me) };
    let mut core = Core { s: &shared, handle, owned, me };
    core.main();
}

struct Core<'s, R: Regime> {
    s: &'s Shared<R>,
    handle: CoreHandle,
    owned: Owned,
    me: usize,
}

impl<R: Regime> Core<'_, R> {
    fn main(&mut self) {
        if self.me != 0 && self.s.hold && !self.wait_gate() {
            return;
        }
        let plan = self.s.kernel.ipi(&mut self.handle);
        let mut next = self.perform(&plan);
        loop {
            let bell = &self.s.bells[self.me];
            if bell.is_rung() {
                let bits = bell.take();
                if bits & SHUTDOWN != 0 {
                    return;
                }
                if let Some(n) = self.service(bits) {
                    next = n;
                }
                continue;
            }
            next = match next {
                None => {
                    self.idle();
                    None
                }
                Some(t) => self.run_thread(t),
            };
        }
    }

    /// Resume `t` until it traps, enter the kernel, perform the plan.
    #[inline(always)]
    fn run_thread(&mut self, t: ThreadId) -> Option<ThreadId> {
        let s = self.s;
        let me = self.me;
        let plan = match s.table.claim(t.index(), &mut self.owned, &s.bells, || s.stopping()) {
            Some(Some(ctx)) if ctx.thread == t => {
                match if s.account_user { timed(&s.user[me], || ctx.resume()) } else { ctx.resume() } {
                    Trap::Syscall(args) => s.kernel.syscall(&mut self.handle, args),
                    Trap::Fault(f) => {
                        let (kind, message) = *f;
                        s.record_fault(FaultRecord { thread: t, core: me, kind, message });
                        s.kernel.fault(&mut self.handle, kind)
                    }
                }
            }
            Some(_) => return self.recover(t),
            None => return None,
        };
        if s.check {
            self.check();
        }
        self.perform(&plan)
    }

    /// Check the kernel's invariants (tests), recording what is broken.
    #[cold]
    fn check(&mut self) {
        if let Err(e) = self.s.kernel.check_invariants(&mut self.handle) {
            self.s.violations.lock().unwrap_or_else(|e| e.into_inner()).push(format!("core {}: {e:?}", self.me));
        }
    }

    /// The kernel runs `t` but this platform has no context for it (the
    /// fresh start was reported in a plan whose context could not be made):
    /// ask the kernel how `t` starts.
    #[cold]
    fn recover(&mut self, t: ThreadId) -> Option<ThreadId> {
        match self.s.kernel.start_info(&mut self.handle, t) {
            Some(start) => self.start_fresh(t, start),
            None => {
                self.s.record_fault(FaultRecord {
                    thread: t,
                    core: self.me,
                    kind: FaultKind::Other,
                    message: "the kernel scheduled a thread that does not exist".into(),
                });
                None
            }
        }
    }

    /// Perform an exit plan; returns the thread to run next (`None`: idle).
    #[inline(always)]
    fn perform(&mut self, plan: &ExitPlan) -> Option<ThreadId> {
        self.side_effects(plan);
        match (plan.run, plan.start) {
            (Some(t), Some(start)) => self.start_fresh(t, start),
            _ => plan.run,
        }
    }

    /// The plan's IPIs and IRQ acknowledgements.
    #[inline(always)]
    fn side_effects(&self, plan: &ExitPlan) {
        let s = self.s;
        if !plan.ipis.is_empty() {
            for c in plan.ipis.iter() {
                if let Some(b) = s.bells.get(c) {
                    b.ring(Ring::Ipi);
                }
            }
        }
        if !plan.irq_acks.is_empty() {
            for line in plan.irq_acks.iter() {
                s.irq.ack(line, &s.bells);
            }
        }
    }

    /// Create the context of a thread the kernel runs for the first time;
    /// if that fails, the thread faults and the kernel's next choice is
    /// performed instead.
    #[cold]
    #[inline(never)]
    fn start_fresh(&mut self, mut t: ThreadId, mut start: StartInfo) -> Option<ThreadId> {
        loop {
            if self.install(t, start.entry, start.arg) {
                return Some(t);
            }
            let plan = self.s.kernel.fault(&mut self.handle, FaultKind::Other);
            self.side_effects(&plan);
            match (plan.run, plan.start) {
                (Some(next), Some(s)) => (t, start) = (next, s),
                _ => return plan.run,
            }
        }
    }

    /// Create a fresh context for `t` (dropping any old one in its slot).
    #[cold]
    fn install(&mut self, t: ThreadId, entry: Word, arg: Word) -> bool {
        let s = self.s;
        match UserContext::new(t, entry, arg, s.kernel.ipc_buffer(t), &s.programs, s.gate.clone(), s.stack_bytes) {
            Ok(ctx) => {
                if let Some(slot) = s.table.claim(t.index(), &mut self.owned, &s.bells, || s.stopping()) {
                    *slot = Some(ctx);
                }
                true
            }
            Err(e) => {
                s.record_fault(FaultRecord {
                    thread: t,
                    core: self.me,
                    kind: FaultKind::Other,
                    message: format!("could not create the context: {e}"),
                });
                false
            }
        }
    }

    /// Serve a rung doorbell (not shutdown). Returns the new next thread if
    /// the kernel was entered.
    #[cold]
    fn service(&mut self, bits: u32) -> Option<Option<ThreadId>> {
        let s = self.s;
        let mut next = None;
        if bits & HANDOFF != 0 {
            s.table.release_all(&mut self.owned);
        }
        if bits & TIMER != 0 {
            let plan = s.kernel.timer_tick(&mut self.handle);
            next = Some(self.perform(&plan));
            let line = s.timer_irq_base + self.me;
            if line < NUM_IRQS {
                s.irq.raise(line, &s.bells);
            }
        }
        if bits & IRQ != 0 {
            while let Some(line) = s.irq.next_deliverable(self.me) {
                let plan = s.kernel.interrupt(&mut self.handle, line);
                next = Some(self.perform(&plan));
            }
        }
        // Every kernel entry serves pending IPIs first; enter only for them
        // if nothing else did.
        if bits & IPI != 0 && next.is_none() {
            let plan = s.kernel.ipi(&mut self.handle);
            next = Some(self.perform(&plan));
        }
        next
    }

    /// The idle thread: spin on the doorbell for a while, then park; the
    /// cycles spent are idle time. A core with idle work does not spin: it
    /// parks in its work's wait at once (see `idle_work`).
    fn idle(&mut self) {
        let s = self.s;
        let bell = &s.bells[self.me];
        let t0 = now();
        s.idle[self.me].begin(t0);
        let spin = if bell.idle_work().is_some() { 0 } else { s.idle_spin_cycles };
        let spin_until = t0.saturating_add(spin);
        while !bell.is_rung() {
            if now() >= spin_until {
                // Idle work, if any, does its work and waits for its events here.
                bell.park(None);
            } else {
                std::hint::spin_loop();
            }
        }
        let dt = now().wrapping_sub(t0);
        s.idle[self.me].end(dt);
        s.kernel.add_idle_cycles(&self.handle, dt);
    }

    /// A held secondary core waits (idle) for the gate; false on shutdown.
    #[cold]
    fn wait_gate(&mut self) -> bool {
        let s = self.s;
        let bell = &s.bells[self.me];
        let t0 = now();
        s.idle[self.me].begin(t0);
        let open = loop {
            if s.gate.is_open() {
                break true;
            }
            let bits = bell.take();
            if bits & SHUTDOWN != 0 {
                break false;
            }
            if bits & HANDOFF != 0 {
                s.table.release_all(&mut self.owned);
            }
            if !s.gate.is_open() {
                bell.park(Some(std::time::Duration::from_millis(10)));
            }
        };
        let dt = now().wrapping_sub(t0);
        s.idle[self.me].end(dt);
        s.kernel.add_idle_cycles(&self.handle, dt);
        // Interrupt lines raised meanwhile lost their ring; look again.
        bell.ring(Ring::Irq);
        open
    }
}
