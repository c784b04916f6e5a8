//! Remote stalls: suspending, migrating, deleting a thread that runs on
//! another core; address spaces in use elsewhere; zombies from cascades;
//! two threads stalling each other; and the same under real concurrency.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::common::*;
use granule_kernel::abi::*;
use granule_kernel::{CoreHandle, ThreadStatus};

use InvocationLabel::*;

#[test]
fn suspend_a_thread_running_on_another_core() {
    let mut sim = Sim::new(2);
    let (cap, t) = sim.spawn(1, 50, 1);
    assert_eq!(sim.running[1], Some(t));
    sim.auto_ipi = false;
    if WHICH.suspends_asynchronously() {
        // The request is made at once; the core stops the thread when it
        // takes the interrupt, and the thread counts as inactive meanwhile.
        assert_eq!(sim.invoke_maybe_restart(0, cap, TcbSuspend, &[]), Some(Ok(())));
        assert!(sim.pending.contains(&1));
        assert_eq!(sim.running[1], Some(t));
        assert_eq!(sim.status(t), ThreadStatus::Inactive);
        sim.deliver_ipis();
        assert_eq!(sim.running[1], None);
        assert_eq!(sim.status(t), ThreadStatus::Inactive);
        sim.invoke(0, cap, TcbResume, &[]).unwrap();
        sim.deliver_ipis();
        assert_eq!(sim.running[1], Some(t));
        // A resume before the core acted cancels the request: it keeps running.
        sim.invoke(0, cap, TcbSuspend, &[]).unwrap();
        sim.invoke(0, cap, TcbResume, &[]).unwrap();
        sim.deliver_ipis();
        assert_eq!(sim.running[1], Some(t));
        assert_eq!(sim.status(t), ThreadStatus::Current);
        return;
    }
    assert_eq!(sim.invoke_maybe_restart(0, cap, TcbSuspend, &[]), None);
    assert!(sim.pending.contains(&1));
    assert!(sim.k.pending_ipi(1));
    // Until core 1 takes the IPI the thread still runs; retrying restarts again.
    assert_eq!(sim.invoke_maybe_restart(0, cap, TcbSuspend, &[]), None);
    sim.deliver_ipis();
    // Core 1 is held idle; its thread waits at the head of its queue.
    assert_eq!(sim.running[1], None);
    assert_eq!(sim.status(t), ThreadStatus::Ready);
    // A tick or IPI on the held core keeps it idle.
    sim.tick(1);
    assert_eq!(sim.running[1], None);
    assert_eq!(sim.invoke_maybe_restart(0, cap, TcbSuspend, &[]), Some(Ok(())));
    assert_eq!(sim.status(t), ThreadStatus::Inactive);
    // The hold is released with a reschedule IPI; nothing to run there.
    assert!(sim.pending.contains(&1));
    sim.deliver_ipis();
    assert_eq!(sim.running[1], None);
    sim.invoke(0, cap, TcbResume, &[]).unwrap();
    sim.deliver_ipis();
    assert_eq!(sim.running[1], Some(t));
}

#[test]
fn delete_a_thread_running_on_another_core() {
    let mut sim = Sim::new(2);
    let (cap, t) = sim.spawn(1, 50, 1);
    if WHICH.destroys_asynchronously() {
        // The deletion is made at once; the thread is a zombie until its
        // core takes the interrupt and stops it, and gone after.
        sim.auto_ipi = false;
        assert_eq!(sim.invoke_maybe_restart(0, CAP_INIT_CNODE, CNodeDelete, &[cap]), Some(Ok(())));
        assert_eq!(sim.running[1], Some(t));
        assert_eq!(sim.status(t), ThreadStatus::Zombie);
        sim.deliver_ipis();
        sim.auto_ipi = true;
        assert_eq!(sim.running[1], None);
        assert_eq!(sim.info(t), None);
        // The slot is empty: a new thread goes there (a management entry,
        // which frees the old one first).
        sim.root_invoke(CAP_FIRST_UNTYPED, Invocation::retype(ObjectType::Tcb, 0, cap, 1));
        let u = sim.k.thread_of_cap(&mut sim.cores[0], sim.root, cap).unwrap();
        assert_ne!(u, t);
        assert_eq!(sim.info(t), None);
    } else {
        assert_eq!(sim.invoke_maybe_restart(0, CAP_INIT_CNODE, CNodeDelete, &[cap]), None);
        assert_eq!(sim.running[1], None);
        assert_eq!(sim.invoke_maybe_restart(0, CAP_INIT_CNODE, CNodeDelete, &[cap]), Some(Ok(())));
        assert_eq!(sim.info(t), None);
    }
    // Revoke sees through to its descendants too.
    let (cap, t) = sim.spawn(2, 50, 1);
    let copy = sim.alloc_slot();
    sim.invoke(0, CAP_INIT_CNODE, CNodeMove, &[copy, 0, cap]).unwrap();
    assert_eq!(sim.running[1], Some(t));
    assert_eq!(sim.invoke_maybe_restart(0, CAP_FIRST_UNTYPED, CNodeRevoke, &[0]), Some(Err(Error::IllegalOperation)));
    assert_eq!(sim.invoke_maybe_restart(0, CAP_INIT_CNODE, CNodeRevoke, &[CAP_FIRST_UNTYPED]), None);
    assert_eq!(sim.invoke_maybe_restart(0, CAP_INIT_CNODE, CNodeRevoke, &[CAP_FIRST_UNTYPED]), Some(Ok(())));
    assert_eq!(sim.info(t), None);
}

#[test]
fn write_registers_and_migrate_a_running_thread() {
    let mut sim = Sim::new(2);
    let (cap, t) = sim.spawn(1, 50, 1);
    assert_eq!(sim.invoke_maybe_restart(0, cap, TcbWriteRegisters, &[0, 1, 0x77]), None);
    assert_eq!(sim.invoke_maybe_restart(0, cap, TcbWriteRegisters, &[0, 1, 0x77]), Some(Ok(())));
    assert_eq!(sim.running[1], Some(t));
    assert_eq!(sim.started.last().unwrap().1.entry, 0x77);
    // Priority changes need no stall: they take effect at the next entry.
    sim.invoke(0, cap, TcbSetPriority, &[60]).unwrap();
    assert_eq!(sim.info(t).unwrap().priority, 60);
    assert_eq!(sim.invoke_maybe_restart(0, cap, TcbSetAffinity, &[0]), None);
    assert_eq!(sim.invoke_maybe_restart(0, cap, TcbSetAffinity, &[0]), Some(Ok(())));
    assert_eq!(sim.info(t).unwrap().core, 0);
    assert_eq!(sim.status(t), ThreadStatus::Ready);
}

#[test]
fn two_threads_stalling_each_other_do_not_deadlock() {
    let mut sim = Sim::new(2);
    let (a_cap, a) = sim.spawn(1, 150, 0);
    let (b_cap, b) = sim.spawn(2, 150, 1);
    assert_eq!((sim.running[0], sim.running[1]), (Some(a), Some(b)));
    sim.auto_ipi = false;
    if WHICH.suspends_asynchronously() {
        // Nobody waits: a's request is made at once, and b, suspended, is
        // stopped when it traps, before its own request runs (it restarts
        // on resume).
        assert_eq!(sim.invoke_maybe_restart(0, b_cap, TcbSuspend, &[]), Some(Ok(())));
        assert_eq!(sim.invoke_maybe_restart(1, a_cap, TcbSuspend, &[]), None);
        sim.deliver_ipis();
        assert_eq!((sim.running[0], sim.running[1]), (Some(a), None));
        assert_eq!((sim.status(a), sim.status(b)), (ThreadStatus::Current, ThreadStatus::Inactive));
        return;
    }
    assert_eq!(sim.invoke_maybe_restart(0, b_cap, TcbSuspend, &[]), None);
    // b (not stalled yet) tries the same on a: only one thread may hold
    // cores, so b just restarts.
    assert_eq!(sim.invoke_maybe_restart(1, a_cap, TcbSuspend, &[]), None);
    sim.deliver_ipis();
    assert_eq!(sim.running[1], None);
    assert_eq!(sim.invoke_maybe_restart(0, b_cap, TcbSuspend, &[]), Some(Ok(())));
    sim.deliver_ipis();
    assert_eq!(sim.status(b), ThreadStatus::Inactive);
    assert_eq!(sim.running[0], Some(a));
}

#[test]
fn cascade_makes_a_zombie_reaped_by_its_core() {
    let mut sim = Sim::new(2);
    let cn = sim.retype(0, ObjectType::CNode, 2, 1);
    let (cap, t) = sim.spawn(1, 50, 1);
    sim.invoke(0, cn, CNodeMove, &[0, 0, cap]).unwrap();
    assert_eq!(sim.running[1], Some(t));
    sim.auto_ipi = false;
    sim.invoke(0, CAP_INIT_CNODE, CNodeDelete, &[cn]).unwrap();
    assert_eq!(sim.status(t), ThreadStatus::Zombie);
    assert!(sim.pending.contains(&1));
    sim.deliver_ipis();
    assert_eq!(sim.info(t), None);
    assert_eq!(sim.running[1], None);
    // Its slot is reused by the next thread (with a new generation).
    let (_, u) = sim.spawn(2, 50, 1);
    assert_eq!(u.index(), t.index());
    assert_ne!(u.generation(), t.generation());
}

#[test]
fn vspace_in_use_elsewhere_stalls_first() {
    let mut sim = Sim::new(2);
    let v = sim.obj(ObjectType::VSpace);
    let (cap, t) = sim.spawn(1, 50, 0);
    sim.invoke(0, cap, TcbConfigure, &[CAP_INIT_CNODE, v]).unwrap();
    sim.invoke(0, cap, TcbSetAffinity, &[1]).unwrap();
    assert_eq!(sim.running[1], Some(t));
    assert_eq!(sim.invoke_maybe_restart(0, CAP_INIT_CNODE, CNodeDelete, &[v]), None);
    assert_eq!(sim.invoke_maybe_restart(0, CAP_INIT_CNODE, CNodeDelete, &[v]), Some(Ok(())));
    sim.deliver_ipis();
    // The thread runs on without an address space.
    assert_eq!(sim.running[1], Some(t));
}

/// Sets a core loop's stop flag when dropped, so that a failing assertion
/// on core 0 ends a real-concurrency test instead of waiting for core 1
/// forever.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Core 0 of [`core_one_runs`]: the root's side.
struct CoreZero<'a> {
    k: &'a granule_kernel::Kernel<Under>,
    h: CoreHandle,
    root: granule_kernel::ThreadId,
    /// Calls core 1's thread has made.
    calls: &'a AtomicU64,
    /// When the rounds began.
    start: std::time::Instant,
    rng: ChaCha8Rng,
}

impl CoreZero<'_> {
    /// The root's invocation of `cap`, made again until it completes
    /// without a restart; it must succeed.
    fn call(&mut self, cap: Word, inv: Invocation) {
        loop {
            // SAFETY: the root runs on core 0 and only this thread acts as core 0.
            let regs = inv.write(unsafe { &mut *self.k.ipc_buffer(self.root) }, cap);
            let plan = self.k.syscall(&mut self.h, regs);
            assert_eq!(plan.run, Some(self.root));
            // SAFETY: as above, after the kernel returned.
            if let Some(r) = encode::result(unsafe { &*self.k.ipc_buffer(self.root) }) {
                assert_eq!(r.map(drop), Ok(()));
                return;
            }
            std::hint::spin_loop();
        }
    }

    /// Wait until core 1's thread has made two more calls (at first: until
    /// core 1 has started), then a random few spins more, so that what
    /// follows lands while it runs, at no fixed point of its loop.
    fn wait_for_calls(&mut self, round: usize) {
        let seen = self.calls.load(Ordering::SeqCst);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while self.calls.load(Ordering::SeqCst) < seen + 2 {
            assert!(std::time::Instant::now() < deadline, "core 1 stopped making calls ({round} rounds)");
            std::hint::spin_loop();
        }
        for _ in 0..self.rng.gen_range(0..400) {
            std::hint::spin_loop();
        }
    }
}

/// Real concurrency on a two-core kernel: core 1 runs `t` (idle, it polls
/// with IPI entries), which enters the kernel with `next()` for each of its
/// calls, while `rounds` acts as core 0 on this thread.
fn core_one_runs(
    mut sim: Sim,
    t: granule_kernel::ThreadId,
    next: impl Fn() -> granule_kernel::SyscallArgs + Send,
    rounds: impl FnOnce(&mut CoreZero<'_>),
) {
    let (stop, calls) = (AtomicBool::new(false), AtomicU64::new(0));
    let mut handles: Vec<CoreHandle> = sim.cores.drain(..).collect();
    let mut h1 = handles.pop().unwrap();
    let h0 = handles.pop().unwrap();
    let k = &sim.k;
    let run1 = sim.running[1];
    assert_eq!(run1, Some(t));
    std::thread::scope(|s| {
        let (stop, calls) = (&stop, &calls);
        s.spawn(move || {
            core_loop(k, &mut h1, run1, &mut |_: &_, _: &mut _, run: Option<_>| match run {
                _ if stop.load(Ordering::SeqCst) => Next::Stop,
                None => Next::Enter(Entry::Ipi),
                Some(_) => {
                    calls.fetch_add(1, Ordering::SeqCst);
                    Next::Enter(Entry::Syscall(next()))
                }
            });
        });
        let _stop = StopOnDrop(stop);
        let (start, rng) = (std::time::Instant::now(), ChaCha8Rng::seed_from_u64(7));
        rounds(&mut CoreZero { k, h: h0, root: sim.root, calls, start, rng });
    });
}

/// Real concurrency: core 1 runs a thread that makes system calls in a loop
/// while core 0's root suspends, resumes and migrates it. Exercises the
/// "trapped core" path (taking a thread from a core waiting for the lock).
#[test]
fn concurrent_suspend_resume_migrate() {
    if !CONCURRENT {
        eprintln!("skipped under {:?}: it promises that no two cores touch one object at once", WHICH);
        return;
    }
    let mut sim = Sim::new(2);
    let (cap, t) = sim.spawn(1, 50, 1);
    // The thread yields (a system call) over and over.
    let yield_now = encode::syscall(Sysno::Yield, 0, MessageInfo::default(), 0);
    core_one_runs(
        sim,
        t,
        move || yield_now,
        |c0| {
            for i in 0..100 {
                c0.wait_for_calls(i);
                c0.call(cap, Invocation::suspend());
                assert_eq!(c0.k.thread_info(&mut c0.h, t).unwrap().status, ThreadStatus::Inactive);
                c0.call(cap, Invocation::resume());
                if i % 3 == 0 {
                    c0.call(cap, Invocation::set_affinity((i / 3 % 2) as Word));
                    c0.call(cap, Invocation::set_affinity(1));
                }
                if let Err(e) = c0.k.check_invariants(&mut c0.h) {
                    panic!("{e}");
                }
            }
        },
    );
}

/// Real concurrency: core 1 runs a thread that resumes *itself* in a loop
/// while core 0's root suspends and resumes it. A resume of a running
/// thread does nothing, so every suspend must leave it stopped: a self-resume
/// checked before the suspend's request and run after it must not cancel
/// that request (under `lockfree` both are shared entries, and core 1's
/// entry can be under way when core 0's request lands; without the rule
/// this test failed in each of six runs, checked).
#[test]
fn a_thread_resuming_itself_does_not_cancel_a_concurrent_suspend() {
    if !CONCURRENT {
        eprintln!("skipped under {:?}: it promises that no two cores touch one object at once", WHICH);
        return;
    }
    let mut sim = Sim::new(2);
    let (cap, t) = sim.spawn(1, 50, 1);
    let buf = sim.k.ipc_buffer(t) as usize;
    // SAFETY: `buf` is `t`'s buffer, and `t` is the thread core 1 runs: only
    // core 1's thread touches it until the next kernel entry.
    let resume_itself = move || Invocation::resume().write(unsafe { &mut *(buf as *mut IpcBuffer) }, cap);
    core_one_runs(sim, t, resume_itself, |c0| {
        // Up to 20,000 rounds, and after the first 500 at most 3 seconds:
        // a regime that stalls core 1 for each suspend is slow on a loaded
        // machine.
        for i in 0..20000 {
            if i >= 500 && c0.start.elapsed() > std::time::Duration::from_secs(3) {
                break;
            }
            c0.wait_for_calls(i);
            c0.call(cap, Invocation::suspend());
            assert_eq!(c0.k.thread_info(&mut c0.h, t).unwrap().status, ThreadStatus::Inactive, "suspend {i}");
            c0.call(cap, Invocation::resume());
        }
    });
}

/// A stall owner migrated onto the core it holds (before its restarted call
/// ran again) gives the core back: otherwise that core stays idle forever
/// with the owner in its ready queue. Found by `granule verify` (seed 425).
#[test]
fn a_stall_owner_migrated_onto_the_core_it_holds_releases_it() {
    let mut sim = Sim::new(2);
    let ntfn = sim.obj(ObjectType::Notification);
    let irq = sim.boot.device_irq_base;
    let handler = sim.alloc_slot();
    sim.invoke(0, CAP_IRQ_CONTROL, IrqIssueIrqHandler, &[irq as Word, 0, handler]).unwrap();
    sim.invoke(0, handler, IrqSetIrqHandler, &[ntfn]).unwrap();
    let (v_cap, v) = sim.spawn(1, 50, 1);
    assert_eq!(sim.running[1], Some(v));
    // X: top priority on core 0, waiting for the device interrupt.
    let (_, x) = sim.spawn(2, 150, 0);
    assert_eq!(sim.running[0], Some(x));
    sim.sys(0, Sysno::Wait, ntfn, MessageInfo::default(), 0);
    // A: deletes V, which runs on core 1: A now holds core 1 idle. (Under
    // a regime that deletes without stalling, A rewrites V's registers,
    // which stalls in every regime.)
    let (a_cap, a) = sim.spawn(3, 120, 0);
    assert_eq!(sim.running[0], Some(a));
    let (on, label, args) = match WHICH.destroys_asynchronously() {
        true => (v_cap, TcbWriteRegisters, vec![0, 1, 0x77]),
        false => (CAP_INIT_CNODE, CNodeDelete, vec![v_cap]),
    };
    assert_eq!(sim.invoke_maybe_restart(0, on, label, &args), None);
    assert_eq!(sim.running[1], None);
    // Before A retries, X preempts it and moves it to core 1.
    sim.interrupt(0, irq);
    assert_eq!(sim.running[0], Some(x));
    sim.invoke_maybe_restart(0, a_cap, TcbSetAffinity, &[1]).unwrap().unwrap();
    sim.invoke(0, handler, IrqAckIrq, &[]).unwrap();
    sim.sys(0, Sysno::Wait, ntfn, MessageInfo::default(), 0);
    sim.tick(1);
    assert_eq!(sim.running[1], Some(a), "core 1 must run A, not stay held");
    // A's restarted call asks again from core 1 and completes.
    assert_eq!(sim.invoke_maybe_restart(1, on, label, &args), Some(Ok(())));
    if label == CNodeDelete {
        assert_eq!(sim.info(v), None);
    }
}
