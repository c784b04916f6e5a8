//! Fault delivery: a fault becomes a `Call` to the thread's fault handler
//! (`TcbSetFaultHandler`), answered by a reply whose label says whether the
//! thread goes on; no usable handler stops the thread.

use crate::common::*;
use granule_kernel::abi::*;
use granule_kernel::{FaultKind, ThreadId, ThreadStatus};

const ACCESS: FaultKind = FaultKind::MemoryAccess { addr: 0x4000, write: true };

/// An endpoint and a reply object; handler `h` (entry 10) and faulting
/// thread `t` (entry 11) on the given cores and priorities, `t`'s faults
/// going to the endpoint minted with badge 7.
struct Setup {
    ep: Word,
    reply: Word,
    h: ThreadId,
    t: ThreadId,
    t_cap: Word,
}

fn setup(sim: &mut Sim, h_core: usize, h_prio: u8, t_core: usize, t_prio: u8) -> Setup {
    let ep = sim.obj(ObjectType::Endpoint);
    let reply = sim.obj(ObjectType::Reply);
    let badged = sim.mint(ep, 7);
    let (_, h) = sim.spawn(10, h_prio, h_core);
    let (t_cap, t) = sim.spawn(11, t_prio, t_core);
    sim.root_invoke(t_cap, Invocation::set_fault_handler(badged));
    Setup { ep, reply, h, t, t_cap }
}

/// The handler on core 0 waits (above `t`, which is above the root), then
/// `t` runs.
fn handler_waits(sim: &mut Sim) -> Setup {
    let s = setup(sim, 0, 150, 0, 120);
    assert_eq!(sim.running[0], Some(s.h));
    sim.sys(0, Sysno::Recv, s.ep, msg(0, 0), s.reply);
    assert_eq!(sim.running[0], Some(s.t));
    s
}

#[test]
fn a_memory_fault_reaches_the_handler_and_a_zero_reply_lets_the_thread_go_on() {
    let mut sim = Sim::new(1);
    let s = handler_waits(&mut sim);
    sim.buf(s.t).msg[..2].copy_from_slice(&[55, 66]);
    let started = sim.started.len();
    sim.fault_with(0, ACCESS);
    assert_eq!(sim.running[0], Some(s.h));
    assert_eq!(sim.status(s.t), ThreadStatus::BlockedOnReply);
    let b = sim.buf(s.h);
    assert_eq!(
        (b.result(), b.info().label(), b.info().length(), b.msg[0], b.msg[1], b.badge),
        (Ok(()), FAULT_MEMORY_ACCESS, 2, 0x4000, 1, 7)
    );
    // The handler's words are not the thread's: its buffer is untouched.
    sim.buf(s.h).msg[0] = 123;
    sim.sys(0, Sysno::ReplyRecv, s.ep, msg(0, 1), s.reply);
    assert_eq!(sim.running[0], Some(s.t));
    assert_eq!(sim.started.len(), started, "it goes on where it faulted");
    let b = sim.buf(s.t);
    assert_eq!((b.restart, b.msg[0], b.msg[1]), (0, 55, 66));
    // The reply object is free again: a second fault goes the same way.
    sim.fault_with(0, FaultKind::MemoryAccess { addr: 8, write: false });
    assert_eq!(sim.running[0], Some(s.h));
    assert_eq!((sim.buf(s.h).msg[0], sim.buf(s.h).msg[1]), (8, 0));
}

#[test]
fn a_panic_reaches_the_handler_and_a_zero_reply_starts_the_thread_afresh() {
    let mut sim = Sim::new(1);
    let s = handler_waits(&mut sim);
    let started = sim.started.len();
    sim.fault(0);
    assert_eq!(sim.running[0], Some(s.h));
    let b = sim.buf(s.h);
    assert_eq!((b.info().label(), b.info().length(), b.badge), (FAULT_USER_PANIC, 0, 7));
    sim.sys(0, Sysno::ReplyRecv, s.ep, msg(0, 0), s.reply);
    assert_eq!(sim.running[0], Some(s.t));
    assert_eq!(sim.started.len(), started + 1);
    assert_eq!(sim.started.last().map(|x| x.0), Some(s.t));
}

#[test]
fn a_nonzero_reply_leaves_the_thread_stopped_until_resumed() {
    let mut sim = Sim::new(1);
    let s = handler_waits(&mut sim);
    sim.fault_with(0, ACCESS);
    sim.sys(0, Sysno::Reply, 0, msg(1, 0), s.reply);
    assert_eq!(sim.running[0], Some(s.h));
    assert_eq!(sim.status(s.t), ThreadStatus::Inactive);
    // Resumed, it re-raises the access (its trap sees the restart flag).
    sim.invoke(0, s.t_cap, InvocationLabel::TcbResume, &[]).unwrap();
    assert_eq!(sim.status(s.t), ThreadStatus::Ready);
    assert_eq!(sim.buf(s.t).restart, 1);
}

#[test]
fn a_deleted_reply_object_restarts_the_fault_rather_than_failing_it() {
    let mut sim = Sim::new(1);
    let s = handler_waits(&mut sim);
    sim.fault_with(0, ACCESS);
    assert_eq!(sim.status(s.t), ThreadStatus::BlockedOnReply);
    sim.invoke(0, CAP_INIT_CNODE, InvocationLabel::CNodeDelete, &[s.reply]).unwrap();
    assert_eq!(sim.status(s.t), ThreadStatus::Ready);
    let b = sim.buf(s.t);
    assert_eq!((b.restart, b.error), (1, 0), "the fault is raised again, not failed");
}

#[test]
fn a_handler_that_cannot_reply_gets_the_message_and_the_thread_stops() {
    let mut sim = Sim::new(1);
    let s = setup(&mut sim, 0, 150, 0, 120);
    sim.sys(0, Sysno::Recv, s.ep, msg(0, 0), 0);
    sim.fault_with(0, ACCESS);
    assert_eq!(sim.running[0], Some(s.h));
    assert_eq!(sim.buf(s.h).info().label(), FAULT_MEMORY_ACCESS);
    assert_eq!(sim.status(s.t), ThreadStatus::Inactive);
}

#[test]
fn a_fault_waits_for_its_handler_and_a_deleted_endpoint_restarts_it() {
    let mut sim = Sim::new(1);
    // The handler is below the thread and the root: the fault waits in
    // the queue.
    let s = setup(&mut sim, 0, 90, 0, 120);
    assert_eq!(sim.running[0], Some(s.t));
    sim.fault_with(0, ACCESS);
    assert_eq!(sim.status(s.t), ThreadStatus::BlockedOnSend);
    sim.park_root();
    assert_eq!(sim.running[0], Some(s.h));
    sim.sys(0, Sysno::Recv, s.ep, msg(0, 0), s.reply);
    assert_eq!(sim.running[0], Some(s.h));
    assert_eq!((sim.buf(s.h).info().label(), sim.buf(s.h).badge), (FAULT_MEMORY_ACCESS, 7));
    assert_eq!(sim.status(s.t), ThreadStatus::BlockedOnReply);
    sim.sys(0, Sysno::Reply, 0, msg(0, 0), s.reply);
    assert_eq!(sim.running[0], Some(s.t));
    assert_eq!(sim.buf(s.t).restart, 0);
    // Again, and this time the endpoint goes away while the fault waits:
    // the thread runs again and re-raises it.
    sim.fault_with(0, ACCESS);
    assert_eq!(sim.status(s.t), ThreadStatus::BlockedOnSend);
    sim.invoke(0, CAP_INIT_CNODE, InvocationLabel::CNodeRevoke, &[s.ep]).unwrap();
    sim.invoke(0, CAP_INIT_CNODE, InvocationLabel::CNodeDelete, &[s.ep]).unwrap();
    assert_eq!(sim.running[0], Some(s.t));
    assert_eq!(sim.buf(s.t).restart, 1);
    // Now it has no handler: it stops.
    sim.fault_with(0, ACCESS);
    assert_eq!(sim.status(s.t), ThreadStatus::Inactive);
}

#[test]
fn a_fault_reaches_a_handler_on_another_core_and_its_reply_comes_back() {
    let mut sim = Sim::new(2);
    let s = setup(&mut sim, 1, 150, 0, 120);
    sim.deliver_ipis();
    assert_eq!(sim.running[1], Some(s.h));
    sim.sys(1, Sysno::Recv, s.ep, msg(0, 0), s.reply);
    assert_eq!(sim.running[0], Some(s.t));
    sim.fault_with(0, ACCESS);
    sim.deliver_ipis();
    assert_eq!(sim.running[1], Some(s.h));
    assert_eq!(sim.buf(s.h).info().label(), FAULT_MEMORY_ACCESS);
    assert_eq!(sim.status(s.t), ThreadStatus::BlockedOnReply);
    sim.sys(1, Sysno::ReplyRecv, s.ep, msg(0, 0), s.reply);
    sim.deliver_ipis();
    assert_eq!(sim.running[0], Some(s.t));
    assert_eq!(sim.buf(s.t).restart, 0);
}

#[test]
fn without_a_usable_handler_the_thread_stops() {
    let mut sim = Sim::new(2);
    let ep = sim.obj(ObjectType::Endpoint);
    let ntfn = sim.obj(ObjectType::Notification);
    let read_only = sim.alloc_slot();
    sim.root_invoke(CAP_INIT_CNODE, Invocation::mint(read_only, ep, CapRights::READ, 0));
    let empty = sim.alloc_slot();
    let (t_cap, t) = sim.spawn(11, 100, 1);
    for handler in [0, ntfn, read_only, empty, Word::MAX] {
        sim.root_invoke(t_cap, Invocation::set_fault_handler(handler));
        if sim.status(t) == ThreadStatus::Inactive {
            sim.root_invoke(t_cap, Invocation::resume());
            sim.deliver_ipis();
        }
        assert_eq!(sim.running[1], Some(t));
        sim.fault_with(1, ACCESS);
        assert_eq!(sim.status(t), ThreadStatus::Inactive, "handler {handler}");
        assert_eq!(sim.buf(t).restart, 1);
        // Nothing was sent.
        sim.sys(0, Sysno::NBRecv, ep, msg(0, 0), 0);
        assert_eq!((sim.buf(sim.root).info().length(), sim.buf(sim.root).badge), (0, 0), "handler {handler}");
    }
    assert_eq!(sim.invoke(0, t_cap, InvocationLabel::TcbSetFaultHandler, &[]), Err(Error::TruncatedMessage));
}
