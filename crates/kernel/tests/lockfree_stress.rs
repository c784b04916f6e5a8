//! The `lockfree` regime under real concurrency: two OS threads act as the
//! two cores, and the shared (lock-free) paths of both run at once on
//! shared objects while a management thread suspends, resumes, creates and
//! deletes threads.
//!
//! * Two servers (one per core) answer `Call`s on one shared endpoint with
//!   `ReplyRecv`; four clients (two per core) call it with numbered
//!   requests and check every answer (each reply reaches its caller).
//! * Two senders (one per core) `Send` numbered messages through a second
//!   shared endpoint to two receivers (one per core): every message must be
//!   received exactly once, each sender's in order.
//! * A notification ping-pong across the cores (signal, wait for the echo).
//! * Two pagers (one per core) allocate a 4 KiB frame from one shared
//!   untyped, map it, check that it is zeroed, write it, unmap and delete
//!   it, over and over: under `lockfree` these run on the shared path
//!   (`lockfree/pages.rs`) while the other core does the same, and
//!   the manager's system calls link their frames into the derivation tree.
//! * A manager on core 0 suspends and resumes servers, clients, senders and
//!   receivers in turn, and now and then creates a victim thread on core 1
//!   that calls the servers, and deletes it wherever it is (under
//!   `lockfree` on the shared path: `lockfree/finish_destroy.rs`).
//!
//! Cores serve IPIs at system call boundaries and take timer ticks while
//! they run a thread (an idle core waits for an IPI); each
//! checks every kernel invariant now and then (a management entry, while
//! the other core runs). Nothing is timed: a deadline only turns a hang
//! into a failure. The cores are the test platform's (`Sim::run_threads`).

mod common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use common::*;
use granule_kernel::abi::*;
use granule_kernel::{Kernel, LockFree, StartInfo, SyscallArgs, ThreadId};

const CALLS: u64 = 3000;
const SENDS: u64 = 3000;
const PINGS: u64 = 1000;
const PAGES: u64 = 1000;
/// The manager counts as finished after this many rounds of its cycle.
const MANAGER_ROUNDS: usize = 3;
const VICTIM_ID: u64 = 99;

/// The answer a server gives to request `seq`.
fn answer(seq: u64) -> u64 {
    seq.wrapping_mul(3) + 1
}

/// Capabilities the programs use (slots of the shared root CNode).
#[derive(Clone, Copy, Debug)]
struct Caps {
    service: Word,
    oneway: Word,
    park: Word,
    ping: Word,
    pong: Word,
    ping_sig: Word,
    pong_sig: Word,
    replies: [Word; 2],
    /// The address space the pagers map into, and their slots.
    space: Word,
    pages: [Word; 2],
}

/// Programs by entry word (`spawn(entry, …)`; the argument is the entry).
const SERVER: Word = 10;
const CLIENT: Word = 20;
const SENDER: Word = 30;
const RECEIVER: Word = 40;
const PINGER: Word = 50;
const PONGER: Word = 51;
const MANAGER: Word = 60;
const PAGER: Word = 80;
const VICTIM: Word = 70;

#[derive(Clone, Debug)]
enum Prog {
    Server { reply: Word },
    Client { id: u64, seq: u64 },
    Sender { id: u64, next: u64 },
    Receiver { id: usize },
    Pinger { rounds: u64 },
    Ponger,
    Manager { ops: Vec<(Word, Invocation)>, next: usize },
    Pager { id: usize, done: u64 },
    Parked,
}

/// What a thread does, and the arguments of its last system call (reissued
/// when the kernel asks for a restart).
struct Thread {
    prog: Prog,
    last: Option<SyscallArgs>,
}

struct Shared {
    caps: Caps,
    threads: Mutex<HashMap<ThreadId, Thread>>,
    /// Per receiver: (sender, seq) in order of reception.
    logs: Vec<Mutex<Vec<(u64, u64)>>>,
    /// Clients, senders (as a whole: 2 × SENDS receptions), the pinger and
    /// the manager done.
    finished: AtomicUsize,
    received: AtomicUsize,
    victims: AtomicUsize,
    done: AtomicBool,
}

const FINISHERS: usize = 4 + 1 + 1 + 1 + 2;

impl Shared {
    fn finish(&self) {
        if self.finished.fetch_add(1, Ordering::SeqCst) + 1 == FINISHERS {
            self.done.store(true, Ordering::SeqCst);
        }
    }

    fn program(&self, entry: Word, arg: Word) -> Prog {
        let c = &self.caps;
        match entry {
            SERVER => Prog::Server { reply: c.replies[(arg % 2) as usize] },
            CLIENT => Prog::Client { id: arg, seq: 0 },
            SENDER => Prog::Sender { id: arg, next: 0 },
            RECEIVER => Prog::Receiver { id: arg as usize },
            PINGER => Prog::Pinger { rounds: 0 },
            PONGER => Prog::Ponger,
            VICTIM => Prog::Client { id: VICTIM_ID, seq: 0 },
            PAGER => Prog::Pager { id: arg as usize, done: 0 },
            _ => Prog::Parked,
        }
    }
}

impl Threads<LockFree> for Shared {
    /// The next system call of `t` (the thread this core runs), given the
    /// results of its last one in its IPC buffer.
    fn step(&self, k: &Kernel<LockFree>, t: ThreadId) -> SyscallArgs {
        // SAFETY: `t` is the thread this core runs; only this core touches
        // its buffer until the next kernel entry.
        let b = unsafe { &mut *k.ipc_buffer(t) };
        let c = self.caps;
        let mut threads = self.threads.lock().unwrap();
        let th = threads.get_mut(&t).expect("every running thread has a program");
        if let (Some(last), true) = (th.last, b.restart != 0) {
            return last;
        }
        let first = th.last.is_none();
        let next = match &mut th.prog {
            Prog::Parked => encode::syscall(Sysno::Recv, c.park, MessageInfo::default(), 0),
            Prog::Server { reply } => {
                if first {
                    encode::syscall(Sysno::Recv, c.service, MessageInfo::default(), *reply)
                } else {
                    assert_eq!(b.error, 0, "server {t:?}");
                    assert_eq!(b.info().length(), 2, "server {t:?} got {:?}", b.info());
                    // Echo the client's id and sequence number, add the answer.
                    b.msg[2] = answer(b.msg[1]);
                    encode::syscall(Sysno::ReplyRecv, c.service, msg(0, 3), *reply)
                }
            }
            Prog::Client { id, seq } => {
                if !first {
                    assert_eq!(b.error, 0, "client {id}");
                    assert_eq!(b.info().length(), 3, "client {id}");
                    assert_eq!((b.msg[0], b.msg[1], b.msg[2]), (*id, *seq, answer(*seq)), "client {id}: wrong answer");
                    *seq += 1;
                    if *id == VICTIM_ID {
                        self.victims.fetch_add(1, Ordering::Relaxed);
                    } else if *seq == CALLS {
                        self.finish();
                        th.prog = Prog::Parked;
                        th.last = Some(encode::syscall(Sysno::Recv, c.park, MessageInfo::default(), 0));
                        return th.last.unwrap();
                    }
                }
                b.msg[0] = *id;
                b.msg[1] = *seq;
                encode::syscall(Sysno::Call, c.service, msg(1, 2), 0)
            }
            Prog::Sender { id, next } => {
                if !first {
                    assert_eq!(b.error, 0, "sender {id}");
                }
                if *next == SENDS {
                    th.prog = Prog::Parked;
                    encode::syscall(Sysno::Recv, c.park, MessageInfo::default(), 0)
                } else {
                    b.msg[0] = *id;
                    b.msg[1] = *next;
                    *next += 1;
                    encode::syscall(Sysno::Send, c.oneway, msg(1, 2), 0)
                }
            }
            Prog::Receiver { id } => {
                if !first {
                    assert_eq!(b.error, 0, "receiver {id}");
                    assert_eq!(b.info().length(), 2, "receiver {id}");
                    self.logs[*id].lock().unwrap().push((b.msg[0], b.msg[1]));
                    if self.received.fetch_add(1, Ordering::SeqCst) + 1 == 2 * SENDS as usize {
                        self.finish();
                    }
                }
                encode::syscall(Sysno::Recv, c.oneway, MessageInfo::default(), 0)
            }
            Prog::Pinger { rounds } => {
                // Alternate: signal the ponger, then wait for its echo.
                let signalled = th.last.is_some_and(|l| l.sysno == Sysno::Signal.word());
                if signalled {
                    assert_eq!(b.error, 0, "pinger signal");
                    encode::syscall(Sysno::Wait, c.pong, MessageInfo::default(), 0)
                } else {
                    if !first {
                        assert_eq!((b.error, b.badge), (0, 7), "pinger got a wrong echo");
                        *rounds += 1;
                        if *rounds == PINGS {
                            self.finish();
                            th.prog = Prog::Parked;
                            th.last = Some(encode::syscall(Sysno::Recv, c.park, MessageInfo::default(), 0));
                            return th.last.unwrap();
                        }
                    }
                    encode::syscall(Sysno::Signal, c.ping_sig, MessageInfo::default(), 0)
                }
            }
            Prog::Ponger => {
                let waited = th.last.is_some_and(|l| l.sysno == Sysno::Wait.word());
                if waited {
                    assert_eq!((b.error, b.badge), (0, 5), "ponger got a wrong ping");
                    encode::syscall(Sysno::Signal, c.pong_sig, MessageInfo::default(), 0)
                } else {
                    encode::syscall(Sysno::Wait, c.ping, MessageInfo::default(), 0)
                }
            }
            Prog::Pager { id, done } => {
                // Retype → map → (check, write) → unmap → delete, by the
                // label of the last call.
                let slot = c.pages[*id];
                let last = th.last.map(|l| MessageInfo(l.info).label());
                let inv = |label: InvocationLabel| label as Word;
                if !first {
                    assert_eq!(b.error, 0, "pager {id}: {last:?} failed");
                }
                match last {
                    Some(l) if l == inv(InvocationLabel::UntypedRetype) => {
                        let vaddr = 0x1000 * (*id as Word + 1);
                        Invocation::new(InvocationLabel::FrameMap, &[c.space, vaddr]).write(b, slot)
                    }
                    Some(l) if l == inv(InvocationLabel::FrameMap) => {
                        let p = b.msg[0] as usize as *mut u64;
                        // SAFETY: the frame is mapped and alive, and only
                        // this pager has a capability to it: its 4096 bytes
                        // are this program's until it unmaps it.
                        unsafe {
                            assert_eq!(p.add(*done as usize % 512).read(), 0, "pager {id}: frame not zeroed");
                            p.add(*done as usize % 512).write(*done + 1);
                        }
                        Invocation::new(InvocationLabel::FrameUnmap, &[]).write(b, slot)
                    }
                    Some(l) if l == inv(InvocationLabel::FrameUnmap) => {
                        Invocation::delete(slot).write(b, CAP_INIT_CNODE)
                    }
                    _ => {
                        if !first {
                            *done += 1;
                        }
                        if *done == PAGES {
                            self.finish();
                            th.prog = Prog::Parked;
                            th.last = Some(encode::syscall(Sysno::Recv, c.park, MessageInfo::default(), 0));
                            return th.last.unwrap();
                        }
                        Invocation::retype(ObjectType::Frame, 12, slot, 1).write(b, CAP_FIRST_UNTYPED)
                    }
                }
            }
            Prog::Manager { ops, next } => {
                if !first {
                    assert_eq!(b.error, 0, "manager invocation {} failed", *next - 1);
                }
                if *next == MANAGER_ROUNDS * ops.len() {
                    self.finish();
                }
                let (cap, inv) = ops[*next % ops.len()];
                *next += 1;
                inv.write(b, cap)
            }
        };
        th.last = Some(next);
        next
    }

    /// A thread created by the manager (threads created before the cores
    /// started are registered already).
    fn started(&self, t: ThreadId, s: StartInfo) {
        let mut threads = self.threads.lock().unwrap();
        threads.entry(t).or_insert_with(|| Thread { prog: self.program(s.entry, s.arg), last: None });
    }

    fn done(&self) -> bool {
        self.done.load(Ordering::SeqCst)
    }
}

#[test]
fn lockfree_ipc_under_concurrent_management() {
    let mut cfg = config(2);
    cfg.untyped_bytes = 16 << 20;
    let mut sim = Sim::with(cfg, LockFree::new(2));
    let service = sim.obj(ObjectType::Endpoint);
    let oneway = sim.obj(ObjectType::Endpoint);
    let park = sim.obj(ObjectType::Endpoint);
    let ping = sim.obj(ObjectType::Notification);
    let pong = sim.obj(ObjectType::Notification);
    let replies = [sim.obj(ObjectType::Reply), sim.obj(ObjectType::Reply)];
    let ping_sig = sim.mint(ping, 5);
    let pong_sig = sim.mint(pong, 7);
    let victim_slot = sim.alloc_slot();
    let space = sim.obj(ObjectType::VSpace);
    let pages = [sim.alloc_slot(), sim.alloc_slot()];
    let caps = Caps { service, oneway, park, ping, pong, ping_sig, pong_sig, replies, space, pages };

    let sh = Shared {
        caps,
        threads: Mutex::new(HashMap::new()),
        logs: (0..2).map(|_| Mutex::new(Vec::new())).collect(),
        finished: AtomicUsize::new(0),
        received: AtomicUsize::new(0),
        victims: AtomicUsize::new(0),
        done: AtomicBool::new(false),
    };
    // Threads are created here but run only once the cores start (the
    // root, at top priority, keeps core 0; core 1's threads are started by
    // `spawn`'s resume and run at once: register programs first).
    let mut tcbs = HashMap::new();
    let mut spawn = |sim: &mut Sim<LockFree>, entry: Word, arg: Word, core: usize| {
        // The notification ping-pong and the one-way traffic outrank the
        // calls and the manager, so that their cross-core wake-ups interrupt
        // (instead of waiting for round-robin ticks).
        let prio = match entry {
            PINGER | PONGER => 60,
            SENDER | RECEIVER => 55,
            _ => 50,
        };
        let (cap, t) = sim.spawn_with(entry, arg, prio, core);
        sh.threads.lock().unwrap().insert(t, Thread { prog: sh.program(entry, arg), last: None });
        tcbs.insert((entry, arg), cap);
        t
    };
    for core in 0..2 {
        spawn(&mut sim, SERVER, core as Word, core);
        spawn(&mut sim, RECEIVER, core as Word, core);
    }
    for id in 0..4u64 {
        spawn(&mut sim, CLIENT, id, (id % 2) as usize);
    }
    for id in 0..2u64 {
        spawn(&mut sim, SENDER, id, id as usize);
    }
    for id in 0..2u64 {
        spawn(&mut sim, PAGER, id, id as usize);
    }
    spawn(&mut sim, PONGER, 0, 1);
    spawn(&mut sim, PINGER, 0, 0);
    let m = spawn(&mut sim, MANAGER, 0, 0);
    // The manager's cycle: suspend and resume threads of both cores, and
    // every so often run a victim on core 1 and delete it.
    let mut ops: Vec<(Word, Invocation)> = Vec::new();
    let targets = [(SERVER, 1), (RECEIVER, 1), (CLIENT, 1), (SENDER, 1), (SERVER, 0), (CLIENT, 2), (RECEIVER, 0)];
    for (i, key) in targets.iter().enumerate() {
        let cap = tcbs[key];
        ops.push((cap, Invocation::suspend()));
        ops.push((cap, Invocation::resume()));
        if i % 2 == 0 {
            let k = victim_slot;
            ops.push((CAP_FIRST_UNTYPED, Invocation::retype(ObjectType::Tcb, 0, k, 1)));
            ops.push((k, Invocation::configure(CAP_INIT_CNODE, CAP_INIT_VSPACE)));
            ops.push((k, Invocation::set_priority(50)));
            ops.push((k, Invocation::set_affinity(1)));
            ops.push((k, Invocation::start(VICTIM, VICTIM)));
            ops.push((cap, Invocation::suspend()));
            ops.push((cap, Invocation::resume()));
            ops.push((CAP_INIT_CNODE, Invocation::delete(k)));
        }
    }
    sh.threads.lock().unwrap().get_mut(&m).unwrap().prog = Prog::Manager { ops, next: 0 };
    sim.park_root();

    // Tickless idle: an idle core enters the kernel only for an IPI, so a
    // missed wake-up would hang the test (caught by the deadline).
    sim.run_threads(&sh, Stress { tick_idle: false, ..Stress::default() });
    sim.check();

    assert_eq!(sh.finished.load(Ordering::SeqCst), FINISHERS);
    assert_conserved(&sh.logs, SENDS);
    let fast = sim.k.core_stats(0).fastpath + sim.k.core_stats(1).fastpath;
    eprintln!("lock-free path calls: {fast}; victim calls answered: {}", sh.victims.load(Ordering::Relaxed));
    assert!(fast > CALLS, "the lock-free path was hardly used: {fast}");
    let pages = [0, 1].map(|c| sim.k.core_stats(c).shared_pages);
    eprintln!("frames allocated and freed on the shared path, per core: {pages:?}");
    assert!(pages.iter().all(|&n| n > 0), "no core allocated or freed a frame on the shared path: {pages:?}");
    let destroys: u64 = (0..2).map(|c| sim.k.core_stats(c).shared_destroys).sum();
    eprintln!("victims destroyed on the shared path: {destroys}");
    assert!(destroys > 0, "no victim was destroyed on the shared path");
}
