//! One OS thread per core: the loop every multi-core driver of the platform
//! runs ([`core_loop`]), and the stress tests' use of it
//! ([`Sim::run_threads`]).
//!
//! A core follows its exit plans as the kernel's contract says: when a plan
//! runs thread `t`, the core *is* `t` between kernel entries. Each turn the
//! core serves a pending IPI first (the preemption point at a system-call
//! boundary; an idle core polls for one); otherwise its [`Actor`] says what
//! happens next: a system call as the running thread, an interrupt, a timer
//! tick, a fault, nothing (idle), or the end. The actor also sees every
//! entry just before and just after it is made.
//!
//! Two actors use this loop: the stress tests' ([`Threads`] programs run by
//! [`Sim::run_threads`], which takes periodic ticks and checks invariants
//! concurrently now and then, shaped by [`Stress`]), and `granule verify`'s
//! driver (`crate::driver`), which records every entry for its checks.
//! Small tests can pass a closure as the actor.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use granule_kernel::{CoreHandle, ExitPlan, FaultKind, Kernel, Regime, StartInfo, SyscallArgs, ThreadId};

use crate::sim::Sim;

/// A kernel entry a core makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    /// A system call by the core's current thread.
    Syscall(SyscallArgs),
    /// Device interrupt number `irq`.
    Interrupt(usize),
    /// A timer tick.
    Tick,
    /// An IPI (served whenever one is pending; an actor may also ask for
    /// one with nothing pending).
    Ipi,
    /// The current thread faults.
    Fault(FaultKind),
}

/// Make `entry` on `h`'s core.
pub fn enter<R: Regime>(k: &Kernel<R>, h: &mut CoreHandle, entry: Entry) -> ExitPlan {
    match entry {
        Entry::Syscall(args) => crate::encode::enter_trap(k, h, args),
        Entry::Interrupt(irq) => k.interrupt(h, irq),
        Entry::Tick => k.timer_tick(h),
        Entry::Ipi => k.ipi(h),
        Entry::Fault(kind) => k.fault(h, kind),
    }
}

/// What a core does this turn, no IPI being pending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Enter the kernel.
    Enter(Entry),
    /// Nothing this turn (the loop spins once).
    Idle,
    /// Leave the loop.
    Stop,
}

/// The platform user's side of a core in [`core_loop`].
pub trait Actor<R: Regime> {
    /// Whether to leave the loop now; asked before every turn.
    fn stop(&mut self) -> bool {
        false
    }

    /// This turn, with no IPI pending: what the core does. `run` is the
    /// thread its last plan runs (`None`: idle), whose results are in its
    /// IPC buffer.
    fn next(&mut self, k: &Kernel<R>, h: &mut CoreHandle, run: Option<ThreadId>) -> Next;

    /// Just before `entry` is made.
    fn entering(&mut self, _entry: &Entry) {}

    /// Just after `entry` returned `plan` (whose `run` the core runs next).
    fn entered(&mut self, _k: &Kernel<R>, _h: &mut CoreHandle, _entry: &Entry, _plan: &ExitPlan) {}
}

/// A closure is an actor that only says what comes next.
impl<R: Regime, F: FnMut(&Kernel<R>, &mut CoreHandle, Option<ThreadId>) -> Next> Actor<R> for F {
    fn next(&mut self, k: &Kernel<R>, h: &mut CoreHandle, run: Option<ThreadId>) -> Next {
        self(k, h, run)
    }
}

/// Drive `h`'s core, which runs `run`, until `a` stops it; returns what the
/// core runs then.
pub fn core_loop<R: Regime>(
    k: &Kernel<R>,
    h: &mut CoreHandle,
    mut run: Option<ThreadId>,
    a: &mut impl Actor<R>,
) -> Option<ThreadId> {
    let c = h.index();
    while !a.stop() {
        let entry = if k.pending_ipi(c) {
            Entry::Ipi
        } else {
            match a.next(k, h, run) {
                Next::Enter(e) => e,
                Next::Idle => {
                    std::hint::spin_loop();
                    continue;
                }
                Next::Stop => break,
            }
        };
        a.entering(&entry);
        let plan = enter(k, h, entry);
        run = plan.run;
        a.entered(k, h, &entry, &plan);
    }
    run
}

/// User threads as a stress test programs them: each thread's next system
/// call, from the results of its last one.
pub trait Threads<R: Regime>: Sync {
    /// The next system call of `t`, the thread this core runs; its last
    /// call's results are in its IPC buffer, and the call's message words
    /// go there too. Only this core touches that buffer until the call.
    fn step(&self, k: &Kernel<R>, t: ThreadId) -> SyscallArgs;

    /// A plan started `t` afresh at `s` (for threads made while the cores
    /// run).
    fn started(&self, _t: ThreadId, _s: StartInfo) {}

    /// Whether the test is over.
    fn done(&self) -> bool;
}

/// How stress cores behave around their threads' system calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stress {
    /// A timer tick every this many turns on average: each gap is drawn
    /// from `tick_every / 2 ..= tick_every * 3 / 2` (seeded per core), so
    /// that no program whose cycle is a multiple of a fixed gap always
    /// meets the tick in the same thread (which would starve the others of
    /// its priority).
    pub tick_every: u64,
    /// Idle cores take ticks too; otherwise an idle core enters the kernel
    /// only for an IPI (tickless idle: a missed wake-up hangs the test,
    /// which the deadline turns into a failure).
    pub tick_idle: bool,
    /// Every this many turns a core checks every kernel invariant while the
    /// other cores run.
    pub check_every: u64,
    /// A core still running after this long fails (a hang).
    pub deadline: Duration,
}

impl Default for Stress {
    fn default() -> Self {
        Self { tick_every: 97, tick_idle: true, check_every: 1009, deadline: Duration::from_secs(120) }
    }
}

/// A stress core: [`Threads`] shaped by [`Stress`].
struct StressCore<'a, T> {
    threads: &'a T,
    how: Stress,
    /// Set when any core leaves its loop (a panic included).
    stopped: &'a AtomicBool,
    deadline: Instant,
    turns: u64,
    /// The turn of the next tick.
    tick_at: u64,
    rng: ChaCha8Rng,
}

impl<T> StressCore<'_, T> {
    /// Whether this turn is a tick; if so, the next one is drawn.
    fn tick_due(&mut self) -> bool {
        if self.turns < self.tick_at {
            return false;
        }
        let every = self.how.tick_every.max(1);
        self.tick_at = self.turns + self.rng.gen_range(every.div_ceil(2)..=every * 3 / 2);
        true
    }
}

impl<R: Regime, T: Threads<R>> Actor<R> for StressCore<'_, T> {
    fn stop(&mut self) -> bool {
        self.threads.done() || self.stopped.load(Ordering::SeqCst)
    }

    fn next(&mut self, k: &Kernel<R>, h: &mut CoreHandle, run: Option<ThreadId>) -> Next {
        let c = h.index();
        assert!(Instant::now() < self.deadline, "core {c}: no completion before the deadline (hang)");
        self.turns += 1;
        if (run.is_some() || self.how.tick_idle) && self.tick_due() {
            return Next::Enter(Entry::Tick);
        }
        if self.turns % self.how.check_every == 0 {
            if let Err(e) = k.check_invariants(h) {
                panic!("core {c}: {e}");
            }
        }
        match run {
            Some(t) => Next::Enter(Entry::Syscall(self.threads.step(k, t))),
            None => Next::Idle,
        }
    }

    fn entered(&mut self, _k: &Kernel<R>, _h: &mut CoreHandle, _entry: &Entry, plan: &ExitPlan) {
        if let (Some(t), Some(s)) = (plan.run, plan.start) {
            self.threads.started(t, s);
        }
    }
}

/// Sets its flag when dropped: a core that leaves its loop, by a failing
/// assertion too, stops the others instead of leaving them spinning.
struct StopOthers<'a>(&'a AtomicBool);

impl Drop for StopOthers<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

impl<R: Regime> Sim<R> {
    /// Run `threads` with one OS thread per core, each core starting with
    /// what `running` says, until `threads` are done; then the cores are
    /// the test's again. A panic on any core stops every core and is
    /// raised here.
    pub fn run_threads<T: Threads<R>>(&mut self, threads: &T, how: Stress) {
        let stopped = AtomicBool::new(false);
        let deadline = Instant::now() + how.deadline;
        let k = &self.k;
        let cores: Vec<(CoreHandle, Option<ThreadId>)> = self.cores.drain(..).zip(self.running.clone()).collect();
        let back: Vec<(CoreHandle, Option<ThreadId>)> = std::thread::scope(|s| {
            let spawned: Vec<_> = cores
                .into_iter()
                .map(|(mut h, run)| {
                    let stopped = &stopped;
                    s.spawn(move || {
                        let _stop_others = StopOthers(stopped);
                        let rng = ChaCha8Rng::seed_from_u64(h.index() as u64);
                        let tick_at = how.tick_every;
                        let mut a = StressCore { threads, how, stopped, deadline, turns: 0, tick_at, rng };
                        let run = core_loop(k, &mut h, run, &mut a);
                        (h, run)
                    })
                })
                .collect();
            let joined: Vec<_> = spawned.into_iter().map(|j| j.join()).collect();
            joined.into_iter().map(|r| r.unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
        });
        (self.cores, self.running) = back.into_iter().unzip();
    }
}

/// Message conservation for two senders (ids 0 and 1) of `messages`
/// numbered messages each, given each receiver's log of `(sender, seq)` in
/// order of reception: every message received exactly once, and each
/// receiver saw each sender's messages in increasing order.
pub fn assert_conserved(logs: &[Mutex<Vec<(u64, u64)>>], messages: u64) {
    let mut seen = vec![vec![0u32; messages as usize]; 2];
    for log in logs {
        let log = log.lock().unwrap();
        let mut last = [None::<u64>; 2];
        for &(s, q) in log.iter() {
            seen[s as usize][q as usize] += 1;
            assert!(last[s as usize].map_or(true, |l| l < q), "out of order: sender {s} seq {q} after {last:?}");
            last[s as usize] = Some(q);
        }
    }
    for (s, v) in seen.iter().enumerate() {
        for (q, &n) in v.iter().enumerate() {
            assert_eq!(n, 1, "sender {s} message {q} received {n} times");
        }
    }
}
