//! Message conservation under real concurrency: two OS threads act as two
//! cores of a `bkl` kernel (CLH, ticket and MCS). Two senders (one per core)
//! send numbered messages through one shared endpoint to two receivers (one
//! per core). Every message must be received exactly once, and each
//! receiver must see each sender's messages in increasing order. Cores serve
//! IPIs at system call boundaries and when idle, and take timer ticks, like
//! the hosted platform; invariants are checked concurrently now and then.

mod common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use common::*;
use granule_kernel::abi::*;
use granule_kernel::{
    BigLock, CoreHandle, ExitPlan, Fine, FineOptions, Kernel, Regime, SyscallArgs, ThreadId, Transactional,
};
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

/// The next system call of thread `t`, given the results of its last one.
fn step<R: Regime>(k: &Kernel<R>, sh: &Shared, t: ThreadId) -> SyscallArgs {
    // SAFETY: `t` is the thread this core runs; only this core touches its
    // buffer until the next kernel entry.
    let b = unsafe { &mut *k.ipc_buffer(t) };
    let mut progs = sh.progs.lock().unwrap();
    let p = progs.get_mut(&t).expect("program");
    match p {
        Prog::Sender { id, next, ep, park } => {
            if b.restart != 0 {
                return SyscallArgs::new(Sysno::Send.word(), *ep, MessageInfo::new(1, 0, 0, 2).word(), 0);
            }
            assert_eq!(b.error, 0);
            if *next == MESSAGES {
                return SyscallArgs::new(Sysno::Recv.word(), *park, 0, 0);
            }
            b.msg[0] = *id;
            b.msg[1] = *next;
            *next += 1;
            SyscallArgs::new(Sysno::Send.word(), *ep, MessageInfo::new(1, 0, 0, 2).word(), 0)
        }
        Prog::Receiver { id, ep, waiting } => {
            if *waiting && b.restart == 0 {
                assert_eq!(b.error, 0);
                assert_eq!(b.info().length(), 2);
                sh.logs[*id].lock().unwrap().push((b.msg[0], b.msg[1]));
                if sh.received.fetch_add(1, Ordering::SeqCst) + 1 == 2 * MESSAGES as usize {
                    sh.done.store(true, Ordering::SeqCst);
                }
            }
            *waiting = true;
            SyscallArgs::new(Sysno::Recv.word(), *ep, 0, 0)
        }
    }
}

fn core_loop<R: Regime>(k: &Kernel<R>, sh: &Shared, mut h: CoreHandle, mut run: Option<ThreadId>) {
    let c = h.index();
    let mut n = 0u64;
    let perform = |plan: ExitPlan, run: &mut Option<ThreadId>| {
        // IPIs need no delivery here: the target polls `pending_ipi`.
        *run = plan.run;
    };
    while !sh.done.load(Ordering::SeqCst) {
        n += 1;
        if k.pending_ipi(c) {
            let p = k.ipi(&mut h);
            perform(p, &mut run);
            continue;
        }
        if n % 97 == 0 {
            let p = k.timer_tick(&mut h);
            perform(p, &mut run);
            continue;
        }
        if n % 1013 == 0 {
            if let Err(e) = k.check_invariants(&mut h) {
                sh.done.store(true, Ordering::SeqCst);
                panic!("{e}");
            }
        }
        match run {
            Some(t) => {
                let args = step(k, sh, t);
                let p = k.syscall(&mut h, args);
                perform(p, &mut run);
            }
            None => std::hint::spin_loop(),
        }
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
    let running = sim.running.clone();
    let handles: Vec<CoreHandle> = sim.cores.drain(..).collect();
    let k = &sim.k;
    std::thread::scope(|scope| {
        for (h, run) in handles.into_iter().zip(running) {
            let sh = &sh;
            scope.spawn(move || core_loop(k, sh, h, run));
        }
    });
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
    conservation_under(Fine::<NoStats>::new(&config(2)));
}

#[test]
fn message_conservation_fine_with_delays() {
    let opts = FineOptions { delay_max_cycles: 3000, delay_permille: 300, seed: 11 };
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
                let call = SyscallArgs::new(Sysno::Call.word(), ep, MessageInfo::new(1, 0, 0, 1).word(), 0);
                let rr = SyscallArgs::new(Sysno::ReplyRecv.word(), ep, MessageInfo::new(2, 0, 0, 1).word(), reply);
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
