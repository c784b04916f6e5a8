//! How `granule verify` runs a program: one OS thread per core, each the only
//! actor of its core (the platform's `cores::core_loop`), and simulated user
//! threads.
//!
//! A core follows its exit plans as the kernel's contract says. When the plan
//! runs thread `t`, the core *is* `t` between kernel entries: it first reads
//! the result of `t`'s previous system call from `t`'s IPC buffer (a restart
//! reissues the same operation), then performs `t`'s next step — a system
//! call (inputs written into the buffer, result fields set to sentinels), an
//! interrupt or a timer tick of the core — or, past its last step, halts
//! (waits forever on a private notification). Pending IPIs are served before
//! every step (the preemption point); an idle core polls for them.
//!
//! When every core is idle with nothing pending (quiescence) but threads are
//! still blocked, core 0 raises the root thread's park line: the root (top
//! priority) acknowledges it, receives twice and sends twice without
//! blocking on every endpoint, signals every notification, and parks again —
//! the *rescue*, which unblocks stuck threads so programs run on. Rescues are
//! bounded and happen only after progress. The run ends at a quiescent point
//! with no rescue left, or at the step or wall-time bound.
//!
//! The user thread's state sits behind a mutex that a core only *tries* to
//! take: finding it held means two cores run the same thread at once, a
//! violation. Under regimes that stop the world, the invariant checker runs
//! after every kernel entry; under all, at the end. A kernel panic is caught
//! and reported; a core that never returns from the kernel (a deadlock)
//! makes the run *hung*: its threads are abandoned and verification stops.

use std::collections::{HashMap, VecDeque};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex, TryLockError};
use std::time::{Duration, Instant};

use granule_kernel::{
    BootConfig, CoreHandle, ExitPlan, FaultKind, Kernel, Regime, SyscallArgs, ThreadId, ThreadStatus, Word,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::config;
use crate::cores::{self, Actor, Entry, Next};
use crate::program::{Op, Program};
use crate::record::{Attempt, Interrupt, Observed, RunRecord, Stop};
use crate::regimes::{FaultInjection, Kind};
use crate::setup::{self, park_irq, Layout, PARK_LINE};
use crate::user::{decode_fault, decode_message, trap_for, wait_trap, write_inputs, MsgId, Outcome, Trap, CALL, FAULT};
use crate::{Check, Violation};

/// How programs are run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// `--fault-injection`: random delays, ticks and preemption points in the
    /// driver, and `Some(FaultInjection)` for the regime's maker.
    pub fault_injection: bool,
    /// Wall-time bound of one run.
    pub wall: Duration,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self { fault_injection: false, wall: Duration::from_secs(10) }
    }
}

/// The result of one run.
#[derive(Debug)]
pub struct RunOutcome {
    /// The record (`None` if the run crashed or hung before it was complete).
    pub record: Option<RunRecord>,
    /// Violations seen while running (invariants, scheduling, crashes).
    pub violations: Vec<Violation>,
    /// A core never came back from the kernel: its OS thread is abandoned.
    pub hung: bool,
}

/// The most kernel entries a run of `prog` may make.
fn max_entries(prog: &Program) -> u64 {
    400 + 60 * prog.total_ops() as u64
}

/// A simulated user thread between its kernel entries.
#[derive(Debug, Default)]
struct User {
    /// Next operation.
    pc: usize,
    /// Next message sequence number.
    next_seq: u64,
    /// The attempt whose result has not been read yet.
    pending: Option<usize>,
    /// Reissue this attempt's operation next.
    reissue: Option<usize>,
    /// The call last received through the thread's own reply object (what
    /// its replies echo: that object's caller, if it still waits).
    last_call: Option<(MsgId, bool)>,
    /// Steps to take before the program's next operation (the root's
    /// rescue): the operation (`None`: a driver step) and its trap.
    queue: VecDeque<(Option<Op>, Trap)>,
    /// Every attempt so far (intervals filled in from the cores' logs).
    attempts: Vec<Attempt>,
    /// Reached its halt.
    halted: bool,
}

/// What a core did, for the record.
#[derive(Debug, Default)]
struct CoreLog {
    /// (thread, attempt index, inv, ret, immediate).
    syscalls: Vec<(usize, usize, u64, u64, bool)>,
    interrupts: Vec<Interrupt>,
    entries: u64,
    invariant_checks: u64,
}

struct Shared<R: Regime> {
    kernel: Kernel<R>,
    layout: Layout,
    prog: Program,
    device_irq_base: usize,
    park_irq: usize,
    /// Program threads and, last, the root.
    tids: HashMap<ThreadId, usize>,
    users: Vec<Mutex<User>>,
    started: Vec<AtomicBool>,
    clock: AtomicU64,
    entries: AtomicU64,
    /// Results program threads have seen (progress, for rescues).
    completions: AtomicU64,
    stop: AtomicBool,
    reason: Mutex<Option<Stop>>,
    idle: Vec<AtomicBool>,
    violations: Mutex<Vec<Violation>>,
    check_every_entry: bool,
    fault: bool,
    deadline: Instant,
    max_entries: u64,
}

impl<R: Regime> Shared<R> {
    fn finish(&self, why: Stop) {
        let mut r = self.reason.lock().unwrap_or_else(|e| e.into_inner());
        r.get_or_insert(why);
        self.stop.store(true, Ordering::SeqCst);
    }

    fn violate(&self, check: Check, detail: String) {
        self.violations.lock().unwrap_or_else(|e| e.into_inner()).push(Violation { check, detail });
        self.finish(Stop::Violation);
    }

    /// Every core idle and no IPI pending: no kernel entry can happen any
    /// more (only a non-idle core enters the kernel, and an entry's IPIs are
    /// published before its core goes idle).
    ///
    /// The flags are read one after another, so one scan is not a snapshot:
    /// core 1 can be seen idle, then clear its flag and consume its IPI
    /// before the IPI is looked at, and the run would end with core 1 about
    /// to run a thread. So the idle flags are read again after the IPIs, and
    /// the entry count (raised after every entry, before its core can be
    /// idle again) must not have moved: a core that left idle and came back
    /// between the scans made an entry.
    fn quiescent(&self) -> bool {
        let cores = self.idle.len();
        let all_idle = || (0..cores).all(|c| self.idle[c].load(Ordering::SeqCst));
        let entries = self.entries.load(Ordering::SeqCst);
        all_idle()
            && (0..cores).all(|c| !self.kernel.pending_ipi(c))
            && all_idle()
            && self.entries.load(Ordering::SeqCst) == entries
    }

    fn now(&self) -> u64 {
        self.clock.fetch_add(1, Ordering::SeqCst)
    }
}

/// Run `prog` under the regime `make` builds (`kind` says how it is checked).
pub fn run_under<R: Regime>(
    kind: Kind,
    make: impl Fn(&BootConfig, Option<FaultInjection>) -> R,
    prog: &Program,
    opts: &RunOptions,
) -> RunOutcome {
    assert!(kind != Kind::SingleCoreOnly || prog.cores == 1, "a single-core regime runs one-core programs only");
    let fault = opts.fault_injection.then(|| FaultInjection::for_program(prog.seed));
    let crashed = |check: Check, detail: String| RunOutcome {
        record: None,
        violations: vec![Violation { check, detail }],
        hung: false,
    };
    let booted = match catch_unwind(AssertUnwindSafe(|| {
        setup::boot(prog, prog.cores, make(&config::for_programs(prog.cores, prog.policy), fault), false)
    })) {
        Ok(Ok(b)) => b,
        Ok(Err(e)) => return crashed(Check::Crash, e),
        Err(p) => return crashed(Check::Crash, format!("kernel panic during setup: {}", panic_message(&*p))),
    };
    let cores = prog.cores;
    let n = prog.threads.len();
    let tids = booted.threads.iter().chain([&booted.root]).enumerate().map(|(i, t)| (*t, i)).collect();
    let sh = Arc::new(Shared {
        kernel: booted.kernel,
        layout: booted.layout,
        prog: prog.clone(),
        device_irq_base: booted.boot.device_irq_base,
        park_irq: park_irq(&booted.boot),
        tids,
        users: (0..=n).map(|_| Mutex::new(User::default())).collect(),
        // The root started at boot.
        started: (0..=n).map(|i| AtomicBool::new(i == n)).collect(),
        clock: AtomicU64::new(0),
        entries: AtomicU64::new(0),
        completions: AtomicU64::new(0),
        stop: AtomicBool::new(false),
        reason: Mutex::new(None),
        idle: (0..cores).map(|_| AtomicBool::new(false)).collect(),
        violations: Mutex::new(Vec::new()),
        check_every_entry: kind != Kind::Quiescent,
        fault: opts.fault_injection,
        deadline: Instant::now() + opts.wall,
        max_entries: max_entries(prog),
    });
    let (tx, rx) = mpsc::channel();
    for (c, mut h) in booted.handles.into_iter().enumerate() {
        let plan = if c == 0 { booted.plan } else { ExitPlan::idle() };
        let (sh, tx) = (Arc::clone(&sh), tx.clone());
        std::thread::spawn(move || {
            let r = catch_unwind(AssertUnwindSafe(|| run_core(&sh, &mut h, plan)));
            if r.is_err() {
                sh.finish(Stop::Violation);
            }
            // Let go of the shared state before reporting, so that the
            // runner owns it alone once every core has reported.
            drop(sh);
            // The receiver is gone only if the run was abandoned as hung.
            let _ = tx.send((c, h, r.map_err(|p| panic_message(&*p))));
        });
    }
    drop(tx);
    let hard = Instant::now() + opts.wall + Duration::from_secs(10);
    let mut done: Vec<Option<(CoreHandle, CoreLog)>> = (0..cores).map(|_| None).collect();
    let mut violations = Vec::new();
    for _ in 0..cores {
        match rx.recv_timeout(hard.saturating_duration_since(Instant::now())) {
            Ok((c, h, Ok(log))) => done[c] = Some((h, log)),
            Ok((c, h, Err(msg))) => {
                violations.push(Violation { check: Check::Crash, detail: format!("panic on core {c}: {msg}") });
                done[c] = Some((h, CoreLog::default()));
            }
            Err(_) => {
                sh.finish(Stop::Violation);
                let stuck: Vec<usize> = (0..cores).filter(|&c| done[c].is_none()).collect();
                violations.push(Violation {
                    check: Check::Crash,
                    detail: format!("core(s) {stuck:?} never returned from the kernel (deadlock or livelock)"),
                });
                return RunOutcome { record: None, violations, hung: true };
            }
        }
    }
    let crashed_run = !violations.is_empty();
    let Ok(sh) = Arc::try_unwrap(sh) else { unreachable!("every core thread has finished") };
    let mut all = sh.violations.into_inner().unwrap_or_else(|e| e.into_inner());
    all.extend(violations);
    if crashed_run {
        return RunOutcome { record: None, violations: all, hung: false };
    }
    let (mut handles, logs): (Vec<CoreHandle>, Vec<CoreLog>) = done.into_iter().flatten().unzip();
    let reason = sh.reason.into_inner().unwrap_or_else(|e| e.into_inner()).unwrap_or(Stop::Violation);
    let users = sh.users.into_iter().map(|u| u.into_inner().unwrap_or_else(|e| e.into_inner())).collect();
    let end = End { kernel: &sh.kernel, h: &mut handles[0], threads: &booted.threads, root: booted.root, prog };
    let (record, end_violations) = end.assemble(users, logs, reason);
    all.extend(end_violations);
    RunOutcome { record: Some(record), violations: all, hung: false }
}

/// What happens after every core has stopped.
struct End<'a, R: Regime> {
    kernel: &'a Kernel<R>,
    h: &'a mut CoreHandle,
    threads: &'a [ThreadId],
    root: ThreadId,
    prog: &'a Program,
}

impl<R: Regime> End<'_, R> {
    fn assemble(self, mut users: Vec<User>, logs: Vec<CoreLog>, stop: Stop) -> (RunRecord, Vec<Violation>) {
        let mut v = Vec::new();
        let mut record = RunRecord {
            cores: self.prog.cores,
            reply_then_restart: R::REPLY_THEN_RESTART,
            attempts: Vec::new(),
            interrupts: Vec::new(),
            finals: Vec::new(),
            halted: users.iter().take(self.prog.threads.len()).map(|u| u.halted).collect(),
            stop,
            syscalls: 0,
            entries: 0,
            invariant_checks: 0,
            shared_pages: (0..self.prog.cores).map(|c| self.kernel.core_stats(c).shared_pages).sum(),
            shared_destroys: (0..self.prog.cores).map(|c| self.kernel.core_stats(c).shared_destroys).sum(),
            bound_wakes: (0..self.prog.cores).map(|c| self.kernel.core_stats(c).bound_wakes).sum(),
            shared_controls: (0..self.prog.cores).map(|c| self.kernel.core_stats(c).shared_controls).sum(),
            klog: self.kernel.klog_counts(),
        };
        for (c, log) in logs.into_iter().enumerate() {
            for (t, a, inv, ret, immediate) in log.syscalls {
                let at = &mut users[t].attempts[a];
                (at.inv, at.ret, at.immediate, at.core) = (inv, ret, immediate, c);
                record.syscalls += 1;
            }
            record.interrupts.extend(log.interrupts);
            record.entries += log.entries;
            record.invariant_checks += log.invariant_checks;
        }
        record.interrupts.sort_by_key(|i| i.inv);
        let n = self.prog.threads.len();
        for (i, u) in users.iter_mut().enumerate() {
            let tid = if i < n { self.threads[i] } else { self.root };
            let info = self.kernel.thread_info(self.h, tid);
            if i < n {
                record.finals.push(info);
            }
            let Some(a) = u.pending else { continue };
            u.attempts[a].observed = match info {
                None => Observed::Unknown,
                Some(info) => {
                    let p = self.kernel.ipc_buffer(tid);
                    // SAFETY: every core's OS thread has finished: no kernel
                    // entry is in progress and no user step runs, so nothing
                    // else reads or writes this buffer.
                    let out = Outcome::read(unsafe { &*p });
                    if out.restart || info.call_abandoned {
                        Observed::Restarted
                    } else if out.completed() {
                        Observed::Completed(out)
                    } else {
                        Observed::Pending(info.status)
                    }
                }
            };
        }
        for u in users {
            record.attempts.extend(u.attempts);
        }
        record.invariant_checks += 1;
        if let Err(e) = self.kernel.check_invariants(self.h) {
            v.push(Violation { check: Check::Invariant, detail: format!("at the end of the run: {e}") });
        }
        if stop == Stop::Quiescent {
            for (i, f) in record.finals.iter().enumerate() {
                if let Some(f) = f.filter(|f| matches!(f.status, ThreadStatus::Ready | ThreadStatus::Current)) {
                    v.push(Violation {
                        check: Check::Liveness,
                        detail: format!("every core is idle but t{i} is {:?} on core {}", f.status, f.core),
                    });
                }
            }
        }
        (record, v)
    }
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "(non-string panic)".into()
    }
}

/// Core 0's rescue budget.
struct Rescue {
    left: usize,
    /// Completions counted at the last rescue.
    after: Option<u64>,
}

impl Rescue {
    /// Whether to rescue now (some thread is still to finish, there was
    /// progress since the last rescue, budget is left); if so, the root's
    /// rescue steps are queued.
    fn due<R: Regime>(&mut self, sh: &Shared<R>) -> bool {
        let done = sh.completions.load(Ordering::SeqCst);
        if self.left == 0 || self.after == Some(done) {
            return false;
        }
        let n = sh.prog.threads.len();
        // No core runs any thread now, so every user state is free.
        let unfinished = sh.users[..n].iter().any(|u| u.try_lock().map_or(true, |u| !u.halted));
        if !unfinished {
            return false;
        }
        let Ok(mut root) = sh.users[n].try_lock() else { return false };
        self.left -= 1;
        self.after = Some(done);
        let l = &sh.layout;
        let trap = |op: Op| trap_for(op, n, l, MsgId { sender: n as u64, seq: 0, attempt: 0 }, None, |c| c as Word);
        root.queue.push_back((None, trap(Op::IrqAck { line: PARK_LINE })));
        for ep in 0..sh.prog.endpoints as u8 {
            for op in [Op::NbRecv { ep, reply: false }, Op::NbSend { ep }] {
                root.queue.extend([(Some(op), trap(op)), (Some(op), trap(op))]);
            }
        }
        for ntfn in 0..sh.prog.notifications as u8 {
            let op = Op::Signal { ntfn };
            root.queue.push_back((Some(op), trap(op)));
        }
        true
    }
}

/// What a core does next as the thread its plan runs.
enum Step {
    Syscall {
        thread: usize,
        attempt: usize,
        args: SyscallArgs,
    },
    Interrupt {
        thread: usize,
        op_index: usize,
        line: u8,
    },
    Tick,
    /// The kernel ran something that is no program thread: stop it.
    Fault,
    Stop,
}

/// What the entry a core is making was for, to log with its real-time
/// interval.
enum Making {
    /// Attempt `attempt` of program thread `thread` (kernel thread `t`).
    Syscall { thread: usize, attempt: usize, t: ThreadId, inv: u64 },
    /// Thread `thread`'s interrupt step `op_index`.
    Interrupt { thread: usize, op_index: usize, line: u8, inv: u64 },
    /// Nothing logged (IPIs, ticks, faults, rescues).
    Other,
}

/// One core of a run: the actor of `cores::core_loop`.
struct Core<'a, R: Regime> {
    sh: &'a Shared<R>,
    c: usize,
    log: CoreLog,
    rng: ChaCha8Rng,
    idle_polls: u32,
    steps: u64,
    rescue: Rescue,
    making: Making,
}

/// Run core `h` from `plan` until the run stops; what it did.
fn run_core<R: Regime>(sh: &Shared<R>, h: &mut CoreHandle, plan: ExitPlan) -> CoreLog {
    let c = h.index();
    note_start(sh, &plan);
    let mut core = Core {
        sh,
        c,
        log: CoreLog::default(),
        rng: ChaCha8Rng::seed_from_u64(sh.prog.seed ^ (c as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)),
        idle_polls: 0,
        steps: 0,
        rescue: Rescue { left: (1 + sh.prog.total_ops() / 6).min(8), after: None },
        making: Making::Other,
    };
    cores::core_loop(&sh.kernel, h, plan.run, &mut core);
    core.log
}

impl<R: Regime> Actor<R> for Core<'_, R> {
    fn stop(&mut self) -> bool {
        let sh = self.sh;
        if sh.stop.load(Ordering::SeqCst) {
            return true;
        }
        self.steps += 1;
        if self.steps % 32 == 0 && Instant::now() > sh.deadline {
            sh.finish(Stop::Wall);
            return true;
        }
        if sh.entries.load(Ordering::Relaxed) > sh.max_entries {
            sh.finish(Stop::Steps);
            return true;
        }
        false
    }

    fn next(&mut self, _k: &Kernel<R>, _h: &mut CoreHandle, run: Option<ThreadId>) -> Next {
        let (sh, c) = (self.sh, self.c);
        let Some(t) = run else {
            sh.idle[c].store(true, Ordering::SeqCst);
            // Core 0 alone decides what quiescence means: a rescue, or the end.
            if c == 0 && sh.quiescent() {
                if self.rescue.due(sh) {
                    sh.idle[c].store(false, Ordering::SeqCst);
                    self.idle_polls = 0;
                    return Next::Enter(Entry::Interrupt(sh.park_irq));
                }
                sh.finish(Stop::Quiescent);
                return Next::Stop;
            }
            self.idle_polls += 1;
            if self.idle_polls >= 64 {
                std::thread::yield_now();
            }
            return Next::Idle;
        };
        if sh.fault {
            match self.rng.gen_range(0..32) {
                0..=7 => spin(self.rng.gen_range(0..2000)),
                8 => std::thread::yield_now(),
                9 => return Next::Enter(Entry::Tick),
                10 => return Next::Enter(Entry::Ipi),
                _ => {}
            }
        }
        match user_step(sh, c, t) {
            Step::Syscall { thread, attempt, args } => {
                self.making = Making::Syscall { thread, attempt, t, inv: 0 };
                Next::Enter(Entry::Syscall(args))
            }
            Step::Interrupt { thread, op_index, line } => {
                self.making = Making::Interrupt { thread, op_index, line, inv: 0 };
                Next::Enter(Entry::Interrupt(irq_of_base(sh.device_irq_base, line)))
            }
            Step::Tick => Next::Enter(Entry::Tick),
            Step::Fault => Next::Enter(Entry::Fault(FaultKind::Other)),
            Step::Stop => Next::Stop,
        }
    }

    fn entering(&mut self, entry: &Entry) {
        if *entry == Entry::Ipi {
            // Not idle from before the IPI is consumed (see `quiescent`).
            self.sh.idle[self.c].store(false, Ordering::SeqCst);
            self.idle_polls = 0;
        }
        if let Making::Syscall { inv, .. } | Making::Interrupt { inv, .. } = &mut self.making {
            *inv = self.sh.now();
        }
    }

    fn entered(&mut self, _k: &Kernel<R>, h: &mut CoreHandle, _entry: &Entry, plan: &ExitPlan) {
        match std::mem::replace(&mut self.making, Making::Other) {
            Making::Syscall { thread, attempt, t, inv } => {
                let ret = self.sh.now();
                self.log.syscalls.push((thread, attempt, inv, ret, plan.run == Some(t)));
            }
            Making::Interrupt { thread, op_index, line, inv } => {
                let ret = self.sh.now();
                self.log.interrupts.push(Interrupt { thread, op_index, line, inv, ret });
            }
            Making::Other => {}
        }
        after_entry(self.sh, h, &mut self.log, plan);
    }
}

/// Device line `line` of a kernel whose device interrupts start at `base`
/// (as `setup::irq_of` numbers them).
fn irq_of_base(base: usize, line: u8) -> usize {
    base + line as usize
}

fn spin(n: u32) {
    for _ in 0..n {
        std::hint::spin_loop();
    }
}

/// Record a plan's fresh start: each program thread starts exactly once.
fn note_start<R: Regime>(sh: &Shared<R>, plan: &ExitPlan) {
    let (Some(t), Some(_)) = (plan.run, plan.start) else { return };
    if let Some(&i) = sh.tids.get(&t) {
        if sh.started[i].swap(true, Ordering::SeqCst) {
            sh.violate(Check::Scheduling, format!("t{i} was started afresh a second time"));
        }
    }
}

/// Bookkeeping after every kernel entry: the plan's own checks, and the
/// invariants where the regime stops the world.
fn after_entry<R: Regime>(sh: &Shared<R>, h: &mut CoreHandle, log: &mut CoreLog, plan: &ExitPlan) {
    let c = h.index();
    log.entries += 1;
    // SeqCst: `quiescent` reads this between its scans of the idle flags.
    sh.entries.fetch_add(1, Ordering::SeqCst);
    if plan.ipis.contains(c) {
        sh.violate(Check::Scheduling, format!("a plan of core {c} interrupts core {c} itself"));
    }
    note_start(sh, plan);
    if sh.check_every_entry {
        log.invariant_checks += 1;
        if let Err(e) = sh.kernel.check_invariants(h) {
            sh.violate(Check::Invariant, format!("after a kernel entry on core {c}: {e}"));
        }
    }
}

/// Act as thread `t` on core `c` until its next trap.
fn user_step<R: Regime>(sh: &Shared<R>, c: usize, t: ThreadId) -> Step {
    let Some(&i) = sh.tids.get(&t) else {
        sh.violate(Check::Scheduling, format!("core {c} was told to run {t:?}, which is no program thread"));
        return Step::Fault;
    };
    let mut u = match sh.users[i].try_lock() {
        Ok(u) => u,
        Err(TryLockError::WouldBlock) => {
            sh.violate(Check::Scheduling, format!("t{i} runs on core {c} while another core runs it"));
            return Step::Stop;
        }
        Err(TryLockError::Poisoned(_)) => return Step::Stop,
    };
    let buf = sh.kernel.ipc_buffer(t);
    if let Some(a) = u.pending.take() {
        // SAFETY: `t` is the thread this core's last plan runs and no kernel
        // entry of this core is in progress (the `IpcBuffer` contract); the
        // fields are copied out at once.
        let out = Outcome::read(unsafe { &*buf });
        if out.restart {
            u.attempts[a].observed = Observed::Restarted;
            u.reissue = Some(a);
        } else {
            u.attempts[a].observed = Observed::Completed(out);
            if !out.completed() {
                let what = u.attempts[a].op.map_or("halt".to_string(), |op| op.to_string());
                sh.violate(
                    Check::Scheduling,
                    format!("t{i} runs again, but its `{what}` neither completed nor restarted"),
                );
                return Step::Stop;
            }
            let n = sh.prog.threads.len();
            if i < n {
                if u.attempts[a].op.is_none() && u.halted {
                    sh.violate(Check::Scheduling, format!("t{i} woke from its halt (a wait nobody signals): {out}"));
                    return Step::Stop;
                }
                sh.completions.fetch_add(1, Ordering::SeqCst);
            }
            completed(&mut u, a, &out);
        }
    }
    let n = sh.prog.threads.len();
    let ops: &[Op] = if i < n { &sh.prog.threads[i].ops } else { &[] };
    let mut queued = None;
    let (op, op_index, attempt, msg_id) = if let Some(a) = u.reissue.take() {
        let p = &u.attempts[a];
        queued = p.op_index.is_none().then_some(Trap::Syscall(p.args, p.words));
        (p.op, p.op_index, p.attempt + 1, p.msg_id.map(|m| MsgId { attempt: m.attempt + 1, ..m }))
    } else if let Some((op, trap)) = u.queue.pop_front() {
        queued = Some(trap);
        let id = op.is_some_and(|op| op.numbered()).then(|| {
            u.next_seq += 1;
            MsgId { sender: i as u64, seq: u.next_seq - 1, attempt: 0 }
        });
        (op, None, 0, id)
    } else if u.pc < ops.len() {
        let op = ops[u.pc];
        let id = op.numbered().then(|| {
            u.next_seq += 1;
            MsgId { sender: i as u64, seq: u.next_seq - 1, attempt: 0 }
        });
        (Some(op), Some(u.pc), 0, id)
    } else {
        u.halted = i < n;
        queued = Some(wait_trap(if i < n { sh.layout.halt(i) } else { sh.layout.park() }));
        (None, None, 0, None)
    };
    let trap = match (op, queued) {
        // A queued send carries the message id assigned just now.
        (Some(op), Some(_)) if op.numbered() => {
            trap_for(op, i, &sh.layout, msg_id.expect("sends have ids"), None, |c| c as Word)
        }
        (_, Some(t)) => t,
        (Some(op), None) => {
            let id = msg_id.unwrap_or(MsgId { sender: i as u64, seq: Word::MAX, attempt: 0 });
            trap_for(op, i, &sh.layout, id, u.last_call, |core| core as Word)
        }
        (None, None) => unreachable!("every driver step has its trap"),
    };
    let (args, words) = match trap {
        Trap::Tick => {
            u.pc += 1;
            return Step::Tick;
        }
        Trap::Interrupt(line) => {
            u.pc += 1;
            return Step::Interrupt { thread: i, op_index: op_index.unwrap_or(0), line };
        }
        Trap::Syscall(args, words) => (args, words),
    };
    // SAFETY: as above: this core runs `t` and is not inside the kernel.
    write_inputs(unsafe { &mut *buf }, &words);
    u.attempts.push(Attempt {
        thread: i,
        op_index,
        op,
        attempt,
        msg_id,
        args,
        words,
        core: c,
        inv: 0,
        ret: 0,
        immediate: false,
        observed: Observed::Unknown,
    });
    let a = u.attempts.len() - 1;
    u.pending = Some(a);
    Step::Syscall { thread: i, attempt: a, args }
}

/// Thread state after attempt `a` completed with `out`.
fn completed(u: &mut User, a: usize, out: &Outcome) {
    let op = u.attempts[a].op;
    let with_reply =
        matches!(op, Some(Op::Recv { reply: true, .. } | Op::NbRecv { reply: true, .. } | Op::ReplyRecv { .. }));
    if with_reply && out.ok() && out.label() == CALL {
        u.last_call = decode_message(&out.words).map(|(id, _)| (id, false));
    }
    if with_reply && out.ok() && out.label() == FAULT {
        u.last_call = decode_fault(&out.words).map(|id| (id, true));
    }
    if op.is_some() {
        u.pc += 1;
    }
}
