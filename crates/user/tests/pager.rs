//! Memory faults on the hosted machine: a pager thread on one core answers
//! the faults of a worker on the other, which goes on after each answer.
//! Under the big lock and under `lockfree` (where the pager's receive and
//! reply take the worker through the lock-free words). Behaviour only.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use granule_hosted::{Machine, MachineConfig, UserCtx};
use granule_kernel::abi::{ObjectType, CAP_INIT_TCB, FAULT_MEMORY_ACCESS};
use granule_kernel::{BigLock, LockFree, MessageInfo, Regime};
use granule_sync::lock::Clh;
use granule_user::{Allocator, Env};

const PAGES: usize = 8;
const PAGE: u64 = 0x1000;

/// What the pager "mapped", and what the worker saw.
#[derive(Default)]
struct Pages {
    mapped: [AtomicBool; PAGES],
    faults: AtomicU64,
    wrong: AtomicU64,
    touched: AtomicU64,
}

fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !cond() {
        assert!(t0.elapsed() < Duration::from_secs(20), "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn run<R: Regime>(regime: R) {
    let pages = Arc::new(Pages::default());
    let mut config = MachineConfig::new(2);
    let p = pages.clone();
    // The pager: each fault message names the page; "map" it and answer 0.
    let pager = config.program(move |ctx: &mut UserCtx<'_>, arg| {
        let mut env = Env::new(ctx);
        let (ep, reply) = (arg & 0xffff, arg >> 16);
        let mut got = env.recv(ep, reply).unwrap();
        loop {
            let (label, addr, write) = (got.info.label(), env.msg()[0], env.msg()[1]);
            let page = (addr / PAGE) as usize;
            let expected_write = (page % 2) as u64;
            if label != FAULT_MEMORY_ACCESS || got.badge != 5 || page >= PAGES || write != expected_write {
                p.wrong.fetch_add(1, Ordering::SeqCst);
            } else {
                p.mapped[page].store(true, Ordering::SeqCst);
            }
            p.faults.fetch_add(1, Ordering::SeqCst);
            got = env.reply_recv(ep, MessageInfo::new(0, 0, 0, 0), reply).unwrap();
        }
    });
    // The worker touches every page, faulting on each unmapped one.
    let p = pages.clone();
    let worker = config.program(move |ctx: &mut UserCtx<'_>, park| {
        let mut env = Env::new(ctx);
        for page in 0..PAGES {
            while !p.mapped[page].load(Ordering::SeqCst) {
                env.memory_fault(page as u64 * PAGE, page % 2 == 1);
            }
            p.touched.fetch_add(1, Ordering::SeqCst);
        }
        // Nobody sends here: the worker waits for good (returning from its
        // entry would be a fault, which the pager would answer too).
        let _ = env.recv(park, 0);
    });
    let m = Machine::boot(config, regime, move |ctx, info| {
        let mut env = Env::new(ctx);
        let mut a = Allocator::from_boot(info);
        let ep = a.create(&mut env, ObjectType::Endpoint, 0).unwrap();
        let reply = a.create(&mut env, ObjectType::Reply, 0).unwrap();
        let badged = a.slot().unwrap();
        env.cnode_mint(granule_kernel::abi::CAP_INIT_CNODE, badged, 0, ep, granule_kernel::abi::CapRights::ALL, 5)
            .unwrap();
        a.thread(&mut env, pager, ep | reply << 16, 1, 120, true).unwrap();
        let park = a.create(&mut env, ObjectType::Endpoint, 0).unwrap();
        let w = a.thread(&mut env, worker, park, 0, 110, false).unwrap();
        env.tcb_set_fault_handler(w, badged).unwrap();
        env.tcb_resume(w).unwrap();
        env.tcb_suspend(CAP_INIT_TCB).unwrap();
    })
    .unwrap();
    wait_for("the worker to touch every page", || pages.touched.load(Ordering::SeqCst) == PAGES as u64);
    assert_eq!(pages.wrong.load(Ordering::SeqCst), 0);
    assert_eq!(pages.faults.load(Ordering::SeqCst), PAGES as u64, "one fault per page");
    let faults = m.shutdown().unwrap();
    // The machine records every fault it delivered to the kernel.
    assert_eq!(faults.len(), PAGES, "{faults:?}");
    assert!(faults.iter().all(|f| f.message.contains("with no mapping")), "{faults:?}");
}

#[test]
fn a_pager_on_another_core_answers_memory_faults_under_the_big_lock() {
    run(BigLock::<Clh>::new(2));
}

#[test]
fn a_pager_on_another_core_answers_memory_faults_under_lockfree() {
    run(LockFree::new(2));
}
