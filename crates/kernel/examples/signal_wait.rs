//! Kernel-only `Signal` + `Wait` on one core: the root signals a
//! notification that a thread of higher priority waits on; the thread runs
//! at once and waits again. Both entries take the general path (the fast
//! path is for `Call` and `ReplyRecv`), as a driver's and a network stack's
//! do on every request of `granule serve`. Driven directly (no platform,
//! no context switch); for callgrind, like the `roundtrip` example.
//!
//! `cargo run --release -p granule-kernel --example signal_wait [iterations] [regime]`

mod common;

use std::time::Instant;

use common::{call, configure, one_core, retype};
use granule_kernel::abi::*;
use granule_kernel::{Kernel, Regime, SyscallArgs};

/// The example's measurement: nanoseconds per `Signal` + `Wait`.
struct Measure;

impl common::Measure for Measure {
    fn run<R: Regime>(&self, regime: R, iters: u64) -> f64 {
        let (k, boot, mut hs) = Kernel::boot(one_core(), regime).expect("boot");
        let h = &mut hs[0];
        let _ = k.ipi(h);
        let free = boot.first_free_slot;
        let (ntfn, t) = (free, free + 1);
        retype(&k, h, free, &[ObjectType::Notification, ObjectType::Tcb]);
        configure(&k, h, t, 200);
        call(&k, h, t, InvocationLabel::TcbResume, &[]);
        let waiter = k.thread_of_cap(h, boot.root_thread, t).expect("the waiter");
        assert_eq!(k.current_thread(h, 0), Some(waiter), "the waiter outranks the root");
        let wait = SyscallArgs::new(Sysno::Wait.word(), ntfn, 0, 0);
        let signal = SyscallArgs::new(Sysno::Signal.word(), ntfn, 0, 0);
        let plan = k.syscall(h, wait);
        assert_eq!(plan.run, Some(boot.root_thread), "the waiter blocks");
        let t0 = Instant::now();
        for _ in 0..iters {
            let p = k.syscall(h, signal);
            debug_assert_eq!(p.run, Some(waiter));
            let p = k.syscall(h, wait);
            debug_assert_eq!(p.run, Some(boot.root_thread));
        }
        t0.elapsed().as_nanos() as f64 / iters as f64
    }
}

fn main() {
    common::each_regime("kernel-only Signal + Wait, ns:", &Measure);
}
