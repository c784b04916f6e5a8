//! TCB invocations and scheduling: configure, priorities and preemption,
//! affinity, suspend/resume, registers, faults, time slices, yield.

use crate::common::*;
use granule_kernel::abi::*;
use granule_kernel::ThreadStatus;

use InvocationLabel::*;

#[test]
fn tcb_errors() {
    let mut sim = Sim::new(2);
    let (t, _) = sim.spawn(1, 10, 0);
    let ep = sim.obj(ObjectType::Endpoint);
    assert_eq!(sim.invoke(0, t, TcbSetPriority, &[]), Err(Error::TruncatedMessage));
    assert_eq!(sim.invoke(0, t, TcbSetPriority, &[256]), Err(Error::RangeError));
    assert_eq!(sim.invoke(0, t, TcbSetAffinity, &[2]), Err(Error::RangeError));
    assert_eq!(sim.invoke(0, t, TcbSetAffinity, &[u64::MAX]), Err(Error::RangeError));
    assert_eq!(sim.invoke(0, t, TcbReadRegisters, &[NUM_REGS as Word + 1]), Err(Error::RangeError));
    assert_eq!(sim.invoke(0, t, TcbWriteRegisters, &[0, 9]), Err(Error::RangeError));
    assert_eq!(sim.invoke(0, t, TcbWriteRegisters, &[0, 3, 1]), Err(Error::TruncatedMessage));
    assert_eq!(sim.invoke(0, CAP_INIT_TCB, TcbWriteRegisters, &[0, 0]), Err(Error::IllegalOperation));
    assert_eq!(sim.invoke(0, t, TcbConfigure, &[ep, 0]), Err(Error::InvalidCapability));
    assert_eq!(sim.invoke(0, t, TcbConfigure, &[200, 0]), Err(Error::FailedLookup));
    assert_eq!(sim.invoke(0, t, TcbConfigure, &[CAP_INIT_CNODE, ep]), Err(Error::InvalidCapability));
    assert_eq!(sim.invoke(0, t, TcbConfigure, &[CAP_INIT_CNODE]), Err(Error::TruncatedMessage));
    assert_eq!(sim.invoke(0, t, CNodeDelete, &[0]), Err(Error::IllegalOperation));
    // Invoking an endpoint or VSpace capability is not an invocation.
    assert_eq!(sim.invoke(0, CAP_INIT_VSPACE, TcbSuspend, &[]), Err(Error::IllegalOperation));
}

#[test]
fn registers_and_fresh_start() {
    let mut sim = Sim::new(1);
    let (cap, t) = sim.spawn(0x1234, 150, 0);
    assert_eq!(sim.running[0], Some(t));
    let (started, info) = *sim.started.last().unwrap();
    assert_eq!(started, t);
    assert_eq!((info.entry, info.arg), (0x1234, 0x1234));
    // The thread blocks; the root rewrites its registers: it starts afresh.
    let n = sim.obj_in_thread();
    sim.sys(0, Sysno::Wait, n, msg(0, 0), 0);
    assert_eq!(sim.running[0], Some(sim.root));
    let regs = sim.invoke(0, cap, TcbReadRegisters, &[3]).unwrap();
    assert_eq!(regs, vec![0x1234, 0, 0x1234]);
    sim.invoke(0, cap, TcbWriteRegisters, &[0, 3, 0x99, 0, 7]).unwrap();
    assert_eq!(sim.running[0], Some(t));
    let (_, info) = *sim.started.last().unwrap();
    assert_eq!((info.entry, info.arg, info.fresh), (0x99, 7, true));
    assert_eq!(sim.k.start_info(&mut sim.cores[0], t).map(|s| s.fresh), Some(false));
}

impl SimExt for Sim {
    fn obj_in_thread(&mut self) -> Word {
        // Retype as the root before the thread runs would be simpler; here the
        // current thread (sharing the root CSpace) does it.
        self.retype(0, ObjectType::Notification, 0, 1)
    }
}

trait SimExt {
    fn obj_in_thread(&mut self) -> Word;
}

#[test]
fn priorities_preempt_and_round_robin() {
    let mut sim = Sim::new(1);
    let (a_cap, a) = sim.spawn(1, 50, 0);
    let (_, b) = sim.spawn(2, 50, 0);
    assert_eq!(sim.running[0], Some(sim.root));
    // Raising a above the root preempts the root.
    sim.invoke(0, a_cap, TcbSetPriority, &[120]).unwrap();
    assert_eq!(sim.running[0], Some(a));
    // a lowers itself below the root: the root runs again.
    sim.invoke(0, a_cap, TcbSetPriority, &[50]).unwrap();
    assert_eq!(sim.running[0], Some(sim.root));
    sim.park_root();
    // b and a share priority 50; a, preempted, went back to the *front* of
    // its level (seL4's rule for a preempted thread).
    assert_eq!(sim.running[0], Some(a));
    // Time slices rotate them (5 ticks each).
    for _ in 0..4 {
        sim.tick(0);
        assert_eq!(sim.running[0], Some(a));
    }
    sim.tick(0);
    assert_eq!(sim.running[0], Some(b));
    // Yield rotates at once.
    sim.sys(0, Sysno::Yield, 0, msg(0, 0), 0);
    assert_eq!(sim.running[0], Some(a));
    sim.sys(0, Sysno::Yield, 0, msg(0, 0), 0);
    assert_eq!(sim.running[0], Some(b));
    // Ticks on an idle core are harmless.
    sim.tick(0);
}

#[test]
fn suspend_resume_and_fault() {
    let mut sim = Sim::new(1);
    let ep = sim.obj(ObjectType::Endpoint);
    let (cap, t) = sim.spawn(1, 150, 0);
    // Blocked receiving, then suspended: the receive is abandoned.
    sim.sys(0, Sysno::Recv, ep, msg(0, 0), 0);
    sim.invoke(0, cap, TcbSuspend, &[]).unwrap();
    assert_eq!(sim.status(t), ThreadStatus::Inactive);
    sim.sys(0, Sysno::NBSend, ep, msg(0, 0), 0);
    assert_eq!(sim.status(t), ThreadStatus::Inactive);
    // Resumed: it restarts its receive.
    sim.invoke(0, cap, TcbResume, &[]).unwrap();
    assert_eq!(sim.running[0], Some(t));
    assert_eq!(sim.buf(t).restart, 1);
    // Resuming a running thread does nothing.
    sim.invoke(0, cap, TcbResume, &[]).unwrap();
    assert_eq!(sim.running[0], Some(t));
    // Suspending itself.
    sim.invoke(0, cap, TcbSuspend, &[]).unwrap();
    assert_eq!(sim.status(t), ThreadStatus::Inactive);
    assert_eq!(sim.running[0], Some(sim.root));
    sim.invoke(0, cap, TcbResume, &[]).unwrap();
    assert_eq!(sim.running[0], Some(t));
    assert_eq!(sim.buf(t).result(), Ok(()));
    // A fault stops it; resuming starts it afresh at its entry.
    let before = sim.started.len();
    sim.fault(0);
    assert_eq!(sim.status(t), ThreadStatus::Inactive);
    assert_eq!(sim.running[0], Some(sim.root));
    sim.invoke(0, cap, TcbResume, &[]).unwrap();
    assert_eq!(sim.running[0], Some(t));
    assert_eq!(sim.started.len(), before + 1);
    // A fault on an idle core is ignored.
    sim.park_root();
    sim.sys(0, Sysno::Recv, ep, msg(0, 0), 0);
    assert_eq!(sim.running[0], None);
    sim.fault(0);
}

#[test]
fn affinity_moves_ready_and_blocked_threads() {
    let mut sim = Sim::new(2);
    let n = sim.obj(ObjectType::Notification);
    let (cap, t) = sim.spawn(1, 50, 0);
    assert_eq!(sim.status(t), ThreadStatus::Ready);
    // A ready thread moves at once and runs on core 1 (IPI to the idle core).
    sim.invoke(0, cap, TcbSetAffinity, &[1]).unwrap();
    assert_eq!(sim.running[1], Some(t));
    // It waits; moved while blocked; woken on core 0.
    sim.sys(1, Sysno::Wait, n, msg(0, 0), 0);
    sim.invoke(0, cap, TcbSetAffinity, &[0]).unwrap();
    assert_eq!(sim.status(t), ThreadStatus::BlockedOnNotification);
    sim.sys(0, Sysno::Signal, n, msg(0, 0), 0);
    assert_eq!(sim.info(t).unwrap().core, 0);
    assert_eq!(sim.status(t), ThreadStatus::Ready);
    // It migrates itself: the call completes on the new core.
    sim.invoke(0, cap, TcbSetPriority, &[150]).unwrap();
    assert_eq!(sim.running[0], Some(t));
    sim.invoke(0, cap, TcbSetAffinity, &[1]).unwrap();
    assert_eq!(sim.running[1], Some(t));
    assert_eq!(sim.running[0], Some(sim.root));
    assert_eq!(sim.buf(t).result(), Ok(()));
    // Same core: nothing happens.
    sim.invoke(1, cap, TcbSetAffinity, &[1]).unwrap();
    assert_eq!(sim.running[1], Some(t));
}

#[test]
fn configure_changes_the_cspace() {
    let mut sim = Sim::new(1);
    let cn = sim.retype(0, ObjectType::CNode, 2, 1);
    let (cap, t) = sim.spawn(1, 150, 0);
    // The thread reconfigures itself onto an empty CNode: its capabilities
    // are gone.
    sim.invoke(0, cap, TcbConfigure, &[cn, 0]).unwrap();
    sim.sys(0, Sysno::Yield, 0, msg(0, 0), 0);
    sim.sys(0, Sysno::NBSend, 1, msg(0, 0), 0);
    assert_eq!(sim.buf(t).result(), Err(Error::InvalidCapability));
    sim.sys(0, Sysno::NBSend, 100, msg(0, 0), 0);
    assert_eq!(sim.buf(t).result(), Err(Error::InvalidCapability));
}

/// A thread of an idle core, resumed and suspended again before that core
/// takes the interrupt, does not run (under `lockfree` the resume leaves it
/// in the core's inbox, and the core's entry must meet the suspend before
/// switching to it).
#[test]
fn a_thread_resumed_and_suspended_before_its_core_looks_stays_stopped() {
    let mut sim = Sim::new(2);
    let (cap, t) = sim.spawn(10, 50, 1);
    assert_eq!(sim.running[1], Some(t));
    // The lock regimes stall core 1 and restart the call once.
    let stopped = (0..3).find_map(|_| sim.invoke_maybe_restart(0, cap, TcbSuspend, &[]));
    assert_eq!(stopped, Some(Ok(())));
    assert_eq!(sim.running[1], None);
    sim.auto_ipi = false;
    sim.invoke(0, cap, TcbResume, &[]).unwrap();
    sim.invoke(0, cap, TcbSuspend, &[]).unwrap();
    sim.deliver_ipis();
    assert_eq!((sim.running[1], sim.status(t)), (None, ThreadStatus::Inactive));
    // Resumed once more, it runs.
    sim.invoke(0, cap, TcbResume, &[]).unwrap();
    sim.deliver_ipis();
    assert_eq!((sim.running[1], sim.status(t)), (Some(t), ThreadStatus::Current));
    sim.check();
}

/// A ready thread suspended and resumed by a thread of its own core goes
/// to the back of its priority's queue, as seL4's resume queues it, and the
/// threads around it keep their order. (Under `lockfree` the caller's core
/// owns a ready thread of its own and meets the suspend at once, on the
/// shared path; a blocked thread is suspended in a management entry.)
#[test]
fn a_ready_thread_suspended_and_resumed_by_its_core_queues_at_the_back() {
    let mut sim = Sim::new(1);
    let (a_cap, a) = sim.spawn(1, 50, 0);
    let (_, b) = sim.spawn(2, 50, 0);
    let (_, c) = sim.spawn(3, 50, 0);
    sim.invoke(0, a_cap, TcbSuspend, &[]).unwrap();
    assert_eq!(sim.status(a), ThreadStatus::Inactive);
    // A second suspend and a resume of a thread that is not stopped change
    // nothing.
    sim.invoke(0, a_cap, TcbSuspend, &[]).unwrap();
    assert_eq!(sim.status(a), ThreadStatus::Inactive);
    sim.invoke(0, a_cap, TcbResume, &[]).unwrap();
    sim.invoke(0, a_cap, TcbResume, &[]).unwrap();
    assert_eq!(sim.status(a), ThreadStatus::Ready);
    sim.park_root();
    let mut order = vec![];
    for _ in 0..3 {
        let t = sim.running[0].expect("a ready thread runs");
        order.push(t);
        sim.sys(0, Sysno::Yield, 0, msg(0, 0), 0);
    }
    assert_eq!(order, [b, c, a]);
    sim.check();
}
