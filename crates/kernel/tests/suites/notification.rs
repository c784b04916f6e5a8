//! Notifications: signal, wait, poll, badges, binding, errors, cross-core.

use crate::common::*;
use granule_kernel::abi::*;
use granule_kernel::ThreadStatus;

fn mint(sim: &mut Sim, src: Word, rights: CapRights, badge: Word) -> Word {
    let slot = sim.alloc_slot();
    sim.invoke(0, CAP_INIT_CNODE, InvocationLabel::CNodeMint, &[slot, 0, src, rights.0, badge]).unwrap();
    slot
}

#[test]
fn signal_accumulates_and_wait_takes() {
    let mut sim = Sim::new(1);
    let n = sim.obj(ObjectType::Notification);
    let a = mint(&mut sim, n, CapRights::WRITE, 0b01);
    let b = mint(&mut sim, n, CapRights::WRITE, 0b10);
    let root = sim.root;
    // Poll: nothing.
    sim.sys(0, Sysno::Poll, n, msg(0, 0), 0);
    assert_eq!((sim.buf(root).result(), sim.buf(root).badge), (Ok(()), 0));
    sim.sys(0, Sysno::Signal, a, msg(0, 0), 0);
    sim.sys(0, Sysno::Send, b, msg(0, 0), 0); // Send on a notification signals it
    sim.sys(0, Sysno::Wait, n, msg(0, 0), 0);
    assert_eq!((sim.buf(root).result(), sim.buf(root).badge), (Ok(()), 0b11));
    sim.sys(0, Sysno::NBRecv, n, msg(0, 0), 0); // NBRecv on a notification polls it
    assert_eq!(sim.buf(root).badge, 0);
    assert_eq!(sim.running[0], Some(root));
}

#[test]
fn rights_and_wrong_objects() {
    let mut sim = Sim::new(1);
    let n = sim.obj(ObjectType::Notification);
    let ep = sim.obj(ObjectType::Endpoint);
    let ro = mint(&mut sim, n, CapRights::READ, 0);
    let wo = mint(&mut sim, n, CapRights::WRITE, 0);
    let root = sim.root;
    sim.sys(0, Sysno::Signal, ro, msg(0, 0), 0);
    assert_eq!(sim.buf(root).result(), Err(Error::InvalidCapability));
    sim.sys(0, Sysno::Wait, wo, msg(0, 0), 0);
    assert_eq!(sim.buf(root).result(), Err(Error::InvalidCapability));
    sim.sys(0, Sysno::Signal, ep, msg(0, 0), 0);
    assert_eq!(sim.buf(root).result(), Err(Error::InvalidCapability));
    sim.sys(0, Sysno::Wait, ep, msg(0, 0), 0);
    assert_eq!(sim.buf(root).result(), Err(Error::InvalidCapability));
    sim.sys(0, Sysno::Call, n, msg(0, 0), 0);
    assert_eq!(sim.buf(root).result(), Err(Error::IllegalOperation));
}

#[test]
fn waiters_are_woken_in_order_across_cores() {
    let mut sim = Sim::new(2);
    let n = sim.obj(ObjectType::Notification);
    let (_, w1) = sim.spawn(1, 150, 1);
    sim.sys(1, Sysno::Wait, n, msg(0, 0), 0);
    assert_eq!(sim.status(w1), ThreadStatus::BlockedOnNotification);
    assert_eq!(sim.running[1], None);
    let (_, w0) = sim.spawn(2, 150, 0);
    assert_eq!(sim.running[0], Some(w0));
    sim.sys(0, Sysno::Wait, n, msg(0, 0), 0);
    assert_eq!(sim.running[0], Some(sim.root));
    let b = mint(&mut sim, n, CapRights::WRITE, 7);
    // First signal wakes the core-1 waiter (first in the queue) with an IPI.
    sim.ipi_log.clear();
    sim.sys(0, Sysno::Signal, b, msg(0, 0), 0);
    assert_eq!(sim.ipi_log, vec![(0, 1)]);
    assert_eq!(sim.running[1], Some(w1));
    assert_eq!((sim.buf(w1).result(), sim.buf(w1).badge), (Ok(()), 7));
    // Second wakes the core-0 waiter, which preempts the root (priority 150).
    sim.sys(0, Sysno::Signal, b, msg(0, 0), 0);
    assert_eq!(sim.running[0], Some(w0));
    assert_eq!(sim.buf(w0).badge, 7);
}

#[test]
fn bound_notification_wakes_endpoint_receiver() {
    let mut sim = Sim::new(1);
    let n = sim.obj(ObjectType::Notification);
    let ep = sim.obj(ObjectType::Endpoint);
    let (t_cap, t) = sim.spawn(1, 150, 0);
    // Blocked in Recv; bind from the root meanwhile.
    sim.sys(0, Sysno::Recv, ep, msg(0, 0), 0);
    sim.invoke(0, t_cap, InvocationLabel::TcbBindNotification, &[n]).unwrap();
    assert_eq!(sim.invoke(0, t_cap, InvocationLabel::TcbBindNotification, &[n]), Err(Error::IllegalOperation));
    let (u_cap, _) = sim.spawn(2, 10, 0);
    assert_eq!(sim.invoke(0, u_cap, InvocationLabel::TcbBindNotification, &[n]), Err(Error::IllegalOperation));
    assert_eq!(sim.invoke(0, u_cap, InvocationLabel::TcbBindNotification, &[ep]), Err(Error::InvalidCapability));
    assert_eq!(sim.invoke(0, u_cap, InvocationLabel::TcbBindNotification, &[250]), Err(Error::FailedLookup));
    assert_eq!(sim.invoke(0, u_cap, InvocationLabel::TcbUnbindNotification, &[]), Err(Error::IllegalOperation));
    // Another thread may not wait on a bound notification.
    sim.sys(0, Sysno::Wait, n, msg(0, 0), 0);
    assert_eq!(sim.buf(sim.root).result(), Err(Error::IllegalOperation));
    let b = mint(&mut sim, n, CapRights::WRITE, 0x40);
    sim.sys(0, Sysno::Signal, b, msg(0, 0), 0);
    assert_eq!(sim.running[0], Some(t));
    assert_eq!((sim.buf(t).result(), sim.buf(t).badge, sim.buf(t).restart), (Ok(()), 0x40, 0));
    // A signal while it is not receiving stays pending; its next Recv
    // returns it at once.
    let ep2 = sim.alloc_slot();
    sim.invoke(0, CAP_INIT_CNODE, InvocationLabel::CNodeCopy, &[ep2, 0, ep, CapRights::ALL.0]).unwrap();
    assert_eq!(sim.running[0], Some(t));
    sim.sys(0, Sysno::Send, ep2, msg(0, 0), 0);
    assert_eq!(sim.status(t), ThreadStatus::BlockedOnSend);
    sim.sys(0, Sysno::Signal, b, msg(0, 0), 0);
    assert_eq!(sim.status(t), ThreadStatus::BlockedOnSend);
    sim.sys(0, Sysno::Recv, ep, msg(0, 0), 0);
    assert_eq!(sim.running[0], Some(t));
    sim.buf(t).badge = 0;
    sim.sys(0, Sysno::Recv, ep, msg(0, 0), 0);
    assert_eq!(sim.running[0], Some(t));
    assert_eq!((sim.buf(t).result(), sim.buf(t).badge), (Ok(()), 0x40));
    // Unbound (by itself: it shares the root CSpace), signals no longer
    // wake its Recv.
    sim.invoke(0, t_cap, InvocationLabel::TcbUnbindNotification, &[]).unwrap();
    sim.sys(0, Sysno::Recv, ep, msg(0, 0), 0);
    assert_eq!(sim.running[0], Some(sim.root));
    sim.sys(0, Sysno::Signal, b, msg(0, 0), 0);
    assert_eq!(sim.status(t), ThreadStatus::BlockedOnRecv);
    let _ = u_cap;
}

#[test]
fn deleting_a_notification_restarts_waiters() {
    let mut sim = Sim::new(1);
    let n = sim.obj(ObjectType::Notification);
    let (_, t) = sim.spawn(1, 150, 0);
    sim.sys(0, Sysno::Wait, n, msg(0, 0), 0);
    assert_eq!(sim.status(t), ThreadStatus::BlockedOnNotification);
    sim.invoke(0, CAP_INIT_CNODE, InvocationLabel::CNodeDelete, &[n]).unwrap();
    assert_eq!(sim.running[0], Some(t));
    assert_eq!(sim.buf(t).restart, 1);
    sim.sys(0, Sysno::Wait, n, msg(0, 0), 0);
    assert_eq!(sim.buf(t).result(), Err(Error::InvalidCapability));
}

/// A signal from another core wakes a bound receiver out of its endpoint
/// receive. Under `lockfree` this runs on the shared path and leaves the
/// receiver's node in the endpoint (`lockfree/bound.rs`): the next sender
/// must not deliver to it, the receiver may receive there again, and the
/// two receivers queued behind and after it are served in order.
#[test]
fn a_signal_from_another_core_wakes_a_bound_receiver_and_its_old_place_is_left_empty() {
    let mut sim = Sim::new(2);
    let n = sim.obj(ObjectType::Notification);
    let ep = sim.obj(ObjectType::Endpoint);
    let reply = sim.obj(ObjectType::Reply);
    let (t_cap, t) = sim.spawn(1, 50, 1);
    sim.invoke(0, t_cap, InvocationLabel::TcbBindNotification, &[n]).unwrap();
    let (_, u) = sim.spawn(2, 40, 1);
    let (_, s) = sim.spawn(3, 60, 0);
    let b = sim.mint(n, 0x9);
    sim.park_root();
    assert_eq!(sim.running[1], Some(t));
    sim.sys(1, Sysno::Recv, ep, msg(0, 0), reply);
    assert_eq!((sim.status(t), sim.running[1]), (ThreadStatus::BlockedOnRecv, Some(u)));
    // A second receiver queues behind it.
    sim.sys(1, Sysno::Recv, ep, msg(0, 0), 0);
    assert_eq!(sim.status(u), ThreadStatus::BlockedOnRecv);
    assert_eq!(sim.running[0], Some(s));
    sim.sys(0, Sysno::Signal, b, msg(0, 0), 0);
    let wakes: u64 = (0..2).map(|c| sim.k.core_stats(c).bound_wakes).sum();
    assert_eq!(wakes, u64::from(matches!(WHICH, Which::LockFree)));
    // The next message goes to the receiver that still waits (before
    // core 1 has taken its interrupt: under `lockfree` the sender meets
    // the woken receiver's old node first and passes it by).
    sim.buf(s).msg[0] = 5;
    sim.sys(0, Sysno::Send, ep, msg(1, 1), 0);
    assert_eq!(sim.running[0], Some(s));
    sim.deliver_ipis();
    assert_eq!(sim.running[1], Some(t));
    assert_eq!((sim.buf(t).result(), sim.buf(t).badge, sim.buf(t).restart), (Ok(()), 0x9, 0));
    assert_eq!((sim.status(u), sim.buf(u).msg[0]), (ThreadStatus::Ready, 5));
    // The woken receiver receives on the same endpoint (and reply object)
    // again, and gets the next message.
    sim.sys(1, Sysno::Recv, ep, msg(0, 0), reply);
    assert_eq!(sim.status(t), ThreadStatus::BlockedOnRecv);
    sim.buf(s).msg[0] = 6;
    sim.sys(0, Sysno::Send, ep, msg(1, 1), 0);
    sim.deliver_ipis();
    assert_eq!((sim.buf(t).result(), sim.buf(t).msg[0], sim.buf(t).badge), (Ok(()), 6, 0));
    // A signal while it runs stays in the word for its next receive.
    sim.sys(0, Sysno::Signal, b, msg(0, 0), 0);
    assert_eq!(sim.running[1], Some(t));
    sim.sys(1, Sysno::Recv, ep, msg(0, 0), reply);
    assert_eq!((sim.running[1], sim.buf(t).badge), (Some(t), 0x9));
    sim.check();
}
