//! Boot, the root thread, and the platform-facing entry points.

use crate::common::*;
use granule_kernel::abi::*;
use granule_kernel::{BootConfig, BootError, Kernel, Regime, ThreadStatus};

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
        // The regime is sized for a good configuration; boot checks the bad one.
        Kernel::boot(c, regime(&config(2))).err()
    };
    assert_eq!(bad(&|c| c.cores = 0), Some(BootError::Cores));
    assert_eq!(bad(&|c| c.cores = 65), Some(BootError::Cores));
    assert_eq!(bad(&|c| c.root_cnode_bits = 3), Some(BootError::RootCNode));
    assert_eq!(bad(&|c| c.max_threads = 0), Some(BootError::Capacity));
    assert_eq!(bad(&|c| c.untyped_count = 0), Some(BootError::Untyped));
    assert_eq!(bad(&|c| c.timeslice_ticks = 0), Some(BootError::Timeslice));
    assert_eq!(bad(&|_| {}), None);
    // A regime built for fewer cores than the configuration boots is
    // refused (`none` has no per-core state and serves any number).
    let small = regime(&config(2));
    let expect = (small.cores() < 3).then_some(BootError::RegimeCores);
    assert_eq!(Kernel::boot(config(3), small).err(), expect);
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
    for sysno in [0, 14, u64::MAX] {
        s.raw(0, granule_kernel::SyscallArgs::new(sysno, 0, 0, 0));
        assert_eq!(s.buf(root).result(), Err(Error::IllegalOperation));
    }
    for cptr in [0, 255, 256, u64::MAX] {
        s.sys(0, Sysno::Send, cptr, msg(0, 0), 0);
        assert_eq!(s.buf(root).result(), Err(Error::InvalidCapability), "cptr {cptr}");
    }
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

/// The target boots the regime its name promises (a misspelt target would
/// silently run the big lock again).
#[test]
fn the_target_boots_its_regime() {
    let want = match WHICH {
        Which::Bkl => "bkl",
        Which::Ticket => "bkl-ticket",
        Which::Mcs => "bkl-mcs",
        Which::Fine => "fine",
        Which::LockFree => "lockfree",
        Which::Rtm | Which::RtmFallback => "rtm",
        Which::None => "none",
    };
    assert_eq!(<Under as granule_kernel::Regime>::NAME, want);
    let name = env!("CARGO_CRATE_NAME");
    assert!(name.starts_with("under_"), "the suites run in the under_<regime> targets, not {name}");
}
