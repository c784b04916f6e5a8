//! The kernel's public face: boot, and the entry points a platform calls.
//!
//! Each entry point is *thin*: publish that the core has trapped, enter the
//! regime, build the access context, hand off to safe dispatch code, decide
//! what runs next, leave the regime, return the [`ExitPlan`].
//!
//! # How a platform drives the kernel
//!
//! ```text
//! let (kernel, boot, handles) = Kernel::boot(BootConfig::new(cores), BigLock::<Clh>::new(cores))?;
//! // move handles[c] to core c's OS thread; core 0 starts with the root thread:
//! let mut plan = kernel.ipi(&mut handle);              // plan.run = root, plan.start = Some(fresh)
//! loop {
//!     for c in plan.ipis.iter() { wake(c) }               // after the kernel returned
//!     for irq in plan.irq_acks.iter() { unmask(irq) }
//!     match plan.run {
//!         None => { idle until woken, add_idle_cycles; plan = kernel.ipi(&mut handle) }   // or timer_tick / interrupt
//!         Some(t) => {
//!             if let Some(s) = plan.start { create a fresh context for t at s.entry(s.arg) }
//!             resume t until it traps:
//!               system call  -> plan = kernel.syscall(&mut handle, args)
//!               panic        -> plan = kernel.fault(&mut handle, FaultKind::UserPanic)
//!         }
//!     }
//! }
//! ```
//!
//! # The platform's contract
//!
//! * **One actor per core.** Core `c`'s entry points are called only by the
//!   holder of `c`'s [`CoreHandle`] (enforced by `&mut`).
//! * **A trap is handled first.** When the current thread traps with a system
//!   call, the platform's next entry for that core is [`Kernel::syscall`];
//!   ticks, interrupts and IPIs are delivered before the thread runs again or
//!   after the system call returned, never between the trap and `syscall`
//!   (the kernel marks the core *trapped* only for the entry's duration).
//! * **Plans are performed in order** (IPIs, IRQ acks, then `run`); an IPI
//!   target must enter the kernel soon (an idle core must be woken; a busy
//!   one should call [`Kernel::ipi`] when [`Kernel::pending_ipi`] says so, at
//!   its next preemption point — on the hosted platform, the next trap).
//! * **Restart** is the user stub's job (see [`crate::abi`]).
//! * **Thread contexts** are keyed by [`ThreadId::index`]; a plan with
//!   `start: Some(_)` means "make a fresh context" (a new thread in the slot, a
//!   thread whose registers were rewritten, or one restarted after a fault).
//!   A thread destroyed while it ran ends with no further notice: its context
//!   is simply never resumed again (the platform may drop it when the slot is
//!   reused, or at shutdown).
//! * **Under `none`** see [`crate::NoLock::new`] for what must stay disjoint.
//!
//! The user side of a system call: write message words and capability
//! pointers into the thread's [`IpcBuffer`] (pointer from
//! [`Kernel::ipc_buffer`]), trap with [`SyscallArgs`], and when resumed read
//! `error`, `tag`, `badge` and `msg` back; if `restart != 0`, trap again with
//! the same arguments.

use alloc::vec::Vec;
use core::fmt;
use core::sync::atomic::{AtomicU64, Ordering};

use crate::abi::{IpcBuffer, Word, MAX_CORES, NUM_IRQS, NUM_PRIORITIES};
use crate::args::Entry;
use crate::args::{FaultKind, OtherEntry, SyscallArgs};
use crate::config::{BootConfig, BootError};
use crate::exit::{ExitPlan, StartInfo};
use crate::hold::Hold;
use crate::ids::ThreadId;
use crate::introspect::{BootInfo, CoreStats, ThreadInfo};
use crate::regime::{Drive, Regime, SetCheck};
use crate::state::{Ctx, State, TRAP_NONE, TRAP_OTHER, TRAP_SYSCALL};
use crate::violation::InvariantViolation;
use crate::waits::Waits;

static NEXT_KERNEL_ID: AtomicU64 = AtomicU64::new(1);

/// The permission to act as one core: exactly one exists per core, made by
/// [`Kernel::boot`]. Entry points take it by `&mut`, so two OS threads can
/// never act as the same core at once (which the kernel's per-core state and
/// the queue-lock algorithms rely on). Move each handle to its core's thread.
#[derive(Debug)]
pub struct CoreHandle {
    kernel: u64,
    core: usize,
}

impl CoreHandle {
    /// The core's index.
    pub fn index(&self) -> usize {
        self.core
    }
}

/// The kernel, generic over its concurrency-control regime.
///
/// Share it between the cores' OS threads by reference (it is `Sync`); each
/// core acts through its own [`CoreHandle`].
pub struct Kernel<R: Regime> {
    id: u64,
    pub(crate) regime: R,
    pub(crate) state: State<R::Waits>,
}

impl<R: Regime> fmt::Debug for Kernel<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Kernel").field("regime", &R::NAME).field("cores", &self.state.config.cores).finish()
    }
}

pub(crate) use crate::spin::spin_hook;

impl<R: Regime> Kernel<R> {
    /// Boot: build the slabs, the root thread (on core 0, runnable, fresh with
    /// entry 0 and argument 0) and its root CNode holding capabilities to its
    /// TCB, its CNode, its VSpace, IRQ control and all untyped memory.
    pub fn boot(config: BootConfig, regime: R) -> Result<(Self, BootInfo, Vec<CoreHandle>), BootError> {
        let waits = R::Drive::waits(&config, &regime)?;
        let (state, info) = State::boot(&config, waits)?;
        // Every core handle is below `config.cores`, so below the regime's
        // cores: the contract of `Regime::enter` the drives rely on.
        if config.cores > regime.cores() {
            return Err(BootError::RegimeCores);
        }
        let id = NEXT_KERNEL_ID.fetch_add(1, Ordering::Relaxed);
        let handles = (0..config.cores).map(|core| CoreHandle { kernel: id, core }).collect();
        Ok((Self { id, regime, state }, info, handles))
    }

    /// Registers the platform's hardware translation (before the cores
    /// start): every later change to a mapping is told to it from inside
    /// the entry that made it (`translation.rs`).
    pub fn set_translations(&mut self, t: &'static dyn crate::translation::Translations) {
        self.state.translations = Some(t);
    }

    /// The regime (e.g. for the big lock's profiler).
    pub fn regime(&self) -> &R {
        &self.regime
    }

    /// The configuration booted with.
    pub fn config(&self) -> &BootConfig {
        &self.state.config
    }

    /// Number of cores.
    pub fn cores(&self) -> usize {
        self.state.config.cores
    }

    /// Capacity of the TCB slab: every [`ThreadId::index`] is below it.
    pub fn max_threads(&self) -> usize {
        self.state.config.max_threads
    }

    #[inline(always)]
    pub(crate) fn check(&self, core: &CoreHandle) -> usize {
        assert!(core.kernel == self.id, "core handle of another kernel");
        core.core
    }

    /// Run `f` as `core` inside the regime; `kind` is what the core trapped
    /// for (`TRAP_NONE` for introspection, which is not a kernel entry and
    /// must not change the core's scheduling state); `entry` says what the
    /// entry will do, for drives that lock objects. `f` holds each object
    /// before reading it through the drive's guard, and may stop only before
    /// it changed anything (see [`Drive::enter`]).
    #[inline(always)]
    pub(crate) fn enter<'k, T>(
        &'k self,
        core: &mut CoreHandle,
        kind: u8,
        entry: Entry,
        f: impl FnMut(
            &mut Ctx<'_, R::Waits>,
            SetCheck<'_>,
            &mut <R::Drive as Drive<R>>::Guard<'k>,
        ) -> Result<T, <<R::Drive as Drive<R>>::Guard<'k> as Hold>::Stop>,
    ) -> T {
        let c = self.check(core);
        if kind != TRAP_NONE {
            // SAFETY: `c` is the index of a handle of this kernel (`check`).
            unsafe { self.state.trap(c, kind) };
        }
        R::Drive::enter(self, c, entry, f)
    }

    /// A system call by the current thread of `core`. Its results are in its
    /// [`IpcBuffer`] (which it may only read once it runs again).
    pub fn syscall(&self, core: &mut CoreHandle, args: SyscallArgs) -> ExitPlan {
        R::Drive::syscall(self, core, args)
    }

    /// An interrupt on `irq` taken by `core`. If a handler with a notification
    /// is registered, the notification is signalled and the line stays masked
    /// until the handler acknowledges it (`IrqAckIrq`, which puts the line in
    /// a later plan's `irq_acks`); otherwise the line is acknowledged at once.
    /// Out-of-range IRQ numbers are ignored.
    pub fn interrupt(&self, core: &mut CoreHandle, irq: usize) -> ExitPlan {
        self.other_entry(core, OtherEntry::Interrupt(irq), |ctx, guard| ctx.handle_interrupt(irq, guard))
    }

    /// One scheduler tick on `core`: charge the current thread's time slice;
    /// when it runs out, the thread goes to the back of its priority level.
    pub fn timer_tick(&self, core: &mut CoreHandle) -> ExitPlan {
        self.other_entry(core, OtherEntry::Tick, |ctx, _| {
            ctx.handle_tick();
            Ok(())
        })
    }

    /// Serve `core`'s pending remote requests (reschedule, stall). Every entry
    /// point does this first; call this one when the platform saw
    /// [`Kernel::pending_ipi`] or was woken from idle.
    pub fn ipi(&self, core: &mut CoreHandle) -> ExitPlan {
        self.other_entry(core, OtherEntry::Ipi, |_, _| Ok(()))
    }

    /// An interrupt, tick or IPI entry: on the drive's shared path if it has
    /// one that applies, else a general entry running `body` between the
    /// entry's start and end (`body` may stop, as the entry's body may).
    #[inline(always)]
    fn other_entry<'k>(
        &'k self,
        core: &mut CoreHandle,
        what: OtherEntry,
        mut body: impl FnMut(
            &mut Ctx<'_, R::Waits>,
            &mut <R::Drive as Drive<R>>::Guard<'k>,
        ) -> Result<(), <<R::Drive as Drive<R>>::Guard<'k> as Hold>::Stop>,
    ) -> ExitPlan {
        if let Some(plan) = R::Drive::other(self, core, what) {
            return plan;
        }
        self.enter(core, TRAP_OTHER, Entry::Other, |ctx, _, guard| {
            ctx.begin_entry(guard)?;
            body(ctx, guard)?;
            ctx.count_other_entry();
            Ok(ctx.finish_entry())
        })
    }

    /// The current thread of `core` faulted (hosted: its coroutine panicked
    /// or returned, or user code raised a memory-access fault): the fault
    /// goes to the thread's fault handler as a `Call`, or, with no usable
    /// handler, the thread is stopped (made inactive, its pending operation
    /// abandoned). See `FaultKind` and `TcbSetFaultHandler`.
    pub fn fault(&self, core: &mut CoreHandle, kind: FaultKind) -> ExitPlan {
        if let Some(plan) = R::Drive::other(self, core, OtherEntry::Fault(kind)) {
            return plan;
        }
        // A fault's call is interrupted like a system call's: a thread taken
        // away from its trapped core (`detach`) raises the fault again.
        self.enter(core, TRAP_SYSCALL, Entry::Whole, |ctx, _, guard| {
            ctx.begin_entry(guard)?;
            ctx.handle_fault(kind, guard)?;
            ctx.count_other_entry();
            Ok(ctx.finish_entry())
        })
    }

    /// Whether `core` has pending remote requests: IPI bits, and under
    /// `lockfree` a woken thread in its inbox or a stop request (relaxed
    /// loads; any thread may ask). `false` for an out-of-range core.
    #[inline]
    pub fn pending_ipi(&self, core: usize) -> bool {
        let Some(cell) = self.state.cores.get(core) else { return false };
        cell.pending.load(Ordering::Relaxed) != 0 || self.state.waits.asks(core)
    }

    /// Add idle cycles measured by `core`'s idle loop (no lock taken).
    #[inline]
    pub fn add_idle_cycles(&self, core: &CoreHandle, cycles: u64) {
        let c = self.check(core);
        self.state.add_idle_cycles(c, cycles);
    }

    /// Idle cycles reported so far by `core` (0 for an out-of-range core).
    pub fn idle_cycles(&self, core: usize) -> u64 {
        self.state.idle_cycles(core)
    }

    /// Event counters of `core`, read without the lock (approximate while
    /// the core runs).
    pub fn core_stats(&self, core: usize) -> CoreStats {
        let mut stats = self.state.core_stats(core);
        self.state.waits.stats(core, &mut stats);
        stats
    }

    /// The subsystems' lock profile so far (the sysctl sx lock in both
    /// modes, "sysctl mem", the klog mutex); read without any lock.
    pub fn subsystem_profile(&self) -> alloc::vec::Vec<granule_sync::profile::SiteRecord> {
        self.state.subsys.locks.profile()
    }

    /// The kernel log's counters: messages stored and dropped since boot,
    /// and held now (read without any lock: exact only when nothing runs).
    pub fn klog_counts(&self) -> crate::introspect::KlogCounts {
        let k = &self.state.subsys.klog;
        crate::introspect::KlogCounts { appended: k.appended(), dropped: k.dropped(), held: k.held() }
    }

    /// Nodes in the sysctl tree now (the root aside).
    pub fn sysctl_nodes(&self) -> usize {
        self.state.subsys.tree.len()
    }

    /// The IPC buffer of thread `t`'s TCB slot, or null when `t.index()` is
    /// not below [`Kernel::max_threads`]. See [`IpcBuffer`] for who may
    /// access it when; the pointer stays valid as long as the kernel lives,
    /// but the slot belongs to another thread once `t` is destroyed.
    pub fn ipc_buffer(&self, t: ThreadId) -> *mut IpcBuffer {
        self.state.ipc_buffer_ptr(t.index)
    }

    /// How thread `t` starts (entry, argument, and whether it has never run),
    /// or `None` if `t` no longer exists. Does not mark the thread started
    /// (only an [`ExitPlan`] does).
    pub fn start_info(&self, core: &mut CoreHandle, t: ThreadId) -> Option<StartInfo> {
        self.enter(core, TRAP_NONE, Entry::Look, |ctx, _, _| Ok(ctx.start_info(t)))
    }

    /// A snapshot of thread `t`, or `None` if it no longer exists.
    pub fn thread_info(&self, core: &mut CoreHandle, t: ThreadId) -> Option<ThreadInfo> {
        self.enter(core, TRAP_NONE, Entry::Look, |ctx, _, _| Ok(ctx.thread_info(t)))
    }

    /// The current thread of core `of` (`None`: idle), as seen under the regime.
    pub fn current_thread(&self, core: &mut CoreHandle, of: usize) -> Option<ThreadId> {
        self.enter(core, TRAP_NONE, Entry::Look, |ctx, _, _| Ok(ctx.current_of(of)))
    }

    /// The thread a TCB capability names: capability pointer `cptr` in the
    /// CSpace of thread `holder` (introspection for tests and tools; user
    /// threads never see [`ThreadId`]s).
    pub fn thread_of_cap(&self, core: &mut CoreHandle, holder: ThreadId, cptr: Word) -> Option<ThreadId> {
        self.enter(core, TRAP_NONE, Entry::Look, |ctx, _, _| Ok(ctx.thread_of_cap(holder, cptr)))
    }

    /// Check every kernel invariant (see `invariants.rs`); tests call it
    /// after each kernel entry.
    pub fn check_invariants(&self, core: &mut CoreHandle) -> Result<(), InvariantViolation> {
        self.enter(core, TRAP_NONE, Entry::Look, |ctx, _, _| Ok(ctx.check_invariants()))
    }
}

// Compile-time facts the ABI relies on.
const _: () = assert!(NUM_PRIORITIES == 256 && NUM_IRQS <= 64 && MAX_CORES == 64);
