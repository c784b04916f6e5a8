//! Regimes: lock sets offered to a regime that wants them, the fast path
//! agreeing with the general path, the lock-free paths agreeing with the
//! big lock, and the profiled big lock.

mod common;

use std::sync::Mutex;

use common::*;
use granule_kernel::abi::*;
use granule_kernel::regime::{GeneralOnly, Queues, Shared, Whole};
use granule_kernel::{
    BigLock, BootError, CountingLockFree, FaultKind, Kernel, LockFree, LockSet, Regime, RmwCounts, ThreadId,
    ThreadStatus,
};
use granule_sync::lock::Clh;
use granule_sync::profile::{freebsd_table, Profile};

/// The big lock, plus a record of every lock set, driven on the general path
/// alone (the IPC fast path offers no sets).
struct Recorder {
    inner: BigLock<Clh>,
    sets: Mutex<Vec<LockSet>>,
}

// SAFETY: `enter`/`exit` are the big lock's, which excludes all other cores
// and synchronises consecutive holders; recording lock sets changes nothing.
unsafe impl Regime for Recorder {
    const NAME: &'static str = "recorder";
    type Drive = GeneralOnly;
    type Waits = Queues;
    type Held<'a> = <BigLock<Clh> as Regime>::Held<'a>;

    fn cores(&self) -> usize {
        self.inner.cores()
    }
    unsafe fn enter<F: FnMut()>(&self, core: usize, spin: F) -> Self::Held<'_> {
        // SAFETY: the caller's contract, and `cores` is the inner regime's.
        unsafe { self.inner.enter(core, spin) }
    }
    unsafe fn lock_set(&self, _core: usize, set: &LockSet) -> bool {
        self.sets.lock().unwrap().push(*set);
        true
    }
    unsafe fn exit(&self, core: usize, held: Self::Held<'_>) {
        // SAFETY: as in `enter`; `held` is what it returned.
        unsafe { self.inner.exit(core, held) };
    }
}

/// Run a ping-pong on one core; returns what the two threads saw.
fn pingpong<R: Regime>(sim: &mut Sim<R>) -> Vec<(Word, Word, Word, Word)> {
    let ep = sim.obj(ObjectType::Endpoint);
    let reply = sim.obj(ObjectType::Reply);
    let badged = sim.mint(ep, 9);
    let (_, s) = sim.spawn(1, 150, 0);
    sim.sys(0, Sysno::Recv, ep, msg(0, 0), reply);
    let (_, c) = sim.spawn(2, 150, 0);
    let mut seen = Vec::new();
    for i in 0..50 {
        sim.buf(c).msg[..3].copy_from_slice(&[i, i * 2, i * 3]);
        sim.sys(0, Sysno::Call, badged, msg(i, 3), 0);
        assert_eq!(sim.running[0], Some(s));
        let b = sim.buf(s);
        seen.push((b.tag, b.badge, b.msg[2], b.error));
        b.msg[0] = i + 100;
        sim.sys(0, Sysno::ReplyRecv, ep, msg(7, 1), reply);
        assert_eq!(sim.running[0], Some(c));
        let b = sim.buf(c);
        seen.push((b.tag, b.badge, b.msg[0], b.error));
    }
    seen
}

#[test]
fn fast_path_agrees_with_general_path_and_lock_sets_name_objects() {
    let mut fast = Sim::new(1);
    let a = pingpong(&mut fast);
    assert!(fast.k.core_stats(0).fastpath >= 100);

    let regime = Recorder { inner: BigLock::new(1), sets: Mutex::new(Vec::new()) };
    let mut slow = Sim::with(config(1), regime);
    let b = pingpong(&mut slow);
    assert_eq!(slow.k.core_stats(0).fastpath, 0);
    assert_eq!(a, b);

    // Every offered set names the caller's core; a Call delivered to a
    // waiting receiver names the endpoint and the reply object, and no set
    // names a thread (a thread is held with the place it waits in).
    let sets = slow.k.regime().sets.lock().unwrap();
    assert!(!sets.is_empty());
    assert!(sets.iter().all(|s| s.cores.contains(0)));
    assert!(sets.iter().all(|s| s.objects().all(|o| o.kind != ObjectType::Tcb as u8)));
    let call = sets.iter().find(|s| {
        s.objects().any(|o| o.kind == ObjectType::Endpoint as u8)
            && s.objects().any(|o| o.kind == ObjectType::Reply as u8)
    });
    assert!(call.is_some(), "no Call lock set among {} sets", sets.len());
    // Retype is exclusive.
    assert!(sets.iter().any(|s| s.exclusive()));
}

/// Signals and waits: a waiter on core 0 above the root (woken, it runs at
/// once), badges accumulated while nobody waits and taken by a `Wait` that
/// does not block, and a waiter on core 1 (woken from core 0). Returns what
/// each step left: who runs on each core, and the waiters' and the root's
/// results.
fn signals<R: Regime>(sim: &mut Sim<R>) -> Vec<[Word; 6]> {
    let n = sim.obj(ObjectType::Notification);
    let far = sim.obj(ObjectType::Notification);
    let b1 = sim.mint(n, 0b01);
    let b2 = sim.mint(n, 0b10);
    let far_badged = sim.mint(far, 0b100);
    let root = sim.root;
    let (_, w) = sim.spawn(1, 200, 0);
    assert_eq!(sim.running[0], Some(w));
    sim.sys(0, Sysno::Wait, n, msg(0, 0), 0);
    let (_, v) = sim.spawn(2, 200, 1);
    assert_eq!(sim.running[1], Some(v));
    sim.sys(1, Sysno::Wait, far, msg(0, 0), 0);
    let mut seen = Vec::new();
    let mut note = |sim: &mut Sim<R>| {
        let id = |t: Option<ThreadId>| t.map_or(0, |t| t.index() as Word + 1);
        let step = [
            id(sim.running[0]),
            id(sim.running[1]),
            sim.buf(w).badge,
            sim.buf(w).error,
            sim.buf(v).badge,
            sim.buf(root).error,
        ];
        seen.push(step);
    };
    for i in 0..20 {
        // The root wakes `w`, which outranks it.
        sim.sys(0, Sysno::Signal, if i % 2 == 0 { b1 } else { b2 }, msg(0, 0), 0);
        assert_eq!(sim.running[0], Some(w));
        note(sim);
        // Nobody waits: `w`'s own signals accumulate, and its wait takes
        // them without blocking.
        sim.sys(0, Sysno::Signal, b1, msg(0, 0), 0);
        sim.sys(0, Sysno::Signal, b2, msg(0, 0), 0);
        sim.sys(0, Sysno::Wait, n, msg(0, 0), 0);
        assert_eq!(sim.running[0], Some(w));
        note(sim);
        // It waits again: the root runs.
        sim.sys(0, Sysno::Wait, n, msg(0, 0), 0);
        assert_eq!(sim.running[0], Some(root));
        note(sim);
        // The root wakes `v` on core 1, which then waits again.
        sim.sys(0, Sysno::Signal, far_badged, msg(0, 0), 0);
        assert_eq!(sim.running[1], Some(v));
        note(sim);
        sim.sys(1, Sysno::Wait, far, msg(0, 0), 0);
        note(sim);
    }
    seen
}

#[test]
fn notification_fast_path_agrees_with_general_path() {
    let mut fast = Sim::new(2);
    let a = signals(&mut fast);
    let fast_calls = fast.k.core_stats(0).fastpath + fast.k.core_stats(1).fastpath;
    let regime = Recorder { inner: BigLock::new(2), sets: Mutex::new(Vec::new()) };
    let mut slow = Sim::with(config(2), regime);
    let b = signals(&mut slow);
    assert_eq!(slow.k.core_stats(0).fastpath + slow.k.core_stats(1).fastpath, 0);
    assert_eq!(a, b);
    // Per round: three signals and two waits on core 0, and the wait on
    // core 1 (the signal to core 1's waiter is the general path's).
    assert!(fast_calls >= 20 * 6, "{fast_calls} fast-path calls");
    assert_eq!(a[0][2], 0b01);
    assert_eq!(a[1][2], 0b11);
}

#[test]
fn lock_free_paths_agree_with_the_big_lock() {
    let mut bkl = Sim::new(1);
    let a = pingpong(&mut bkl);
    let mut lf = Sim::with(config(1), LockFree::new(1));
    let b = pingpong(&mut lf);
    assert_eq!(a, b);
    // Every call and reply-receive of the ping-pong ran on the shared path.
    assert!(lf.k.core_stats(0).fastpath >= 100);
}

#[test]
fn lockfree_counts_the_atomics_of_its_ping_pong_path() {
    const { assert!(CountingLockFree::COUNTING && !LockFree::COUNTING) };
    let mut sim = Sim::with(config(1), LockFree::counting(1));
    let ep = sim.obj(ObjectType::Endpoint);
    let reply = sim.obj(ObjectType::Reply);
    let (_, s) = sim.spawn(1, 150, 0);
    sim.sys(0, Sysno::Recv, ep, msg(0, 0), reply);
    let (_, c) = sim.spawn(2, 150, 0);
    let counts = |sim: &Sim<CountingLockFree>| sim.k.regime().rmw_counts();
    for i in 0..20 {
        // Each system call alone: `follow` then runs the invariant checker,
        // a management entry with atomics of its own.
        for (sysno, info, slot, next) in [(Sysno::Call, msg(i, 1), 0, s), (Sysno::ReplyRecv, msg(7, 1), reply, c)] {
            let before = counts(&sim);
            let plan = sim.k.syscall(&mut sim.cores[0], encode::syscall(sysno, ep, info, slot));
            let used = counts(&sim).since(&before);
            sim.follow(0, plan);
            assert_eq!(sim.running[0], Some(next));
            // The gate's lock add, then two CASes: taking the only waiting
            // server (close its link, empty the endpoint word) for Call; the
            // reply word and queueing the server for ReplyRecv
            // (`crate::lockfree`'s cost table).
            assert_eq!(used, RmwCounts { xadd: 1, cmpxchg: 2, ..RmwCounts::default() }, "{sysno:?} {i}");
        }
    }
    // A management entry: the ticket's lock xadd and the gate's SeqCst store.
    let before = counts(&sim);
    sim.check();
    assert_eq!(counts(&sim).since(&before), RmwCounts { xchg: 1, xadd: 1, management: 1, ..RmwCounts::default() });
}

/// Suspend and resume under `lockfree` are shared entries (no management
/// lock) with one control-word CAS each; the owner's stop is one more
/// (`lockfree/control.rs`'s cost section).
#[test]
fn lockfree_suspend_and_resume_count_their_atomics() {
    let mut sim = Sim::with(config(2), LockFree::counting(2));
    let (cap, t) = sim.spawn(1, 50, 1);
    assert_eq!(sim.running[1], Some(t));
    sim.auto_ipi = false;
    let counts = |sim: &Sim<CountingLockFree>| sim.k.regime().rmw_counts();
    let gate = |cmpxchg| RmwCounts { xadd: 1, cmpxchg, ..RmwCounts::default() };
    // A stop request also sets the target core's `stop_ipi` flag, and the
    // interrupted core's entry takes it: one `xchg` each.
    let asked = RmwCounts { xadd: 1, xchg: 1, cmpxchg: 1, ..RmwCounts::default() };
    // One system call (or IPI) of `core` alone: `follow` then runs the
    // invariant checker, a management entry with atomics of its own.
    let entry = |sim: &mut Sim<CountingLockFree>, core: usize, inv: Option<Invocation>| {
        let before = counts(sim);
        let plan = match inv {
            Some(inv) => {
                let root = sim.root;
                let args = inv.write(sim.buf(root), cap);
                sim.k.syscall(&mut sim.cores[core], args)
            }
            None => sim.k.ipi(&mut sim.cores[core]),
        };
        let used = counts(sim).since(&before);
        sim.follow(core, plan);
        used
    };
    for _ in 0..5 {
        // Suspend: the gate's lock add, `0 → STOPME`, the flag; core 1 is
        // interrupted.
        assert_eq!(entry(&mut sim, 0, Some(Invocation::suspend())), asked);
        assert_eq!(sim.buf(sim.root).result(), Ok(()));
        assert!(sim.pending.contains(&1));
        sim.pending.clear();
        // The owed interrupt shows as pending (no IPI bit is set).
        assert!(sim.k.pending_ipi(1));
        // Core 1 takes the flag (`xchg`) and stops its thread:
        // `STOPME → INACTIVE`.
        assert_eq!(entry(&mut sim, 1, None), asked);
        assert_eq!((sim.running[1], sim.status(t)), (None, ThreadStatus::Inactive));
        assert!(!sim.k.pending_ipi(1));
        // Resume claims it (`INACTIVE → 0`) and pushes it on core 1's inbox,
        // pending until core 1's entry drains it (the invariant checker, a
        // look, leaves it there).
        assert_eq!(entry(&mut sim, 0, Some(Invocation::resume())), gate(2));
        assert!(sim.k.pending_ipi(1));
        sim.deliver_ipis();
        assert!(!sim.k.pending_ipi(1));
        assert_eq!(sim.running[1], Some(t));
        // Suspend and resume before core 1 acts: one CAS each (and the
        // suspend's flag), and core 1 clears the cancelled request with one
        // more; its thread runs on.
        assert_eq!(entry(&mut sim, 0, Some(Invocation::suspend())), asked);
        assert_eq!(entry(&mut sim, 0, Some(Invocation::resume())), gate(1));
        assert_eq!(entry(&mut sim, 1, None), asked);
        sim.pending.clear();
        assert_eq!((sim.running[1], sim.status(t)), (Some(t), ThreadStatus::Current));
    }
}

/// A suspend or resume of a thread of the caller's own core is a shared
/// entry too where the core owns the thread: a ready thread (the gate's
/// `lock add`, `0 → STOPME`, the stop met at once: `STOPME → INACTIVE`), a
/// stopped one (the claim, `INACTIVE → 0`; no inbox) and the caller itself
/// (met where the entry ends). No core is interrupted. A thread blocked in
/// an endpoint's queue is suspended by a management entry.
#[test]
fn lockfree_suspend_and_resume_of_a_thread_of_the_callers_core_count_their_atomics() {
    let mut sim = Sim::with(config(1), LockFree::counting(1));
    let ep = sim.obj(ObjectType::Endpoint);
    let (cap, t) = sim.spawn(1, 50, 0);
    assert_eq!(sim.status(t), ThreadStatus::Ready);
    sim.auto_ipi = false;
    let counts = |sim: &Sim<CountingLockFree>| sim.k.regime().rmw_counts();
    let gate = |cmpxchg| RmwCounts { xadd: 1, cmpxchg, ..RmwCounts::default() };
    let entry = |sim: &mut Sim<CountingLockFree>, inv: Invocation| {
        let before = counts(sim);
        let root = sim.root;
        let args = inv.write(sim.buf(root), cap);
        let plan = sim.k.syscall(&mut sim.cores[0], args);
        let used = counts(sim).since(&before);
        sim.follow(0, plan);
        assert_eq!(sim.buf(root).result(), Ok(()));
        used
    };
    for _ in 0..5 {
        assert_eq!(entry(&mut sim, Invocation::suspend()), gate(2));
        assert_eq!(sim.status(t), ThreadStatus::Inactive);
        assert_eq!(entry(&mut sim, Invocation::resume()), gate(1));
        assert_eq!(sim.status(t), ThreadStatus::Ready);
        assert!(sim.pending.is_empty() && !sim.k.pending_ipi(0));
    }
    // The thread suspends itself: the request, and its stop where the entry
    // ends; the root runs.
    sim.root_invoke(cap, Invocation::set_priority(150));
    assert_eq!(sim.running[0], Some(t));
    let before = counts(&sim);
    let args = Invocation::suspend().write(sim.buf(t), cap);
    let plan = sim.k.syscall(&mut sim.cores[0], args);
    assert_eq!(counts(&sim).since(&before), gate(2));
    sim.follow(0, plan);
    assert_eq!((sim.status(t), sim.running[0]), (ThreadStatus::Inactive, Some(sim.root)));
    assert_eq!(entry(&mut sim, Invocation::resume()), gate(1));
    assert_eq!(sim.running[0], Some(t));
    // Blocked in an endpoint's queue: management.
    sim.sys(0, Sysno::Recv, ep, msg(0, 0), 0);
    assert_eq!(sim.status(t), ThreadStatus::BlockedOnRecv);
    let used = entry(&mut sim, Invocation::suspend());
    // The declined shared entry's gate, the ticket and its `SeqCst` store.
    assert_eq!((used.management, used.xadd, used.xchg), (1, 2, 1));
    assert_eq!(sim.status(t), ThreadStatus::Inactive);
}

/// Frame map, unmap and get-address under `lockfree` are shared entries
/// (no management entry): the gate's `lock add` and the mapping's CASes
/// (`granule_sync`'s `mapping.rs`).
#[test]
fn lockfree_frames_map_and_unmap_on_the_shared_path_with_their_atomics() {
    let mut sim = Sim::with(config(1), LockFree::counting(1));
    let v = sim.obj(ObjectType::VSpace);
    let f = sim.retype(0, ObjectType::Frame, 12, 2);
    let counts = |sim: &Sim<CountingLockFree>| sim.k.regime().rmw_counts();
    let gate = |cmpxchg, cmpxchg16b| RmwCounts { xadd: 1, cmpxchg, cmpxchg16b, ..RmwCounts::default() };
    let entry = |sim: &mut Sim<CountingLockFree>, frame: Word, label: InvocationLabel, args: &[Word]| {
        let before = counts(sim);
        let root = sim.root;
        let a = Invocation::new(label, args).write(sim.buf(root), frame);
        let plan = sim.k.syscall(&mut sim.cores[0], a);
        let used = counts(sim).since(&before);
        sim.follow(0, plan);
        (used, sim.buf(root).result())
    };
    use InvocationLabel::{FrameGetAddress, FrameMap, FrameUnmap};
    // The region's first page: a table from the pool (`cmpxchg16b`) and
    // its install, then the request, the claim and the decision.
    assert_eq!(entry(&mut sim, f, FrameMap, &[v, 0]), (gate(4, 1), Ok(())));
    for _ in 0..5 {
        assert_eq!(entry(&mut sim, f + 1, FrameMap, &[v, 0x1000]), (gate(3, 0), Ok(())));
        assert_eq!(entry(&mut sim, f + 1, FrameGetAddress, &[]), (gate(0, 0), Ok(())));
        // The decision and taking the claim out.
        assert_eq!(entry(&mut sim, f + 1, FrameUnmap, &[]), (gate(2, 0), Ok(())));
        // The page is taken: the request and its refusal.
        assert_eq!(entry(&mut sim, f + 1, FrameMap, &[v, 0]), (gate(2, 0), Err(Error::DeleteFirst)));
        assert_eq!(entry(&mut sim, f + 1, FrameGetAddress, &[]), (gate(0, 0), Err(Error::IllegalOperation)));
        // Decoding errors change nothing.
        assert_eq!(entry(&mut sim, f + 1, FrameMap, &[v, 0x1001]), (gate(0, 0), Err(Error::AlignmentError)));
    }
    // Any other invocation of a frame is an error on the shared path too;
    // another object's invocation is a management entry.
    assert_eq!(entry(&mut sim, f, InvocationLabel::TcbResume, &[]), (gate(0, 0), Err(Error::IllegalOperation)));
    let (used, _) = entry(&mut sim, v, FrameUnmap, &[]);
    assert_eq!(used.management, 1);
}

/// A fault goes to its handler on the shared path, with the atomics of the
/// `Call` it is: the gate's `lock add` and the two CASes that take the waiting
/// handler (no management entry); the handler's `ReplyRecv` answers it
/// with the usual three.
#[test]
fn lockfree_a_fault_reaches_its_handler_with_the_atomics_of_a_call() {
    let mut sim = Sim::with(config(1), LockFree::counting(1));
    let ep = sim.obj(ObjectType::Endpoint);
    let reply = sim.obj(ObjectType::Reply);
    let (_, h) = sim.spawn(10, 150, 0);
    let (t_cap, t) = sim.spawn(11, 120, 0);
    sim.root_invoke(t_cap, Invocation::set_fault_handler(ep));
    sim.sys(0, Sysno::Recv, ep, msg(0, 0), reply);
    assert_eq!(sim.running[0], Some(t));
    let counts = |sim: &Sim<CountingLockFree>| sim.k.regime().rmw_counts();
    let gate = |cmpxchg| RmwCounts { xadd: 1, cmpxchg, ..RmwCounts::default() };
    for i in 0..5 {
        let before = counts(&sim);
        let plan = sim.k.fault(&mut sim.cores[0], FaultKind::MemoryAccess { addr: i, write: false });
        assert_eq!(counts(&sim).since(&before), gate(2));
        sim.follow(0, plan);
        assert_eq!((sim.running[0], sim.buf(h).msg[0]), (Some(h), i));
        let before = counts(&sim);
        let args = encode::syscall(Sysno::ReplyRecv, ep, msg(0, 0), reply);
        let plan = sim.k.syscall(&mut sim.cores[0], args);
        assert_eq!(counts(&sim).since(&before), gate(2));
        sim.follow(0, plan);
        assert_eq!(sim.running[0], Some(t));
    }
}

/// A suspend of a thread of another core that waits in an endpoint is met
/// by the next taker: the waiter is refused (it receives nothing, and its
/// call restarts), stopped, or restarted at once if a resume came first.
#[test]
fn lockfree_a_suspended_waiter_is_refused_by_its_taker() {
    let mut sim = Sim::with(config(2), LockFree::new(2));
    let ep = sim.obj(ObjectType::Endpoint);
    let (cap, r) = sim.spawn(1, 50, 1);
    sim.sys(1, Sysno::Recv, ep, msg(0, 0), 0);
    assert_eq!(sim.status(r), ThreadStatus::BlockedOnRecv);
    // Suspended while it waits: still queued, but inactive to observers.
    sim.invoke(0, cap, InvocationLabel::TcbSuspend, &[]).unwrap();
    let info = sim.info(r).unwrap();
    assert_eq!((info.status, info.call_abandoned), (ThreadStatus::Inactive, true));
    // The sender's taker refuses it: the message is dropped (nobody else
    // waits), and the waiter is stopped with its receive to restart.
    sim.sys(0, Sysno::NBSend, ep, msg(5, 0), 0);
    let info = sim.info(r).unwrap();
    assert_eq!((info.status, info.call_abandoned), (ThreadStatus::Inactive, false));
    assert_eq!(sim.buf(r).restart, 1);
    // Resumed: it runs on core 1 again and receives the next message.
    sim.invoke(0, cap, InvocationLabel::TcbResume, &[]).unwrap();
    assert_eq!(sim.running[1], Some(r));
    sim.sys(1, Sysno::Recv, ep, msg(0, 0), 0);
    sim.sys(0, Sysno::NBSend, ep, msg(6, 0), 0);
    assert_eq!((sim.running[1], MessageInfo(sim.buf(r).tag).label()), (Some(r), 6));
    // Suspended and resumed while it waits: the request is cancelled, the
    // receive abandoned all the same, and the taker restarts it.
    sim.sys(1, Sysno::Recv, ep, msg(0, 0), 0);
    sim.invoke(0, cap, InvocationLabel::TcbSuspend, &[]).unwrap();
    sim.invoke(0, cap, InvocationLabel::TcbResume, &[]).unwrap();
    let info = sim.info(r).unwrap();
    assert_eq!((info.status, info.call_abandoned), (ThreadStatus::BlockedOnRecv, true));
    sim.sys(0, Sysno::NBSend, ep, msg(7, 0), 0);
    assert_eq!((sim.running[1], sim.buf(r).restart), (Some(r), 1));
    assert_eq!(sim.status(r), ThreadStatus::Current);
}

/// A thread of another core with a suspend pending counts as inactive to
/// the general path too: rewriting its registers does not restart it, a
/// bound signal stays in the word for its restarted receive, and the
/// reply object it waits on being deleted stops it with its call to
/// restart (not failed).
#[test]
fn lockfree_a_pending_suspend_is_inactive_to_management() {
    let mut sim = Sim::with(config(2), LockFree::new(2));
    sim.auto_ipi = false;
    // WriteRegisters without resume leaves a suspended waiter suspended.
    let (ep, ntfn) = (sim.obj(ObjectType::Endpoint), sim.obj(ObjectType::Notification));
    let (cap, t) = sim.spawn(1, 50, 1);
    sim.deliver_ipis();
    sim.sys(1, Sysno::Recv, ep, msg(0, 0), 0);
    sim.invoke(0, cap, InvocationLabel::TcbSuspend, &[]).unwrap();
    sim.invoke(0, cap, InvocationLabel::TcbWriteRegisters, &[0, 0]).unwrap();
    sim.deliver_ipis();
    assert_eq!((sim.running[1], sim.status(t)), (None, ThreadStatus::Inactive));
    // A bound signal to a suspended receiver stays in the notification.
    let badged = sim.mint(ntfn, 4);
    let (cap, r) = sim.spawn(2, 50, 1);
    sim.deliver_ipis();
    sim.invoke(0, cap, InvocationLabel::TcbBindNotification, &[ntfn]).unwrap();
    sim.sys(1, Sysno::Recv, ep, msg(0, 0), 0);
    sim.invoke(0, cap, InvocationLabel::TcbSuspend, &[]).unwrap();
    sim.sys(0, Sysno::Signal, badged, msg(0, 0), 0);
    sim.deliver_ipis();
    assert_eq!(sim.status(r), ThreadStatus::Inactive);
    // Resumed, it restarts its receive and finds the signal.
    sim.invoke(0, cap, InvocationLabel::TcbResume, &[]).unwrap();
    sim.deliver_ipis();
    assert_eq!((sim.running[1], sim.buf(r).restart), (Some(r), 1));
    sim.sys(1, Sysno::Recv, ep, msg(0, 0), 0);
    assert_eq!((sim.running[1], sim.buf(r).badge), (Some(r), 4));
    let _ = sim.invoke(0, cap, InvocationLabel::TcbSuspend, &[]).unwrap();
    sim.deliver_ipis();
    // Deleting the reply object a suspended caller waits on.
    let reply = sim.obj(ObjectType::Reply);
    let (cap, c) = sim.spawn(3, 50, 1);
    sim.deliver_ipis();
    sim.sys(1, Sysno::Call, ep, msg(1, 0), 0);
    sim.sys(0, Sysno::Recv, ep, msg(0, 0), reply);
    assert_eq!(sim.status(c), ThreadStatus::BlockedOnReply);
    sim.invoke(0, cap, InvocationLabel::TcbSuspend, &[]).unwrap();
    sim.invoke(0, CAP_INIT_CNODE, InvocationLabel::CNodeDelete, &[reply]).unwrap();
    sim.deliver_ipis();
    assert_eq!((sim.status(c), sim.buf(c).restart), (ThreadStatus::Inactive, 1));
    sim.invoke(0, cap, InvocationLabel::TcbResume, &[]).unwrap();
    sim.deliver_ipis();
    assert_eq!(sim.running[1], Some(c));
}

#[test]
fn lockfree_boot_limits_thread_indices_to_16_bits() {
    let mut cfg = config(1);
    cfg.max_threads = 65536;
    assert_eq!(Kernel::boot(cfg.clone(), LockFree::new(1)).err(), Some(BootError::Capacity));
    assert!(Kernel::boot(cfg.clone(), BigLock::<Clh>::new(1)).is_ok());
    cfg.max_threads = 65535;
    assert!(Kernel::boot(cfg, LockFree::new(1)).is_ok());
}

#[test]
fn profiled_big_lock_records_acquisitions() {
    let mut sim = Sim::with(config(2), BigLock::<Clh, Profile>::new(2));
    let ep = sim.obj(ObjectType::Endpoint);
    for _ in 0..10 {
        sim.sys(0, Sysno::NBSend, ep, msg(0, 0), 0);
    }
    let records = sim.k.regime().stats().snapshot();
    assert!(records.iter().map(|r| r.acquisitions).sum::<u64>() >= 10);
    let table = freebsd_table(&records);
    assert!(table.contains("kernel"), "{table}");
}

#[test]
fn regime_names() {
    use granule_sync::lock::{Mcs, Ticket};
    assert_eq!(<BigLock<Clh> as Regime>::NAME, "bkl");
    assert_eq!(<BigLock<Ticket> as Regime>::NAME, "bkl-ticket");
    assert_eq!(<BigLock<Mcs> as Regime>::NAME, "bkl-mcs");
    assert_eq!(<granule_kernel::NoLock as Regime>::NAME, "none");
    assert_eq!(<LockFree as Regime>::NAME, "lockfree");
    // The drive is a type of the regime.
    fn drive<R: Regime>() -> &'static str {
        core::any::type_name::<R::Drive>()
    }
    assert_eq!(drive::<LockFree>(), core::any::type_name::<Shared>());
    assert_eq!(drive::<BigLock<Clh>>(), core::any::type_name::<Whole>());
}

/// Under `fine`, a one-core ping-pong runs entirely in shared entries (the
/// exclusive ones are the harness's invariant checks and the set-up), takes
/// the IPC fast path (holding each object as it goes), and agrees with the big lock.
#[test]
fn fine_pingpong_is_shared_and_agrees() {
    let cfg = config(1);
    let mut sim = Sim::with(cfg.clone(), granule_kernel::Fine::<Profile>::new(&cfg));
    let expected = pingpong(&mut Sim::new(1));
    let before = sim.k.regime().counts();
    let seen = pingpong(&mut sim);
    let after = sim.k.regime().counts();
    assert_eq!(seen, expected);
    let shared = after.shared - before.shared;
    let checks = after.exclusive - before.exclusive;
    assert!(shared >= 100, "only {shared} shared entries");
    // One exclusive entry per check (after every kernel entry) plus the
    // set-up's invocations (retype, mint, spawning two threads).
    assert!(checks <= shared + 20, "{checks} exclusive entries for {shared} shared");
    assert_eq!(after.failed, 0);
    assert!(sim.k.core_stats(0).fastpath >= 100);
}

/// Under `fine`, a hold that cannot be had stops the entry before it changes
/// anything, and the entry runs again holding what it learnt: here the
/// server waits on core 1, whose scheduler lock another thread holds (as
/// core 1 in an entry of its own). That lock comes below the endpoint's in
/// the lock order, so the `Call` from core 0 only *tries* it; the call
/// completes, exactly as without the contention, once core 1 lets go. Core 1
/// lets go only after it has seen the failed try, so the outcome does not
/// depend on timing.
#[test]
fn fine_stops_and_retries_a_call_whose_partner_core_is_locked() {
    use granule_kernel::regime::{LockTarget, ObjectLocks};
    use std::sync::atomic::{AtomicBool, Ordering};
    let cfg = config(2);
    let mut sim = Sim::with(cfg.clone(), granule_kernel::Fine::<Profile>::new(&cfg));
    let ep = sim.obj(ObjectType::Endpoint);
    let reply = sim.obj(ObjectType::Reply);
    let (_, s) = sim.spawn(1, 150, 1);
    assert_eq!(sim.running[1], Some(s));
    sim.sys(1, Sysno::Recv, ep, msg(0, 0), reply);
    let (_, c) = sim.spawn(2, 150, 0);
    assert_eq!(sim.running[0], Some(c));
    sim.buf(c).msg[0] = 41;
    let failed_before = sim.k.regime().counts().failed;
    let held = AtomicBool::new(false);
    let args = granule_verify::encode::syscall(Sysno::Call, ep, msg(5, 1), 0);
    let plan = std::thread::scope(|scope| {
        let (k, core0) = (&sim.k, &mut sim.cores[0]);
        let held = &held;
        scope.spawn(move || {
            // This thread acts as core 1 (the simulation drives core 0 only
            // while it runs): it holds core 1's lock until core 0's entry
            // has failed to get it.
            let regime = k.regime();
            // SAFETY: the kernel has two cores (so has the regime, or boot
            // would have refused it), and this thread is the only one
            // acting as core 1 while it runs.
            unsafe {
                regime.enter(1, core::hint::spin_loop);
                assert!(regime.lock_one(1, LockTarget::Core(1), core::hint::spin_loop));
            }
            held.store(true, Ordering::Release);
            while regime.counts().failed == failed_before {
                std::hint::spin_loop();
            }
            // SAFETY: as above.
            unsafe {
                regime.unlock_objects(1);
                regime.exit(1, ());
            }
        });
        while !held.load(Ordering::Acquire) {
            std::hint::spin_loop();
        }
        k.syscall(core0, args)
    });
    sim.follow(0, plan);
    let counts = sim.k.regime().counts();
    assert!(counts.failed > failed_before, "{counts:?}");
    sim.deliver_ipis();
    assert_eq!(sim.running[1], Some(s));
    let b = sim.buf(s);
    assert_eq!((MessageInfo(b.tag).label(), b.msg[0], b.error), (5, 41, 0));
    sim.check();
}
