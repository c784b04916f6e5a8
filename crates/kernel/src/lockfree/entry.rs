//! Kernel entries under `lockfree`: the [`Shared`] drive. IPC,
//! notifications, yields, ticks and IPIs run on shared (lock-free) entries;
//! everything else is a management entry (the regime's `enter`/`exit`),
//! with a start and an end that move the lock-free scheduler state to and
//! from the general code's view.
//!
//! A shared entry is `trap → gate (reader side) → decide → begin → drain
//! inbox → execute → finish → publish priority → leave the gate`. "Decide"
//! (`decode.rs`) changes nothing, so when it says "management", the entry
//! leaves the gate and the kernel reruns it as a management entry.

// The trait is public because `Regime` names it, and sealed because its
// methods name kernel internals (the access context, entry kinds) that no
// other crate can name: nothing outside the kernel can implement or call
// it, which is what these lints would otherwise guard.
#![allow(private_interfaces, private_bounds)]

use core::sync::atomic::Ordering;

use crate::abi::{Error, MessageInfo, Sysno};
use crate::args::{OtherEntry, SyscallArgs};
use crate::config::{BootConfig, BootError};
use crate::drive::{general_syscall, Drive, Entry};
use crate::exit::ExitPlan;
use crate::hold::{AllHeld, Never};
use crate::kernel::{spin_hook, CoreHandle, Kernel};
use crate::object::thread::ThreadState;
use crate::object::{Ref, Tcb};
use crate::outcome::Outcome;
use crate::regime::{LockFreeOf, Regime};
use crate::state::{bump, Ctx, State, IPI_RESCHEDULE, IPI_STALL, TRAP_OTHER, TRAP_SYSCALL};

use crate::decode::{CallerView, Decoded, Scope};
use crate::object::{Endpoint, Reply};

use super::shared::ReplyState;

use super::decode::SharedOp;
use super::fastpath::{put, Ended};
use super::ipc::Words;
use super::pages::PageOp;
use super::shared::{published, LfState, IDLE};

/// The shared path's decoding scope: only what a shared path may read, and
/// an endpoint whose word is marked (a sender waiting there transfers
/// capabilities) sends the call to a management entry.
impl Scope for LfState {
    const WHOLE: bool = false;

    #[inline(always)]
    fn marked(&self, ep: Ref<Endpoint>) -> bool {
        self.ep(ep).snapshot().marked
    }

    #[inline(always)]
    fn stopping(&self, t: Ref<Tcb>) -> bool {
        self.ctl_of(t).pending_or_killed()
    }

    #[inline(always)]
    fn claimed_by_stopping(&self, r: Ref<Reply>, me: Ref<Tcb>) -> bool {
        matches!(self.reply(r).load().1, ReplyState::Receiver(t) if t != me && self.stopping(t))
    }
}

/// The `lockfree` regime's drive (see the module documentation).
#[derive(Debug)]
pub struct Shared;

impl<const C: bool> Drive<LockFreeOf<C>> for Shared {
    type Guard<'k> = AllHeld;

    /// Endpoint words hold 16-bit thread indices: a larger TCB slab cannot
    /// boot.
    fn waits(config: &BootConfig, regime: &LockFreeOf<C>) -> Result<LfState, BootError> {
        if config.max_threads > super::MAX_THREADS {
            return Err(BootError::Capacity);
        }
        Ok(LfState::new(config, regime.tallies()))
    }

    /// A management entry: the whole kernel, the lock-free scheduler state
    /// folded into the general view for its duration.
    fn enter<'k, T>(
        k: &'k Kernel<LockFreeOf<C>>,
        c: usize,
        entry: Entry,
        mut f: impl FnMut(&mut Ctx<'_, LfState>, crate::drive::SetCheck<'_>, &mut Self::Guard<'k>) -> Result<T, Never>,
    ) -> T {
        // SAFETY: `c` is a core handle's, below the configuration's cores,
        // which `Kernel::boot` checked against the regime's; the caller
        // holds that handle `&mut`, so no other thread acts as `c`.
        let () = unsafe { k.regime.enter(c, spin_hook) };
        let out = {
            // SAFETY: the regime's management side has just granted core `c`
            // the whole kernel (every shared path is outside and stays out),
            // and the caller holds `c`'s `&mut CoreHandle`, so this is the
            // only thread acting as core `c`; the context ends with this
            // block, before `exit`.
            let mut ctx = unsafe { Ctx::new(&k.state, c) };
            // A look (introspection, the invariant checker) changes nothing
            // here: inboxes, owed stop interrupts, left nodes and doomed
            // threads are left to the next entry that acts.
            if entry != Entry::Look {
                ctx.lf_begin_exclusive();
                // Nodes that signals left behind leave their queues first:
                // what follows may walk them (`bound.rs`).
                ctx.lf_purge_ghosts();
                // The shared destroys are finished by an entry whose exit
                // plan follows what they change (`finish_destroy.rs`).
                ctx.finish_doomed();
            }
            let out = f(&mut ctx, None, &mut AllHeld);
            ctx.lf_end_exclusive();
            out
        };
        // SAFETY: as for `enter`.
        unsafe { k.regime.exit(c, ()) };
        match out {
            Ok(out) => out,
            // `AllHeld` never stops.
            Err(never) => match never {},
        }
    }

    #[inline(always)]
    fn syscall(k: &Kernel<LockFreeOf<C>>, core: &mut CoreHandle, args: SyscallArgs) -> ExitPlan {
        let c = k.check(core);
        let (gate, s) = (&k.regime, &k.state);
        // `Call` and `ReplyRecv` run on the fast path, out of line, which
        // returns a direct switch as a decision: the entry's end makes its
        // plan straight into the entry's result (as the general path's
        // entry does, `general_syscall`); every other call runs the general
        // path inline.
        if args.sysno == Sysno::Call.word() || args.sysno == Sysno::ReplyRecv.word() {
            let mut slow = None;
            let (_inside, mut ctx) = enter_shared(gate, s, c, TRAP_SYSCALL);
            if let Some(d) = ctx.lf_ipc_call::<C>(gate, s, args, &mut slow) {
                return ctx.finish_direct(d);
            }
            if let Some(plan) = slow {
                return plan;
            }
        } else if let Some(plan) = shared(gate, s, c, TRAP_SYSCALL, args, |ctx, lf, args| {
            let Some(t) = ctx.lf_shared_current()? else { return Some(ctx.lf_idle_call::<C>(lf)) };
            ctx.lf_shared_call::<C>(gate, s, &t, args)
        }) {
            return plan;
        }
        management_syscall(k, core, args)
    }

    #[inline(always)]
    /// A tick, an IPI, an interrupt on a line without a handler
    /// notification to signal (or masked: it is only acknowledged;
    /// signalling a handler's notification marks the line pending, a
    /// management entry), and a fault's `Call` to its handler run on the
    /// shared path; the rest is management.
    fn other(k: &Kernel<LockFreeOf<C>>, core: &mut CoreHandle, what: OtherEntry) -> Option<ExitPlan> {
        let c = k.check(core);
        shared_entry(&k.regime, &k.state, c, what)
    }
}

/// A system call the shared path sent to a management entry: the general
/// path, on the words (out of line and cold, so that the entry around the
/// shared path holds only that path's code: measured 4 instructions fewer
/// per `Call` + `ReplyRecv` round trip).
#[cold]
#[inline(never)]
fn management_syscall<const C: bool>(k: &Kernel<LockFreeOf<C>>, core: &mut CoreHandle, args: SyscallArgs) -> ExitPlan {
    general_syscall(k, core, args, false, &Words::<true, true> { lf: &k.state.waits })
}

/// Run `f` on `input` as core `core` on a shared path (between the gate's
/// reader entry and exit, [`enter_shared`]). `C`: the regime counts
/// read-modify-writes. The entry's input is handed to `f` rather than
/// captured, so that it reaches `f` as a value, not through a reference to
/// the caller's copy.
#[inline(always)]
fn shared<const C: bool, I, T>(
    gate: &LockFreeOf<C>,
    s: &State<LfState>,
    core: usize,
    kind: u8,
    input: I,
    f: impl FnOnce(&mut Ctx<'_, LfState>, &LfState, I) -> T,
) -> T {
    // Leaves the gate once `f`'s result is in place (it is built straight
    // into this function's result, not copied out of a local first).
    let (_inside, mut ctx) = enter_shared(gate, s, core, kind);
    f(&mut ctx, &s.waits, input)
}

/// Trap as `kind`, enter the gate's reader side and make the context of
/// core `core` on a shared path: the caller binds the two in this order, so
/// that the context goes first and then the gate's reader side is left
/// ([`Inside`]). The caller has checked the core's handle: `core` is a core
/// of this kernel, and no other thread acts as it. (Two values rather than
/// one that holds both: the gate and the core would then be read back from
/// memory at the end.)
#[inline(always)]
fn enter_shared<'k, const C: bool>(
    gate: &'k LockFreeOf<C>,
    s: &'k State<LfState>,
    core: usize,
    kind: u8,
) -> (Inside<'k, C>, Ctx<'k, LfState>) {
    // SAFETY: the caller checked the core's handle: `core` is a core of
    // this kernel.
    unsafe { s.trap(core, kind) };
    // SAFETY: `core` is a core handle's, below the configuration's cores,
    // which `Kernel::boot` checked against the regime's, and the caller
    // holds that handle `&mut`: no other thread acts as `core`.
    unsafe { gate.enter_shared(core) };
    // SAFETY: the gate's reader side excludes every management operation
    // until the `Inside` goes (after the context: the caller's binding
    // order), and the platform's `CoreHandle` (checked by the caller) makes
    // this the only thread acting as `core`. The context is used only as the
    // ownership protocol of `crate::lockfree` allows: this core's scheduler
    // state and the threads it owns mutably, capability / endpoint /
    // notification / reply slots read-only, everything shared through
    // atomics.
    let ctx = unsafe { Ctx::new(s, core) };
    (Inside { gate, core }, ctx)
}

/// Core `core` on a shared path: leaves the gate's reader side when it
/// goes (see [`enter_shared`]).
struct Inside<'g, const C: bool> {
    gate: &'g LockFreeOf<C>,
    core: usize,
}

impl<const C: bool> Drop for Inside<'_, C> {
    #[inline(always)]
    fn drop(&mut self) {
        // SAFETY: `shared` made this right after `enter_shared(core)`, whose
        // contract (`core` is this kernel's, and no other thread acts as
        // it) holds until the entry ends, here.
        unsafe { self.gate.exit_shared(self.core) };
    }
}

/// A tick, IPI or interrupt entry of `core` on the shared path; `None` if
/// it needs a management entry.
#[inline]
fn shared_entry<const C: bool>(
    gate: &LockFreeOf<C>,
    s: &State<LfState>,
    core: usize,
    what: OtherEntry,
) -> Option<ExitPlan> {
    // A fault's call is interrupted like a system call's (`Kernel::fault`).
    let trap = if matches!(what, OtherEntry::Fault(_)) { TRAP_SYSCALL } else { TRAP_OTHER };
    shared(gate, s, core, trap, what, |ctx, lf, what| {
        let cur = ctx.lf_shared_current()?;
        let (ack, fault) = match what {
            OtherEntry::Interrupt(irq) => (ctx.lf_interrupt_ack(irq)?, None),
            OtherEntry::Tick | OtherEntry::Ipi => (None, None),
            // A fault on an idle core is ignored.
            OtherEntry::Fault(kind) => match cur {
                Some(c) => (None, Some((c.t, kind, ctx.decode_fault(lf, &c, kind).ok()?))),
                None => (None, None),
            },
        };
        ctx.lf_begin::<C>(lf, false);
        if what == OtherEntry::Tick {
            ctx.handle_tick();
        }
        if let Some(irq) = ack {
            ctx.irq_acks.insert(irq);
        }
        if let Some((t, kind, op)) = fault {
            ctx.begin_fault(t, kind);
            // A pending suspend stops the thread first: resumed, it faults
            // again.
            if !ctx.lf_stop_trapped::<C>(lf, t) {
                let out = match op {
                    Some(op) => ctx.execute(&Words::<false, C> { lf }, t, op),
                    None => Outcome::Error(Error::FailedLookup),
                };
                ctx.end_fault(t, out);
            }
        }
        Some(ctx.lf_finish::<C>(lf))
    })
}

impl Ctx<'_, LfState> {
    /// A system call with no current thread (it was stopped): nothing to
    /// run, the entry only ends.
    #[inline(always)]
    fn lf_idle_call<const C: bool>(&mut self, lf: &LfState) -> ExitPlan {
        self.lf_begin::<C>(lf, true);
        self.lf_finish::<C>(lf)
    }

    /// `Call` or `ReplyRecv` of this core's current thread on the shared
    /// path: the fast path, the general path out of line beside it (see
    /// [`Ended`]). Out of line itself, as the general path's system call
    /// is (`handle_syscall`).
    #[inline(never)]
    fn lf_ipc_call<const C: bool>(
        &mut self,
        gate: &LockFreeOf<C>,
        s: &State<LfState>,
        args: SyscallArgs,
        slow: &mut Option<ExitPlan>,
    ) -> Ended {
        let lf = self.lf();
        let c = match self.lf_shared_current() {
            Some(Some(c)) => c,
            Some(None) => return put(slow, Some(self.lf_idle_call::<C>(lf))),
            // Declined: `slow` stays empty.
            None => return None,
        };
        // The general path gets copies of the caller's view and the
        // arguments: borrowed, they would be stored for it before the fast
        // path begins.
        self.lf_fastpath::<C>(lf, &c, args, slow, move |ctx| ctx.lf_shared_call_apart::<C>(gate, s, &c, args))
    }

    /// [`Ctx::lf_shared_call`] out of line, beside the fast path.
    #[inline(never)]
    fn lf_shared_call_apart<const C: bool>(
        &mut self,
        gate: &LockFreeOf<C>,
        s: &State<LfState>,
        c: &CallerView,
        args: SyscallArgs,
    ) -> Option<ExitPlan> {
        self.lf_shared_call::<C>(gate, s, c, args)
    }

    /// A system call on the shared path: decoded, then run by the one
    /// executor (or, for the invocations this regime runs without the
    /// whole kernel, apart); `None`: it needs a management entry (nothing
    /// changed).
    #[inline(always)]
    fn lf_shared_call<const C: bool>(
        &mut self,
        gate: &LockFreeOf<C>,
        s: &State<LfState>,
        c: &CallerView,
        args: SyscallArgs,
    ) -> Option<ExitPlan> {
        let lf = self.lf();
        Some(match self.decode_call(lf, c, args).ok()? {
            Decoded::Invocation { slot, cap } => match self.decode_shared(c, slot, cap, MessageInfo(args.info))? {
                Ok(op) => self.lf_run_op::<C>(gate, s, c.t, op),
                Err(e) => self.lf_run_decoded::<C>(lf, c.t, Decoded::Fail(e)),
            },
            op => self.lf_run_decoded::<C>(lf, c.t, op),
        })
    }

    /// Begin the entry and run `t`'s call `op`, decoded for the one
    /// executor, then end the entry.
    #[inline(always)]
    fn lf_run_decoded<const C: bool>(&mut self, lf: &LfState, t: Ref<Tcb>, op: Decoded) -> ExitPlan {
        self.lf_begin::<C>(lf, true);
        // A pending suspend stops the caller before its call runs.
        if self.lf_stop_trapped::<C>(lf, t) {
            return self.lf_finish::<C>(lf);
        }
        let ipc = !matches!(op, Decoded::Yield | Decoded::Fail(_) | Decoded::Subsys(_));
        let out = self.execute(&Words::<false, C> { lf }, t, op);
        self.complete::<true>(t, out);
        if ipc {
            bump(&self.own_cell().fastpath);
        }
        self.lf_finish::<C>(lf)
    }

    /// Begin the entry and run `t`'s invocation `op`, which this regime
    /// runs without the whole kernel (`decode.rs`), then end the entry.
    fn lf_run_op<const C: bool>(
        &mut self,
        gate: &LockFreeOf<C>,
        s: &State<LfState>,
        t: Ref<Tcb>,
        op: SharedOp,
    ) -> ExitPlan {
        let (core, lf) = (self.core, self.lf());
        self.lf_begin::<C>(lf, true);
        let rmw = |r| lf.count::<C>(core, r);
        // A pending suspend stops the caller before its call runs (a frame
        // the decoder took goes back).
        if self.lf_stop_trapped::<C>(lf, t) {
            if let SharedOp::Page(p) = op {
                self.undo_page(p, &rmw);
            }
            return self.lf_finish::<C>(lf);
        }
        let (suspended, destroyed) = match op {
            SharedOp::Control { t, resume: false } => (Some(t), None),
            SharedOp::Destroy { t, slot, .. } => (Some(t), Some(slot)),
            _ => (None, None),
        };
        if suspended.is_some() {
            self.lists(core).own_request = false;
        }
        let out = self.run_shared::<C>(lf, t, op);
        let done = matches!(out, Outcome::Done);
        self.complete::<true>(t, out);
        // A freed frame's grace period: every other core leaves the entry
        // in which it may have read the frame's capability (`pages.rs`).
        if let (SharedOp::Page(PageOp::Free { frame, untyped, .. }), true) = (op, done) {
            for other in (0..s.config.cores).filter(|&d| d != core) {
                let _ = gate.wait_out_of_entry(core, other);
            }
            self.retire_shared_frame(frame, untyped, &rmw);
        }
        if matches!(op, SharedOp::Page(_)) && done {
            bump(&self.lf_own().pages);
        }
        // A call of the suspended thread its core checked before the
        // request completes before the suspend returns (`control.rs`).
        if let Some(s) = suspended {
            // (A thread of this core is met in this entry, or by a taker
            // later: there is no other entry to wait for.)
            let home = lf.ctl_of(s).home();
            if home != core {
                let _ = gate.wait_out_of_entry(core, home);
            }
            // Two cores suspending each other's threads at once: the
            // higher core's call yields (`control.rs`).
            if core > home && lf.ctl_of(t).requested() == Some(false) {
                match destroyed {
                    Some(slot) => self.lf_withdraw_destroy::<C>(lf, (t, s), slot),
                    None if self.lists(core).own_request => self.lf_withdraw_suspend::<C>(lf, t, s),
                    // The request was not this call's (the thread was
                    // stopped, or another core's request stood): there is
                    // none of its own to take back.
                    None => {}
                }
            }
        }
        self.lf_finish::<C>(lf)
    }

    /// Run an invocation decoded for a shared path.
    fn run_shared<const C: bool>(&mut self, lf: &LfState, caller: Ref<Tcb>, op: SharedOp) -> Outcome {
        let core = self.core;
        let rmw = |r| lf.count::<C>(core, r);
        match op {
            SharedOp::Control { t, resume } => self.lf_control::<false, C>(lf, t, resume),
            SharedOp::Frame(op) => self.invoke_frame(caller, op, &rmw),
            SharedOp::Page(op) => self.invoke_page(op, &rmw),
            SharedOp::Destroy { t, slot, cap } => self.lf_destroy::<C>(lf, t, slot, cap),
        }
    }

    /// The current thread, if a shared entry may run with it: `Some(None)`
    /// for none, `Some(Some(_))` for a live runnable thread of this core
    /// holding no stalled cores and no node left in an endpoint. A zombie
    /// (to be freed: the allocator is management's), a dead or foreign
    /// thread, a stall owner (whose holds every completed call releases, on
    /// other cores) or a ghost (`bound.rs`) gives `None`.
    #[inline(always)]
    fn lf_shared_current(&mut self) -> Option<Option<CallerView>> {
        let (core, lf) = (self.core, self.lf());
        let Some(t) = self.own().current else { return Some(None) };
        let x = self.get(t)?;
        let ok = matches!(x.state, ThreadState::Running) && x.core == core && x.holds.is_empty();
        // A bound thread a signal woke may not wait anywhere while its
        // node is left in an endpoint (`bound.rs`).
        let ghost = x.bound.is_some() && lf.ctl_of(t).is_ghost();
        (ok && !ghost).then_some(Some(CallerView::of(t, x)))
    }

    /// What `handle_interrupt` does with `irq` if that is only an
    /// acknowledgement (`Some(Some(irq))`) or nothing (`Some(None)`: out of
    /// range, or masked); `None` if it signals a notification (management).
    /// IRQ slots are written only by management entries, so reading one is
    /// sound here.
    #[inline]
    fn lf_interrupt_ack(&mut self, irq: usize) -> Option<Option<usize>> {
        if irq >= crate::abi::NUM_IRQS {
            return Some(None);
        }
        let s = self.irq_ref(irq);
        if s.pending {
            return Some(None);
        }
        match if s.issued { s.ntfn } else { None } {
            Some((n, _)) if self.live(n) => None,
            _ => Some(Some(irq)),
        }
    }

    /// `begin_entry` of a shared entry (whose current thread is known not to
    /// be a zombie), then the inbox.
    #[inline(always)]
    fn lf_begin<const C: bool>(&mut self, lf: &LfState, syscall: bool) {
        let cell = self.own_cell();
        bump(if syscall { &cell.syscalls } else { &cell.other_entries });
        if cell.pending.load(Ordering::Relaxed) != 0 {
            let p = cell.pending.swap(0, Ordering::Acquire);
            if p & (IPI_RESCHEDULE | IPI_STALL) != 0 {
                self.request_reschedule();
            }
        }
        self.lf_take_stop_ipi::<C>();
        self.lf_drain::<C>(lf);
    }

    /// Whether [`Ctx::lf_begin`] would do anything but count the entry: a
    /// pending interrupt, an owed stop interrupt or a woken thread in the
    /// inbox (the fast path runs only where it would not). Kept beside it,
    /// step for step.
    #[inline(always)]
    pub(super) fn lf_begin_has_work(&self) -> bool {
        let own = self.lf_own();
        self.own_cell().pending.load(Ordering::Relaxed) != 0
            || own.stop_ipi.load(Ordering::Relaxed)
            || !own.inbox.is_empty()
    }

    /// Start of every management entry but a look: every core's inbox goes
    /// into its ready queues, so the general code sees the scheduler state
    /// it knows (a thread is current, ready, blocked or inactive). The IPIs
    /// the wakers decided on are already planned; a core whose inbox held
    /// anything gets its pending `RESCHEDULE` bit, which the general code's
    /// entries test, and this core takes its owed stop interrupt
    /// (`LfCore::stop_ipi`). A look leaves all this to the cores' next
    /// entries, which therefore run as they would without it (it reads a
    /// thread in an inbox as ready, and the checker counts inboxes as
    /// places).
    fn lf_begin_exclusive(&mut self) {
        let lf = self.lf();
        self.lf_take_stop_ipi::<true>();
        for c in 0..self.s.config.cores {
            let mut any = false;
            for i in lf.cores[c].inbox.take_all(lf.wake_links::<true>(self.core)) {
                any = true;
                if let Some(t) = self.ref_at::<Tcb>(i) {
                    self.enqueue(t, false);
                }
            }
            if any {
                self.cell(c).pending.fetch_or(IPI_RESCHEDULE, Ordering::Release);
            }
        }
    }

    /// End of every management entry: publish every core's priority (the
    /// operation may have changed any core's current thread or its
    /// priority). Plain stores: the shared paths that read them start after
    /// the gate's release.
    fn lf_end_exclusive(&mut self) {
        let lf = self.lf();
        for c in 0..self.s.config.cores {
            let p = match self.cs(c).current {
                Some(t) => self.get(t).map_or(IDLE, |x| published(x.prio)),
                None => IDLE,
            };
            lf.cores[c].prio.store(p, core::sync::atomic::Ordering::Relaxed);
        }
    }
}
