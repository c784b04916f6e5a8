//! `granule synthesis`: the Synthesis kernel's Tables 2, 3 and 4 (Massalin
//! & Pu 1991: context switch, thread operations, memory operations)
//! measured under every regime on this machine, beside the seed's 68030
//! figures, both normalised to the same machine's null procedure call.
//!
//! Method: a two-core kernel, booted fresh for each run of each regime, is
//! driven by one pinned thread acting as each core in turn (`drive.rs`), so
//! every row is a kernel entry timed alone with the cycle counter (less the
//! cost of timing nothing): warm caches, no contention, no platform (the
//! hosted platform's coroutine switch and IPI delivery are not included).
//! Rows the seed splits into a requester's and a dispatcher's part time the
//! requesting entry on core 0 and the entry of the target's core that
//! carries it out (its IPI) separately (`rows.rs`). The table gives the
//! mean over every iteration of every run without the top tenth (the
//! cycle counter of this VM ticks in steps of 26 cycles, which a median
//! cannot see below); the records add the median and the spread of the
//! runs' medians.
//!
//! Under `lockfree`, suspend and resume of a thread of another core (and of
//! a ready thread of the caller's own core) run Synthesis's `STOPME`
//! protocol without the gate (`kernel/src/lockfree/control.rs`); so do a
//! destroy, a signal (the notification word's CAS), a fault's delivery,
//! map and unmap, and allocating and freeing a 4 KiB frame
//! (`docs/synthesis.md`). Create is a management entry, behind the gate.
//! The atomic instructions of the lock-free ones are counted in a separate
//! pass (`atomics.rs`, the `synthesis_atomics` records).

pub(crate) mod atomics;
pub(crate) mod contended;
mod drive;
pub(crate) mod records;
mod rows;

use anyhow::{anyhow, bail, Result};
use clap::Args as ClapArgs;
use granule_hosted::granule_kernel::{BootConfig, Kernel, Regime};
use std::borrow::Cow;

use self::drive::{timing_overhead, Driver};
use self::records::{NullCallRecord, SynthesisRecord};
use crate::machine::Machine;
use crate::output::{emit, Format, Record};
use crate::pin::run_pinned;
use crate::progress;
use crate::regimes::{runnable, selected, with_regime, Experiment, Probe};
use crate::stats::{median_u64, summarize};

/// The seed's null procedure call (Table 1), µs.
const SEED_NULL_CALL_US: f64 = 1.0;

/// Options of `granule synthesis`.
#[derive(Clone, Debug, ClapArgs)]
pub struct Args {
    #[command(flatten)]
    pub common: super::Common,
    /// Regimes to measure (comma-separated), or all.
    #[arg(long, value_delimiter = ',', default_value = "all", value_parser = crate::regimes::parser(crate::regimes::REGIMES, &[], true))]
    pub regimes: Vec<String>,
    /// Runs per regime (a fresh kernel each), 1..=1000.
    #[arg(long, default_value_t = 5, value_parser = crate::bounds::runs::<usize>())]
    pub runs: usize,
    /// Iterations of each row per run, 1..=100000.
    #[arg(long, default_value_t = 200, value_parser = crate::bounds::int::<usize>(1, 100_000))]
    pub iterations: usize,
    /// Window of each contended run (management operations from one core,
    /// then from both), in seconds (0 ≤ s ≤ 3600; 0: skip the contended
    /// case).
    #[arg(long, default_value_t = 0.3, value_parser = crate::bounds::warmup())]
    pub contended_seconds: f64,
}

/// One row of the tables: its parts (name, the seed's µs) and what this
/// machine can show of it.
struct Spec {
    table: u8,
    operation: &'static str,
    parts: &'static [(&'static str, Option<f64>)],
    note: &'static str,
}

const WHOLE: &str = "whole";

/// The rows, in the order `Run::measure` returns their samples.
const SPECS: &[Spec] = &[
    Spec {
        table: 2,
        operation: "context switch, one address space",
        parts: &[(WHOLE, Some(11.0))],
        note: "a yield between two threads of one core: the kernel's part (the hosted platform switches coroutines outside it; no FPU state)",
    },
    Spec {
        table: 2,
        operation: "context switch, two address spaces",
        parts: &[(WHOLE, Some(13.0))],
        note: "seed: 13 µs + 1.6 × TLB fill; the hosted platform has no page table root to load nor TLB to flush, so only the kernel's bookkeeping shows",
    },
    Spec {
        table: 3,
        operation: "create",
        parts: &[(WHOLE, Some(19.2))],
        note: "retype a TCB, configure, set priority and core, start: five invocations",
    },
    Spec {
        table: 3,
        operation: "destroy",
        parts: &[("requester", Some(2.2)), ("dispatcher", Some(6.1))],
        note: "delete the TCB capability of a thread running on the other core; that core stops it at its next entry and frees it (lockfree: the next management entry frees it, untimed)",
    },
    Spec {
        table: 3,
        operation: "suspend",
        parts: &[("requester", Some(2.2)), ("dispatcher", Some(3.7))],
        note: "a thread running on the other core; that core stops it at its next entry",
    },
    Spec {
        table: 3,
        operation: "resume, not in the run queue",
        parts: &[("requester", Some(6.6)), ("dispatcher", None)],
        note: "re-queued on its core, which then runs it (the seed's 6.6 µs is the whole)",
    },
    Spec {
        table: 3,
        operation: "resume, still in the run queue",
        parts: &[(WHOLE, Some(3.0))],
        note: "resumed before its core carried out the suspension",
    },
    Spec {
        table: 3,
        operation: "suspend, same core",
        parts: &[(WHOLE, Some(5.9))],
        note: "a ready thread of the caller's own core (the seed's uniprocessor: its requester's 2.2 µs and dispatcher's 3.7 µs together); lockfree meets the request in the same entry",
    },
    Spec {
        table: 3,
        operation: "resume, same core",
        parts: &[(WHOLE, Some(6.6))],
        note: "that thread back into its core's ready queue, by the caller's own core",
    },
    Spec {
        table: 3,
        operation: "signal",
        parts: &[("requester", Some(4.6)), ("dispatcher", Some(4.4))],
        note: "a notification signal waking a thread that waits on the other core, which then runs it",
    },
    Spec {
        table: 3,
        operation: "signal, bound receiver",
        parts: &[("requester", Some(4.6)), ("dispatcher", Some(4.4))],
        note: "a signal to a notification bound to a thread of the other core that waits in an endpoint receive, which ends with the badge (seL4's bound notification; beside it, the seed's signal)",
    },
    Spec {
        table: 4,
        operation: "allocate page, needs zeroing",
        parts: &[(WHOLE, Some(152.0))],
        note: "retype a 4 KiB frame: the frame freed by the row below, popped from its untyped's free list and zeroed (the seed's pre-zeroed case, 2.4 µs, has no counterpart: no frame is zeroed ahead)",
    },
    Spec {
        table: 4,
        operation: "free page",
        parts: &[(WHOLE, Some(1.6))],
        note: "delete the frame capability: the frame goes on its untyped's free list",
    },
    Spec {
        table: 4,
        operation: "zero-fill 4 KiB",
        parts: &[(WHOLE, Some(148.0))],
        note: "user code (write_bytes); the seed used the 68030's register-save instruction",
    },
    Spec { table: 4, operation: "map page", parts: &[(WHOLE, None)], note: "FrameMap into an address space (no seed row)" },
    Spec { table: 4, operation: "unmap page", parts: &[(WHOLE, None)], note: "FrameUnmap (no seed row)" },
    Spec {
        table: 4,
        operation: "memory access exception",
        parts: &[(WHOLE, Some(13.6))],
        note: "delivered to a fault handler waiting on the same core, up to the switch to it (TcbSetFaultHandler; its answer untimed)",
    },
];

/// One run under one regime.
struct Run {
    iterations: usize,
    overhead: u64,
}

impl Experiment for Run {
    type Out = Vec<rows::Samples>;
    // One thread acts as every core in turn: no two cores are ever inside
    // the kernel at once, which is stronger than `none`'s promise of
    // disjoint objects.
    const DISJOINT: bool = true;

    fn run<R: Regime>(self, regime: R, _probe: &dyn Fn(&Kernel<R>) -> Option<Probe>) -> Result<Self::Out> {
        let (k, boot, hs) = Kernel::boot(config(), regime).map_err(|e| anyhow!("boot: {e}"))?;
        let mut d = Driver::new(&k, &boot, hs)?;
        let (n, oh) = (self.iterations, self.overhead);
        let mut out = vec![
            rows::switch(&mut d, n, oh, false)?,
            rows::switch(&mut d, n, oh, true)?,
            rows::create(&mut d, n, oh)?,
            rows::destroy(&mut d, n, oh)?,
        ];
        let (suspend, resume) = rows::suspend_resume(&mut d, n, oh)?;
        out.push(suspend);
        out.push(resume);
        out.push(rows::resume_queued(&mut d, n, oh)?);
        let (suspend, resume) = rows::suspend_resume_here(&mut d, n, oh)?;
        out.push(suspend);
        out.push(resume);
        out.push(rows::signal(&mut d, n, oh)?);
        out.push(rows::signal_bound(&mut d, n, oh)?);
        let (alloc, free) = rows::page_alloc_free(&mut d, n, oh)?;
        out.push(alloc);
        out.push(free);
        out.push(rows::zero_fill(n, oh));
        let (map, unmap) = rows::map_unmap(&mut d, n, oh)?;
        out.push(map);
        out.push(unmap);
        out.push(rows::fault(&mut d, n, oh)?);
        Ok(out)
    }
}

/// The kernel every run boots: two cores, the defaults otherwise.
fn config() -> BootConfig {
    BootConfig::new(2)
}

/// The mean of `v` without its top tenth (interrupts and migrations of the
/// measuring thread), 0 for none. The cycle counter of a VM may tick in
/// steps of many cycles (here 26: a 10 ns clock at 2.6 GHz): the mean of
/// many readings resolves below the step where the median cannot.
fn trimmed_mean(v: &mut [u64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_unstable();
    let keep = &v[..(v.len() * 9).div_ceil(10)];
    keep.iter().sum::<u64>() as f64 / keep.len() as f64
}

/// The contended case's records: every operation, one and two issuing
/// cores, every regime but `none`, runs interleaved.
fn contended_records(
    a: &Args,
    regimes: &[&'static str],
    records: &mut Vec<serde_json::Map<String, serde_json::Value>>,
) -> Result<()> {
    let regimes: Vec<&'static str> = regimes.iter().copied().filter(|r| *r != "none").collect();
    let points: Vec<(usize, usize)> = (0..contended::OPERATIONS.len()).flat_map(|op| [(op, 1), (op, 2)]).collect();
    let pb = progress::bar((a.runs * points.len() * regimes.len()) as u64, "contended");
    let mut rates = vec![vec![Vec::new(); regimes.len()]; points.len()];
    for run in 0..a.runs {
        for (p, &(op, issuing)) in points.iter().enumerate() {
            for (i, regime) in regimes.iter().enumerate() {
                pb.set_message(format!("{regime} {} ×{issuing} run {}", contended::OPERATIONS[op], run + 1));
                let r = contended::measure(regime, op, issuing, a.contended_seconds)
                    .map_err(|e| anyhow!("{regime}, {}, {issuing} cores: {e:#}", contended::OPERATIONS[op]))?;
                rates[p][i].push(r);
                pb.inc(1);
            }
        }
    }
    pb.finish_and_clear();
    let mean = |p: usize, i: usize| summarize(&rates[p][i]).mean;
    for (p, &(op, issuing)) in points.iter().enumerate() {
        for (i, &regime) in regimes.iter().enumerate() {
            let s = summarize(&rates[p][i]);
            let other = |name: &str| regimes.iter().position(|r| *r == name).map(|j| s.mean / mean(p, j));
            records.push(
                contended::ContendedRecord {
                    regime: Cow::Borrowed(regime),
                    operation: Cow::Borrowed(contended::OPERATIONS[op]),
                    issuing_cores: issuing,
                    runs: a.runs,
                    pairs_per_sec_mean: s.mean,
                    pairs_per_sec_std: s.std,
                    two_over_one: (issuing == 2).then(|| s.mean / mean(p - 1, i)),
                    over_bkl: other("bkl"),
                    over_fine: other("fine"),
                }
                .to_map(),
            );
        }
    }
    Ok(())
}

/// Run `granule synthesis`.
pub fn run(a: &Args) -> Result<()> {
    let wanted = selected(&a.regimes)?;
    let m = Machine::detect();
    let mut records = vec![m.record()];
    let regimes = runnable(&wanted, &mut records);
    if regimes.is_empty() {
        bail!("none of the selected regimes can run on this machine");
    }
    let (runs, iterations) = (a.runs, a.iterations);
    let pb = progress::bar((runs * regimes.len()) as u64, "synthesis");
    let measured = run_pinned(1, |_| -> Result<(f64, Vec<Vec<Vec<rows::Samples>>>)> {
        let overhead = timing_overhead();
        let null = rows::null_call(100_000, overhead);
        // [regime][run][row][part] samples; runs interleaved over regimes.
        let mut all: Vec<Vec<Vec<rows::Samples>>> = vec![Vec::new(); regimes.len()];
        for run in 0..runs {
            for (i, regime) in regimes.iter().enumerate() {
                pb.set_message(format!("{regime} run {}", run + 1));
                let out = with_regime(regime, &config(), false, Run { iterations, overhead })
                    .map_err(|e| anyhow!("{regime}, run {}: {e:#}", run + 1))?;
                all[i].push(out);
                pb.inc(1);
            }
        }
        Ok((null, all))
    });
    pb.finish_and_clear();
    let (null, all) = measured.into_iter().next().ok_or_else(|| anyhow!("the pinned thread did not run"))??;
    let ns = m.ns_per_cycle();
    records.push(NullCallRecord { cycles: null, ns: null * ns, seed_us: SEED_NULL_CALL_US }.to_map());
    let mut table = String::new();
    // (operation, part, regime, trimmed mean) of every cell of the table.
    let mut means: Vec<(&str, &str, &str, f64)> = Vec::new();
    for (row, spec) in SPECS.iter().enumerate() {
        for (part, &(part_name, seed)) in spec.parts.iter().enumerate() {
            let mut line = format!("{:>1}  {:<38} {:<11}", spec.table, spec.operation, part_name);
            for (i, &regime) in regimes.iter().enumerate() {
                let mut pooled: Vec<u64> = Vec::new();
                let mut run_medians: Vec<f64> = Vec::new();
                for run in &all[i] {
                    let v = run[row].get(part).cloned().unwrap_or_default();
                    run_medians.push(median_u64(&v));
                    pooled.extend(v);
                }
                let med = median_u64(&pooled);
                let mean = trimmed_mean(&mut pooled);
                let s = summarize(&run_medians);
                line.push_str(&format!(" {mean:>10.0}"));
                means.push((spec.operation, part_name, regime, mean));
                records.push(
                    SynthesisRecord {
                        table: spec.table,
                        operation: Cow::Borrowed(spec.operation),
                        part: Cow::Borrowed(part_name),
                        regime: Cow::Borrowed(regime),
                        runs,
                        iterations,
                        cycles_median: med,
                        cycles_trimmed_mean: mean,
                        cycles_min_run: s.min,
                        cycles_max_run: s.max,
                        ns_trimmed_mean: mean * ns,
                        over_null_call: if null > 0.0 { mean / null } else { 0.0 },
                        seed_us: seed,
                        seed_over_null_call: seed.map(|s| s / SEED_NULL_CALL_US),
                        note: Cow::Borrowed(spec.note),
                    }
                    .to_map(),
                );
            }
            line.push_str(&match seed {
                Some(s) => format!(" {s:>8.1} µs"),
                None => format!(" {:>11}", "—"),
            });
            table.push_str(&line);
            table.push('\n');
        }
    }
    let counted = if regimes.contains(&"lockfree") {
        let costs = crate::limits::pinned_atomic_costs(15);
        let extra = |row: &str, part: &str| {
            let at = |r: &str| means.iter().find(|m| (m.0, m.1, m.2) == (row, part, r)).map(|m| m.3);
            at("lockfree").zip(at("none")).map(|(l, n)| l - n)
        };
        atomics::records(iterations, &costs, extra)?
    } else {
        Vec::new()
    };
    records.extend(counted.iter().map(Record::to_map));
    if a.contended_seconds > 0.0 {
        contended_records(a, &regimes, &mut records)?;
    }
    let mut extra = String::new();
    let mut atab = String::new();
    if a.common.format == Format::Table && !counted.is_empty() {
        atab.push_str(
            "== lockfree: atomic instructions per thread operation (counted), their cost alone, and the timed \
             extra over none (target: at most 1.5x the atomics) ==\n",
        );
        atab.push_str(&format!(
            "{:<40} {:<22} {:>7} {:>5} {:>8} {:>11} {:>5} {:>11} {:>6} {:>7}  management\n",
            "operation", "part", "atomics", "xchg", "cmpxchg", "cmpxchg16b", "xadd", "floor_cyc", "extra", "target"
        ));
        let opt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.0}"));
        for r in &counted {
            atab.push_str(&format!(
                "{:<40} {:<22} {:>7.1} {:>5.1} {:>8.1} {:>11.1} {:>5.1} {:>11} {:>6} {:>7}  {}\n",
                r.operation,
                r.part,
                r.atomics,
                r.xchg,
                r.cmpxchg,
                r.cmpxchg16b,
                r.xadd,
                opt(r.atomic_floor_cycles),
                opt(r.extra_over_none_cycles),
                r.within_target.map_or("-", |w| if w { "met" } else { "missed" }),
                if r.management { "yes" } else { "no" }
            ));
        }
    }
    if a.common.format == Format::Table {
        extra.push_str(&format!(
            "== the seed's Tables 2-4: cycles per regime, mean without the top tenth (null procedure call here: \
             {null:.1} cycles; seed: {SEED_NULL_CALL_US} µs) ==\n{:>1}  {:<38} {:<11}",
            "T", "operation", "part"
        ));
        for r in &regimes {
            extra.push_str(&format!(" {r:>10}"));
        }
        extra.push_str(&format!(" {:>11}\n{table}", "seed V.1"));
    }
    extra.push_str(&atab);
    emit(a.common.format, &records, &extra)?;
    Ok(())
}
