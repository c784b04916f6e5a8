//! Randomized property test: several threads on two cores issue random system
//! calls with random arguments and random capability slots, interleaved with
//! ticks, interrupts, IPIs and faults. The kernel must answer only with typed
//! errors, never panic, and keep every invariant after every entry (the
//! harness checks them after each one).

use crate::common::*;
use granule_kernel::abi::*;
use granule_kernel::{BootConfig, Regime, SyscallArgs};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

static FAST: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn word(rng: &mut ChaCha8Rng) -> Word {
    match rng.gen_range(0..20) {
        0..=7 => rng.gen_range(0..24),
        8..=12 => rng.gen_range(0..270),
        13..=14 => rng.gen_range(0..9),
        15..=16 => rng.gen_range(0..26),
        17 => rng.gen_range(0..4),
        18 => u64::MAX - rng.gen_range(0..3),
        _ => rng.gen(),
    }
}

fn slot(rng: &mut ChaCha8Rng, filled: Word) -> Word {
    match rng.gen_range(0..10) {
        0..=6 => rng.gen_range(0..filled.max(1)),
        7..=8 => rng.gen_range(0..260),
        _ => rng.gen(),
    }
}

fn run<R: Regime>(seed: u64, steps: usize, make: &dyn Fn(&BootConfig) -> R) -> (usize, [usize; Error::ALL.len() + 1]) {
    let mut errs = [0usize; Error::ALL.len() + 1];
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut cfg = config(2);
    cfg.untyped_bytes = 8 << 20;
    cfg.untyped_count = 2;
    let regime = make(&cfg);
    let mut s = Sim::with(cfg, regime);

    // Some objects of every kind, and threads sharing the root CSpace.
    let first = s.next_slot;
    for ty in [ObjectType::Endpoint, ObjectType::Notification, ObjectType::Reply] {
        s.retype(0, ty, 0, 3);
    }
    let mut kinds: Vec<(Word, u8)> = vec![(CAP_INIT_TCB, 1), (CAP_INIT_CNODE, 4), (CAP_IRQ_CONTROL, 9)];
    for (cptr, _) in s.boot.untyped.clone() {
        kinds.push((cptr, 0));
    }
    for (i, k) in [2u8, 2, 2, 3, 3, 3, 5, 5, 5].into_iter().enumerate() {
        kinds.push((first + i as Word, k));
    }
    let f = s.retype(0, ObjectType::Frame, 12, 2);
    kinds.extend([(f, 6), (f + 1, 6)]);
    let c = s.retype(0, ObjectType::CNode, 2, 1);
    kinds.push((c, 4));
    let v = s.retype(0, ObjectType::VSpace, 0, 1);
    kinds.push((v, 7));
    let u = s.retype(0, ObjectType::Untyped, 16, 1);
    kinds.push((u, 0));
    for i in 0..6u64 {
        let prio = rng.gen_range(90..110);
        let (cap, _) = s.spawn(100 + i, prio, (i % 2) as usize);
        kinds.push((cap, 1));
    }
    // The rescuer: top priority, woken by a device interrupt when every
    // thread is blocked; it unblocks everyone it can, then waits again.
    let rescue_ntfn = s.retype(0, ObjectType::Notification, 0, 1);
    let rescue_irq = s.boot.device_irq_base;
    let handler = s.alloc_slot();
    s.invoke(0, CAP_IRQ_CONTROL, InvocationLabel::IrqIssueIrqHandler, &[rescue_irq as Word, 0, handler]).unwrap();
    s.invoke(0, handler, InvocationLabel::IrqSetIrqHandler, &[rescue_ntfn]).unwrap();
    let (_, rescuer) = s.spawn(999, 255, 0);
    assert_eq!(s.running[0], Some(rescuer));
    s.sys(0, Sysno::Wait, rescue_ntfn, MessageInfo::default(), 0);
    let filled = s.next_slot + 4;
    let free_slot = |rng: &mut ChaCha8Rng| rng.gen_range(filled - 4..200);

    let eps: Vec<Word> = kinds.iter().filter(|k| k.1 == 2).map(|k| k.0).collect();
    let replies: Vec<Word> = kinds.iter().filter(|k| k.1 == 5).map(|k| k.0).collect();
    for step in 0..steps {
        let live: Vec<usize> = (0..2).filter(|&c| s.running[c].is_some()).collect();
        let roll = rng.gen_range(0..100);
        if live.is_empty() || roll < 6 {
            // Nothing runs, or an asynchronous event.
            let core = rng.gen_range(0..2);
            match rng.gen_range(0..4) {
                0 => s.tick(core),
                1 => s.interrupt(core, rng.gen_range(0..NUM_IRQS + 2)),
                2 => s.ipi(core),
                _ => {
                    if s.running.iter().all(Option::is_none) {
                        // Everything blocked: wake the rescuer; stop if it
                        // cannot help any more.
                        s.interrupt(0, rescue_irq);
                        if s.running[0] == Some(rescuer) {
                            for &ep in &eps {
                                for sys in [Sysno::NBRecv, Sysno::NBSend, Sysno::NBRecv, Sysno::NBSend] {
                                    s.sys(0, sys, ep, MessageInfo::default(), 0);
                                }
                            }
                            for &r in &replies {
                                s.sys(0, Sysno::Reply, 0, MessageInfo::default(), r);
                            }
                            for n in first + 3..first + 6 {
                                s.sys(0, Sysno::Signal, n, MessageInfo::default(), 0);
                            }
                            s.invoke_maybe_restart(0, handler, InvocationLabel::IrqAckIrq, &[]);
                            s.sys(0, Sysno::Wait, rescue_ntfn, MessageInfo::default(), 0);
                        }
                        if s.running.iter().all(Option::is_none) {
                            FAST.fetch_add(
                                s.k.core_stats(0).fastpath + s.k.core_stats(1).fastpath,
                                std::sync::atomic::Ordering::Relaxed,
                            );
                            return (step, errs);
                        }
                    } else {
                        s.tick(core);
                    }
                }
            }
            continue;
        }
        let core = live[rng.gen_range(0..live.len())];
        if roll == 99 {
            // A panic, or a memory fault at a random address (delivered if
            // a random `TcbSetFaultHandler` gave the thread a handler).
            if rng.gen_bool(0.5) {
                s.fault(core);
            } else {
                s.fault_with(core, granule_kernel::FaultKind::MemoryAccess { addr: word(&mut rng), write: rng.gen() });
            }
            continue;
        }
        let t = s.cur(core);
        s.auto_ipi = rng.gen_range(0..8) != 0;
        {
            let b = s.buf(t);
            for w in b.msg.iter_mut().take(8) {
                *w = word(&mut rng);
            }
            for c in b.caps_or_badges.iter_mut() {
                *c = slot(&mut rng, filled);
            }
            b.receive_cnode = if rng.gen_bool(0.8) { 0 } else { slot(&mut rng, filled) };
            b.receive_index = rng.gen_range(0..300);
        }
        let sysno =
            if rng.gen_range(0..30) == 0 { word(&mut rng) } else { rng.gen_range(1..=Sysno::ALL.len() as Word) };
        let label = if rng.gen_range(0..4) == 0 { word(&mut rng) } else { rng.gen_range(1..=23) };
        let info = MessageInfo::new(label, rng.gen_range(0..8), rng.gen_range(0..4), rng.gen_range(0..12));
        let info = if rng.gen_range(0..40) == 0 { MessageInfo(rng.gen()) } else { info };
        let mut args = SyscallArgs::new(sysno, slot(&mut rng, filled), info.word(), slot(&mut rng, filled));
        if rng.gen_bool(0.3) {
            // Well-formed IPC (exercises the fast path and the hand-offs).
            let ep = eps[rng.gen_range(0..eps.len())];
            let reply = replies[rng.gen_range(0..replies.len())];
            let sys = [Sysno::Call, Sysno::ReplyRecv, Sysno::Recv, Sysno::Send, Sysno::NBRecv][rng.gen_range(0..5)];
            let info = MessageInfo::new(rng.gen_range(0..4), 0, 0, rng.gen_range(0..4));
            args = SyscallArgs::new(sys.word(), ep, info.word(), reply);
        } else if rng.gen_bool(0.5) {
            // A plausible invocation: a label of the right family and
            // arguments in range (slots, types, small numbers).
            let (cptr, kind) = kinds[rng.gen_range(0..kinds.len())];
            let labels: &[Word] = match kind {
                0 => &[1],
                1 => &[2, 3, 4, 5, 6, 7, 8, 9, 10, 23],
                4 => &[11, 12, 13, 14, 15],
                6 => &[20, 21, 22],
                9 => &[16],
                _ => &[17, 18, 19],
            };
            let label = labels[rng.gen_range(0..labels.len())];
            let b = s.buf(t);
            let plausible = [
                match label {
                    1 => rng.gen_range(0..8),
                    11 | 12 => slot(&mut rng, filled),
                    13..=15 => free_slot(&mut rng),
                    16 => rng.gen_range(0..NUM_IRQS as Word + 1),
                    4 | 9 | 18 | 20 | 23 => kinds[rng.gen_range(0..kinds.len())].0,
                    5 => rng.gen_range(80..120),
                    6 => rng.gen_range(0..3),
                    _ => rng.gen_range(0..3),
                },
                match label {
                    1 => [0, 1, 2, 12, 4, 16][rng.gen_range(0..6)],
                    13..=15 => {
                        if rng.gen_bool(0.7) {
                            0
                        } else {
                            c
                        }
                    }
                    16 => 0,
                    4 => {
                        if rng.gen_bool(0.5) {
                            0
                        } else {
                            v
                        }
                    }
                    _ => rng.gen_range(0..4),
                },
                match label {
                    1 => {
                        if rng.gen_bool(0.8) {
                            0
                        } else {
                            c
                        }
                    }
                    13..=15 => slot(&mut rng, filled),
                    16 => free_slot(&mut rng),
                    _ => rng.gen_range(0..8),
                },
                match label {
                    1 => free_slot(&mut rng),
                    _ => rng.gen_range(0..16),
                },
                rng.gen_range(0..4),
            ];
            b.msg[..5].copy_from_slice(&plausible);
            let sys = if rng.gen_bool(0.9) { Sysno::Call } else { Sysno::Send };
            args = SyscallArgs::new(sys.word(), cptr, MessageInfo::new(label, 0, 0, rng.gen_range(3..6)).word(), 0);
        }
        s.raw(core, args);
        // Results are typed: a known error code or success.
        let b = s.buf(t);
        assert!(b.error <= Error::ALL.len() as Word, "seed {seed} step {step}: error word {}", b.error);
        errs[b.error as usize] += 1;
        if !s.auto_ipi && rng.gen_bool(0.5) {
            s.deliver_ipis();
        }
        s.auto_ipi = true;
        if rng.gen_range(0..50) == 0 {
            s.deliver_ipis();
        }
    }
    s.deliver_ipis();
    s.check();
    FAST.fetch_add(s.k.core_stats(0).fastpath + s.k.core_stats(1).fastpath, std::sync::atomic::Ordering::Relaxed);
    (steps, errs)
}

/// Run random programs under the regime `make` builds until `want` steps
/// ran; returns (steps, results by error code).
fn many<R: Regime>(want: usize, make: &dyn Fn(&BootConfig) -> R) -> (usize, [usize; Error::ALL.len() + 1]) {
    let mut total = 0;
    let mut errs = [0usize; Error::ALL.len() + 1];
    let mut seed = 0;
    while total < want && seed < 3000 {
        seed += 1;
        let (n, e) = run(seed, 1500, make);
        total += n;
        for (a, b) in errs.iter_mut().zip(e) {
            *a += b;
        }
    }
    eprintln!("{} : {seed} seeds, {total} steps, results by error code {errs:?}", R::NAME);
    assert!(total >= want, "too few steps ran: {total}");
    (total, errs)
}

#[test]
fn random_syscalls_two_cores() {
    FAST.store(0, std::sync::atomic::Ordering::Relaxed);
    many(150_000, &regime);
    let fast = FAST.load(std::sync::atomic::Ordering::Relaxed);
    assert!(fast > 100, "the fast path was hardly exercised: {fast}");
}

/// The same programs with the regime's own fault injection where it has
/// any (`fine`: random spins while holding object locks; `rtm`: injected
/// aborts on top of real RTM), the plain regime otherwise.
#[test]
fn random_syscalls_two_cores_with_fault_injection() {
    many(30_000, &faulty_regime);
}
