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
//! `--profile` runs the big-lock regimes with the lock profiler compiled in
//! (granule-sync's `Profile` statistics instead of `NoStats`, so the
//! profiled figures include the profiler's own cost) and prints the FreeBSD
//! `LOCK_PROFILING` table of each after the results (JSON/CSV: one
//! `lock_profile` record per acquisition site).

use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use clap::Args as ClapArgs;
use granule_hosted::granule_kernel::regime::{BigLock, LockFree};
use granule_hosted::granule_kernel::{Kernel, NoLock, Regime};
use granule_hosted::MachineConfig;
use granule_sync::lock::{Clh, Mcs, RawLock, Ticket};
use granule_sync::profile::{freebsd_table, NoStats, Profile, SiteRecord};
use granule_user::hosted::{self, Window};
use granule_user::pingpong::PingPong;
use serde_json::{Map, Value};

use crate::machine::Machine;
use crate::output::{emit, record, Format};
use crate::stats::summarize;
use crate::{limits, progress};

/// Every regime these commands know, in table order.
pub const REGIMES: &[&str] = &["none", "bkl", "bkl-ticket", "bkl-mcs", "lockfree"];

/// Options of `granule ipc`.
#[derive(Clone, Debug, ClapArgs)]
pub struct Args {
    #[command(flatten)]
    pub common: super::Common,
    /// Regimes to measure (comma-separated): none, bkl (CLH), bkl-ticket, bkl-mcs, lockfree.
    #[arg(long, value_delimiter = ',', default_value = "none,bkl,bkl-ticket,bkl-mcs,lockfree")]
    pub regimes: Vec<String>,
    /// Runs per regime (a fresh machine each); mean and std are over runs.
    #[arg(long, default_value_t = 16)]
    pub runs: usize,
    /// Length of each run's measured window, in seconds.
    #[arg(long, default_value_t = 1.0)]
    pub seconds: f64,
    /// Warm-up before each window, in seconds.
    #[arg(long, default_value_t = 0.2)]
    pub warmup: f64,
    /// Message words per call (the server answers as many).
    #[arg(long, default_value_t = 1)]
    pub words: usize,
    /// Compile the lock profiler into the big-lock regimes and print its
    /// table after the run.
    #[arg(long)]
    pub profile: bool,
}

/// The regimes selected on a command line, validated.
pub fn selected(regimes: &[String]) -> Result<Vec<&'static str>> {
    let mut out = Vec::new();
    for r in regimes {
        match REGIMES.iter().find(|k| **k == r.as_str()) {
            Some(k) if !out.contains(k) => out.push(*k),
            Some(_) => {}
            None => bail!("unknown regime `{r}`; known regimes: {}", REGIMES.join(", ")),
        }
    }
    if out.is_empty() {
        bail!("no regime selected; known regimes: {}", REGIMES.join(", "));
    }
    Ok(out)
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
    /// The lock profile (profiled big-lock regimes only).
    pub profile: Option<Vec<SiteRecord>>,
}

/// Measure `regime` (one of [`REGIMES`]) on `spec`.
pub fn measure(regime: &str, spec: &PingSpec) -> Result<PingResult> {
    fn bkl<L: RawLock + 'static>(spec: &PingSpec) -> Result<PingResult> {
        if spec.profile {
            let lock = BigLock::<L, Profile>::new(spec.cores);
            boot_and_measure(lock, spec, |k| Some(k.regime().lock().stats().snapshot()))
        } else {
            boot_and_measure(BigLock::<L, NoStats>::new(spec.cores), spec, |_| None)
        }
    }
    match regime {
        "none" => {
            // SAFETY: `NoLock`'s promise is kept by the experiment: every pair
            // has its own endpoint, reply object and TCBs on its own core; the
            // root task creates them all on core 0 while the other cores are
            // held out of the kernel (`hold_secondary_cores`), and no
            // operation of a pair touches another core's objects or
            // scheduler state (no cross-core wake-up, migration or
            // suspension after the cores are released).
            let none = unsafe { NoLock::new() };
            boot_and_measure(none, spec, |_| None)
        }
        "bkl" => bkl::<Clh>(spec),
        "bkl-ticket" => bkl::<Ticket>(spec),
        "bkl-mcs" => bkl::<Mcs>(spec),
        "lockfree" => boot_and_measure(LockFree::new(spec.cores), spec, |_| None),
        other => bail!("unknown regime `{other}`; known regimes: {}", REGIMES.join(", ")),
    }
}

fn boot_and_measure<R: Regime>(
    regime: R,
    spec: &PingSpec,
    profile: impl FnOnce(&Kernel<R>) -> Option<Vec<SiteRecord>>,
) -> Result<PingResult> {
    let mut config = MachineConfig::new(spec.cores);
    // Every regime follows the same protocol, which `none` needs: the root
    // task builds all pairs before the other cores enter the kernel.
    config.hold_secondary_cores = true;
    let pp = Arc::new(PingPong::per_core(spec.cores, spec.delay_mean_cycles, spec.words));
    let m = hosted::boot(config, regime, pp).map_err(|e| anyhow!("{e}"))?;
    let measured = (|| -> Result<Window> {
        m.wait_running(Duration::from_secs(10)).map_err(|e| anyhow!(e))?;
        std::thread::sleep(spec.warmup);
        let s0 = m.sample();
        std::thread::sleep(spec.window);
        let s1 = m.sample();
        Ok(s0.until(&s1))
    })();
    let profile = profile(m.machine.kernel());
    let bad = m.pp.bad_replies();
    let faults = m.shutdown().map_err(|e| anyhow!("{e}"))?;
    let window = measured?;
    if let Some(f) = faults.first() {
        bail!("user thread {:?} on core {} faulted: {}", f.thread, f.core, f.message);
    }
    if bad > 0 {
        bail!("{bad} replies failed verification");
    }
    if window.round_trips == 0 {
        bail!("no round trip completed in the window");
    }
    Ok(PingResult { window, profile })
}

/// Seconds → `Duration`, rejecting nonsense.
pub fn secs(name: &str, s: f64) -> Result<Duration> {
    if !s.is_finite() || s < 0.0 {
        bail!("--{name} must be a non-negative number of seconds");
    }
    Ok(Duration::from_secs_f64(s))
}

/// `lock_profile` records of one regime's profile.
pub fn profile_records(regime: &str, sites: &[SiteRecord]) -> Vec<Map<String, Value>> {
    sites
        .iter()
        .map(|s| {
            let mut r = record("lock_profile");
            r.insert("regime".into(), regime.into());
            if let Ok(Value::Object(fields)) = serde_json::to_value(s) {
                r.extend(fields);
            }
            r
        })
        .collect()
}

/// Run `granule ipc`.
pub fn run(a: &Args) -> Result<()> {
    let regimes = selected(&a.regimes)?;
    if a.runs == 0 {
        bail!("--runs must be at least 1");
    }
    let window = secs("seconds", a.seconds)?;
    if window.is_zero() {
        bail!("--seconds must be positive");
    }
    let warmup = secs("warmup", a.warmup)?;
    let m = Machine::detect();
    let xchg = limits::xchg_cycles(5);
    let spec = PingSpec { cores: 1, delay_mean_cycles: 0.0, words: a.words, warmup, window, profile: a.profile };
    let mut cycles: Vec<Vec<f64>> = vec![Vec::new(); regimes.len()];
    let mut profiles: Vec<Option<Vec<SiteRecord>>> = vec![None; regimes.len()];
    let pb = progress::bar((a.runs * regimes.len()) as u64, "ipc");
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
    let mut records = vec![m.record()];
    for (i, regime) in regimes.iter().enumerate() {
        let s = summarize(&cycles[i]);
        let mut r = record("ipc");
        r.insert("regime".into(), (*regime).into());
        r.insert("profiled".into(), (a.profile && *regime != "none").into());
        r.insert("runs".into(), a.runs.into());
        r.insert("words".into(), a.words.into());
        r.insert("round_trip_cycles_mean".into(), s.mean.into());
        r.insert("round_trip_cycles_std".into(), s.std.into());
        r.insert("round_trip_cycles_median".into(), s.median.into());
        r.insert("round_trip_cycles_min".into(), s.min.into());
        r.insert("round_trip_ns_mean".into(), (s.mean * m.ns_per_cycle()).into());
        r.insert("round_trip_ns_std".into(), (s.std * m.ns_per_cycle()).into());
        r.insert("ratio_to_none".into(), none.map(|n| s.mean / n).into());
        let extra = none.map(|n| (s.mean - n) / 2.0);
        r.insert("extra_cycles_per_call".into(), extra.into());
        r.insert("xchg_cycles".into(), xchg.into());
        r.insert("extra_per_xchg".into(), extra.zip(xchg).map(|(e, x)| e / x).into());
        records.push(r);
    }
    let mut extra = String::new();
    for (i, regime) in regimes.iter().enumerate() {
        if let Some(p) = &profiles[i] {
            extra.push_str(&format!("== lock profile: {regime} (last run) ==\n{}\n", freebsd_table(p)));
            if a.common.format != Format::Table {
                records.extend(profile_records(regime, p));
            }
        }
    }
    emit(a.common.format, &records, &extra)?;
    Ok(())
}
