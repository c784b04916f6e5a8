//! Time on the hosted platform: the CPU's cycle counter, calibrated to
//! nanoseconds once per process.
//!
//! Every time the platform records (idle cycles, timer deadlines) is in
//! cycles of [`granule_sync::cycles::now`], the same counter the lock
//! profiler and the kernel use, so no conversion happens on a hot path.
//! [`tsc_hz`] measures the counter's rate against the OS's monotonic clock
//! the first time it is asked (five 20 ms windows, median), and then answers
//! from memory.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The cycle counter now.
#[inline(always)]
pub fn now() -> u64 {
    granule_sync::cycles::now()
}

/// Cycle-counter ticks per second (calibrated on first use).
pub fn tsc_hz() -> f64 {
    static HZ: OnceLock<f64> = OnceLock::new();
    *HZ.get_or_init(|| {
        let mut samples: Vec<f64> = (0..5)
            .map(|_| {
                let t0 = Instant::now();
                let c0 = now();
                while t0.elapsed() < Duration::from_millis(20) {
                    std::hint::spin_loop();
                }
                let c1 = now();
                c1.wrapping_sub(c0) as f64 / t0.elapsed().as_secs_f64()
            })
            .collect();
        samples.sort_by(f64::total_cmp);
        samples[2]
    })
}

/// Nanoseconds per cycle-counter tick.
pub fn ns_per_cycle() -> f64 {
    1e9 / tsc_hz()
}

/// Busy-wait `n` cycles (user programs' "work"; the idle loop's spin).
#[inline]
pub fn spin_cycles(n: u64) {
    if n == 0 {
        return;
    }
    let t0 = now();
    while now().wrapping_sub(t0) < n {
        std::hint::spin_loop();
    }
}
