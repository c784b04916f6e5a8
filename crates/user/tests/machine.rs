//! User programs on the hosted machine: faults, cross-core wake-ups of a
//! parked core, and message conservation under the big lock on two cores.
//! Behaviour only, never timings.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use granule_hosted::{Machine, MachineConfig, UserCtx};
use granule_kernel::abi::{CapRights, Error, ObjectType, CAP_INIT_TCB};
use granule_kernel::{BigLock, FaultKind, MessageInfo, Word};
use granule_sync::lock::Clh;
use granule_user::{Allocator, Env, NULL};

fn wait_for(what: &str, secs: u64, mut cond: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !cond() {
        assert!(t0.elapsed() < Duration::from_secs(secs), "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn bkl(cores: usize) -> BigLock<Clh> {
    BigLock::new(cores)
}

#[test]
fn a_user_panic_becomes_a_fault_and_the_other_threads_run_on() {
    let ticks = Arc::new(AtomicU64::new(0));
    let mut config = MachineConfig::new(1);
    let panicker = config.program(|ctx: &mut UserCtx<'_>, arg| {
        let mut env = Env::new(ctx);
        env.yield_now().unwrap();
        panic!("user thread {arg} gives up");
    });
    let t = ticks.clone();
    let worker = config.program(move |ctx: &mut UserCtx<'_>, _| {
        let mut env = Env::new(ctx);
        loop {
            env.yield_now().unwrap();
            t.fetch_add(1, Ordering::Relaxed);
        }
    });
    let m = Machine::boot(config, bkl(1), move |ctx, info| {
        let mut env = Env::new(ctx);
        let mut a = Allocator::from_boot(info);
        a.thread(&mut env, panicker, 7, 0, 100, true).unwrap();
        a.thread(&mut env, worker, 0, 0, 100, true).unwrap();
        // A thread at a bad entry faults as soon as it runs.
        a.thread(&mut env, 999, 0, 0, 100, true).unwrap();
        env.tcb_suspend(CAP_INIT_TCB).unwrap();
    })
    .unwrap();
    wait_for("two faults", 10, || m.faults().len() >= 2);
    let before = ticks.load(Ordering::Relaxed);
    wait_for("the worker to go on", 10, || ticks.load(Ordering::Relaxed) > before + 100);
    let faults = m.shutdown().unwrap();
    assert_eq!(faults.len(), 2, "{faults:?}");
    let panic = faults.iter().find(|f| f.kind == FaultKind::UserPanic).expect("the panic");
    assert!(panic.message.contains("user thread 7 gives up"), "{}", panic.message);
    let bad = faults.iter().find(|f| f.kind == FaultKind::Other).expect("the bad entry");
    assert!(bad.message.contains("999"), "{}", bad.message);
}

#[test]
fn a_call_from_core_0_wakes_a_server_on_a_parked_core_1() {
    let go = Arc::new(AtomicBool::new(false));
    let answer = Arc::new(AtomicU64::new(0));
    let server_waiting = Arc::new(AtomicBool::new(false));
    let mut config = MachineConfig::new(2);
    // No timer: a parked core wakes only when rung.
    config.tick = None;
    let sw = server_waiting.clone();
    let server = config.program(move |ctx: &mut UserCtx<'_>, arg| {
        let mut env = Env::new(ctx);
        let (ep, reply) = (arg & 0xffff, arg >> 16);
        sw.store(true, Ordering::SeqCst);
        env.recv(ep, reply).unwrap();
        loop {
            let v = env.msg()[0];
            env.msg()[0] = v + 1;
            env.reply_recv(ep, MessageInfo::new(0, 0, 0, 1), reply).unwrap();
        }
    });
    let (g, ans) = (go.clone(), answer.clone());
    let m = Machine::boot(config, bkl(2), move |ctx, info| {
        let mut env = Env::new(ctx);
        let mut a = Allocator::from_boot(info);
        let ep = a.create(&mut env, ObjectType::Endpoint, 0).unwrap();
        let reply = a.create(&mut env, ObjectType::Reply, 0).unwrap();
        a.thread(&mut env, server, ep | reply << 16, 1, 100, true).unwrap();
        while !g.load(Ordering::SeqCst) {
            std::hint::spin_loop();
        }
        env.msg()[0] = 41;
        let info = env.call(ep, MessageInfo::new(0, 0, 0, 1)).unwrap();
        assert_eq!(info.length(), 1);
        ans.store(env.msg()[0], Ordering::SeqCst);
        env.tcb_suspend(CAP_INIT_TCB).unwrap();
    })
    .unwrap();
    wait_for("the server to wait", 10, || server_waiting.load(Ordering::SeqCst));
    // Core 1 goes idle when the server blocks and parks after its spin.
    // Core 1 goes idle when the server blocks and parks after its spin. It
    // was running the server when the flag was set, so any park seen from
    // now on is the one after the server blocked; with no timer nothing but
    // the call can wake it.
    wait_for("core 1 to park", 10, || m.is_parked(1));
    std::thread::sleep(Duration::from_millis(10));
    assert!(m.is_parked(1), "core 1 stays parked");
    go.store(true, Ordering::SeqCst);
    wait_for("the answer", 10, || answer.load(Ordering::SeqCst) != 0);
    assert_eq!(answer.load(Ordering::SeqCst), 42);
    assert!(m.faults().is_empty(), "{:?}", m.faults());
    m.shutdown().unwrap();
}

/// The shared record of the conservation test.
struct Ledger {
    caps: [AtomicU64; 4], // ep0, ep1, reply0, reply1
    /// received[ep][sender]: messages of `sender` received on `ep`.
    received: [[AtomicU64; SENDERS]; 2],
    errors: AtomicU64,
    senders_done: AtomicU64,
}

const SENDERS: usize = 4;
const PER_SENDER: u64 = 2_000;

#[test]
fn under_bkl_on_two_cores_every_message_arrives_once_and_in_order() {
    let ledger = Arc::new(Ledger {
        caps: Default::default(),
        received: Default::default(),
        errors: AtomicU64::new(0),
        senders_done: AtomicU64::new(0),
    });
    let mut config = MachineConfig::new(2);
    let l = ledger.clone();
    // Sender `s` sends message k (0-based) to endpoint k % 2; every third one
    // is a Call (label 1, answered), the others Sends. Words: [s, seq on that
    // endpoint, check].
    let sender = config.program(move |ctx: &mut UserCtx<'_>, s: Word| {
        let mut env = Env::new(ctx);
        let mut seq = [0u64; 2];
        for k in 0..PER_SENDER {
            let e = (k % 2) as usize;
            let ep = l.caps[e].load(Ordering::SeqCst);
            let m = env.msg();
            m[0] = s;
            m[1] = seq[e];
            m[2] = s.wrapping_mul(1_000_003) ^ seq[e];
            seq[e] += 1;
            let r = if k % 3 == 0 {
                env.call(ep, MessageInfo::new(1, 0, 0, 3)).map(drop)
            } else {
                env.send(ep, MessageInfo::new(0, 0, 0, 3))
            };
            if r.is_err() {
                l.errors.fetch_add(1, Ordering::SeqCst);
            }
        }
        l.senders_done.fetch_add(1, Ordering::SeqCst);
        // (CAP_INIT_TCB would name the root task: threads share its CSpace.)
        loop {
            env.yield_now().ok();
        }
    });
    let l = ledger.clone();
    let receiver = config.program(move |ctx: &mut UserCtx<'_>, e: Word| {
        let mut env = Env::new(ctx);
        let e = e as usize;
        let (ep, reply) = (l.caps[e].load(Ordering::SeqCst), l.caps[2 + e].load(Ordering::SeqCst));
        let mut next = [0u64; SENDERS];
        loop {
            let got = env.recv(ep, reply);
            let Ok(got) = got else {
                l.errors.fetch_add(1, Ordering::SeqCst);
                continue;
            };
            let m = env.msg();
            let (s, seq, check) = (m[0] as usize, m[1], m[2]);
            let ok = got.info.length() == 3
                && s < SENDERS
                && seq == next[s]
                && check == (s as Word).wrapping_mul(1_000_003) ^ seq;
            if ok {
                next[s] += 1;
                l.received[e][s].fetch_add(1, Ordering::SeqCst);
            } else {
                l.errors.fetch_add(1, Ordering::SeqCst);
            }
            if got.info.label() == 1 && env.reply(reply, MessageInfo::new(0, 0, 0, 0)).is_err() {
                l.errors.fetch_add(1, Ordering::SeqCst);
            }
        }
    });
    let l = ledger.clone();
    let m = Machine::boot(config, bkl(2), move |ctx, info| {
        let mut env = Env::new(ctx);
        let mut a = Allocator::from_boot(info);
        for i in 0..2 {
            let ep = a.create(&mut env, ObjectType::Endpoint, 0).unwrap();
            l.caps[i].store(ep, Ordering::SeqCst);
        }
        for i in 0..2 {
            let r = a.create(&mut env, ObjectType::Reply, 0).unwrap();
            l.caps[2 + i].store(r, Ordering::SeqCst);
        }
        // Endpoint 0's receiver on core 1, endpoint 1's on core 0; senders
        // 0, 1 on core 0 and 2, 3 on core 1: every endpoint has senders on
        // both cores, half of them remote from the receiver.
        a.thread(&mut env, receiver, 0, 1, 100, true).unwrap();
        a.thread(&mut env, receiver, 1, 0, 100, true).unwrap();
        for s in 0..SENDERS {
            a.thread(&mut env, sender, s as Word, s / 2, 100, true).unwrap();
        }
        env.tcb_suspend(CAP_INIT_TCB).unwrap();
    })
    .unwrap();
    wait_for("every sender", 25, || ledger.senders_done.load(Ordering::SeqCst) == SENDERS as u64);
    let total = |l: &Ledger| -> u64 { l.received.iter().flatten().map(|a| a.load(Ordering::SeqCst)).sum() };
    wait_for("every message", 10, || total(&ledger) >= SENDERS as u64 * PER_SENDER);
    std::thread::sleep(Duration::from_millis(20));
    let faults = m.shutdown().unwrap();
    assert!(faults.is_empty(), "{faults:?}");
    assert_eq!(ledger.errors.load(Ordering::SeqCst), 0);
    for (e, per) in ledger.received.iter().enumerate() {
        for (s, n) in per.iter().enumerate() {
            assert_eq!(n.load(Ordering::SeqCst), PER_SENDER / 2, "sender {s} on endpoint {e}");
        }
    }
}

#[test]
fn env_reports_errors_as_results() {
    let done = Arc::new(AtomicBool::new(false));
    let d = done.clone();
    let m = Machine::boot(MachineConfig::new(1), bkl(1), move |ctx, info| {
        let mut env = Env::new(ctx);
        assert_eq!(env.call(NULL, MessageInfo::default()), Err(Error::InvalidCapability));
        assert_eq!(env.signal(info.slots + 5), Err(Error::InvalidCapability));
        assert_eq!(env.tcb_set_priority(CAP_INIT_TCB, 300), Err(Error::RangeError));
        assert_eq!(env.tcb_set_affinity(CAP_INIT_TCB, 9), Err(Error::RangeError));
        let mut a = Allocator::from_boot(info);
        let ntfn = a.create(&mut env, ObjectType::Notification, 0).unwrap();
        assert_eq!(env.poll(ntfn), Ok(0));
        env.signal(ntfn).unwrap();
        // Signalled through an unbadged capability the word stays 0; through
        // a badged one it carries the badge.
        let badged = a.slot().unwrap();
        env.cnode_mint(granule_kernel::abi::CAP_INIT_CNODE, badged, NULL, ntfn, CapRights::ALL, 5).unwrap();
        env.signal(badged).unwrap();
        assert_eq!(env.poll(ntfn), Ok(5));
        assert_eq!(env.poll(ntfn), Ok(0));
        let regs = env.tcb_read_registers(CAP_INIT_TCB).unwrap();
        assert_eq!(regs[granule_kernel::abi::REG_PC], 0, "the root task starts at entry 0");
        d.store(true, Ordering::SeqCst);
        env.tcb_suspend(CAP_INIT_TCB).unwrap();
    })
    .unwrap();
    wait_for("the root task", 10, || done.load(Ordering::SeqCst) || !m.faults().is_empty());
    let faults = m.shutdown().unwrap();
    assert!(faults.is_empty(), "{faults:?}");
}

#[test]
fn a_server_migrated_back_and_forth_mid_conversation_answers_every_call() {
    use granule_user::pingpong::{self, PairArg, PairSpec, PingPong};
    let pp = Arc::new(PingPong::new(vec![PairSpec { core: 0, delay_mean_cycles: 200.0, seed: 1 }], 4));
    let moves = Arc::new(AtomicU64::new(0));
    let mut config = MachineConfig::new(2);
    let p = pp.clone();
    let client = config.program(move |ctx: &mut UserCtx<'_>, arg| pingpong::client(&mut Env::new(ctx), &p, arg));
    let p = pp.clone();
    let server = config.program(move |ctx: &mut UserCtx<'_>, arg| pingpong::server(&mut Env::new(ctx), &p, arg));
    let mv = moves.clone();
    // The migrator (on core 1) moves the server (argument: its TCB) between
    // the cores, waiting for a few round trips between moves.
    let p = pp.clone();
    let migrator = config.program(move |ctx: &mut UserCtx<'_>, tcb| {
        let mut env = Env::new(ctx);
        for i in 0..200u64 {
            let seen = p.round_trips()[0];
            while p.round_trips()[0] < seen + 3 {
                env.yield_now().unwrap();
            }
            env.tcb_set_affinity(tcb, (i + 1) % 2).unwrap();
            mv.fetch_add(1, Ordering::SeqCst);
        }
        loop {
            env.yield_now().unwrap();
        }
    });
    let m = Machine::boot(config, bkl(2), move |ctx, info| {
        let mut env = Env::new(ctx);
        let mut a = Allocator::from_boot(info);
        let ep = a.create(&mut env, ObjectType::Endpoint, 0).unwrap();
        let reply = a.create(&mut env, ObjectType::Reply, 0).unwrap();
        let s = a.thread(&mut env, server, PairArg { pair: 0, ep, reply }.pack(), 0, 100, true).unwrap();
        a.thread(&mut env, client, PairArg { pair: 0, ep, reply: NULL }.pack(), 0, 100, true).unwrap();
        a.thread(&mut env, migrator, s, 1, 100, true).unwrap();
        env.tcb_suspend(CAP_INIT_TCB).unwrap();
    })
    .unwrap();
    wait_for("200 migrations", 25, || moves.load(Ordering::SeqCst) == 200 || !m.faults().is_empty());
    let before = pp.round_trips()[0];
    wait_for("more round trips after the last move", 10, || pp.round_trips()[0] > before + 100);
    // Four first runs (root, server, client, migrator), then the server's
    // context changed hands at (nearly) every move.
    assert!(m.context_moves() >= 4 + 150, "{} context moves", m.context_moves());
    let faults = m.shutdown().unwrap();
    assert!(faults.is_empty(), "{faults:?}");
    assert_eq!(pp.bad_replies(), 0);
}

#[test]
fn device_and_timer_interrupts_reach_their_handlers_until_acked() {
    use granule_kernel::abi::CAP_IRQ_CONTROL;
    let device_count = Arc::new(AtomicU64::new(0));
    let timer_count = Arc::new(AtomicU64::new(0));
    let device_line = Arc::new(AtomicU64::new(u64::MAX));
    let mut config = MachineConfig::new(2);
    config.tick = Some(Duration::from_millis(1));
    // A handler thread: wait on its notification, count, acknowledge.
    let (dc, tc) = (device_count.clone(), timer_count.clone());
    let handler = config.program(move |ctx: &mut UserCtx<'_>, arg| {
        let mut env = Env::new(ctx);
        let (ntfn, irq_handler, timer) = (arg & 0xffff, (arg >> 16) & 0xffff, arg >> 32 != 0);
        loop {
            env.wait(ntfn).unwrap();
            if timer { &tc } else { &dc }.fetch_add(1, Ordering::SeqCst);
            env.irq_ack(irq_handler).unwrap();
        }
    });
    let dl = device_line.clone();
    let m = Machine::boot(config, bkl(2), move |ctx, info| {
        let mut env = Env::new(ctx);
        let mut a = Allocator::from_boot(info);
        // Core 1's timer line, and the first device line (routed to core 0).
        for (line, core, timer) in [(info.timer_irq_base + 1, 1, true), (info.device_irq_base, 0, false)] {
            let ntfn = a.create(&mut env, ObjectType::Notification, 0).unwrap();
            let h = a.slot().unwrap();
            env.irq_issue_handler(CAP_IRQ_CONTROL, line as Word, NULL, h).unwrap();
            env.irq_set_handler(h, ntfn).unwrap();
            a.thread(&mut env, handler, ntfn | h << 16 | (timer as Word) << 32, core, 150, true).unwrap();
        }
        dl.store(info.device_irq_base as Word, Ordering::SeqCst);
        env.tcb_suspend(CAP_INIT_TCB).unwrap();
    })
    .unwrap();
    wait_for("the handlers", 10, || device_line.load(Ordering::SeqCst) != u64::MAX);
    std::thread::sleep(Duration::from_millis(5));
    for i in 1..=20 {
        m.raise_irq(device_line.load(Ordering::SeqCst) as usize);
        wait_for("the device interrupt", 10, || device_count.load(Ordering::SeqCst) >= i);
    }
    wait_for("timer interrupts on core 1", 10, || timer_count.load(Ordering::SeqCst) >= 10);
    let faults = m.shutdown().unwrap();
    assert!(faults.is_empty(), "{faults:?}");
    assert_eq!(device_count.load(Ordering::SeqCst), 20, "one delivery per raise");
}
