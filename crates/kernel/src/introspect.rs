//! What the kernel reports about itself: the root task's boot information
//! ([`BootInfo`]), a thread's state ([`ThreadStatus`], [`ThreadInfo`]) and a
//! core's counters ([`CoreStats`]).

use alloc::vec::Vec;

use crate::abi::Word;
use crate::ids::ThreadId;

/// What the root thread is told at boot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BootInfo {
    /// Number of cores.
    pub cores: usize,
    /// The root thread (runs on core 0).
    pub root_thread: ThreadId,
    /// The root CNode has `2^root_cnode_bits` slots.
    pub root_cnode_bits: u8,
    /// Untyped capabilities: `(cptr, bytes)`, at `CAP_FIRST_UNTYPED..`.
    pub untyped: Vec<(Word, u64)>,
    /// The first empty slot of the root CNode (all later slots are empty too).
    pub first_free_slot: Word,
    /// Slots in the root CNode (`2^root_cnode_bits`).
    pub slots: Word,
    /// IRQ of core `c`'s virtual timer: `timer_irq_base + c`.
    pub timer_irq_base: usize,
    /// Device IRQs are `device_irq_base..NUM_IRQS`.
    pub device_irq_base: usize,
}

/// A thread's scheduling state as seen from outside (tests, tools).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadStatus {
    /// Never started, suspended or stopped by a fault.
    Inactive,
    /// Runnable and the current thread of its core.
    Current,
    /// Runnable, in its core's ready queue.
    Ready,
    /// Blocked sending on an endpoint.
    BlockedOnSend,
    /// Blocked receiving on an endpoint.
    BlockedOnRecv,
    /// Blocked waiting for a reply.
    BlockedOnReply,
    /// Blocked waiting on a notification.
    BlockedOnNotification,
    /// Destroyed while running on another core; its slot is freed when that
    /// core next enters the kernel.
    Zombie,
}

/// A snapshot of one thread ([`Kernel::thread_info`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadInfo {
    /// Its state.
    pub status: ThreadStatus,
    /// Its affinity core.
    pub core: usize,
    /// Its priority.
    pub priority: u8,
    /// The system call it is blocked in is abandoned, to be restarted: a
    /// suspend reached it while it waited. The lock regimes restart the call
    /// at once; `lockfree` when the call is next reached (`STOPME`).
    pub call_abandoned: bool,
    /// The address space it runs in (`None`: it has none).
    pub space: Option<crate::ids::SpaceId>,
}

/// Per-core event counters (cheap: written only by their core).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CoreStats {
    /// System calls entered.
    pub syscalls: u64,
    /// Interrupts, timer ticks, IPIs and faults entered.
    pub other_entries: u64,
    /// Context switches (the plan's thread differed from the previous one).
    pub switches: u64,
    /// System calls completed by the fast path: `Call`, `ReplyRecv`,
    /// `Signal` and a blocking `Wait` (under `lockfree`: IPC and
    /// notification calls completed on the shared, lock-free path).
    pub fastpath: u64,
    /// 4 KiB frames allocated or freed on `lockfree`'s shared path
    /// (`lockfree/pages.rs`; 0 under every other regime).
    pub shared_pages: u64,
    /// Thread destroys made on `lockfree`'s shared path, withdrawn ones
    /// included (`lockfree/finish_destroy.rs`; 0 under every other regime).
    pub shared_destroys: u64,
    /// Bound receivers a signal woke out of an endpoint receive on
    /// `lockfree`'s shared path (`lockfree/bound.rs`; 0 under every other
    /// regime).
    pub bound_wakes: u64,
    /// Suspends and resumes made on `lockfree`'s shared path, of any
    /// core's thread, withdrawn ones included (`lockfree/control.rs`; 0
    /// under every other regime).
    pub shared_controls: u64,
    /// Idle cycles reported by the platform.
    pub idle_cycles: u64,
}

/// The kernel log's counters ([`crate::Kernel::klog_counts`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KlogCounts {
    /// Messages stored since boot.
    pub appended: u64,
    /// Messages dropped because the ring was full, since boot.
    pub dropped: u64,
    /// Messages stored and not yet read.
    pub held: u64,
}
