//! What one run of a program recorded: every system call attempt of every
//! thread with its real-time interval and observed result, every interrupt,
//! the threads' final states, and counters.
//!
//! Real time is a global counter taken just before a core traps into the
//! kernel and just after the kernel returns: attempt `a` finished before `b`
//! started, in every execution consistent with what the cores saw, iff
//! `a.ret < b.inv`.

use granule_kernel::{KlogCounts, SyscallArgs, ThreadInfo, ThreadStatus};

use crate::program::Op;
use crate::user::{MsgId, Outcome};

/// What became of an attempt, as its thread saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Observed {
    /// The call completed (successfully or with an error).
    Completed(Outcome),
    /// The kernel asked for the call to be reissued.
    Restarted,
    /// Still blocked when the run ended (the thread's status then).
    Pending(ThreadStatus),
    /// Never seen: the thread was destroyed first.
    Unknown,
}

/// One trap of a thread into the kernel for an operation.
#[derive(Clone, Debug)]
pub struct Attempt {
    /// The program thread (`threads.len()`: the root, as rescuer).
    pub thread: usize,
    /// Index of the operation in the thread's program (`None` for the
    /// root's operations and the driver's own steps).
    pub op_index: Option<usize>,
    /// The operation (`None`: a driver step: a thread halting, the root
    /// parking or acknowledging its interrupt).
    pub op: Option<Op>,
    /// Reissue number of this operation (0 for the first trap).
    pub attempt: u64,
    /// The message it sent, for sends.
    pub msg_id: Option<MsgId>,
    /// Registers trapped with.
    pub args: SyscallArgs,
    /// Message words written before the trap.
    pub words: crate::user::Inputs,
    /// Core that trapped.
    pub core: usize,
    /// Real-time interval of the kernel entry (`inv`, `ret`).
    pub inv: u64,
    /// See `inv`.
    pub ret: u64,
    /// The entry's own plan ran the thread again at once (so a restart seen
    /// then means the attempt did nothing: a stall request, or a trapped call
    /// discarded by another core).
    pub immediate: bool,
    /// The result.
    pub observed: Observed,
}

/// An interrupt a core took on behalf of a thread's `Irq` step.
#[derive(Clone, Copy, Debug)]
pub struct Interrupt {
    /// The thread whose step it was.
    pub thread: usize,
    /// The step.
    pub op_index: usize,
    /// Device line.
    pub line: u8,
    /// Real-time interval of the entry.
    pub inv: u64,
    /// See `inv`.
    pub ret: u64,
}

/// Why a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Every core idle, no interrupt pending: nothing can happen any more.
    Quiescent,
    /// The step bound was reached.
    Steps,
    /// The wall-time bound was reached.
    Wall,
    /// A violation stopped it.
    Violation,
}

/// Everything a run recorded.
#[derive(Clone, Debug)]
pub struct RunRecord {
    /// Cores the kernel had.
    pub cores: usize,
    /// The regime may deliver a `ReplyRecv`'s reply and then restart the
    /// call (`Regime::REPLY_THEN_RESTART`): a restarted `ReplyRecv` may have
    /// replied.
    pub reply_then_restart: bool,
    /// Every attempt, thread by thread in program order.
    pub attempts: Vec<Attempt>,
    /// Every interrupt step.
    pub interrupts: Vec<Interrupt>,
    /// Each program thread's final state (`None`: destroyed).
    pub finals: Vec<Option<ThreadInfo>>,
    /// Each thread reached its halt.
    pub halted: Vec<bool>,
    /// Why the run ended.
    pub stop: Stop,
    /// System calls entered (all attempts, halts and yields included).
    pub syscalls: u64,
    /// All kernel entries.
    pub entries: u64,
    /// Invariant checks made.
    pub invariant_checks: u64,
    /// 4 KiB frames allocated or freed on `lockfree`'s shared path.
    pub shared_pages: u64,
    /// Threads destroyed on `lockfree`'s shared path.
    pub shared_destroys: u64,
    /// Bound receivers woken by a signal on `lockfree`'s shared path.
    pub bound_wakes: u64,
    /// Suspends and resumes made on `lockfree`'s shared path.
    pub shared_controls: u64,
    /// The kernel log's counters at the end.
    pub klog: KlogCounts,
}

impl std::fmt::Display for RunRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "run: {} system calls, {} kernel entries, {} invariant checks, stopped {:?}",
            self.syscalls, self.entries, self.invariant_checks, self.stop
        )?;
        let mut events: Vec<(u64, String)> = self
            .attempts
            .iter()
            .map(|a| {
                let op = a.op.map_or("(halt, park or park ack)".to_string(), |op| op.to_string());
                let seen = match a.observed {
                    Observed::Completed(o) => o.to_string(),
                    Observed::Restarted if a.immediate => "restart (at once)".to_string(),
                    Observed::Restarted => "restart".to_string(),
                    Observed::Pending(s) => format!("still blocked ({s:?})"),
                    Observed::Unknown => "never seen".to_string(),
                };
                (a.inv, format!("[{}..{}] core {} t{} `{op}` #{}: {seen}", a.inv, a.ret, a.core, a.thread, a.attempt))
            })
            .collect();
        events.extend(
            self.interrupts
                .iter()
                .map(|i| (i.inv, format!("[{}..{}] t{} (interrupt line {})", i.inv, i.ret, i.thread, i.line))),
        );
        events.sort();
        for (_, e) in events {
            writeln!(f, "  {e}")?;
        }
        for (i, fin) in self.finals.iter().enumerate() {
            let halted = if self.halted[i] { ", halted" } else { "" };
            match fin {
                Some(x) => {
                    writeln!(f, "  t{i} ends {:?} on core {} at priority {}{halted}", x.status, x.core, x.priority)?
                }
                None => writeln!(f, "  t{i} ends destroyed")?,
            }
        }
        Ok(())
    }
}
