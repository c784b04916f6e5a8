//! Running measurement threads pinned to distinct CPUs, taken in the
//! topology's fill order (see `crate::topology`).

use std::sync::Barrier;

use crate::topology::Topology;

/// The CPUs this process may run on, in fill order: one last-level-cache
/// domain, then one socket, at a time, SMT siblings last.
pub fn cpus() -> Vec<core_affinity::CoreId> {
    Topology::detect().fill_order.iter().map(|&id| core_affinity::CoreId { id }).collect()
}

/// Make the hosted machines place their cores in the same fill order as
/// [`run_pinned`] (call once, before any machine boots).
pub fn place_kernel_cores() {
    granule_hosted::placement::set_cpu_order(&Topology::detect().fill_order);
}

/// Run `f(i)` on `n` threads, thread `i` pinned to the `i`-th CPU of the
/// fill order (wrapping
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
