//! Ping-pong on the hosted machine: every reply verified, on one core and on
//! two, under `none` and `bkl`. Behaviour only: counts, never timings.

use std::sync::Arc;
use std::time::{Duration, Instant};

use granule_hosted::MachineConfig;
use granule_kernel::{BigLock, NoLock, Regime};
use granule_user::hosted::{boot, PingPongMachine};
use granule_user::pingpong::PingPong;

fn config(cores: usize) -> MachineConfig {
    let mut c = MachineConfig::new(cores);
    c.hold_secondary_cores = true;
    c
}

/// Run until every pair made `target` round trips (or 20 s pass).
fn run_until<R: Regime>(m: PingPongMachine<R>, target: u64) -> (Vec<u64>, u64) {
    m.wait_running(Duration::from_secs(10)).expect("pairs running");
    let t0 = Instant::now();
    while m.pp.round_trips().iter().any(|&n| n < target) && t0.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(2));
    }
    let counts = m.pp.round_trips();
    let bad = m.pp.bad_replies();
    let faults = m.shutdown().expect("clean shutdown");
    assert!(faults.is_empty(), "faults: {faults:?}");
    (counts, bad)
}

#[test]
fn one_core_none_every_reply_verified() {
    let pp = Arc::new(PingPong::per_core(1, 0.0, 8));
    // SAFETY: one pair on one core: no two cores are ever in the kernel.
    let m = boot(config(1), unsafe { NoLock::new() }, pp).unwrap();
    let (counts, bad) = run_until(m, 20_000);
    assert!(counts[0] >= 20_000, "{counts:?}");
    assert_eq!(bad, 0);
}

#[test]
fn one_core_bkl_every_reply_verified_with_a_delay() {
    let pp = Arc::new(PingPong::per_core(1, 500.0, 64));
    let m = boot(config(1), BigLock::<granule_sync::lock::Clh>::new(1), pp).unwrap();
    let (counts, bad) = run_until(m, 5_000);
    assert!(counts[0] >= 5_000, "{counts:?}");
    assert_eq!(bad, 0);
}

#[test]
fn two_cores_none_pairs_run_independently() {
    let pp = Arc::new(PingPong::per_core(2, 0.0, 4));
    // SAFETY: one pair per core with disjoint objects, built while core 1 is
    // held out of the kernel (`hold_secondary_cores`).
    let m = boot(config(2), unsafe { NoLock::new() }, pp).unwrap();
    let (counts, bad) = run_until(m, 20_000);
    assert!(counts.iter().all(|&n| n >= 20_000), "{counts:?}");
    assert_eq!(bad, 0);
}

#[test]
fn two_cores_bkl_pairs_share_the_lock_and_stay_correct() {
    for ticket in [false, true] {
        let pp = Arc::new(PingPong::per_core(2, 0.0, 4));
        let (counts, bad) = if ticket {
            run_until(boot(config(2), BigLock::<granule_sync::lock::Ticket>::new(2), pp).unwrap(), 20_000)
        } else {
            run_until(boot(config(2), BigLock::<granule_sync::lock::Mcs>::new(2), pp).unwrap(), 20_000)
        };
        assert!(counts.iter().all(|&n| n >= 20_000), "{counts:?}");
        assert_eq!(bad, 0);
    }
}
