//! Running measurement threads pinned to distinct CPUs.

use std::sync::Barrier;

/// The CPUs this process may run on, in order.
pub fn cpus() -> Vec<core_affinity::CoreId> {
    core_affinity::get_core_ids().unwrap_or_default()
}

/// Run `f(i)` on `n` threads, thread `i` pinned to the `i`-th CPU (wrapping
/// around if there are fewer CPUs than threads), all starting together.
/// Returns the results in thread order.
pub fn run_pinned<T: Send, F: Fn(usize) -> T + Sync>(n: usize, f: F) -> Vec<T> {
    let cpus = cpus();
    let barrier = Barrier::new(n);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|i| {
                let cpu = cpus.get(i % cpus.len().max(1)).copied();
                let (f, barrier) = (&f, &barrier);
                s.spawn(move || {
                    if let Some(cpu) = cpu {
                        core_affinity::set_for_current(cpu);
                    }
                    barrier.wait();
                    f(i)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("measurement thread panicked")).collect()
    })
}
