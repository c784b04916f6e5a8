//! Boot, the root thread, and the platform-facing entry points.

mod common;

use common::*;
use granule_kernel::abi::*;
use granule_kernel::{BigLock, BootConfig, BootError, Kernel, NoLock, ThreadStatus};

#[test]
fn root_thread_starts_fresh_on_core_0() {
    let s = Sim::new(2);
    assert_eq!(s.running, vec![Some(s.root), None]);
    assert_eq!(s.started.len(), 1);
    let (t, info) = s.started[0];
    assert_eq!(t, s.root);
    assert_eq!((info.entry, info.arg), (0, 0));
    assert_eq!(s.boot.untyped, vec![(CAP_FIRST_UNTYPED, 64 << 20)]);
    assert_eq!(s.boot.first_free_slot, CAP_FIRST_UNTYPED + 1);
    assert_eq!(s.boot.slots, 256);
    assert_eq!(s.boot.device_irq_base, 2);
}

#[test]
fn boot_rejects_bad_configs() {
    let bad = |f: &dyn Fn(&mut BootConfig)| {
        let mut c = config(2);
        f(&mut c);
        Kernel::boot(c, BigLock::<granule_sync::lock::Clh>::new(2)).err()
    };
    assert_eq!(bad(&|c| c.cores = 0), Some(BootError::Cores));
    assert_eq!(bad(&|c| c.cores = 65), Some(BootError::Cores));
    assert_eq!(bad(&|c| c.root_cnode_bits = 3), Some(BootError::RootCNode));
    assert_eq!(bad(&|c| c.max_threads = 0), Some(BootError::Capacity));
    assert_eq!(bad(&|c| c.untyped_count = 0), Some(BootError::Untyped));
    assert_eq!(bad(&|c| c.timeslice_ticks = 0), Some(BootError::Timeslice));
    assert_eq!(bad(&|_| {}), None);
}

#[test]
fn root_capabilities() {
    let mut s = Sim::new(1);
    // The root TCB cap names the root thread.
    assert_eq!(s.k.thread_of_cap(&mut s.cores[0], s.root, CAP_INIT_TCB), Some(s.root));
    // Reading the root's registers.
    let r = s.invoke(0, CAP_INIT_TCB, InvocationLabel::TcbReadRegisters, &[NUM_REGS as Word]).unwrap();
    assert_eq!(r, vec![0; NUM_REGS]);
    assert_eq!(s.status(s.root), ThreadStatus::Current);
    assert_eq!(s.k.current_thread(&mut s.cores[0], 0), Some(s.root));
    assert_eq!(s.k.core_stats(0).syscalls, 1);
}

#[test]
fn unknown_syscall_and_bad_cptrs() {
    let mut s = Sim::new(1);
    let root = s.root;
    for sysno in [0, 12, u64::MAX] {
        s.raw(0, granule_kernel::SyscallArgs::new(sysno, 0, 0, 0));
        assert_eq!(s.buf(root).result(), Err(Error::IllegalOperation));
    }
    for cptr in [0, 255, 256, u64::MAX] {
        s.sys(0, Sysno::Send, cptr, msg(0, 0), 0);
        assert_eq!(s.buf(root).result(), Err(Error::InvalidCapability), "cptr {cptr}");
    }
}

#[test]
fn none_regime_single_core() {
    // SAFETY: one core, so no two cores can touch the same object.
    let regime = unsafe { NoLock::new() };
    let mut s = Sim::with(config(1), regime);
    let ep = s.obj(ObjectType::Endpoint);
    s.sys(0, Sysno::NBSend, ep, msg(1, 0), 0);
    assert_eq!(s.buf(s.root).result(), Ok(()));
}

#[test]
fn idle_accounting() {
    let s = Sim::new(2);
    s.k.add_idle_cycles(&s.cores[1], 100);
    s.k.add_idle_cycles(&s.cores[1], 23);
    assert_eq!(s.k.idle_cycles(1), 123);
    assert_eq!(s.k.core_stats(1).idle_cycles, 123);
    assert_eq!(s.k.idle_cycles(7), 0);
    assert!(!s.k.pending_ipi(1));
    assert!(!s.k.pending_ipi(99));
}
