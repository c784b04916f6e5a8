//! Destroying a blocked thread of another core, under every regime: what
//! any thread can see afterwards is the same whether the deletion ran
//! alone (the lock regimes, and `lockfree`'s management) or on
//! `lockfree`'s shared path, where the thread is only stopped at once and
//! freed by the next management entry (`lockfree/finish_destroy.rs`). The
//! test checks that `lockfree` took the shared path. The invariant checker
//! (doomed slots included) runs after every entry.

use crate::common::*;
use granule_kernel::abi::*;
use granule_kernel::ThreadStatus;
use InvocationLabel::*;

fn shared_destroys(sim: &Sim) -> u64 {
    (0..2).map(|c| sim.k.core_stats(c).shared_destroys).sum()
}

/// `lockfree` destroyed on its shared path; every other regime did not.
fn assert_shared(sim: &Sim, n: u64) {
    let want = if WHICH.destroys_asynchronously() { n } else { 0 };
    assert_eq!(shared_destroys(sim), want);
}

#[test]
fn a_destroyed_caller_leaves_its_reply_object_free() {
    let mut sim = Sim::new(2);
    let ep = sim.obj(ObjectType::Endpoint);
    let reply = sim.obj(ObjectType::Reply);
    let (_, s) = sim.spawn(10, 100, 0);
    let (c_cap, c) = sim.spawn(11, 50, 1);
    let (_, d) = sim.spawn(12, 40, 1);
    sim.park_root();
    assert_eq!(sim.running[0], Some(s));
    sim.sys(0, Sysno::Recv, ep, msg(0, 0), reply);
    sim.buf(c).msg[0] = 7;
    sim.sys(1, Sysno::Call, ep, msg(1, 1), 0);
    assert_eq!(sim.running[0], Some(s));
    assert_eq!(sim.status(c), ThreadStatus::BlockedOnReply);
    // The server destroys its caller, then receives with the same reply
    // object: it is free, the caller gone.
    sim.invoke(0, CAP_INIT_CNODE, CNodeDelete, &[c_cap]).unwrap();
    assert_eq!(sim.info(c), None);
    assert_eq!(sim.invoke(0, c_cap, TcbSuspend, &[]), Err(Error::InvalidCapability));
    sim.sys(0, Sysno::Recv, ep, msg(0, 0), reply);
    assert_eq!(sim.status(s), ThreadStatus::BlockedOnRecv);
    assert_shared(&sim, 1);
    // The next caller is served with it.
    assert_eq!(sim.running[1], Some(d));
    sim.buf(d).msg[0] = 8;
    sim.sys(1, Sysno::Call, ep, msg(1, 1), 0);
    assert_eq!(sim.buf(s).msg[0], 8);
    sim.buf(s).msg[0] = 9;
    sim.sys(0, Sysno::ReplyRecv, ep, msg(2, 1), reply);
    assert_eq!((sim.buf(d).result(), sim.buf(d).msg[0]), (Ok(()), 9));
    sim.check();
}

#[test]
fn a_destroyed_sender_is_gone_from_its_endpoint() {
    let mut sim = Sim::new(2);
    let ep = sim.obj(ObjectType::Endpoint);
    let (c_cap, c) = sim.spawn(11, 50, 1);
    sim.buf(c).msg[0] = 7;
    sim.sys(1, Sysno::Call, ep, msg(1, 1), 0);
    assert_eq!(sim.status(c), ThreadStatus::BlockedOnSend);
    sim.invoke(0, CAP_INIT_CNODE, CNodeDelete, &[c_cap]).unwrap();
    assert_eq!(sim.info(c), None);
    assert_eq!(sim.k.start_info(&mut sim.cores[0], c), None);
    assert_shared(&sim, 1);
    // Nothing waits there any more.
    let root = sim.cur(0);
    sim.sys(0, Sysno::NBRecv, ep, msg(0, 0), 0);
    assert_eq!((sim.buf(root).result(), sim.buf(root).tag, sim.buf(root).badge), (Ok(()), 0, 0));
    // The slot is empty: deleting it again does nothing, a new thread goes
    // there, and its first message is the one received.
    sim.invoke(0, CAP_INIT_CNODE, CNodeDelete, &[c_cap]).unwrap();
    sim.root_invoke(CAP_FIRST_UNTYPED, Invocation::retype(ObjectType::Tcb, 0, c_cap, 1));
    sim.root_invoke(c_cap, Invocation::configure(CAP_INIT_CNODE, CAP_INIT_VSPACE));
    sim.root_invoke(c_cap, Invocation::set_affinity(1));
    sim.root_invoke(c_cap, Invocation::start(13, 13));
    let d = sim.cur(1);
    sim.buf(d).msg[0] = 8;
    sim.sys(1, Sysno::Send, ep, msg(1, 1), 0);
    sim.sys(0, Sysno::Recv, ep, msg(0, 0), 0);
    assert_eq!(sim.buf(root).msg[0], 8);
    sim.check();
}

#[test]
fn a_destroyed_receiver_gives_up_its_reply_object() {
    let mut sim = Sim::new(2);
    let ep = sim.obj(ObjectType::Endpoint);
    let reply = sim.obj(ObjectType::Reply);
    let (r_cap, r) = sim.spawn(10, 50, 1);
    sim.sys(1, Sysno::Recv, ep, msg(0, 0), reply);
    assert_eq!(sim.status(r), ThreadStatus::BlockedOnRecv);
    sim.invoke(0, CAP_INIT_CNODE, CNodeDelete, &[r_cap]).unwrap();
    assert_eq!(sim.info(r), None);
    assert_shared(&sim, 1);
    // The root may receive with that reply object now; a sender on core 1
    // reaches the root, not the destroyed receiver.
    let root = sim.cur(0);
    sim.sys(0, Sysno::NBRecv, ep, msg(0, 0), reply);
    assert_eq!(sim.buf(root).result(), Ok(()));
    let (_, c) = sim.spawn(11, 50, 1);
    sim.buf(c).msg[0] = 5;
    sim.sys(1, Sysno::Call, ep, msg(1, 1), 0);
    assert_eq!(sim.status(c), ThreadStatus::BlockedOnSend);
    sim.sys(0, Sysno::Recv, ep, msg(0, 0), reply);
    assert_eq!(sim.buf(root).msg[0], 5);
    assert_eq!(sim.status(c), ThreadStatus::BlockedOnReply);
    sim.buf(root).msg[0] = 6;
    sim.sys(0, Sysno::Reply, 0, msg(0, 1), reply);
    assert_eq!(sim.buf(c).msg[0], 6);
    sim.check();
}

#[test]
fn a_notification_bound_to_a_destroyed_thread_is_free_to_poll() {
    let mut sim = Sim::new(2);
    let ntfn = sim.obj(ObjectType::Notification);
    let ep = sim.obj(ObjectType::Endpoint);
    let (b_cap, b) = sim.spawn(11, 50, 1);
    sim.invoke(0, b_cap, TcbBindNotification, &[ntfn]).unwrap();
    sim.sys(1, Sysno::Recv, ep, msg(0, 0), 0);
    assert_eq!(sim.status(b), ThreadStatus::BlockedOnRecv);
    let root = sim.cur(0);
    sim.sys(0, Sysno::Poll, ntfn, msg(0, 0), 0);
    assert_eq!(sim.buf(root).result(), Err(Error::IllegalOperation));
    sim.invoke(0, CAP_INIT_CNODE, CNodeDelete, &[b_cap]).unwrap();
    assert_shared(&sim, 1);
    // The binding went with the thread.
    sim.sys(0, Sysno::Poll, ntfn, msg(0, 0), 0);
    assert_eq!(sim.buf(root).result(), Ok(()));
    sim.check();
}

#[test]
fn a_caller_suspended_and_resumed_while_awaiting_its_reply_calls_again() {
    let mut sim = Sim::new(2);
    let ep = sim.obj(ObjectType::Endpoint);
    let reply = sim.obj(ObjectType::Reply);
    let (_, s) = sim.spawn(10, 100, 0);
    let (c_cap, c) = sim.spawn(11, 50, 1);
    sim.park_root();
    sim.sys(0, Sysno::Recv, ep, msg(0, 0), reply);
    sim.buf(c).msg[0] = 7;
    sim.sys(1, Sysno::Call, ep, msg(1, 1), 0);
    assert_eq!(sim.status(c), ThreadStatus::BlockedOnReply);
    // The server suspends and resumes its caller: the call is abandoned,
    // and the answer to it goes nowhere.
    sim.invoke(0, c_cap, TcbSuspend, &[]).unwrap();
    sim.invoke(0, c_cap, TcbResume, &[]).unwrap();
    sim.buf(s).msg[0] = 9;
    sim.sys(0, Sysno::Reply, 0, msg(2, 1), reply);
    assert_ne!(sim.buf(c).msg[0], 9);
    // The caller runs again and repeats its call, which the server gets.
    assert_eq!(sim.running[1], Some(c));
    assert_eq!(sim.buf(c).restart, 1);
    sim.sys(1, Sysno::Call, ep, msg(1, 1), 0);
    sim.sys(0, Sysno::Recv, ep, msg(0, 0), reply);
    assert_eq!((sim.buf(s).result(), sim.buf(s).msg[0]), (Ok(()), 7));
    assert_eq!(sim.status(c), ThreadStatus::BlockedOnReply);
    sim.check();
}

/// A thread destroyed while it is ready on the destroyer's own core leaves
/// the ready queue at once, under `lockfree` too (whose shared path takes
/// it out, its core being the caller's): a server woken by a call then
/// runs straight away, as no destroyed thread outranks it, ahead of a
/// thread of its own priority that was ready before.
#[test]
fn a_destroyed_ready_thread_of_the_same_core_outranks_nobody() {
    let mut sim = Sim::new(2);
    let ep = sim.obj(ObjectType::Endpoint);
    let reply = sim.obj(ObjectType::Reply);
    let (s_cap, s) = sim.spawn(10, 90, 0);
    let (_, r) = sim.spawn(11, 55, 0);
    let (k_cap, k) = sim.spawn(12, 60, 0);
    let (_, d) = sim.spawn(13, 70, 0);
    sim.park_root();
    // The server waits, then drops below the doomed thread's priority.
    assert_eq!(sim.running[0], Some(s));
    sim.sys(0, Sysno::Recv, ep, msg(0, 0), reply);
    assert_eq!(sim.running[0], Some(d));
    sim.invoke(0, s_cap, TcbSetPriority, &[55]).unwrap();
    assert_eq!(sim.status(k), ThreadStatus::Ready);
    sim.invoke(0, CAP_INIT_CNODE, CNodeDelete, &[k_cap]).unwrap();
    assert_eq!(sim.info(k), None);
    assert_shared(&sim, 1);
    // The call wakes the server, which runs before the ready thread `r`.
    sim.buf(d).msg[0] = 4;
    sim.sys(0, Sysno::Call, ep, msg(1, 1), 0);
    assert_eq!(sim.running[0], Some(s));
    assert_eq!(sim.buf(s).msg[0], 4);
    assert_eq!(sim.status(r), ThreadStatus::Ready);
    sim.check();
}
