//! Endpoint IPC: send/receive/call/reply, badges, capability transfer, errors,
//! cross-core wake-ups, deletion and migration in the middle of a conversation.

use crate::common::*;
use granule_kernel::abi::*;
use granule_kernel::{SyscallArgs, ThreadStatus};

/// Retype a reply object and an endpoint; spawn server `s` and client `c`.
struct Pair {
    ep: Word,
    reply: Word,
    s: granule_kernel::ThreadId,
    c: granule_kernel::ThreadId,
    s_cap: Word,
    c_cap: Word,
}

fn pair(sim: &mut Sim, s_core: usize, s_prio: u8, c_core: usize, c_prio: u8) -> Pair {
    let ep = sim.obj(ObjectType::Endpoint);
    let reply = sim.obj(ObjectType::Reply);
    let (s_cap, s) = sim.spawn(10, s_prio, s_core);
    let (c_cap, c) = sim.spawn(11, c_prio, c_core);
    Pair { ep, reply, s, c, s_cap, c_cap }
}

/// A capability pointer is a whole word: one whose low 32 bits name a live
/// capability but whose high bits are set names none, on the fast path's
/// `Call` and on `ReplyRecv`'s reply object and endpoint alike.
#[test]
fn a_cptr_above_32_bits_names_no_capability() {
    let mut sim = Sim::new(1);
    let p = pair(&mut sim, 0, 50, 0, 50);
    sim.park_root();
    sim.sys(0, Sysno::Recv, p.ep, msg(0, 0), p.reply);
    assert_eq!(sim.running[0], Some(p.c));
    for high in [1 << 32, 1 << 40, 1 << 63] {
        sim.sys(0, Sysno::Call, high | p.ep, msg(1, 0), 0);
        assert_eq!(sim.buf(p.c).result(), Err(Error::InvalidCapability), "cptr {:#x}", high | p.ep);
        assert_eq!(sim.running[0], Some(p.c));
    }
    // The real call reaches the server, whose reply pointers are then tried.
    sim.sys(0, Sysno::Call, p.ep, msg(1, 0), 0);
    assert_eq!(sim.running[0], Some(p.s));
    sim.sys(0, Sysno::ReplyRecv, p.ep, msg(2, 0), (1 << 32) | p.reply);
    assert_eq!(sim.buf(p.s).result(), Err(Error::InvalidCapability));
    assert_eq!(sim.status(p.c), ThreadStatus::BlockedOnReply);
    // As with an endpoint pointer out of range: the reply half answers the
    // caller, the receive half fails and the server runs on.
    sim.sys(0, Sysno::ReplyRecv, (1 << 32) | p.ep, msg(2, 0), p.reply);
    assert_eq!(sim.buf(p.s).result(), Err(Error::InvalidCapability));
    assert_eq!(sim.running[0], Some(p.s));
    assert_eq!(sim.status(p.c), ThreadStatus::Ready);
    assert_eq!(sim.buf(p.c).result(), Ok(()));
}

#[test]
fn call_and_reply_recv_on_one_core() {
    let mut sim = Sim::new(1);
    let p = pair(&mut sim, 0, 50, 0, 50);
    sim.park_root();
    assert_eq!(sim.running[0], Some(p.s));
    sim.sys(0, Sysno::Recv, p.ep, msg(0, 0), p.reply);
    assert_eq!(sim.status(p.s), ThreadStatus::BlockedOnRecv);
    assert_eq!(sim.running[0], Some(p.c));

    sim.buf(p.c).msg[..2].copy_from_slice(&[7, 8]);
    sim.sys(0, Sysno::Call, p.ep, msg(5, 2), 0);
    // Direct hand-off to the server.
    assert_eq!(sim.running[0], Some(p.s));
    assert_eq!(sim.status(p.c), ThreadStatus::BlockedOnReply);
    let b = sim.buf(p.s);
    assert_eq!((b.info().label(), b.info().length(), b.msg[0], b.msg[1], b.badge), (5, 2, 7, 8, 0));
    assert_eq!(b.result(), Ok(()));

    sim.buf(p.s).msg[0] = 99;
    sim.sys(0, Sysno::ReplyRecv, p.ep, msg(6, 1), p.reply);
    assert_eq!(sim.running[0], Some(p.c));
    assert_eq!(sim.status(p.s), ThreadStatus::BlockedOnRecv);
    let b = sim.buf(p.c);
    assert_eq!((b.result(), b.info().label(), b.info().length(), b.msg[0], b.restart), (Ok(()), 6, 1, 99, 0));

    // Many round trips.
    for i in 0..100 {
        sim.buf(p.c).msg[0] = i;
        sim.sys(0, Sysno::Call, p.ep, msg(1, 1), 0);
        assert_eq!(sim.buf(p.s).msg[0], i);
        sim.buf(p.s).msg[0] = i + 1;
        sim.sys(0, Sysno::ReplyRecv, p.ep, msg(2, 1), p.reply);
        assert_eq!(sim.buf(p.c).msg[0], i + 1);
    }
}

#[test]
fn send_blocks_until_received_and_nb_variants() {
    let mut sim = Sim::new(1);
    let p = pair(&mut sim, 0, 50, 0, 50);
    sim.park_root();
    // Server polls: nothing there.
    sim.sys(0, Sysno::NBRecv, p.ep, msg(0, 0), 0);
    assert_eq!((sim.buf(p.s).result(), sim.buf(p.s).tag, sim.buf(p.s).badge), (Ok(()), 0, 0));
    // Server yields to the client, which sends: no receiver, it blocks.
    sim.sys(0, Sysno::Yield, 0, msg(0, 0), 0);
    assert_eq!(sim.running[0], Some(p.c));
    sim.buf(p.c).msg[0] = 42;
    sim.sys(0, Sysno::NBSend, p.ep, msg(3, 1), 0);
    assert_eq!(sim.buf(p.c).result(), Ok(()));
    assert_eq!(sim.running[0], Some(p.c));
    sim.sys(0, Sysno::Send, p.ep, msg(3, 1), 0);
    assert_eq!(sim.status(p.c), ThreadStatus::BlockedOnSend);
    assert_eq!(sim.running[0], Some(p.s));
    // The server takes it; the client is runnable again with success.
    sim.sys(0, Sysno::Recv, p.ep, msg(0, 0), 0);
    assert_eq!(sim.buf(p.s).msg[0], 42);
    assert_eq!(sim.buf(p.s).info().label(), 3);
    assert_eq!(sim.status(p.c), ThreadStatus::Ready);
    assert_eq!(sim.buf(p.c).result(), Ok(()));
}

#[test]
fn message_length_is_clamped() {
    let mut sim = Sim::new(1);
    let p = pair(&mut sim, 0, 50, 0, 50);
    sim.park_root();
    sim.sys(0, Sysno::Recv, p.ep, msg(0, 0), p.reply);
    for i in 0..MSG_MAX_WORDS {
        sim.buf(p.c).msg[i] = i as Word;
    }
    sim.sys(0, Sysno::Send, p.ep, MessageInfo::new(1, 7, 3, 127), 0);
    let b = sim.buf(p.s);
    assert_eq!(b.info().length(), MSG_MAX_WORDS as Word);
    assert_eq!(b.info().extra_caps(), 0, "no grant right: no capabilities");
    assert_eq!(b.msg[63], 63);
}

#[test]
fn badges_rights_and_capability_transfer() {
    let mut sim = Sim::new(1);
    let p = pair(&mut sim, 0, 50, 0, 50);
    // A badged send-only copy, and a badged copy with grant.
    let send_only = sim.alloc_slot();
    let w = CapRights::WRITE.0;
    sim.invoke(0, CAP_INIT_CNODE, InvocationLabel::CNodeMint, &[send_only, 0, p.ep, w, 0x55]).unwrap();
    let granting = sim.alloc_slot();
    let wg = CapRights::WRITE.union(CapRights::GRANT).0;
    sim.invoke(0, CAP_INIT_CNODE, InvocationLabel::CNodeMint, &[granting, 0, p.ep, wg, 0x66]).unwrap();
    // Re-badging a badged cap is illegal.
    let x = sim.alloc_slot();
    assert_eq!(
        sim.invoke(0, CAP_INIT_CNODE, InvocationLabel::CNodeMint, &[x, 0, granting, wg, 1]),
        Err(Error::IllegalOperation)
    );
    let ntfn = sim.obj(ObjectType::Notification);
    sim.park_root();

    // Receiving through a send-only cap fails.
    sim.sys(0, Sysno::Recv, send_only, msg(0, 0), 0);
    assert_eq!(sim.buf(p.s).result(), Err(Error::InvalidCapability));
    // The server receives with a receive slot.
    let recv_slot = 200;
    sim.buf(p.s).receive_index = recv_slot;
    sim.sys(0, Sysno::Recv, p.ep, msg(0, 0), p.reply);
    assert_eq!(sim.running[0], Some(p.c));

    // Without grant, capabilities are not transferred.
    sim.buf(p.c).caps_or_badges[0] = ntfn;
    sim.sys(0, Sysno::Call, send_only, MessageInfo::new(1, 0, 1, 0), 0);
    let b = sim.buf(p.s);
    assert_eq!((b.badge, b.info().extra_caps()), (0x55, 0));
    sim.sys(0, Sysno::ReplyRecv, p.ep, msg(0, 0), p.reply);

    // With grant: one capability transferred, the endpoint itself unwrapped.
    sim.buf(p.c).caps_or_badges = [granting, ntfn, 0];
    sim.sys(0, Sysno::Call, granting, MessageInfo::new(1, 0, 2, 0), 0);
    let b = sim.buf(p.s);
    assert_eq!(b.badge, 0x66);
    assert_eq!(b.info().extra_caps(), 2);
    assert_eq!(b.info().caps_unwrapped(), 0b01);
    assert_eq!(b.caps_or_badges[0], 0x66);
    // The server now holds the notification in slot 200 and can signal it.
    sim.sys(0, Sysno::Signal, recv_slot, msg(0, 0), 0);
    assert_eq!(sim.buf(p.s).result(), Ok(()));
    // The slot is occupied now: a second transfer stops silently.
    sim.sys(0, Sysno::ReplyRecv, p.ep, msg(0, 0), p.reply);
    sim.buf(p.c).caps_or_badges = [ntfn, 0, 0];
    sim.sys(0, Sysno::Call, granting, MessageInfo::new(1, 0, 1, 0), 0);
    assert_eq!(sim.buf(p.s).info().extra_caps(), 0);
    // Bad cptrs stop the transfer too.
    sim.sys(0, Sysno::ReplyRecv, p.ep, msg(0, 0), p.reply);
    sim.buf(p.c).caps_or_badges = [9999, 0, 0];
    sim.sys(0, Sysno::Call, granting, MessageInfo::new(1, 0, 1, 0), 0);
    assert_eq!(sim.buf(p.s).info().extra_caps(), 0);
}

#[test]
fn reply_errors() {
    let mut sim = Sim::new(1);
    let p = pair(&mut sim, 0, 50, 0, 50);
    let ntfn = sim.obj(ObjectType::Notification);
    sim.park_root();
    // Reply through a non-reply capability; reply with no caller (a no-op).
    sim.sys(0, Sysno::Reply, 0, msg(0, 0), ntfn);
    assert_eq!(sim.buf(p.s).result(), Err(Error::InvalidCapability));
    sim.sys(0, Sysno::Reply, 0, msg(0, 0), p.reply);
    assert_eq!(sim.buf(p.s).result(), Ok(()));
    // Receiving with a non-reply object as the reply argument.
    sim.sys(0, Sysno::Recv, p.ep, msg(0, 0), ntfn);
    assert_eq!(sim.buf(p.s).result(), Err(Error::InvalidCapability));
    // A receive without reply object: a call to it fails with FailedLookup
    // (after delivering the message).
    sim.sys(0, Sysno::Recv, p.ep, msg(0, 0), 0);
    sim.buf(p.c).msg[0] = 5;
    sim.sys(0, Sysno::Call, p.ep, msg(1, 1), 0);
    assert_eq!(sim.buf(p.c).result(), Err(Error::FailedLookup));
    assert_eq!(sim.buf(p.s).msg[0], 5);
    // Equal priorities: the client keeps running until it yields.
    assert_eq!(sim.running[0], Some(p.c));
    sim.sys(0, Sysno::Yield, 0, msg(0, 0), 0);
    // The server receives with the reply object; another thread may not
    // receive with the same (busy) object.
    assert_eq!(sim.running[0], Some(p.s));
    sim.sys(0, Sysno::Recv, p.ep, msg(0, 0), p.reply);
    assert_eq!(sim.running[0], Some(p.c));
    sim.sys(0, Sysno::Recv, p.ep, msg(0, 0), p.reply);
    assert_eq!(sim.buf(p.c).result(), Err(Error::IllegalOperation));
    // Deleting the reply object while a caller waits fails the call.
    sim.sys(0, Sysno::Call, p.ep, msg(1, 0), 0);
    assert_eq!(sim.status(p.c), ThreadStatus::BlockedOnReply);
    assert_eq!(sim.running[0], Some(p.s));
    sim.invoke(0, CAP_INIT_CNODE, InvocationLabel::CNodeDelete, &[p.reply]).unwrap();
    assert_eq!(sim.status(p.c), ThreadStatus::Ready);
    assert_eq!(sim.buf(p.c).result(), Err(Error::FailedLookup));
}

#[test]
fn cross_core_call_sends_ipis() {
    let mut sim = Sim::new(2);
    let p = pair(&mut sim, 1, 50, 0, 150);
    // The server started on core 1 (woken there by SetAffinity + resume).
    assert_eq!(sim.running[1], Some(p.s));
    assert!(sim.ipi_log.contains(&(0, 1)));
    sim.sys(1, Sysno::Recv, p.ep, msg(0, 0), p.reply);
    assert_eq!(sim.running[1], None);
    // The client (priority 150) preempted the root on core 0.
    assert_eq!(sim.running[0], Some(p.c));
    sim.ipi_log.clear();
    sim.auto_ipi = false;
    sim.buf(p.c).msg[0] = 1;
    sim.sys(0, Sysno::Call, p.ep, msg(1, 1), 0);
    // Core 1 is idle: the wake-up IPIs it.
    assert_eq!(sim.ipi_log, vec![(0, 1)]);
    assert!(sim.k.pending_ipi(1));
    assert_eq!(sim.running[0], Some(sim.root));
    sim.deliver_ipis();
    assert_eq!(sim.running[1], Some(p.s));
    assert_eq!(sim.buf(p.s).msg[0], 1);
    sim.buf(p.s).msg[0] = 2;
    sim.sys(1, Sysno::ReplyRecv, p.ep, msg(1, 1), p.reply);
    // The client outranks the root on core 0: IPI.
    assert_eq!(sim.ipi_log, vec![(0, 1), (1, 0)]);
    sim.deliver_ipis();
    assert_eq!(sim.running[0], Some(p.c));
    assert_eq!(sim.buf(p.c).msg[0], 2);
}

#[test]
fn no_ipi_when_the_remote_core_runs_a_higher_priority_thread() {
    let mut sim = Sim::new(2);
    let ntfn = sim.obj(ObjectType::Notification);
    let other = sim.obj(ObjectType::Notification);
    let (_, busy) = sim.spawn(20, 200, 1);
    let (_, low) = sim.spawn(21, 10, 1);
    assert_eq!(sim.running[1], Some(busy));
    // `low` is queued behind `busy`; make each wait on its own notification
    // (so the test does not depend on the order of waiters).
    sim.sys(1, Sysno::Wait, ntfn, msg(0, 0), 0); // busy waits
    assert_eq!(sim.running[1], Some(low));
    sim.sys(1, Sysno::Wait, other, msg(0, 0), 0); // low waits
    sim.sys(0, Sysno::Signal, ntfn, msg(0, 0), 0); // wakes busy
    assert_eq!(sim.running[1], Some(busy));
    sim.ipi_log.clear();
    sim.sys(0, Sysno::Signal, other, msg(0, 0), 0); // wakes low: busy outranks it
    assert!(sim.ipi_log.is_empty());
    assert_eq!(sim.status(low), ThreadStatus::Ready);
}

#[test]
fn delete_receiver_blocked_while_partner_sends() {
    let mut sim = Sim::new(2);
    let p = pair(&mut sim, 1, 50, 0, 150);
    sim.sys(1, Sysno::Recv, p.ep, msg(0, 0), p.reply);
    assert_eq!(sim.status(p.s), ThreadStatus::BlockedOnRecv);
    // The client blocks sending to a second endpoint to let the root act.
    let ep2 = sim.obj(ObjectType::Endpoint);
    assert_eq!(sim.running[0], Some(p.c));
    sim.sys(0, Sysno::Send, ep2, msg(0, 0), 0);
    assert_eq!(sim.running[0], Some(sim.root));
    // Root deletes the blocked server; its endpoint queue empties.
    sim.invoke(0, CAP_INIT_CNODE, InvocationLabel::CNodeDelete, &[p.s_cap]).unwrap();
    assert_eq!(sim.info(p.s), None);
    // The root receives on ep2: the client (priority 150) resumes and sends
    // to the dead server's endpoint.
    sim.sys(0, Sysno::Recv, ep2, msg(0, 0), 0);
    assert_eq!(sim.running[0], Some(p.c));
    sim.sys(0, Sysno::NBSend, p.ep, msg(0, 0), 0);
    assert_eq!(sim.buf(p.c).result(), Ok(()));
    sim.sys(0, Sysno::Call, p.ep, msg(0, 0), 0);
    assert_eq!(sim.status(p.c), ThreadStatus::BlockedOnSend);
    assert_eq!(sim.running, vec![Some(sim.root), None]);
}

#[test]
fn delete_sender_blocked_and_endpoint_with_waiters() {
    let mut sim = Sim::new(1);
    let p = pair(&mut sim, 0, 150, 0, 150);
    // Both block on the endpoint: the server sending, the client calling.
    sim.sys(0, Sysno::Send, p.ep, msg(0, 0), 0);
    sim.sys(0, Sysno::Call, p.ep, msg(0, 0), 0);
    assert_eq!(sim.running[0], Some(sim.root));
    assert_eq!(sim.status(p.s), ThreadStatus::BlockedOnSend);
    // Delete the first sender: the second is still queued.
    sim.invoke(0, CAP_INIT_CNODE, InvocationLabel::CNodeDelete, &[p.s_cap]).unwrap();
    assert_eq!(sim.status(p.c), ThreadStatus::BlockedOnSend);
    // Delete the endpoint: the caller restarts.
    sim.invoke(0, CAP_INIT_CNODE, InvocationLabel::CNodeDelete, &[p.ep]).unwrap();
    assert_eq!(sim.running[0], Some(p.c));
    assert_eq!(sim.buf(p.c).restart, 1);
    // Its retry fails: the capability is gone.
    sim.sys(0, Sysno::Call, p.ep, msg(0, 0), 0);
    assert_eq!(sim.buf(p.c).result(), Err(Error::InvalidCapability));
    assert_eq!(sim.buf(p.c).restart, 0);
}

#[test]
fn migrate_server_mid_conversation() {
    let mut sim = Sim::new(2);
    let p = pair(&mut sim, 1, 50, 0, 150);
    sim.sys(1, Sysno::Recv, p.ep, msg(0, 0), p.reply);
    sim.buf(p.c).msg[0] = 7;
    sim.sys(0, Sysno::Call, p.ep, msg(1, 1), 0);
    // The server runs on core 1 with the message; the root runs on core 0.
    assert_eq!(sim.running[1], Some(p.s));
    assert_eq!(sim.running[0], Some(sim.root));
    // Migrating a thread running on core 1 stalls core 1 first: restart.
    let r = sim.invoke_maybe_restart(0, p.s_cap, InvocationLabel::TcbSetAffinity, &[0]);
    assert_eq!(r, None);
    // The stall IPI made core 1 go idle (held); the retry succeeds.
    assert_eq!(sim.running[1], None);
    let r = sim.invoke_maybe_restart(0, p.s_cap, InvocationLabel::TcbSetAffinity, &[0]);
    assert_eq!(r, Some(Ok(())));
    assert_eq!(sim.info(p.s).unwrap().core, 0);
    assert_eq!(sim.running[1], None);
    // The server runs on core 0 once the root steps aside and replies.
    sim.park_root();
    assert_eq!(sim.running[0], Some(p.s));
    assert_eq!(sim.buf(p.s).msg[0], 7);
    sim.buf(p.s).msg[0] = 8;
    sim.sys(0, Sysno::ReplyRecv, p.ep, msg(1, 1), p.reply);
    assert_eq!(sim.running[0], Some(p.c));
    assert_eq!(sim.buf(p.c).msg[0], 8);
    // And the conversation goes on, all on core 0.
    sim.sys(0, Sysno::Call, p.ep, msg(1, 1), 0);
    assert_eq!(sim.running[0], Some(p.s));
}

#[test]
fn migrate_caller_while_it_waits_for_the_reply() {
    let mut sim = Sim::new(2);
    let p = pair(&mut sim, 0, 150, 0, 140);
    sim.sys(0, Sysno::Recv, p.ep, msg(0, 0), p.reply);
    sim.sys(0, Sysno::Call, p.ep, msg(1, 0), 0);
    assert_eq!(sim.running[0], Some(p.s));
    // The server blocks sending so the root runs and migrates the caller.
    sim.sys(0, Sysno::Send, p.ep, msg(0, 0), 0);
    assert_eq!(sim.running[0], Some(sim.root));
    assert_eq!(sim.status(p.c), ThreadStatus::BlockedOnReply);
    sim.invoke(0, p.c_cap, InvocationLabel::TcbSetAffinity, &[1]).unwrap();
    assert_eq!(sim.status(p.c), ThreadStatus::BlockedOnReply);
    assert_eq!(sim.info(p.c).unwrap().core, 1);
    // The root takes the server's message, the server runs and replies:
    // the caller wakes up on its new core.
    sim.sys(0, Sysno::Recv, p.ep, msg(0, 0), 0);
    assert_eq!(sim.running[0], Some(p.s));
    sim.buf(p.s).msg[0] = 3;
    sim.ipi_log.clear();
    sim.sys(0, Sysno::Reply, 0, msg(1, 1), p.reply);
    assert_eq!(sim.ipi_log, vec![(0, 1)]);
    assert_eq!(sim.running[1], Some(p.c));
    assert_eq!(sim.buf(p.c).msg[0], 3);
    assert_eq!(sim.running[0], Some(p.s));
    let _ = SyscallArgs::default();
}
