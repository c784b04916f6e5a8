//! The machine's physical limits, measured: what one atomic instruction costs
//! when nobody else wants the line ([`atomic_costs`]), and how long a cache
//! line takes to travel from one core to another ([`core_latency`]).
//!
//! Every lock acquisition is at least one atomic read-modify-write, and every
//! contended hand-off at least one cache-line transfer, so these two numbers
//! are the floor under every lock measurement granule makes: an uncontended
//! TTAS acquire/release cannot beat one `xchg`, and a FIFO lock's hand-off
//! cannot beat one core-to-core transfer.
//!
//! Times are in cycles of [`granule_sync::cycles::now`] (the TSC, ticking at
//! a constant rate, which is what the seed papers call cycles too); the
//! caller converts to nanoseconds with the calibrated TSC frequency.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use granule_hosted::granule_kernel::RmwCounts;
use granule_sync::cycles;

use crate::stats;

/// Instructions per timed loop iteration (the loop overhead is then 1/64 of
/// a `dec`/`jnz` per instruction, and is subtracted anyway).
pub const UNROLL: u64 = 64;

/// Loop iterations per timed run: 131 072 instructions, about a millisecond
/// at 20 cycles each.
const ITERS: u64 = 2048;

/// The uncontended cost of one instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct AtomicCost {
    /// The instruction, as it would be written in assembly.
    pub instruction: &'static str,
    /// Median cycles per instruction, or why it could not be measured here.
    pub cycles: Result<f64, String>,
    /// Anything worth knowing about the measurement (e.g. aborted
    /// transactions); empty otherwise.
    pub note: String,
}

/// What `rmw` and `transactions`, executed over `per` operations, cost per
/// operation from the measured instruction costs `costs` (cycles); `None`
/// if a needed cost is unavailable here.
pub fn atomics_floor(rmw: &RmwCounts, transactions: u64, per: f64, costs: &[AtomicCost]) -> Option<f64> {
    let cost = |name: &str| costs.iter().find(|c| c.instruction == name).and_then(|c| c.cycles.clone().ok());
    let mut sum = 0.0;
    for (n, name) in [
        (rmw.xchg, "xchg"),
        (rmw.xadd, "lock xadd"),
        (rmw.cmpxchg, "lock cmpxchg"),
        (rmw.cmpxchg16b, "lock cmpxchg16b"),
        (transactions, "xbegin; xend"),
    ] {
        if n > 0 {
            sum += n as f64 / per * cost(name)?;
        }
    }
    Some(sum)
}

/// The uncontended cost of `xchg` on this machine (every lock's floor),
/// measured on a pinned thread; `None` where it cannot be measured. At least
/// 15 samples: the floor every ratio is taken against must not be one noisy
/// run.
pub fn xchg_cycles(samples: usize) -> Option<f64> {
    pinned_atomic_costs(samples).into_iter().find(|c| c.instruction == "xchg").and_then(|c| c.cycles.ok())
}

/// [`atomic_costs`] on a pinned thread, with at least 15 samples.
pub fn pinned_atomic_costs(samples: usize) -> Vec<AtomicCost> {
    crate::pin::run_pinned(1, |_| atomic_costs(samples.max(15))).into_iter().flatten().collect()
}

/// The uncontended cost in cycles of `xchg`, `lock xadd`, `lock cmpxchg`,
/// `lock cmpxchg16b`, and of an empty `xbegin; xend` transaction (only where
/// RTM works; otherwise reported unavailable with the reason).
///
/// Each instruction runs back to back on one local, cache-line-aligned
/// variable ([`UNROLL`] copies per loop iteration); a run's time minus the
/// time of the same loop with no body, divided by the instruction count, is
/// one sample, and the median of `samples` runs (after one warm-up run) is
/// reported. Every instruction here is a full barrier, so back-to-back
/// throughput is also latency. Run it on a pinned thread: a migration in the
/// middle of a run shows up as an outlier.
pub fn atomic_costs(samples: usize) -> Vec<AtomicCost> {
    let samples = samples.max(1);
    #[cfg(target_arch = "x86_64")]
    {
        x86::atomic_costs(samples)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = samples;
        ["xchg", "lock xadd", "lock cmpxchg", "lock cmpxchg16b", "xbegin; xend"]
            .into_iter()
            .map(|instruction| AtomicCost {
                instruction,
                cycles: Err("unavailable: not an x86-64 CPU".into()),
                note: String::new(),
            })
            .collect()
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::asm;

    use granule_sync::rtm::{Htm, Rtm};

    use super::{cycles, stats, AtomicCost, ITERS, UNROLL};

    /// One cache line, 64-byte aligned (so also 16-byte aligned, as
    /// `cmpxchg16b` requires).
    #[repr(C, align(64))]
    struct Line([u64; 8]);

    /// A timed loop: `iters` iterations of [`UNROLL`] instructions on `*p`.
    ///
    /// Safety contract of every kernel: `p` is valid for reads and writes of
    /// 16 bytes, 16-byte aligned, and not accessed by any other thread; the
    /// instruction the kernel runs is supported by this CPU.
    type Kernel = unsafe fn(*mut u64, u64);

    /// The loop alone: the overhead subtracted from every other kernel.
    unsafe fn empty(_p: *mut u64, iters: u64) {
        // SAFETY: touches only the counter register.
        unsafe { asm!("2:", "dec {n}", "jnz 2b", n = inout(reg) iters => _, options(nostack, nomem)) }
    }

    unsafe fn xchg(p: *mut u64, iters: u64) {
        // SAFETY: `p` is valid, aligned and private (kernel contract);
        // `xchg` exists on every x86-64 CPU.
        unsafe {
            asm!(
                "2:",
                ".rept 64",
                "xchg qword ptr [{p}], {v}",
                ".endr",
                "dec {n}",
                "jnz 2b",
                p = in(reg) p,
                v = inout(reg) 0u64 => _,
                n = inout(reg) iters => _,
                options(nostack),
            )
        }
    }

    unsafe fn lock_xadd(p: *mut u64, iters: u64) {
        // SAFETY: as for `xchg`.
        unsafe {
            asm!(
                "2:",
                ".rept 64",
                "lock xadd qword ptr [{p}], {v}",
                ".endr",
                "dec {n}",
                "jnz 2b",
                p = in(reg) p,
                v = inout(reg) 1u64 => _,
                n = inout(reg) iters => _,
                options(nostack),
            )
        }
    }

    /// A successful compare-and-swap every time: memory, RAX and the new
    /// value are all 0.
    unsafe fn lock_cmpxchg(p: *mut u64, iters: u64) {
        // SAFETY: as for `xchg`; `*p` is 0 (set by the caller), so every
        // `cmpxchg` succeeds and leaves RAX at 0.
        unsafe {
            asm!(
                "2:",
                ".rept 64",
                "lock cmpxchg qword ptr [{p}], {new}",
                ".endr",
                "dec {n}",
                "jnz 2b",
                p = in(reg) p,
                new = in(reg) 0u64,
                n = inout(reg) iters => _,
                inout("rax") 0u64 => _,
                options(nostack),
            )
        }
    }

    /// A successful double-width compare-and-swap every time (all zeros).
    /// RBX is reserved by LLVM, yet the register allocator may still hand it
    /// out for a `reg` operand, so every operand here names its register and
    /// RBX is saved in R8 and restored around the loop.
    unsafe fn lock_cmpxchg16b(p: *mut u64, iters: u64) {
        // SAFETY: `p` is valid for 16 bytes, 16-byte aligned and private
        // (kernel contract); the caller checked `cmpxchg16b` is supported.
        // RBX is restored before the block ends, and no operand lives in it
        // (all are explicit registers).
        unsafe {
            asm!(
                "mov r8, rbx",
                "xor ebx, ebx",
                "2:",
                ".rept 64",
                "lock cmpxchg16b xmmword ptr [rsi]",
                ".endr",
                "dec rdi",
                "jnz 2b",
                "mov rbx, r8",
                in("rsi") p,
                inout("rdi") iters => _,
                out("r8") _,
                inout("rax") 0u64 => _,
                inout("rdx") 0u64 => _,
                in("rcx") 0u64,
                options(nostack),
            )
        }
    }

    /// Empty transactions. An aborted one resumes at its `3:` and the loop
    /// goes on, so the time includes aborts; [`abort_rate`] reports them.
    ///
    /// Extra safety contract: RTM must be available.
    unsafe fn xbegin_xend(_p: *mut u64, iters: u64) {
        // SAFETY: RTM is available (contract: the caller holds an `Rtm`).
        // Each `xbegin` either starts a transaction that the next `xend`
        // commits, or aborts to the following `3:` with every register but
        // EAX (declared clobbered) restored; either way the loop continues.
        unsafe {
            asm!(
                "2:",
                ".rept 64",
                "xbegin 3f",
                "xend",
                "3:",
                ".endr",
                "dec {n}",
                "jnz 2b",
                n = inout(reg) iters => _,
                out("eax") _,
                options(nostack),
            )
        }
    }

    /// Fraction of 1000 empty transactions that abort.
    fn abort_rate(rtm: &Rtm) -> f64 {
        let aborted = (0..1000)
            .filter(|_| match rtm.begin() {
                Ok(()) => {
                    // SAFETY: `begin` returned Ok: we are inside a transaction.
                    unsafe { rtm.end() };
                    false
                }
                Err(_) => true,
            })
            .count();
        aborted as f64 / 1000.0
    }

    /// Cycles of one run of `k` over `ITERS` iterations.
    ///
    /// # Safety
    /// `k`'s instruction must be supported by this CPU.
    unsafe fn run(k: Kernel, line: &mut Line) -> u64 {
        line.0 = [0; 8];
        let p = line.0.as_mut_ptr();
        let t0 = cycles::now_fenced();
        // SAFETY: `p` points into `line`: 64 valid bytes, 64-byte aligned,
        // borrowed mutably here so no one else accesses it; the instruction
        // is supported (this function's contract).
        unsafe { k(p, ITERS) };
        cycles::now_fenced().saturating_sub(t0)
    }

    /// Median cycles per instruction of `k` over `samples` runs.
    ///
    /// # Safety
    /// As [`run`].
    unsafe fn measure(k: Kernel, samples: usize) -> f64 {
        let mut line = Line([0; 8]);
        // SAFETY: `empty` runs no special instruction; `k` is supported (our
        // contract). One warm-up run of each first.
        let per_op: Vec<f64> = unsafe {
            run(empty, &mut line);
            run(k, &mut line);
            (0..samples)
                .map(|_| {
                    let base = run(empty, &mut line);
                    let t = run(k, &mut line);
                    t.saturating_sub(base) as f64 / (ITERS * UNROLL) as f64
                })
                .collect()
        };
        let m = stats::summarize(&per_op).median;
        (m * 100.0).round() / 100.0
    }

    pub(super) fn atomic_costs(samples: usize) -> Vec<AtomicCost> {
        let ok = |instruction, cycles| AtomicCost { instruction, cycles: Ok(cycles), note: String::new() };
        // SAFETY: `xchg`, `lock xadd` and `lock cmpxchg` exist on every
        // x86-64 CPU.
        let basic = unsafe { [measure(xchg, samples), measure(lock_xadd, samples), measure(lock_cmpxchg, samples)] };
        let mut out: Vec<AtomicCost> =
            ["xchg", "lock xadd", "lock cmpxchg"].into_iter().zip(basic).map(|(i, c)| ok(i, c)).collect();
        out.push(if std::arch::is_x86_feature_detected!("cmpxchg16b") {
            // SAFETY: the CPU supports `cmpxchg16b` (checked).
            ok("lock cmpxchg16b", unsafe { measure(lock_cmpxchg16b, samples) })
        } else {
            AtomicCost {
                instruction: "lock cmpxchg16b",
                cycles: Err("unavailable: CPUID does not report CMPXCHG16B".into()),
                note: String::new(),
            }
        });
        out.push(match Rtm::new() {
            Ok(rtm) => {
                // SAFETY: an `Rtm` value exists, so RTM is available.
                let c = unsafe { measure(xbegin_xend, samples) };
                let rate = abort_rate(&rtm);
                let note = if rate > 0.0 {
                    format!("{:.1}% of empty transactions aborted", rate * 100.0)
                } else {
                    String::new()
                };
                AtomicCost { instruction: "xbegin; xend", cycles: Ok(c), note }
            }
            Err(e) => {
                AtomicCost { instruction: "xbegin; xend", cycles: Err(e.support().to_string()), note: String::new() }
            }
        });
        out
    }
}

/// One-way cache-line latency from CPU `from` to CPU `to`.
#[derive(Clone, Debug, PartialEq)]
pub struct CoreLatency {
    /// OS id of the CPU that starts each round trip.
    pub from: usize,
    /// OS id of the CPU that answers.
    pub to: usize,
    /// Median over samples of (round-trip time / 2), in cycles.
    pub one_way_cycles: f64,
    /// Smallest sample, in cycles.
    pub min_cycles: f64,
    /// Samples taken.
    pub samples: usize,
}

/// How a latency measurement is bounded.
#[derive(Clone, Copy, Debug)]
pub struct LatencyConfig {
    /// Timed samples per ordered pair (the median is reported).
    pub samples: usize,
    /// Round trips per sample.
    pub round_trips: u64,
    /// Give up on a pair after this long (e.g. a CPU is never scheduled).
    pub pair_budget: Duration,
}

impl Default for LatencyConfig {
    fn default() -> Self {
        Self { samples: 15, round_trips: 1000, pair_budget: Duration::from_secs(2) }
    }
}

/// A 64-bit word alone in a 128-byte block (two lines: the adjacent-line
/// prefetcher then has nothing else of ours to drag along).
#[repr(align(128))]
struct PingLine(AtomicU64);

/// The responder's "stop" value (odd, and never reached by counting).
const STOP: u64 = u64::MAX;

/// One-way core-to-core latency for every ordered pair of `cpus`.
///
/// Two threads, pinned to `from` and `to`, pass a counter back and forth on
/// one cache line: `from` writes an odd value and spins until `to` has
/// written the next even one. Each write must travel to the other core's
/// cache, so a round trip is two transfers; one-way = round trip / 2. The
/// median of `samples` samples of `round_trips` round trips is reported.
/// Each pair is bounded by `pair_budget`; a pair that runs out of time (a
/// CPU never scheduled) is left out. With fewer than two CPUs there are no
/// pairs and the result is empty. `progress` is called after each pair.
pub fn core_latency(
    cpus: &[core_affinity::CoreId],
    cfg: &LatencyConfig,
    mut progress: impl FnMut(),
) -> Vec<CoreLatency> {
    let mut out = Vec::new();
    for &a in cpus {
        for &b in cpus {
            if a.id == b.id {
                continue;
            }
            if let Some(l) = pair_latency(a, b, cfg) {
                out.push(l);
            }
            progress();
        }
    }
    out
}

/// Spin until `line` holds `want`; `false` if `deadline` passed first.
fn wait_for(line: &AtomicU64, want: u64, deadline: Instant) -> bool {
    let mut spins = 0u32;
    // Plain loads, no PAUSE: a PAUSE in flight when the line arrives would
    // add its own latency (up to ~140 cycles on recent Xeons) to the figure.
    while line.load(Ordering::Acquire) != want {
        spins = spins.wrapping_add(1);
        if spins % 4096 == 0 && Instant::now() > deadline {
            return false;
        }
    }
    true
}

fn pair_latency(from: core_affinity::CoreId, to: core_affinity::CoreId, cfg: &LatencyConfig) -> Option<CoreLatency> {
    let line = PingLine(AtomicU64::new(0));
    let start = Barrier::new(2);
    let deadline = Instant::now() + cfg.pair_budget;
    let samples = cfg.samples.max(1);
    let trips = cfg.round_trips.max(1);
    let per_sample: Option<Vec<f64>> = std::thread::scope(|s| {
        let (line, start) = (&line.0, &start);
        s.spawn(move || {
            core_affinity::set_for_current(to);
            start.wait();
            // Answer every odd value v with v + 1 until told to stop (or the
            // budget, plus a margin, runs out: the initiator always says stop,
            // so this is only a backstop).
            let backstop = deadline + Duration::from_secs(1);
            let mut next = 1u64;
            let mut spins = 0u32;
            loop {
                let v = line.load(Ordering::Acquire);
                if v == STOP {
                    break;
                }
                if v == next {
                    line.store(v + 1, Ordering::Release);
                    next += 2;
                } else {
                    spins = spins.wrapping_add(1);
                    if spins % 4096 == 0 && Instant::now() > backstop {
                        break;
                    }
                }
            }
        });
        let initiator = s.spawn(move || {
            core_affinity::set_for_current(from);
            start.wait();
            let mut v = 0u64;
            let trip = |v: &mut u64| {
                line.store(*v + 1, Ordering::Release);
                *v += 2;
                wait_for(line, *v, deadline)
            };
            // Warm-up: both threads running, both caches holding the line.
            for _ in 0..trips.min(100) {
                if !trip(&mut v) {
                    line.store(STOP, Ordering::Release);
                    return None;
                }
            }
            let mut out = Vec::with_capacity(samples);
            for _ in 0..samples {
                let t0 = cycles::now();
                for _ in 0..trips {
                    if !trip(&mut v) {
                        line.store(STOP, Ordering::Release);
                        return None;
                    }
                }
                let t1 = cycles::now();
                out.push(t1.saturating_sub(t0) as f64 / trips as f64 / 2.0);
            }
            line.store(STOP, Ordering::Release);
            Some(out)
        });
        initiator.join().expect("latency thread panicked")
    });
    let xs = per_sample?;
    let s = stats::summarize(&xs);
    let round = |x: f64| (x * 10.0).round() / 10.0;
    Some(CoreLatency {
        from: from.id,
        to: to.id,
        one_way_cycles: round(s.median),
        min_cycles: round(s.min),
        samples: xs.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_costs_cover_every_instruction_and_explain_gaps() {
        let costs = atomic_costs(1);
        let names: Vec<_> = costs.iter().map(|c| c.instruction).collect();
        assert_eq!(names, ["xchg", "lock xadd", "lock cmpxchg", "lock cmpxchg16b", "xbegin; xend"]);
        for c in &costs {
            match &c.cycles {
                Ok(x) => assert!(x.is_finite() && *x >= 0.0, "{c:?}"),
                Err(why) => assert!(why.starts_with("unavailable"), "{c:?}"),
            }
        }
        let rtm = granule_sync::rtm::detect();
        assert_eq!(costs[4].cycles.is_ok(), rtm.is_available(), "xbegin is timed only where RTM works");
    }

    #[test]
    fn core_latency_measures_every_ordered_pair() {
        let all = crate::pin::cpus();
        let cpus = &all[..all.len().min(2)];
        let cfg = LatencyConfig { samples: 3, round_trips: 50, pair_budget: Duration::from_secs(5) };
        let mut pairs = 0;
        let got = core_latency(cpus, &cfg, || pairs += 1);
        assert_eq!(pairs, cpus.len() * cpus.len().saturating_sub(1));
        assert!(got.len() <= pairs);
        for l in &got {
            assert_ne!(l.from, l.to);
            assert_eq!(l.samples, 3);
            assert!(l.min_cycles <= l.one_way_cycles);
        }
        assert!(core_latency(&cpus[..cpus.len().min(1)], &cfg, || {}).is_empty(), "one CPU: no pairs");
    }
}
