//! The hosted machine boots, runs its root task, turns a user panic into a
//! fault, and shuts down within its bound. Behaviour only, never timings.
//! (Programs with real IPC are tested in `granule-user`, which has the safe
//! system-call API; here the root task traps with raw words.)

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use granule_hosted::{Machine, MachineConfig, UserCtx};
use granule_kernel::abi::{Error, InvocationLabel, Sysno, CAP_INIT_TCB};
use granule_kernel::{BigLock, FaultKind, MessageInfo, SyscallArgs};

fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !cond() {
        assert!(t0.elapsed() < Duration::from_secs(10), "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn suspend_self(ctx: &mut UserCtx<'_>) {
    let info = MessageInfo::new(InvocationLabel::TcbSuspend.word(), 0, 0, 0);
    ctx.syscall(SyscallArgs::new(Sysno::Call.word(), CAP_INIT_TCB, info.word(), 0));
}

#[test]
fn boots_runs_the_root_task_and_shuts_down() {
    for cores in [1, 2] {
        let progress = Arc::new(AtomicU64::new(0));
        let p = progress.clone();
        let m = Machine::boot(
            MachineConfig::new(cores),
            BigLock::<granule_sync::lock::Clh>::new(cores),
            move |ctx, info| {
                assert_eq!(info.cores, cores);
                ctx.syscall(SyscallArgs::new(Sysno::Yield.word(), 0, 0, 0));
                assert_eq!(ctx.ipc_buffer().result(), Ok(()));
                p.store(1, Ordering::SeqCst);
                // A receive on the null capability is an error, not a crash.
                ctx.syscall(SyscallArgs::new(Sysno::Recv.word(), 0, 0, 0));
                assert_eq!(ctx.ipc_buffer().result(), Err(Error::InvalidCapability));
                // Garbage words are answered with an error too.
                ctx.syscall(SyscallArgs::new(0xdead_beef, u64::MAX, u64::MAX, u64::MAX));
                assert!(ctx.ipc_buffer().result().is_err());
                p.store(2, Ordering::SeqCst);
                suspend_self(ctx);
                p.store(3, Ordering::SeqCst);
            },
        )
        .unwrap();
        wait_for("the root task", || progress.load(Ordering::SeqCst) == 2);
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(progress.load(Ordering::SeqCst), 2, "the root task stays suspended");
        let faults = m.shutdown().expect("every core stops");
        assert!(faults.is_empty(), "{faults:?}");
    }
}

#[test]
fn an_idle_machine_parks_its_cores_and_still_shuts_down_promptly() {
    let mut config = MachineConfig::new(2);
    config.tick = None;
    let m = Machine::boot(config, BigLock::<granule_sync::lock::Ticket>::new(2), |ctx, _| suspend_self(ctx)).unwrap();
    wait_for("both cores to park", || m.parks(0) > 0 && m.parks(1) > 0);
    assert!(m.idle_cycles(1) > 0);
    let t0 = Instant::now();
    m.shutdown().expect("parked cores wake up for shutdown");
    assert!(t0.elapsed() < Duration::from_secs(5));
}

#[test]
fn a_panicking_root_task_is_a_fault_not_a_crash() {
    let m = Machine::boot(MachineConfig::new(1), BigLock::<granule_sync::lock::Clh>::new(1), |ctx, _| {
        ctx.syscall(SyscallArgs::new(Sysno::Yield.word(), 0, 0, 0));
        panic!("root task gives up");
    })
    .unwrap();
    wait_for("the fault", || !m.faults().is_empty());
    let faults = m.shutdown().expect("clean shutdown after a fault");
    assert_eq!(faults.len(), 1);
    assert_eq!(faults[0].kind, FaultKind::UserPanic);
    assert!(faults[0].message.contains("root task gives up"), "{}", faults[0].message);
}

#[test]
fn a_held_secondary_core_waits_for_the_root_task() {
    let mut config = MachineConfig::new(2);
    config.hold_secondary_cores = true;
    let m = Machine::boot(config, BigLock::<granule_sync::lock::Clh>::new(2), |ctx, _| {
        ctx.release_secondary_cores();
        suspend_self(ctx);
    })
    .unwrap();
    wait_for("core 1 to run its idle loop", || m.parks(1) > 0);
    m.shutdown().unwrap();
}
