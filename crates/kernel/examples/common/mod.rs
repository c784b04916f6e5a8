//! What the kernel-only examples share: the root's invocations.

use granule_kernel::abi::{InvocationLabel, MessageInfo, ObjectType, Sysno, Word, CAP_FIRST_UNTYPED, CAP_INIT_CNODE};
use granule_kernel::{BigLock, BootConfig, CoreHandle, Fine, Kernel, LockFree, NoLock, Regime, SyscallArgs};
use granule_sync::lock::{Clh, Mcs, Ticket};

/// Invoke `cptr` with `label` and `args` as the thread core 0 runs (which
/// `h` acts as), and check that it succeeded.
pub fn call(k: &Kernel<impl Regime>, h: &mut CoreHandle, cptr: Word, label: InvocationLabel, args: &[Word]) {
    let t = k.current_thread(h, 0).expect("running");
    // SAFETY: `t` is the thread core 0 runs, between kernel entries, and
    // the example's one OS thread is the only one acting as any core.
    let b = unsafe { &mut *k.ipc_buffer(t) };
    b.msg[..args.len()].copy_from_slice(args);
    let info = MessageInfo::new(label.word(), 0, 0, args.len() as Word);
    let _ = k.syscall(h, SyscallArgs::new(Sysno::Call.word(), cptr, info.word(), 0));
    // SAFETY: as above.
    assert_eq!(unsafe { &*k.ipc_buffer(t) }.result(), Ok(()), "{label:?}");
}

/// Retype one object of each of `types`, in order, from the first untyped
/// into the root's slots `first`, `first + 1`, ….
#[allow(dead_code)]
pub fn retype(k: &Kernel<impl Regime>, h: &mut CoreHandle, first: Word, types: &[ObjectType]) {
    for (i, ty) in types.iter().enumerate() {
        call(k, h, CAP_FIRST_UNTYPED, InvocationLabel::UntypedRetype, &[*ty as Word, 0, 0, first + i as Word, 1]);
    }
}

/// Give the TCB in the root's slot `t` the root's CNode and priority `prio`.
#[allow(dead_code)]
pub fn configure(k: &Kernel<impl Regime>, h: &mut CoreHandle, t: Word, prio: Word) {
    call(k, h, t, InvocationLabel::TcbConfigure, &[CAP_INIT_CNODE, 0]);
    call(k, h, t, InvocationLabel::TcbSetPriority, &[prio]);
}

/// The boot configuration of the one-core examples: one core, the root at
/// priority 100.
#[allow(dead_code)]
pub fn one_core() -> BootConfig {
    let mut cfg = BootConfig::new(1);
    cfg.root_priority = 100;
    cfg
}

/// One measurement of a one-core example ([`one_core`]), for any regime:
/// nanoseconds per iteration of `iters` iterations.
#[allow(dead_code)]
pub trait Measure {
    fn run<R: Regime>(&self, regime: R, iters: u64) -> f64;
}

/// A one-core example's `main`: `[iterations] [regime]` from the command
/// line (the second runs that regime only, for profilers), `m` under each
/// regime, one line of results after `title`. (Not every example is one
/// core's: `signal_dispatch` does not use it.)
#[allow(dead_code)]
pub fn each_regime(title: &str, m: &impl Measure) {
    let mut args = std::env::args().skip(1);
    let iters = args.next().and_then(|s| s.parse().ok()).unwrap_or(2_000_000);
    let only = args.next();
    let want = |name: &str| only.as_deref().map_or(true, |o| o == name);
    let mut line = String::from(title);
    let mut report = |name: &str, ns: f64| line.push_str(&format!("  {name} {ns:.1}"));
    if want("none") {
        // SAFETY: one core.
        report("none", m.run(unsafe { NoLock::new() }, iters));
    }
    if want("bkl") {
        report("bkl", m.run(BigLock::<Clh>::new(1), iters));
    }
    if want("bkl-ticket") {
        report("bkl-ticket", m.run(BigLock::<Ticket>::new(1), iters));
    }
    if want("bkl-mcs") {
        report("bkl-mcs", m.run(BigLock::<Mcs>::new(1), iters));
    }
    if want("fine") {
        report("fine", m.run(Fine::<granule_sync::profile::NoStats>::new(&one_core()), iters));
    }
    if want("lockfree") {
        report("lockfree", m.run(LockFree::new(1), iters));
    }
    println!("{line}");
}
