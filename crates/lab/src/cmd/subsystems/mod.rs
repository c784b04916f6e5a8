//! `granule subsystems`: seed `003`'s subsystem study. A build-like load
//! (`granule_user::buildload`) runs on a hosted machine whose sysctl tree
//! and kernel log are locked by each `--subsystem-locking` policy in turn,
//! under each kernel regime; the command reports jobs per second and the
//! lock profiler's table per lock and acquisition site, in the seed's
//! columns (max held, max wait, total held, total wait, times acquired,
//! average held, average wait, name and location) and in FreeBSD's
//! `LOCK_PROFILING` layout. Times are cycle-counter ticks.
//!
//! The kernel's own lock is profiled too (`bkl`: "kernel"; `fine`: its
//! brlock's write side and the per-core reader locks; `lockfree` has no
//! lock to profile): under `giant` it is what serialises the subsystems.
//! Runs are interleaved over (regime, policy) so drift spreads evenly.

pub(crate) mod findings;
pub(crate) mod records;

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use clap::Args as ClapArgs;
use granule_hosted::granule_kernel::{Kernel, Regime, SubsystemLocking};
use granule_hosted::MachineConfig;
use granule_sync::profile::{freebsd_table, seed_table, SiteRecord};
use granule_user::buildload::{self, BuildLoad, BuildSpec};

use self::records::{SubsystemLockRecord, SubsystemsRecord};
use crate::machine::Machine;
use crate::output::{emit, Format, Record};
use crate::progress;
use crate::regimes::{runnable, select_from, with_regime, Experiment, Probe};
use crate::stats::summarize;

/// The regimes the study runs under (`none` shares objects between cores,
/// so it cannot).
const REGIMES: &[&str] =
    &crate::regimes::without::<{ crate::regimes::REGIMES.len() - 1 }>(crate::regimes::REGIMES, &["none"]);

/// Options of `granule subsystems`.
#[derive(Clone, Debug, ClapArgs)]
pub struct Args {
    #[command(flatten)]
    pub common: super::Common,
    /// Kernel regimes (comma-separated), or all.
    #[arg(long, value_delimiter = ',', default_value = "bkl,fine,lockfree", value_parser = crate::regimes::parser(REGIMES, &[], true))]
    pub regimes: Vec<String>,
    /// Subsystem locking policies (comma-separated: giant, sx, improper,
    /// lockfree), or all.
    #[arg(long, value_delimiter = ',', default_value = "all", value_parser = policy)]
    pub subsystem_locking: Vec<Policies>,
    /// Cores with workers: a range like 1..2 or a list like 1,2 (default:
    /// every CPU of this machine).
    #[arg(long, value_parser = crate::bounds::counts(granule_hosted::granule_kernel::abi::MAX_CORES))]
    pub cores: Option<crate::bounds::Counts>,
    /// Worker threads per core, 1..=64.
    #[arg(long, default_value_t = 4, value_parser = crate::bounds::int::<usize>(1, 64))]
    pub workers: usize,
    /// Mean compute between a job's calls, cycles (exponential; 0 ≤ c ≤ 10^12).
    #[arg(long, default_value_t = 20_000.0, value_parser = crate::bounds::cycles())]
    pub compute_cycles: f64,
    /// Sysctl reads per job, 1..=1000.
    #[arg(long, default_value_t = 8, value_parser = crate::bounds::int::<u32>(1, 1000))]
    pub reads_per_job: u32,
    /// Per thousand sysctl calls: sets (0..=1000).
    #[arg(long, default_value_t = 1, value_parser = crate::bounds::int::<u32>(0, 1000))]
    pub write_permille: u32,
    /// Per thousand jobs: full walks, `sysctl -a` (0..=1000).
    #[arg(long, default_value_t = 1, value_parser = crate::bounds::int::<u32>(0, 1000))]
    pub walk_permille: u32,
    /// Per thousand jobs: kernel-log appends (0..=1000).
    #[arg(long, default_value_t = 100, value_parser = crate::bounds::int::<u32>(0, 1000))]
    pub log_permille: u32,
    /// Length of each run's measured window, in seconds (0 < s ≤ 3600).
    #[arg(long, default_value_t = 1.0, value_parser = crate::bounds::seconds())]
    pub seconds: f64,
    /// Warm-up before each window, in seconds (0 ≤ s ≤ 3600).
    #[arg(long, default_value_t = 0.2, value_parser = crate::bounds::warmup())]
    pub warmup: f64,
    /// Runs per point (a fresh machine each), 1..=1000.
    #[arg(long, default_value_t = 3, value_parser = crate::bounds::runs::<usize>())]
    pub runs: usize,
}

/// A `--subsystem-locking` value: one policy, or all.
#[derive(Clone, Debug)]
pub struct Policies(Vec<SubsystemLocking>);

fn policy(s: &str) -> Result<Policies, String> {
    if s == "all" {
        return Ok(Policies(SubsystemLocking::ALL.to_vec()));
    }
    SubsystemLocking::from_name(s)
        .map(|p| Policies(vec![p]))
        .ok_or_else(|| format!("unknown policy {s:?}: expected giant, sx, improper, lockfree or all"))
}

/// One run's result.
struct RunResult {
    jobs_per_sec: f64,
    calls_per_sec: f64,
    klog_read: u64,
    klog_dropped: u64,
    errors: u64,
    sites: Vec<SiteRecord>,
}

/// One run as an [`Experiment`].
struct BuildRun {
    spec: BuildSpec,
    config: MachineConfig,
    warmup: Duration,
    window: Duration,
}

impl Experiment for BuildRun {
    type Out = RunResult;
    const DISJOINT: bool = false;

    fn run<R: Regime>(self, regime: R, probe: &dyn Fn(&Kernel<R>) -> Option<Probe>) -> Result<RunResult> {
        let load = Arc::new(BuildLoad::new(self.spec));
        let m = buildload::boot(self.config, regime, load.clone()).map_err(|e| anyhow!("{e}"))?;
        let measured = (|| -> Result<(f64, f64)> {
            m.wait_running(Duration::from_secs(10)).map_err(|e| anyhow!(e))?;
            std::thread::sleep(self.warmup);
            let (j0, c0, t0) = (load.jobs(), load.calls(), granule_sync::cycles::now());
            std::thread::sleep(self.window);
            let (j1, c1, t1) = (load.jobs(), load.calls(), granule_sync::cycles::now());
            let secs = t1.wrapping_sub(t0).max(1) as f64 / crate::machine::tsc_hz();
            Ok(((j1 - j0) as f64 / secs, (c1 - c0) as f64 / secs))
        })();
        let k = m.machine.kernel();
        let mut sites = probe(k).map(|p| p.sites).unwrap_or_default();
        sites.extend(k.subsystem_profile());
        let counts = k.klog_counts();
        let (read, errors) = (load.messages_read(), load.errors());
        let root = m.machine.boot_info().root_thread;
        let faults = m.machine.shutdown().map_err(|e| anyhow!("{e}"))?;
        let (jobs_per_sec, calls_per_sec) = measured?;
        if let Some(f) = faults.iter().find(|f| f.thread != root) {
            bail!("user thread {:?} on core {} faulted: {}", f.thread, f.core, f.message);
        }
        Ok(RunResult { jobs_per_sec, calls_per_sec, klog_read: read, klog_dropped: counts.dropped, errors, sites })
    }
}

/// Run `granule subsystems`.
pub fn run(a: &Args) -> Result<()> {
    let wanted = select_from(REGIMES, &a.regimes)?;
    let mut policies: Vec<SubsystemLocking> = a.subsystem_locking.iter().flat_map(|p| p.0.clone()).collect();
    policies.sort_by_key(|p| SubsystemLocking::ALL.iter().position(|q| q == p));
    policies.dedup();
    let m = Machine::detect();
    let mut records = vec![m.record()];
    let regimes = runnable(&wanted, &mut records);
    if regimes.is_empty() {
        bail!("none of the selected regimes can run on this machine");
    }
    let cores = a.cores.as_ref().map_or_else(|| (1..=m.cores).collect(), |c| c.0.clone());
    if let Some(&n) = cores.iter().find(|&&n| n > m.cores) {
        bail!("{n} cores: this machine has {} CPUs, and a hosted kernel core needs a CPU of its own", m.cores);
    }
    let mut points: Vec<(&str, SubsystemLocking, usize)> = Vec::new();
    for &r in &regimes {
        for &n in &cores {
            points.extend(policies.iter().map(|&p| (r, p, n)));
        }
    }
    let mut jobs: Vec<Vec<f64>> = vec![Vec::new(); points.len()];
    let mut calls: Vec<Vec<f64>> = vec![Vec::new(); points.len()];
    let mut last: Vec<Option<RunResult>> = points.iter().map(|_| None).collect();
    let mut errors = vec![0u64; points.len()];
    let pb = progress::bar((a.runs * points.len()) as u64, "subsys");
    for run in 0..a.runs {
        for (i, &(regime, policy, n)) in points.iter().enumerate() {
            pb.set_message(format!("{regime} {policy} {n} cores run {}", run + 1));
            let mut config = MachineConfig::new(n);
            config.kernel.subsystem_locking = policy;
            let boot = config.kernel.clone();
            let spec = BuildSpec {
                cores: n,
                workers: a.workers,
                compute_cycles: a.compute_cycles,
                reads_per_job: a.reads_per_job,
                write_permille: a.write_permille,
                walk_permille: a.walk_permille,
                log_permille: a.log_permille,
                seed: 0x5eed_0003 + run as u64,
            };
            let e = BuildRun {
                spec,
                config,
                warmup: Duration::from_secs_f64(a.warmup),
                window: Duration::from_secs_f64(a.seconds),
            };
            let r = with_regime(regime, &boot, true, e)
                .with_context(|| format!("{regime}, {policy}, {n} cores, run {}", run + 1))?;
            jobs[i].push(r.jobs_per_sec);
            calls[i].push(r.calls_per_sec);
            errors[i] += r.errors;
            last[i] = Some(r);
            pb.inc(1);
        }
    }
    pb.finish_and_clear();
    let mean = |i: usize| summarize(&jobs[i]).mean;
    let mut extra = String::new();
    for (i, &(regime, policy, n)) in points.iter().enumerate() {
        let s = summarize(&jobs[i]);
        let giant = points.iter().position(|&(r, p, c)| r == regime && c == n && p == SubsystemLocking::Giant);
        let l = last[i].as_ref().expect("every point ran");
        records.push(
            SubsystemsRecord {
                regime: Cow::Borrowed(regime),
                policy: Cow::Borrowed(policy.name()),
                cores: n,
                workers: a.workers,
                runs: a.runs,
                jobs_per_sec_mean: s.mean,
                jobs_per_sec_std: s.std,
                jobs_per_sec_median: s.median,
                ratio_to_giant: giant.map(|g| s.mean / mean(g)),
                calls_per_sec_mean: summarize(&calls[i]).mean,
                klog_read: l.klog_read,
                klog_dropped: l.klog_dropped,
                errors: errors[i],
            }
            .to_map(),
        );
        if a.common.format == Format::Table {
            extra.push_str(&format!(
                "== lock profile: {regime}, {policy}, {n} cores (last run; seed 003's columns) ==\n{}\n\
                 == the same in FreeBSD's LOCK_PROFILING layout ==\n{}\n",
                seed_table(&l.sites),
                freebsd_table(&l.sites)
            ));
        }
        for site in &l.sites {
            let per = |t: u64, n: u64| if n == 0 { 0.0 } else { t as f64 / n as f64 };
            records.push(
                SubsystemLockRecord {
                    regime: Cow::Borrowed(regime),
                    policy: Cow::Borrowed(policy.name()),
                    cores: n,
                    avg_held: per(site.hold_total, site.holds),
                    avg_wait: per(site.wait_total, site.acquisitions),
                    site: Cow::Borrowed(site),
                }
                .to_map(),
            );
        }
    }
    for &regime in &regimes {
        for &n in &cores {
            let at = |p: SubsystemLocking| points.iter().position(|&q| q == (regime, p, n));
            let f = findings::findings(
                regime,
                n,
                |p| at(p).and_then(|i| last[i].as_ref()).map(|r| r.sites.clone()),
                |p| at(p).map(mean),
            );
            if let Some(f) = f {
                extra.push_str(&f.text());
                records.push(f.to_map());
            }
        }
    }
    emit(a.common.format, &records, &extra)?;
    Ok(())
}
