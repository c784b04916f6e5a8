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

use crate::abi::{IpcBuffer, Sysno, Word, MAX_CORES, NUM_IRQS, NUM_PRIORITIES};
use crate::args::{FaultKind, SyscallArgs};
use crate::config::{BootConfig, BootError};
use crate::exit::{ExitPlan, StartInfo};
use crate::fastpath::FastLocks;
use crate::ids::ThreadId;
use crate::introspect::{BootInfo, CoreStats, ThreadInfo};
use crate::invariants::InvariantViolation;
use crate::plan::{Entry, Planned};
use crate::regime::{LockFree, LockSet, LockTarget, Protocol, Regime};
use crate::state::{Ctx, State, TRAP_NONE, TRAP_OTHER, TRAP_SYSCALL};

static NEXT_KERNEL_ID: AtomicU64 = AtomicU64::new(1);

/// Shared rounds a kernel entry tries under [`Protocol::Objects`] before it
/// takes the exclusive side.
const MAX_ROUNDS: u32 = 4;

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
    regime: R,
    state: State,
}

impl<R: Regime> fmt::Debug for Kernel<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Kernel").field("regime", &R::NAME).field("cores", &self.state.config.cores).finish()
    }
}

/// The spin hook of a core waiting for the kernel lock.
///
/// This kernel's remote calls are *asynchronous* (the requesting core never
/// waits for the remote core while holding the lock): a stall request is
/// acknowledged by the remote core either by entering the kernel or by going
/// idle. A core waiting for the lock has already published that it trapped
/// (its user thread is not running), which acknowledges every stall request
/// aimed at it; reschedule requests are served as soon as it holds the lock.
/// So waiting needs only to be polite to the sibling hyperthread.
#[inline(always)]
fn spin_hook() {
    core::hint::spin_loop();
}

impl<R: Regime> Kernel<R> {
    /// Boot: build the slabs, the root thread (on core 0, runnable, fresh with
    /// entry 0 and argument 0) and its root CNode holding capabilities to its
    /// TCB, its CNode, its VSpace, IRQ control and all untyped memory.
    pub fn boot(config: BootConfig, regime: R) -> Result<(Self, BootInfo, Vec<CoreHandle>), BootError> {
        // lockfree: its endpoint words hold 16-bit thread indices.
        if R::LOCK_FREE && config.max_threads > crate::lockfree::MAX_THREADS {
            return Err(BootError::Capacity);
        }
        let (mut state, info) = State::boot(&config)?;
        if R::LOCK_FREE {
            state.lf = Some(crate::lockfree::LfState::new(&config, regime.lock_free().and_then(LockFree::tallies)));
        }
        let id = NEXT_KERNEL_ID.fetch_add(1, Ordering::Relaxed);
        let handles = (0..config.cores).map(|core| CoreHandle { kernel: id, core }).collect();
        Ok((Self { id, regime, state }, info, handles))
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
    fn check(&self, core: &CoreHandle) -> usize {
        assert!(core.kernel == self.id, "core handle of another kernel");
        core.core
    }

    /// Run `f` as `core` inside the regime; `kind` is what the core trapped
    /// for (`TRAP_NONE` for introspection, which is not a kernel entry and
    /// must not change the core's scheduling state); `entry` says what the
    /// entry will do, for regimes that lock objects.
    #[inline(always)]
    fn enter<T>(
        &self,
        core: &mut CoreHandle,
        kind: u8,
        entry: Entry,
        f: impl FnOnce(&mut Ctx<'_>, Option<&dyn Fn(&LockSet) -> bool>) -> T,
    ) -> T {
        let c = self.check(core);
        if kind != TRAP_NONE {
            self.state.trap(c, kind);
        }
        if R::PROTOCOL == Protocol::Objects {
            return self.enter_objects(c, entry, f);
        }
        self.regime.enter(c, spin_hook);
        let lock_set = |set: &LockSet| self.regime.lock_set(c, set);
        let out = {
            // SAFETY: the regime has just granted core `c` access (its `enter`
            // returned), and `core: &mut CoreHandle` proves this is the only
            // thread acting as core `c`; the context ends with this block,
            // before `exit`.
            let mut ctx = unsafe { Ctx::new(&self.state, c) };
            // lockfree: this is a management entry; see `crate::lockfree`.
            if R::LOCK_FREE {
                ctx.lf_begin_exclusive();
            }
            let out = f(&mut ctx, if R::USES_LOCK_SET { Some(&lock_set) } else { None });
            if R::LOCK_FREE {
                ctx.lf_end_exclusive();
            }
            out
        };
        self.regime.exit(c);
        out
    }

    /// [`Self::enter`] for [`Protocol::Objects`]: a shared entry holding this
    /// core's scheduler, then the objects `plan.rs` names, step by step; if a
    /// lock cannot be had, release everything and start again holding what
    /// was learnt (in lock order, from nothing); after [`MAX_ROUNDS`] failed
    /// rounds, or for an entry that needs it, an exclusive entry.
    fn enter_objects<T>(
        &self,
        c: usize,
        entry: Entry,
        f: impl FnOnce(&mut Ctx<'_>, Option<&dyn Fn(&LockSet) -> bool>) -> T,
    ) -> T {
        let mut f = Some(f);
        let syscall = matches!(entry, Entry::Syscall(_));
        let mut exclusive = matches!(entry, Entry::Whole) || (syscall && self.regime.take_escalation(c));
        let mut hint = LockSet::core(c);
        let mut rounds = 0;
        let lock_set = |set: &LockSet| self.regime.lock_set(c, set);
        while !exclusive {
            self.regime.enter(c, spin_hook);
            // The first round's plan takes this core's lock itself; a later
            // round first takes everything learnt so far, in lock order.
            let planned = if rounds == 0 || self.regime.lock_more(c, &hint, spin_hook) {
                // SAFETY: the regime granted core `c` a shared entry; the
                // context reads nothing before `plan` has had this core's
                // lock taken, then only what `plan` has had locked (or what
                // changes only under the exclusive side, see `plan.rs`), and
                // the operation executes only after the regime accepted its
                // lock set. `c`'s handle is `&mut`, so no other thread acts
                // as `c`. The context ends before `exit`.
                let mut ctx = unsafe { Ctx::new(&self.state, c) };
                // A lock that cannot be had is learnt, with what is held, so
                // that the next round takes all of it in lock order.
                let mut failed = None;
                let planned = ctx.plan(&entry, &mut |t: LockTarget| {
                    let ok = self.regime.lock_one(c, t, spin_hook);
                    if !ok {
                        failed = Some(t);
                    }
                    ok
                });
                if planned == Planned::Ready {
                    if let Some(f) = f.take() {
                        let out = f(&mut ctx, Some(&lock_set));
                        self.regime.unlock_objects(c);
                        self.regime.exit(c);
                        return out;
                    }
                }
                if let Some(t) = failed {
                    hint.extend(&self.regime.held_set(c));
                    hint.add_target(t);
                }
                planned
            } else {
                Planned::Exclusive
            };
            self.regime.unlock_objects(c);
            self.regime.exit(c);
            rounds += 1;
            exclusive = planned == Planned::Exclusive || rounds >= MAX_ROUNDS || hint.exclusive();
        }
        self.regime.enter_exclusive(c, spin_hook);
        let out = {
            // SAFETY: the exclusive side excludes every other core's entry;
            // `c`'s handle is `&mut`. The context ends before `exit_exclusive`.
            let mut ctx = unsafe { Ctx::new(&self.state, c) };
            f.take().map(|f| f(&mut ctx, Some(&lock_set)))
        };
        self.regime.exit_exclusive(c);
        match out {
            Some(out) => out,
            // `f` is taken only on the path that returns at once.
            None => unreachable!("kernel entry body ran twice"),
        }
    }

    /// A system call by the current thread of `core`. Its results are in its
    /// [`IpcBuffer`] (which it may only read once it runs again).
    pub fn syscall(&self, core: &mut CoreHandle, args: SyscallArgs) -> ExitPlan {
        if R::PROTOCOL == Protocol::Objects && R::FAST_PATH {
            if let Some(plan) = self.fused_fastpath(core, args) {
                return plan;
            }
        }
        // lockfree: IPC runs on the shared (lock-free) path when it can.
        if R::LOCK_FREE {
            if let Some(gate) = self.regime.lock_free() {
                let c = self.check(core);
                let shared = if R::COUNTING {
                    crate::lockfree::shared_syscall::<true>(gate, &self.state, c, args)
                } else {
                    crate::lockfree::shared_syscall::<false>(gate, &self.state, c, args)
                };
                if let Some(plan) = shared {
                    return plan;
                }
            }
        }
        self.enter(core, TRAP_SYSCALL, Entry::Syscall(args), |ctx, lock_set| {
            ctx.begin_entry(true);
            if R::LOCK_FREE {
                ctx.lf_exclusive_syscall(args);
            } else {
                // Under `Objects` the fast path was tried (fused) already.
                ctx.handle_syscall(args, lock_set, R::FAST_PATH && R::PROTOCOL == Protocol::Whole);
            }
            ctx.finish_entry()
        })
    }

    /// [`Protocol::Objects`]: the IPC fast path fused with the locking, in a
    /// shared entry; `None` (with nothing changed and nothing held) when it
    /// does not apply, and the general path runs. Pending remote requests
    /// send the call to the general path, which serves them first.
    #[inline(always)]
    fn fused_fastpath(&self, core: &mut CoreHandle, args: SyscallArgs) -> Option<ExitPlan> {
        if args.sysno != Sysno::Call.word() && args.sysno != Sysno::ReplyRecv.word() {
            return None;
        }
        let c = self.check(core);
        if self.regime.escalation_pending(c) || self.state.pending(c) {
            return None;
        }
        self.state.trap(c, TRAP_SYSCALL);
        self.regime.enter(c, spin_hook);
        let out = {
            // SAFETY: the regime granted core `c` a shared entry; the fast
            // path reads each object (and this core's scheduler) only after
            // `lock_one` returned `true` for it, or what changes only under
            // the exclusive side (capability slots, generations; see
            // `fastpath.rs`), and writes only what it holds. `c`'s handle is
            // `&mut`, so no other thread acts as `c`. The context ends
            // before `unlock_objects` and `exit`.
            let mut ctx = unsafe { Ctx::new(&self.state, c) };
            let mut locks = RegimeLocks { regime: &self.regime, core: c };
            if ctx.fastpath(args, &mut locks) {
                ctx.count_syscall();
                Some(ctx.finish_entry())
            } else {
                None
            }
        };
        self.regime.unlock_objects(c);
        self.regime.exit(c);
        out
    }

    /// lockfree: a tick, IPI or interrupt entry on the shared path, if it can
    /// run there.
    #[inline(always)]
    fn lf_shared_entry(&self, core: &mut CoreHandle, what: crate::lockfree::SharedEntry) -> Option<ExitPlan> {
        let gate = self.regime.lock_free()?;
        let c = self.check(core);
        if R::COUNTING {
            crate::lockfree::shared_entry::<true>(gate, &self.state, c, what)
        } else {
            crate::lockfree::shared_entry::<false>(gate, &self.state, c, what)
        }
    }

    /// An interrupt on `irq` taken by `core`. If a handler with a notification
    /// is registered, the notification is signalled and the line stays masked
    /// until the handler acknowledges it (`IrqAckIrq`, which puts the line in
    /// a later plan's `irq_acks`); otherwise the line is acknowledged at once.
    /// Out-of-range IRQ numbers are ignored.
    pub fn interrupt(&self, core: &mut CoreHandle, irq: usize) -> ExitPlan {
        if R::LOCK_FREE {
            if let Some(plan) = self.lf_shared_entry(core, crate::lockfree::SharedEntry::Interrupt(irq)) {
                return plan;
            }
        }
        self.enter(core, TRAP_OTHER, Entry::Interrupt(irq), |ctx, _| {
            ctx.begin_entry(false);
            ctx.handle_interrupt(irq);
            ctx.finish_entry()
        })
    }

    /// One scheduler tick on `core`: charge the current thread's time slice;
    /// when it runs out, the thread goes to the back of its priority level.
    pub fn timer_tick(&self, core: &mut CoreHandle) -> ExitPlan {
        if R::LOCK_FREE {
            if let Some(plan) = self.lf_shared_entry(core, crate::lockfree::SharedEntry::Tick) {
                return plan;
            }
        }
        self.enter(core, TRAP_OTHER, Entry::Local, |ctx, _| {
            ctx.begin_entry(false);
            ctx.handle_tick();
            ctx.finish_entry()
        })
    }

    /// Serve `core`'s pending remote requests (reschedule, stall). Every entry
    /// point does this first; call this one when the platform saw
    /// [`Kernel::pending_ipi`] or was woken from idle.
    pub fn ipi(&self, core: &mut CoreHandle) -> ExitPlan {
        if R::LOCK_FREE {
            if let Some(plan) = self.lf_shared_entry(core, crate::lockfree::SharedEntry::Ipi) {
                return plan;
            }
        }
        self.enter(core, TRAP_OTHER, Entry::Local, |ctx, _| {
            ctx.begin_entry(false);
            ctx.finish_entry()
        })
    }

    /// The current thread of `core` faulted (hosted: its coroutine panicked):
    /// it is stopped (made inactive, its pending operation abandoned).
    pub fn fault(&self, core: &mut CoreHandle, kind: FaultKind) -> ExitPlan {
        self.enter(core, TRAP_OTHER, Entry::Whole, |ctx, _| {
            ctx.begin_entry(false);
            ctx.handle_fault(kind);
            ctx.finish_entry()
        })
    }

    /// Whether `core` has pending remote requests (one relaxed load; any
    /// thread may ask). `false` for an out-of-range core.
    #[inline]
    pub fn pending_ipi(&self, core: usize) -> bool {
        self.state.pending(core)
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
        self.state.core_stats(core)
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
        self.enter(core, TRAP_NONE, Entry::Whole, |ctx, _| ctx.start_info(t))
    }

    /// A snapshot of thread `t`, or `None` if it no longer exists.
    pub fn thread_info(&self, core: &mut CoreHandle, t: ThreadId) -> Option<ThreadInfo> {
        self.enter(core, TRAP_NONE, Entry::Whole, |ctx, _| ctx.thread_info(t))
    }

    /// The current thread of core `of` (`None`: idle), as seen under the regime.
    pub fn current_thread(&self, core: &mut CoreHandle, of: usize) -> Option<ThreadId> {
        self.enter(core, TRAP_NONE, Entry::Whole, |ctx, _| ctx.current_of(of))
    }

    /// The thread a TCB capability names: capability pointer `cptr` in the
    /// CSpace of thread `holder` (introspection for tests and tools; user
    /// threads never see [`ThreadId`]s).
    pub fn thread_of_cap(&self, core: &mut CoreHandle, holder: ThreadId, cptr: Word) -> Option<ThreadId> {
        self.enter(core, TRAP_NONE, Entry::Whole, |ctx, _| ctx.thread_of_cap(holder, cptr))
    }

    /// Check every kernel invariant (see `invariants.rs`); tests call it
    /// after each kernel entry.
    pub fn check_invariants(&self, core: &mut CoreHandle) -> Result<(), InvariantViolation> {
        self.enter(core, TRAP_NONE, Entry::Whole, |ctx, _| ctx.check_invariants())
    }
}

/// The fast path's locks under [`Protocol::Objects`]: the regime's.
struct RegimeLocks<'a, R: Regime> {
    regime: &'a R,
    core: usize,
}

impl<R: Regime> FastLocks for RegimeLocks<'_, R> {
    #[inline(always)]
    #[track_caller]
    fn hold(&mut self, target: LockTarget) -> bool {
        self.regime.lock_one(self.core, target, spin_hook)
    }
}

// Compile-time facts the ABI relies on.
const _: () = assert!(NUM_PRIORITIES == 256 && NUM_IRQS <= 64 && MAX_CORES == 64);
