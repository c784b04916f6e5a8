//! The deferred operations: what the platform does after the kernel returns.
//!
//! Nothing with an effect outside kernel memory happens inside a kernel entry
//! (under the big lock, or inside a transaction): the kernel *decides* which
//! thread a core runs next, which cores must be interrupted and which
//! interrupt lines re-enabled, and returns the decision as an [`ExitPlan`].
//! The platform performs it after the kernel has released its lock.
//!
//! The kernel has already written everything the target cores need into
//! kernel memory (their pending-IPI words, ready queues); an IPI in the plan
//! only *wakes* the target so that it enters the kernel (through
//! [`crate::Kernel::ipi`]) soon.

use crate::abi::{Word, MAX_CORES, NUM_IRQS, NUM_REGS, REG_ARG0, REG_PC};
use crate::ids::SpaceId;
use crate::ThreadId;

/// A set of cores (bit `i` = core `i`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct CoreMask(pub u64);

impl CoreMask {
    /// No core.
    pub const EMPTY: CoreMask = CoreMask(0);

    /// The set holding only `core` (`core < MAX_CORES`).
    pub const fn single(core: usize) -> Self {
        Self(1 << core)
    }
    /// Whether `core` is in the set.
    pub const fn contains(self, core: usize) -> bool {
        core < MAX_CORES && self.0 & (1 << core) != 0
    }
    /// Add `core`.
    pub fn insert(&mut self, core: usize) {
        debug_assert!(core < MAX_CORES);
        self.0 |= 1 << core;
    }
    /// Remove `core`.
    pub fn remove(&mut self, core: usize) {
        debug_assert!(core < MAX_CORES);
        self.0 &= !(1 << core);
    }
    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// The cores in the set, ascending.
    pub fn iter(self) -> impl Iterator<Item = usize> {
        let mut bits = self.0;
        core::iter::from_fn(move || {
            if bits == 0 {
                None
            } else {
                let i = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                Some(i)
            }
        })
    }
}

/// A set of interrupt lines (bit `i` = IRQ `i`, `i < NUM_IRQS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct IrqMask(pub u64);

const _: () = assert!(NUM_IRQS <= 64);

impl IrqMask {
    /// Whether `irq` is in the set.
    pub const fn contains(self, irq: usize) -> bool {
        irq < NUM_IRQS && self.0 & (1 << irq) != 0
    }
    /// Add `irq`.
    pub fn insert(&mut self, irq: usize) {
        debug_assert!(irq < NUM_IRQS);
        self.0 |= 1 << irq;
    }
    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// The IRQs in the set, ascending.
    pub fn iter(self) -> impl Iterator<Item = usize> {
        CoreMask(self.0).iter()
    }
}

/// How a thread that has never run (or whose registers were rewritten) starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StartInfo {
    /// `REG_PC`: the entry word (the hosted platform maps it to a registered
    /// Rust function).
    pub entry: Word,
    /// `REG_ARG0`: the argument passed to the entry function. (The other
    /// saved registers stay in the TCB, `TcbReadRegisters`: every
    /// `ExitPlan` is copied on every kernel exit, so it carries only what
    /// a fresh start needs.)
    pub arg: Word,
    /// The thread has not run since it was created or its registers were
    /// written: the platform must create a fresh context for it (dropping any
    /// old context it keeps for the same TCB slot).
    pub fresh: bool,
}

impl StartInfo {
    pub(crate) fn from_regs(regs: [Word; NUM_REGS], fresh: bool) -> Self {
        Self { entry: regs[REG_PC], arg: regs[REG_ARG0], fresh }
    }
}

/// What the platform must do when a kernel entry returns, in this order:
/// send the IPIs, acknowledge the IRQs, then resume `run` (or the idle
/// thread), creating its context first if `start` is `Some`.
#[must_use = "the platform must perform the exit plan"]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExitPlan {
    /// The thread this core runs next; `None` = this core's idle thread.
    pub run: Option<ThreadId>,
    /// `Some` when `run` has never run (or was reset by `WriteRegisters`):
    /// create a new context for it at `start.entry(start.arg)`. The kernel
    /// reports a fresh start exactly once.
    pub start: Option<StartInfo>,
    /// Cores to interrupt (never includes this core): their pending-IPI word
    /// is already set; they must enter the kernel through
    /// [`crate::Kernel::ipi`] soon (an idle core must be woken).
    pub ipis: CoreMask,
    /// Interrupt lines to acknowledge / unmask at the interrupt controller.
    pub irq_acks: IrqMask,
    /// The address space `run` runs in (`None`: it has none, or the core
    /// idles): a platform with page tables switches to it here, after the
    /// kernel's lock is released (`translation.rs`).
    pub space: Option<SpaceId>,
}

impl ExitPlan {
    /// Run the idle thread; nothing else to do.
    pub const fn idle() -> Self {
        Self { run: None, start: None, ipis: CoreMask::EMPTY, irq_acks: IrqMask(0), space: None }
    }
}

// Every kernel exit copies its plan through a few returns: keep it small.
const _: () = assert!(core::mem::size_of::<ExitPlan>() <= 64);
