//! One core's loop: it runs the ring-3 thread each exit plan names until
//! its next system call, fault or interrupt, makes that entry, and
//! performs the plan (its IPIs, its acknowledged lines, the address-space
//! switch); with `threads=kernel` it makes its pair's entries itself.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};

use granule_kernel::abi::{InvocationLabel, MessageInfo, Sysno, Word, CAP_INIT_CNODE};
use granule_kernel::{
    CoreHandle, ExitPlan, FaultKind, Kernel, Regime, SpaceId, StartInfo, SyscallArgs, ThreadId, ThreadStatus,
};
use granule_user::pingpong::PingPong;

use super::root::{perform, Next, Pair, Root};
use super::RootWork;
use crate::user::{self, UserContext};
use crate::{irq, paging, programs};

/// Bytes of each ring-3 thread's stack.
pub(super) const USER_STACK: usize = 16 * 1024;

/// One core's part: it performs the entries of whichever of its pair's
/// threads the kernel runs there, as a `syscall` instruction would.
pub(super) struct Driver<'k, R: Regime> {
    pub(super) k: &'k Kernel<R>,
    /// The pair the root built for this core (none for granule-user's
    /// ping-pong, whose root builds its own).
    pub(super) pair: Option<Pair>,
    pub(super) rounds: usize,
    pub(super) check: bool,
    /// The thread the last entry's exit plan runs on this core.
    pub(super) running: Option<ThreadId>,
    /// The address space it runs in.
    pub(super) space: Option<SpaceId>,
    /// Whether the server made its first `Recv`.
    pub(super) received: bool,
    /// Calls the client made.
    pub(super) calls: usize,
    /// Cycles the round trips took, or what went wrong.
    pub(super) outcome: Result<u64, String>,
    /// The threads run in ring 3 (else the core makes its pair's entries).
    pub(super) user: bool,
    /// The ring-3 threads this core was given, made at their plan's start.
    pub(super) threads: Vec<UserThread>,
    /// With granule-user's ping-pong: the round trips to measure.
    pub(super) goal: Option<Goal>,
    /// A ring-3 thread left [`programs::DONE`] in its buffer.
    pub(super) done: bool,
    /// On core 0, the root, which has finished: chosen, it leaves the core
    /// idle.
    pub(super) root: Option<ThreadId>,
    /// The two words after `DONE` (the fault handler's label and word).
    pub(super) report: [Word; 2],
    /// On core 0: what the root still has to do (`RootWork`).
    pub(super) work: Option<RootWork>,
    /// This core's client is the remote-stall experiment's victim: the
    /// core is done when the root deleted it and the core left it.
    pub(super) victim: bool,
}

/// A ring-3 thread a core runs.
pub(super) struct UserThread {
    id: ThreadId,
    /// Its registers while it is off the CPU.
    ctx: UserContext,
    stack: Vec<u8>,
    /// A fresh start some exit plan gave it and it has not taken yet: a
    /// later plan (a tick's) may choose the thread again without it, as the
    /// kernel reports a start once.
    start: Option<StartInfo>,
}

/// A core's measurement of granule-user's ping-pong (`pingpong.rs` of
/// `granule-user`, the hosted platform's program): its pair's round trips,
/// counted by the client itself.
pub(super) struct Goal {
    pub(super) pp: &'static PingPong,
    pub(super) pair: usize,
    /// Round trips to time after the first.
    pub(super) rounds: u64,
    /// The time-stamp counter and the count at the first round trip seen.
    first: Option<(u64, u64)>,
    /// Cycles and round trips measured, once reached.
    pub(super) measured: Option<(u64, u64)>,
    /// Cycles this core waited idle in the window.
    pub(super) idle_cycles: u64,
}

impl Goal {
    pub(super) fn new(pp: &'static PingPong, pair: usize, rounds: u64) -> Self {
        Self { pp, pair, rounds, first: None, measured: None, idle_cycles: 0 }
    }

    /// Looks at the count: starts the window at the first round trip, ends
    /// it `rounds` later.
    pub(super) fn observe(&mut self) {
        let n = self.pp.round_trips().get(self.pair).copied().unwrap_or(0);
        let now = granule_sync::cycles::now();
        match self.first {
            None if n >= 1 => self.first = Some((now, n)),
            Some((t0, n0)) if self.measured.is_none() && n >= n0 + self.rounds => {
                self.measured = Some((now - t0, n - n0));
            }
            _ => {}
        }
    }
}

/// The root deleted the remote-stall experiment's victim.
pub(super) static VICTIM_DELETED: AtomicBool = AtomicBool::new(false);

/// What a core's run says when it stopped because another core failed.
pub(super) const STOPPED: &str = "stopped: another core failed";

/// Ticks a core may wait with nothing to run before its run fails.
pub(super) const IDLE_TICKS: u32 = 3000;

impl<'k, R: Regime> Driver<'k, R> {
    pub(super) fn new(k: &'k Kernel<R>, pair: Option<Pair>, rounds: usize, check: bool, user: bool) -> Self {
        Self {
            k,
            pair,
            rounds,
            check,
            running: None,
            space: None,
            received: false,
            calls: 0,
            outcome: Ok(0),
            user,
            threads: Vec::new(),
            goal: None,
            done: false,
            report: [0; 2],
            root: None,
            work: None,
            victim: false,
        }
    }

    /// Takes the next thread from an exit plan.
    pub(super) fn follow(&mut self, next: Next) {
        self.running = next.run;
        self.space = next.space;
        if let (Some(start), Some(id)) = (next.start, next.run) {
            match self.threads.iter_mut().find(|t| t.id == id) {
                Some(t) => t.start = Some(start),
                None => self.threads.push(UserThread {
                    id,
                    ctx: UserContext::default(),
                    stack: alloc::vec![0u8; USER_STACK],
                    start: Some(start),
                }),
            }
        }
    }

    /// Whether this core's part is over.
    pub(super) fn finished(&self) -> bool {
        if self.work.is_some() {
            return false;
        }
        if self.victim {
            return VICTIM_DELETED.load(Ordering::Acquire) && self.running != self.pair.map(|p| p.client);
        }
        if let Some(g) = &self.goal {
            return g.measured.is_some();
        }
        if self.user {
            self.done
        } else {
            self.calls >= self.rounds && self.running.is_some() && self.running == self.pair.map(|p| p.client)
        }
    }

    /// Drives this core until its client made all its calls; the cycles
    /// from the first call to the last reply.
    pub(super) fn run(&mut self, h: &mut CoreHandle, core: usize, failed: &AtomicBool) -> Result<u64, String> {
        let mut started = None;
        let mut idle_ticks = 0;
        while !self.finished() {
            if failed.load(Ordering::Relaxed) {
                return Err(STOPPED.into());
            }
            // Nothing to run: sleep until an interrupt (an IPI from the
            // core that makes a thread of ours runnable, or a tick).
            let rooted = self.root.is_some() && self.running == self.root;
            let idle = self.running.is_none() || (rooted && self.work.is_none());
            let reasons = if idle {
                let t = granule_sync::cycles::now();
                let r = irq::wait(core);
                if let Some(g) = self.goal.as_mut().filter(|g| g.first.is_some() && g.measured.is_none()) {
                    g.idle_cycles += granule_sync::cycles::now() - t;
                }
                r
            } else {
                irq::take(core)
            };
            if reasons & irq::IPI != 0 {
                let plan = self.k.ipi(h);
                self.entered(h, plan)?;
            }
            if reasons & irq::TICK != 0 {
                let plan = self.k.timer_tick(h);
                self.entered(h, plan)?;
            }
            if reasons & irq::SERIAL != 0 {
                let plan = self.k.interrupt(h, crate::serial::IRQ as usize);
                self.entered(h, plan)?;
            }
            if self.root.is_some() && self.running == self.root && self.work.is_some() {
                self.root_work(h)?;
                continue;
            }
            if self.running.is_none() || self.running == self.root {
                idle_ticks += u32::from(reasons & irq::TICK != 0);
                if idle_ticks > IDLE_TICKS {
                    return Err(format!("core {core} idle for {IDLE_TICKS} ticks: its pair never became runnable"));
                }
                continue;
            }
            if started.is_none() && self.running.is_some() && self.running == self.pair.map(|p| p.client) {
                started = Some(granule_sync::cycles::now());
            }
            self.step(h)?;
            if let Some(g) = &mut self.goal {
                g.observe();
            }
        }
        if !self.user {
            self.check_reply()?;
        }
        Ok(granule_sync::cycles::now() - started.unwrap_or(0))
    }

    /// One entry of the running thread: the server's `Recv` or `ReplyRecv`,
    /// or the client's next `Call`.
    pub(super) fn step(&mut self, h: &mut CoreHandle) -> Result<(), String> {
        if self.user {
            return self.step_user(h);
        }
        let Some(p) = self.pair else { return Err("threads=kernel needs the root's pair".into()) };
        let args = if self.running == Some(p.server) {
            let tag = if self.received {
                // SAFETY: the server is this core's current thread between
                // entries, and only this core acts for it.
                let b = unsafe { &mut *self.k.ipc_buffer(p.server) };
                b.msg[0] = b.msg[0].wrapping_add(1);
                MessageInfo::new(2, 0, 0, 1).word()
            } else {
                0
            };
            let sysno = if self.received { Sysno::ReplyRecv } else { Sysno::Recv };
            self.received = true;
            SyscallArgs::new(sysno.word(), p.ep, tag, p.reply)
        } else if self.running == Some(p.client) {
            if self.calls > 0 {
                self.check_reply()?;
            }
            // SAFETY: the client is this core's current thread, as above.
            let b = unsafe { &mut *self.k.ipc_buffer(p.client) };
            b.msg[0] = self.calls as Word * 2;
            self.calls += 1;
            SyscallArgs::new(Sysno::Call.word(), p.ep, MessageInfo::new(1, 0, 0, 1).word(), 0)
        } else {
            return Err(format!("this core runs {:?}, which is not its pair's", self.running));
        };
        let plan = self.k.syscall(h, args);
        self.entered(h, plan)
    }

    /// Runs the chosen thread in ring 3 until its next system call, and
    /// makes that call's entry.
    pub(super) fn step_user(&mut self, h: &mut CoreHandle) -> Result<(), String> {
        let Some(id) = self.running else { return Ok(()) };
        let ipc = self.k.ipc_buffer(id);
        let Some(t) = self.threads.iter_mut().find(|t| t.id == id) else {
            return Err(format!("this core runs {id:?}, which it was never given a start for"));
        };
        if let Some(start) = t.start.take() {
            let Some(&entry) = programs::PROGRAMS.get(start.entry as usize) else {
                return Err(format!("entry word {} names no program", start.entry));
            };
            let top = (t.stack.as_ptr() as u64 + t.stack.len() as u64) & !15;
            t.ctx = UserContext::start(entry as *const () as u64, top, ipc as u64, start.arg);
        }
        paging::switch(self.space);
        let plan = match user::run(&mut t.ctx) {
            user::Trap::Syscall(args) => {
                // SAFETY: the thread's buffer, between its system calls.
                let b = unsafe { &*ipc };
                if b.msg[0] == programs::DONE {
                    // The call is made all the same: the thread blocks or
                    // yields, and the core goes on to what the kernel
                    // chooses next (the root's work, on core 0).
                    self.done = true;
                    self.report = [b.msg[1], b.msg[2]];
                }
                self.k.syscall(h, args)
            }
            // A page fault (vector 14) is a memory access no mapping
            // allows (error bit 1: a write); anything else is `Other`.
            user::Trap::Fault { vector: 14, error, addr } => {
                self.k.fault(h, FaultKind::MemoryAccess { addr, write: error & 2 != 0 })
            }
            user::Trap::Fault { .. } => self.k.fault(h, FaultKind::Other),
            // The loop enters the kernel for the interrupt next.
            user::Trap::Interrupted => return Ok(()),
        };
        self.entered(h, plan)
    }

    /// The root's work, when its moment came (else nothing yet).
    pub(super) fn root_work(&mut self, h: &mut CoreHandle) -> Result<(), String> {
        let (Some(work), Some(me)) = (self.work, self.root) else { return Ok(()) };
        let root = Root { k: self.k, me, check: self.check };
        match work {
            RootWork::Unmap { frame, note, target, space } => {
                if programs::READER_SAW[target].load(Ordering::Acquire) == 0 {
                    return Ok(());
                }
                let next = root.invoke_to(h, frame, InvocationLabel::FrameUnmap, &[])?;
                if let Some(a) = paging::walk(space, programs::READER_PAGE) {
                    return Err(format!("the unmapped frame ({a:#x}) is still in the space's page table"));
                }
                self.follow(next);
                self.work = None;
                let plan = self.k.syscall(h, SyscallArgs::new(Sysno::Signal.word(), note, 0, 0));
                self.entered(h, plan)
            }
            RootWork::Delete { victim, thread, target } => {
                if programs::SPINNING[target].load(Ordering::Acquire) == 0 {
                    return Ok(());
                }
                let (next, restarted) =
                    root.try_invoke_to(h, CAP_INIT_CNODE, InvocationLabel::CNodeDelete, &[victim])?;
                self.follow(next);
                if !restarted {
                    // Gone, or (`lockfree`, and any regime that finishes a
                    // running thread on its own core) a zombie until its
                    // core takes the stall IPI; checked gone at the end.
                    if let Some(info) = self.k.thread_info(h, thread).filter(|i| i.status != ThreadStatus::Zombie) {
                        return Err(format!("the deleted thread is still there: {info:?}"));
                    }
                    self.work = None;
                    VICTIM_DELETED.store(true, Ordering::Release);
                }
                Ok(())
            }
        }
    }

    /// The client's last call was answered with its word plus one.
    pub(super) fn check_reply(&self) -> Result<(), String> {
        let Some(p) = self.pair else { return Ok(()) };
        // SAFETY: the client is this core's current thread between entries.
        let b = unsafe { &*self.k.ipc_buffer(p.client) };
        let sent = (self.calls as Word - 1) * 2;
        let tag = MessageInfo(b.tag);
        if tag.label() != 2 || b.msg[0] != sent + 1 {
            return Err(format!(
                "call {} answered with label {} and word {}, not 2 and {}",
                self.calls,
                tag.label(),
                b.msg[0],
                sent + 1
            ));
        }
        Ok(())
    }

    pub(super) fn entered(&mut self, h: &mut CoreHandle, plan: ExitPlan) -> Result<(), String> {
        let next = perform(self.k, h, self.check, plan)?;
        self.follow(next);
        Ok(())
    }
}
