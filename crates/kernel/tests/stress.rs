//! Message conservation under real concurrency: two OS threads act as two
//! cores of a `bkl` kernel (CLH, ticket and MCS). Two senders (one per core)
//! send numbered messages through one shared endpoint to two receivers (one
//! per core). Every message must be received exactly once, and each
//! receiver must see each sender's messages in increasing order. Cores serve
//! IPIs at system call boundaries and when idle, and take timer ticks, like
//! the hosted platform; invariants are checked concurrently now and then
//! (the test platform's `Sim::run_threads`).

mod common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use common::*;
use granule_kernel::abi::*;
use granule_kernel::{BigLock, CoreHandle, Fine, FineOptions, Kernel, Regime, SyscallArgs, ThreadId, Transactional};
use granule_sync::lock::{Clh, Mcs, RawLock, Ticket};
use granule_sync::profile::{AbortCause, NoStats};
use granule_sync::rtm::{AlwaysAbort, InjectAborts, RetryPolicy};

const MESSAGES: u64 = 1500;

#[derive(Clone, Copy, Debug)]
enum Prog {
    Sender { id: u64, next: u64, ep: Word, park: Word },
    Receiver { id: usize, ep: Word, waiting: bool },
}

struct Shared {
    progs: Mutex<HashMap<ThreadId, Prog>>,
    /// Per receiver: (sender, seq) in order of reception.
    logs: Vec<Mutex<Vec<(u64, u64)>>>,
    received: AtomicUsize,
    done: AtomicBool,
}

impl<R: Regime> Threads<R> for Shared {
    /// The next system call of thread `t`, given the results of its last one.
    fn step(&self, k: &Kernel<R>, t: ThreadId) -> SyscallArgs {
        // SAFETY: `t` is the thread this core runs; only this core touches its
        // buffer until the next kernel entry.
        let b = unsafe { &mut *k.ipc_buffer(t) };
        let mut progs = self.progs.lock().unwrap();
        let p = progs.get_mut(&t).expect("program");
        let send = |ep: Word| encode::syscall(Sysno::Send, ep, msg(1, 2), 0);
        let recv = |ep: Word| encode::syscall(Sysno::Recv, ep, MessageInfo::default(), 0);
        match p {
            Prog::Sender { id, next, ep, park } => {
                if b.restart != 0 {
                    return send(*ep);
                }
                assert_eq!(b.error, 0);
                if *next == MESSAGES {
                    return recv(*park);
                }
                b.msg[0] = *id;
                b.msg[1] = *next;
                *next += 1;
                send(*ep)
            }
            Prog::Receiver { id, ep, waiting } => {
                if *waiting && b.restart == 0 {
                    assert_eq!(b.error, 0);
                    assert_eq!(b.info().length(), 2);
                    self.logs[*id].lock().unwrap().push((b.msg[0], b.msg[1]));
                    if self.received.fetch_add(1, Ordering::SeqCst) + 1 == 2 * MESSAGES as usize {
                        self.done.store(true, Ordering::SeqCst);
                    }
                }
                *waiting = true;
                recv(*ep)
            }
        }
    }

    fn done(&self) -> bool {
        self.done.load(Ordering::SeqCst)
    }
}

fn conservation<L: RawLock + 'static>() {
    conservation_under(BigLock::<L>::new(2));
}

fn conservation_under<R: Regime>(regime: R) {
    let mut sim = Sim::with(config(2), regime);
    let ep = sim.obj(ObjectType::Endpoint);
    let park = sim.obj(ObjectType::Endpoint);
    let mut progs = HashMap::new();
    for core in 0..2 {
        let (_, r) = sim.spawn(200 + core as Word, 50, core);
        progs.insert(r, Prog::Receiver { id: core, ep, waiting: false });
    }
    for core in 0..2 {
        let (_, s) = sim.spawn(100 + core as Word, 50, core);
        progs.insert(s, Prog::Sender { id: core as u64, next: 0, ep, park });
    }
    sim.park_root();
    let sh = Shared {
        progs: Mutex::new(progs),
        logs: (0..2).map(|_| Mutex::new(Vec::new())).collect(),
        received: AtomicUsize::new(0),
        done: AtomicBool::new(false),
    };
    sim.run_threads(&sh, Stress::default());
    assert_conserved(&sh.logs, MESSAGES);
}

#[test]
fn message_conservation_clh() {
    conservation::<Clh>();
}

#[test]
fn message_conservation_ticket() {
    conservation::<Ticket>();
}

#[test]
fn message_conservation_mcs() {
    conservation::<Mcs>();
}

#[test]
fn message_conservation_fine() {
    let opts = FineOptions { check_holds: true, ..FineOptions::default() };
    conservation_under(Fine::<NoStats>::with_options(&config(2), opts));
}

#[test]
fn message_conservation_fine_with_delays() {
    let opts = FineOptions { delay_max_cycles: 3000, delay_permille: 300, seed: 11, check_holds: true };
    conservation_under(Fine::<NoStats>::with_options(&config(2), opts));
}

#[test]
fn message_conservation_rtm_fallback() {
    let htm = AlwaysAbort::new(AbortCause::Conflict);
    conservation_under(Transactional::<AlwaysAbort>::with_htm(2, htm, RetryPolicy::DEFAULT));
}

#[test]
fn message_conservation_rtm() {
    match granule_sync::rtm::Rtm::new() {
        Ok(rtm) => {
            conservation_under(Transactional::<_>::with_htm(2, InjectAborts::new(rtm, 50, 3), RetryPolicy::DEFAULT))
        }
        Err(e) => eprintln!("skipped: RTM unavailable: {e}"),
    }
}

/// The `none` regime in the shape of the seeds' multicore ping-pong: one
/// independent client/server pair per core, set up while the other core stays
/// out of the kernel, then run concurrently. The pairs share the root CNode
/// and VSpace (read only). Each client checks every reply.
#[test]
fn none_regime_disjoint_pairs() {
    const ROUNDS: u64 = 20_000;
    // SAFETY: during setup only this thread enters the kernel (as core 0, and
    // as core 1 only through IPIs it delivers itself, one entry at a time);
    // afterwards each core touches only its own pair's objects and reads the
    // shared root CNode.
    let regime = unsafe { granule_kernel::NoLock::new() };
    let mut sim = Sim::with(config(2), regime);
    let mut pairs = Vec::new();
    for core in 0..2 {
        let ep = sim.obj(ObjectType::Endpoint);
        let reply = sim.obj(ObjectType::Reply);
        let (_, s) = sim.spawn(10 + core as Word, 150, core);
        assert_eq!(sim.running[core], Some(s));
        sim.sys(core, Sysno::Recv, ep, msg(0, 0), reply);
        let (_, c) = sim.spawn(20 + core as Word, 150, core);
        assert_eq!(sim.running[core], Some(c));
        pairs.push((ep, reply, s, c));
    }
    let handles: Vec<CoreHandle> = sim.cores.drain(..).collect();
    let k = &sim.k;
    std::thread::scope(|scope| {
        for (h, (ep, reply, s, c)) in handles.into_iter().zip(pairs) {
            scope.spawn(move || {
                let mut h = h;
                let call = encode::syscall(Sysno::Call, ep, msg(1, 1), 0);
                let rr = encode::syscall(Sysno::ReplyRecv, ep, msg(2, 1), reply);
                for i in 0..ROUNDS {
                    // SAFETY: `c` is this core's current thread between entries.
                    unsafe { (*k.ipc_buffer(c)).msg[0] = i };
                    assert_eq!(k.syscall(&mut h, call).run, Some(s));
                    // SAFETY: now `s` is current; it answers with i + 1.
                    unsafe {
                        let b = &mut *k.ipc_buffer(s);
                        assert_eq!(b.msg[0], i);
                        b.msg[0] = i + 1;
                    }
                    assert_eq!(k.syscall(&mut h, rr).run, Some(c));
                    // SAFETY: `c` is current again.
                    assert_eq!(unsafe { (*k.ipc_buffer(c)).msg[0] }, i + 1);
                }
                assert!(k.core_stats(h.index()).fastpath >= 2 * ROUNDS);
            });
        }
    });
}
