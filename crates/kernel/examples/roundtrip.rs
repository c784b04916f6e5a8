//! Kernel-only IPC round trip: a client and a server on core 0, driven
//! directly (no platform, no context switch), `Call` + `ReplyRecv` per round
//! trip. Measures the kernel's share of the seeds' ping-pong, per regime.
//!
//! `cargo run --release -p granule-kernel --example roundtrip [iterations]`

mod common;

use std::time::Instant;

use common::{call, configure, one_core, retype};
use granule_kernel::abi::*;
use granule_kernel::{Kernel, Regime, SyscallArgs, ThreadId};

/// The example's measurement.
struct Measure;

impl common::Measure for Measure {
    fn run<R: Regime>(&self, regime: R, iters: u64) -> f64 {
        let (k, boot, mut hs) = Kernel::boot(one_core(), regime).expect("boot");
        let h = &mut hs[0];
        let _ = k.ipi(h);
        let free = boot.first_free_slot;
        retype(&k, h, free, &[ObjectType::Endpoint, ObjectType::Reply, ObjectType::Tcb, ObjectType::Tcb]);
        let (ep, reply, server, client) = (free, free + 1, free + 2, free + 3);
        for t in [server, client] {
            configure(&k, h, t, 200);
        }
        let s: ThreadId = k.thread_of_cap(h, boot.root_thread, server).unwrap();
        let c: ThreadId = k.thread_of_cap(h, boot.root_thread, client).unwrap();
        call(&k, h, server, InvocationLabel::TcbResume, &[]);
        assert_eq!(k.current_thread(h, 0), Some(s));
        // Server: first receive.
        let plan = k.syscall(h, SyscallArgs::new(Sysno::Recv.word(), ep, 0, reply));
        assert_eq!(plan.run, Some(boot.root_thread));
        call(&k, h, client, InvocationLabel::TcbResume, &[]);
        assert_eq!(k.current_thread(h, 0), Some(c));
        let call_args = SyscallArgs::new(Sysno::Call.word(), ep, MessageInfo::new(1, 0, 0, 1).word(), 0);
        let rr_args = SyscallArgs::new(Sysno::ReplyRecv.word(), ep, MessageInfo::new(2, 0, 0, 1).word(), reply);
        let t0 = Instant::now();
        for _ in 0..iters {
            let p = k.syscall(h, call_args);
            debug_assert_eq!(p.run, Some(s));
            let p = k.syscall(h, rr_args);
            debug_assert_eq!(p.run, Some(c));
        }
        t0.elapsed().as_nanos() as f64 / iters as f64
    }
}

fn main() {
    common::each_regime("kernel-only round trip (Call + ReplyRecv), ns:", &Measure);
}
