//! `granule ipc`: the single-core IPC cost of every regime (the seeds'
//! Figure 3), and the ping-pong machinery `granule scale` shares.
//!
//! One ping-pong pair (client `Call`, server `ReplyRecv`, see
//! `granule_user::pingpong`) runs on core 0 of a one-core hosted machine. A
//! run boots a fresh machine, waits until the pair is running, warms up, and
//! divides the cycles of a `--seconds` window by the round trips completed in
//! it. Runs of the regimes are interleaved (run 1 of every regime, then run 2
//! …) so that slow drift of the machine spreads evenly over them; the mean and
//! standard deviation over `--runs` are reported, with
//!
//! * `ratio_to_none`: mean round trip over `none`'s, measured in the same
//!   invocation (every regime runs exactly the same kernel work; `none` just
//!   has no lock code);
//! * `extra_cycles_per_call`: half the round-trip difference to `none` — a
//!   round trip is two system calls, so this is what one kernel entry pays
//!   for the lock — beside `xchg_cycles`, the uncontended cost of one `xchg`
//!   measured in the same invocation (the floor: every lock here needs one
//!   atomic read-modify-write per acquire + release).
//!
//! `--lock-stats` runs the regimes with the lock profiler compiled in
//! (granule-sync's `Profile` statistics instead of `NoStats`, so the
//! profiled figures include the profiler's own cost) and prints the FreeBSD
//! `LOCK_PROFILING` table of each after the results — for `fine` the brlock
//! and every class of object locks, for `rtm` the fallback lock with the
//! commits and aborts by cause (JSON/CSV: one `lock_profile` record per
//! acquisition site).
//!
//! **Atomics per call.** Each regime also runs one short profiled counting
//! run, whose profile says how many atomic read-modify-write instructions
//! (or transactions) one system call executes on the ping-pong path:
//! `atomics_per_call`, split by instruction, and `atomics_source`: counted
//! as executed (`lockfree`), or derived from the lock profile's
//! acquisitions and each lock algorithm's instructions per uncontended
//! acquisition (`bkl`, `fine`, `rtm`'s fallback). Their uncontended costs, measured
//! in the same invocation on a pinned thread (`granule info`'s method), give
//! `atomic_floor_cycles`, what the regime's atomics alone cost per call; the
//! target is `extra_cycles_per_call ≤ 1.5 × atomic_floor_cycles`.
//!
//! Regimes this machine cannot run (`rtm` without Intel RTM) are reported as
//! `regime_skipped` records with the reason, and the others still run.
//!
//! `--instructions` measures instead each regime's instructions per
//! kernel-only round trip with valgrind's callgrind (`ipc_instructions`
//! records; see [`instructions`]).

pub(crate) mod instructions;
pub(crate) mod records;

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use clap::Args as ClapArgs;
use granule_hosted::granule_kernel::{Kernel, Regime};
use granule_hosted::MachineConfig;
use granule_sync::profile::{freebsd_table, SiteRecord};
use granule_user::hosted::{self, Window};
use granule_user::pingpong::PingPong;
use serde_json::{Map, Value};

use self::records::{IpcRecord, LockProfileRecord};
use crate::limits;
use crate::machine::Machine;
use crate::output::{emit, Format, Record};
use crate::progress;
use crate::regimes::{runnable, selected, with_regime, Atomics, Experiment, Probe};
use crate::stats::summarize;

/// Options of `granule ipc`.
#[derive(Clone, Debug, ClapArgs)]
pub struct Args {
    #[command(flatten)]
    pub common: super::Common,
    /// Regimes to measure (comma-separated), or all.
    #[arg(long, value_delimiter = ',', default_value = "all", value_parser = crate::regimes::parser(crate::regimes::REGIMES, &[], true))]
    pub regimes: Vec<String>,
    /// Runs per regime (a fresh machine each), 1..=1000; mean and std are
    /// over runs.
    #[arg(long, default_value_t = 16, value_parser = crate::bounds::runs::<usize>())]
    pub runs: usize,
    /// Length of each run's measured window, in seconds (0 < s ≤ 3600). A
    /// window in which no round trip completed (a loaded machine) is
    /// extended, a window's length at a time, for up to 10 s.
    #[arg(long, default_value_t = 1.0, value_parser = crate::bounds::seconds())]
    pub seconds: f64,
    /// Warm-up before each window, in seconds (0 ≤ s ≤ 3600).
    #[arg(long, default_value_t = 0.2, value_parser = crate::bounds::warmup())]
    pub warmup: f64,
    /// Message words per call (the server answers as many), 0..=64.
    #[arg(long, default_value_t = 1, value_parser = crate::bounds::message_words())]
    pub words: usize,
    /// Compile the lock profiler into the regimes and print their tables
    /// after the run.
    #[arg(long)]
    pub lock_stats: bool,
    #[command(flatten)]
    pub instructions: instructions::Options,
}

/// One ping-pong measurement: a fresh machine of `cores` cores with one
/// pair per core.
#[derive(Clone, Debug)]
pub struct PingSpec {
    /// Cores (and pairs).
    pub cores: usize,
    /// Mean of the servers' exponential delay, in cycles.
    pub delay_mean_cycles: f64,
    /// Message words per call.
    pub words: usize,
    /// Warm-up before the window.
    pub warmup: Duration,
    /// The measured window.
    pub window: Duration,
    /// Use the profiled lock (big-lock regimes).
    pub profile: bool,
}

/// What one measurement saw.
#[derive(Clone, Debug)]
pub struct PingResult {
    /// Counters over the window.
    pub window: Window,
    /// The lock profile at the end (profiled regimes only).
    pub profile: Option<Vec<SiteRecord>>,
    /// Atomic instructions executed during the window (profiled only).
    pub atomics: Option<Atomics>,
}

/// Measure `regime` (one of [`crate::regimes::REGIMES`]) on `spec`.
pub fn measure(regime: &str, spec: &PingSpec) -> Result<PingResult> {
    let mut config = MachineConfig::new(spec.cores);
    // Every regime follows the same protocol, which `none` needs: the root
    // task builds all pairs before the other cores enter the kernel.
    config.hold_secondary_cores = true;
    let boot = config.kernel.clone();
    with_regime(regime, &boot, spec.profile, PingRun { spec, config })
}

/// How long a window in which no round trip completed is extended before
/// the run fails.
const EXTEND_LIMIT: Duration = Duration::from_secs(10);

/// One ping-pong run as an [`Experiment`].
struct PingRun<'a> {
    spec: &'a PingSpec,
    config: MachineConfig,
}

impl Experiment for PingRun<'_> {
    type Out = PingResult;
    // Every pair has its own endpoint, reply object and TCBs on its own
    // core; the root task creates them all on core 0 while the other cores
    // are held out of the kernel (`hold_secondary_cores`), and no operation
    // of a pair touches another core's objects or scheduler state (no
    // cross-core wake-up, migration or suspension after the cores are
    // released).
    const DISJOINT: bool = true;

    fn run<R: Regime>(self, regime: R, probe: &dyn Fn(&Kernel<R>) -> Option<Probe>) -> Result<PingResult> {
        let spec = self.spec;
        let pp = Arc::new(PingPong::per_core(spec.cores, spec.delay_mean_cycles, spec.words));
        let m = hosted::boot(self.config, regime, pp).map_err(|e| anyhow!("{e}"))?;
        let measured = (|| -> Result<(Window, Option<Atomics>)> {
            m.wait_running(Duration::from_secs(10)).map_err(|e| anyhow!(e))?;
            std::thread::sleep(spec.warmup);
            let p0 = probe(m.machine.kernel());
            let s0 = m.sample();
            std::thread::sleep(spec.window);
            let mut s1 = m.sample();
            // On a loaded machine a short window can pass with no round
            // trip (a lock holder's OS thread descheduled): the window is
            // extended, a window's length at a time, until one completes or
            // `EXTEND_LIMIT` has passed. The rate is over the cycles the
            // window really lasted.
            let extended = Instant::now();
            while s0.until(&s1).round_trips == 0 && extended.elapsed() < EXTEND_LIMIT {
                std::thread::sleep(spec.window);
                s1 = m.sample();
            }
            let p1 = probe(m.machine.kernel());
            let atomics = p0.zip(p1).map(|(a, b)| b.atomics.since(&a.atomics));
            Ok((s0.until(&s1), atomics))
        })();
        let profile = probe(m.machine.kernel()).map(|p| p.sites).filter(|s| !s.is_empty());
        let bad = m.pp.bad_replies();
        let faults = m.shutdown().map_err(|e| anyhow!("{e}"))?;
        let (window, atomics) = measured?;
        if let Some(f) = faults.first() {
            bail!("user thread {:?} on core {} faulted: {}", f.thread, f.core, f.message);
        }
        if bad > 0 {
            bail!("{bad} replies failed verification");
        }
        if window.round_trips == 0 {
            bail!("no round trip completed in the window, extended to {} s", EXTEND_LIMIT.as_secs());
        }
        Ok(PingResult { window, profile, atomics })
    }
}

/// `lock_profile` records of one regime's profile.
pub fn profile_records(regime: &str, sites: &[SiteRecord]) -> Vec<Map<String, Value>> {
    sites
        .iter()
        .map(|site| LockProfileRecord { regime: Cow::Borrowed(regime), site: Cow::Borrowed(site) }.to_map())
        .collect()
}

/// Run `granule ipc`.
pub fn run(a: &Args) -> Result<()> {
    if a.instructions.instructions {
        return instructions::run(a);
    }
    let wanted = selected(&a.regimes)?;
    // Both are bounded by their parsers (bounds::seconds, bounds::warmup).
    let (window, warmup) = (Duration::from_secs_f64(a.seconds), Duration::from_secs_f64(a.warmup));
    let m = Machine::detect();
    let mut records = vec![m.record()];
    let regimes = runnable(&wanted, &mut records);
    if regimes.is_empty() {
        bail!("none of the selected regimes can run on this machine");
    }
    let costs = limits::pinned_atomic_costs(15);
    let xchg = costs.iter().find(|c| c.instruction == "xchg").and_then(|c| c.cycles.clone().ok());
    let spec = PingSpec { cores: 1, delay_mean_cycles: 0.0, words: a.words, warmup, window, profile: a.lock_stats };
    let count_spec = PingSpec { profile: true, window: window.min(Duration::from_millis(300)), ..spec.clone() };
    let mut cycles: Vec<Vec<f64>> = vec![Vec::new(); regimes.len()];
    let mut profiles: Vec<Option<Vec<SiteRecord>>> = vec![None; regimes.len()];
    let mut counted: Vec<Option<(Atomics, f64)>> = vec![None; regimes.len()];
    let pb = progress::bar((a.runs * regimes.len() + regimes.len()) as u64, "ipc");
    for (i, regime) in regimes.iter().enumerate() {
        pb.set_message(format!("{regime} counting atomics"));
        if *regime != "none" {
            let r = measure(regime, &count_spec).with_context(|| format!("{regime}, counting run"))?;
            counted[i] = r.atomics.map(|at| (at, 2.0 * r.window.round_trips as f64));
        }
        pb.inc(1);
    }
    for run in 0..a.runs {
        for (i, regime) in regimes.iter().enumerate() {
            pb.set_message(format!("{regime} run {}", run + 1));
            let r = measure(regime, &spec).with_context(|| format!("{regime}, run {}", run + 1))?;
            cycles[i].push(r.window.cycles as f64 / r.window.round_trips as f64);
            if r.profile.is_some() {
                profiles[i] = r.profile;
            }
            pb.inc(1);
        }
    }
    pb.finish_and_clear();
    let means: Vec<f64> = cycles.iter().map(|c| summarize(c).mean).collect();
    let none = regimes.iter().position(|r| *r == "none").map(|i| means[i]);
    for (i, &regime) in regimes.iter().enumerate() {
        let s = summarize(&cycles[i]);
        let extra = none.map(|n| (s.mean - n) / 2.0);
        let (at, calls) = match regime {
            "none" => (Some(Atomics::default()), 1.0),
            _ => counted[i].map_or((None, 1.0), |(at, calls)| (Some(at), calls.max(1.0))),
        };
        let per = |n: u64| at.map(|_| n as f64 / calls);
        let at0 = at.unwrap_or_default();
        let floor = at.and_then(|at| limits::atomics_floor(&at.rmw, at.transactions, calls, &costs));
        let target = floor.map(|f| 1.5 * f);
        let r = IpcRecord {
            regime: Cow::Borrowed(regime),
            profiled: a.lock_stats && regime != "none",
            runs: a.runs,
            words: a.words,
            round_trip_cycles_mean: s.mean,
            round_trip_cycles_std: s.std,
            round_trip_cycles_median: s.median,
            round_trip_cycles_min: s.min,
            round_trip_ns_mean: s.mean * m.ns_per_cycle(),
            round_trip_ns_std: s.std * m.ns_per_cycle(),
            ratio_to_none: none.map(|n| s.mean / n),
            extra_cycles_per_call: extra,
            xchg_cycles: xchg,
            extra_per_xchg: extra.zip(xchg).map(|(e, x)| e / x),
            atomics_per_call: per(at0.total()),
            atomics_source: at.map(|a| Cow::Borrowed(a.source.name())),
            xchg_per_call: per(at0.rmw.xchg),
            xadd_per_call: per(at0.rmw.xadd),
            cmpxchg_per_call: per(at0.rmw.cmpxchg),
            cmpxchg16b_per_call: per(at0.rmw.cmpxchg16b),
            transactions_per_call: per(at0.transactions),
            atomic_floor_cycles: floor,
            target_max_extra_cycles: target,
            meets_target: extra.zip(target).map(|(e, t)| e <= t),
            platform: None,
        };
        records.push(r.to_map());
    }
    let mut extra = String::new();
    for (i, regime) in regimes.iter().enumerate() {
        if let Some(p) = &profiles[i] {
            extra.push_str(&format!("== lock profile: {regime} (last run) ==\n{}\n", freebsd_table(p)));
            let (commits, aborts) =
                (p.iter().map(|s| s.commits).sum::<u64>(), p.iter().map(|s| s.aborts()).sum::<u64>());
            if commits + aborts > 0 {
                let by = |f: fn(&SiteRecord) -> u64| p.iter().map(f).sum::<u64>();
                extra.push_str(&format!(
                    "rtm: {commits} commits, {aborts} aborts (conflict {}, capacity {}, lock busy {}, other {}), {} fallbacks\n",
                    by(|s| s.aborts_conflict),
                    by(|s| s.aborts_capacity),
                    by(|s| s.aborts_lock_busy),
                    by(|s| s.aborts_other),
                    by(|s| s.fallbacks),
                ));
            }
            if a.common.format != Format::Table {
                records.extend(profile_records(regime, p));
            }
        }
    }
    emit(a.common.format, &records, &extra)?;
    Ok(())
}
