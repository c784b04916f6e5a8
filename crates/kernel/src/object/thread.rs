//! The thread control block as data: its state, scheduling links,
//! CSpace/VSpace, bound notification and registers (the invocations are
//! `tcb.rs`, the scheduling `sched/`).

use crate::abi::{MessageInfo, Word, NUM_REGS};
use crate::args::FaultKind;
use crate::exit::CoreMask;
use crate::object::{CNode, Endpoint, Notification, Ref, Reply, VSpace, NIL};

/// Where a thread is and what it waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ThreadState {
    /// Never started, suspended, or stopped by a fault: in no queue.
    Inactive,
    /// Runnable: the current thread of its core, or in its core's ready queue.
    Running,
    /// In `ep`'s send queue; the message stays in its IPC buffer (`fault`:
    /// it is the fault message the kernel sends for it, built from
    /// [`Tcb::fault`]).
    BlockedOnSend { ep: Ref<Endpoint>, badge: Word, info: MessageInfo, grant: bool, call: bool, fault: bool },
    /// In `ep`'s receive queue; a `Call` it receives is recorded in `reply`.
    BlockedOnRecv { ep: Ref<Endpoint>, reply: Option<Ref<Reply>> },
    /// Its `Call` was received; `reply` records it as the caller (`fault`:
    /// the call is its fault message, answered by [`Tcb::fault`]'s rules).
    BlockedOnReply { reply: Ref<Reply>, fault: bool },
    /// In `ntfn`'s wait queue.
    BlockedOnNotification { ntfn: Ref<Notification> },
    /// Destroyed while running on another core: still that core's current
    /// thread, in no other place, freed at that core's next kernel entry.
    Zombie,
}

/// A thread control block. Its IPC buffer lives beside it (same slab index)
/// in a separate cell, so user code may use the buffer while the kernel
/// updates the TCB.
#[derive(Debug)]
pub(crate) struct Tcb {
    pub state: ThreadState,
    /// Affinity: the only core the thread runs on.
    pub core: usize,
    pub prio: u8,
    /// Ready-queue links (slab indices) and membership.
    pub sched_next: u32,
    pub sched_prev: u32,
    pub in_ready: bool,
    /// Endpoint / notification queue links.
    pub ep_next: u32,
    pub ep_prev: u32,
    pub cspace: Option<Ref<CNode>>,
    pub vspace: Option<Ref<VSpace>>,
    pub regs: [Word; NUM_REGS],
    /// Has not run since creation or `WriteRegisters`.
    pub fresh: bool,
    pub bound: Option<Ref<Notification>>,
    /// Timer ticks left in the time slice.
    pub slice: u32,
    /// Cores this thread keeps stalled (see `sched.rs`).
    pub holds: CoreMask,
    /// `TcbSetFaultHandler`'s capability pointer, looked up in the thread's
    /// own CSpace when it faults (0: none).
    pub fault_handler: Word,
    /// The fault being delivered: meaningful only while the state says so
    /// (`BlockedOnSend`/`BlockedOnReply` with `fault`), so nothing has to
    /// clear it when the delivery is cancelled.
    pub fault: Option<FaultKind>,
}

impl Tcb {
    pub fn new(core: usize) -> Self {
        Self {
            state: ThreadState::Inactive,
            core,
            prio: 0,
            sched_next: NIL,
            sched_prev: NIL,
            in_ready: false,
            ep_next: NIL,
            ep_prev: NIL,
            cspace: None,
            vspace: None,
            regs: [0; NUM_REGS],
            fresh: true,
            bound: None,
            slice: 1,
            holds: CoreMask::EMPTY,
            fault_handler: 0,
            fault: None,
        }
    }
}
