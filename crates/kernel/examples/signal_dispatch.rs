//! Kernel-only cross-core signal: a thread of core 1 waits on a
//! notification, the root on core 0 signals it (the requester's part) and
//! core 1's IPI entry runs the woken thread (the dispatcher's part). Driven
//! directly by one OS thread acting as both cores (no platform, no context
//! switch), as `granule synthesis` drives its rows; for profilers.
//!
//! `cargo run --release -p granule-kernel --example signal_dispatch [iterations] [regime]`

mod common;

use std::time::Instant;

use common::{call, configure, retype};
use granule_kernel::abi::*;
use granule_kernel::{BigLock, BootConfig, Fine, Kernel, LockFree, NoLock, Regime, SyscallArgs};
use granule_sync::lock::Clh;

fn config() -> BootConfig {
    let mut cfg = BootConfig::new(2);
    cfg.root_priority = 200;
    cfg
}

/// Nanoseconds per (signal + IPI entry), and per IPI entry alone.
fn run<R: Regime>(regime: R, iters: u64) -> (f64, f64) {
    let (k, boot, mut hs) = Kernel::boot(config(), regime).expect("boot");
    for h in hs.iter_mut() {
        let _ = k.ipi(h);
    }
    let free = boot.first_free_slot;
    let (ntfn, t) = (free, free + 1);
    retype(&k, &mut hs[0], free, &[ObjectType::Notification, ObjectType::Tcb]);
    configure(&k, &mut hs[0], t, 100);
    call(&k, &mut hs[0], t, InvocationLabel::TcbSetAffinity, &[1]);
    call(&k, &mut hs[0], t, InvocationLabel::TcbResume, &[]);
    let _ = k.ipi(&mut hs[1]);
    assert!(k.current_thread(&mut hs[1], 1).is_some(), "the thread runs on core 1");
    let wait = SyscallArgs::new(Sysno::Wait.word(), ntfn, 0, 0);
    let signal = SyscallArgs::new(Sysno::Signal.word(), ntfn, 0, 0);
    let (mut ipi_ns, t0) = (0u128, Instant::now());
    for _ in 0..iters {
        let _ = k.syscall(&mut hs[1], wait);
        let _ = k.syscall(&mut hs[0], signal);
        let t1 = Instant::now();
        let _ = k.ipi(&mut hs[1]);
        ipi_ns += t1.elapsed().as_nanos();
    }
    (t0.elapsed().as_nanos() as f64 / iters as f64, ipi_ns as f64 / iters as f64)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let iters = args.next().and_then(|s| s.parse().ok()).unwrap_or(2_000_000);
    let only = args.next();
    let want = |name: &str| only.as_deref().map_or(true, |o| o == name);
    let mut line = String::from("wait + signal + IPI entry, ns (IPI entry alone):");
    let mut report = |name: &str, (all, ipi): (f64, f64)| line.push_str(&format!("  {name} {all:.1} ({ipi:.1})"));
    if want("none") {
        // SAFETY: one OS thread acts as both cores, one entry at a time.
        report("none", run(unsafe { NoLock::new() }, iters));
    }
    if want("bkl") {
        report("bkl", run(BigLock::<Clh>::new(2), iters));
    }
    if want("fine") {
        report("fine", run(Fine::<granule_sync::profile::NoStats>::new(&config()), iters));
    }
    if want("lockfree") {
        report("lockfree", run(LockFree::new(2), iters));
    }
    println!("{line}");
}
