//! `granule scale`: multicore ping-pong (the seeds' §5.1.2 and Figure 4).
//!
//! One independent ping-pong pair per core — disjoint endpoints, reply
//! objects and threads — with an exponentially distributed busy delay of mean
//! `--delays` cycles between the server's receive and its reply. For every
//! (regime, cores, delay) a fresh machine runs `--warmup` seconds, then the
//! total round trips of all pairs are counted over a `--seconds` window
//! (the seeds: 2 s warm-up, 1 s sample). Each core's utilisation over the
//! window comes from its idle loop's cycle accounting; `xput` is throughput
//! divided by mean utilisation, the seeds' measure of work per busy core.
//!
//! With no lock (`none`) the pairs never contend and throughput scales with
//! cores; with the big lock every kernel entry of every core queues on one
//! lock, which is what the queueing model predicts. `--fit` fits that model
//! to the big-lock regimes' points (`granule model fit`, whose options it
//! takes), and runs each of them once more with the lock profiler compiled
//! in, at 1 core and at the most cores, so that the average hold time is
//! printed beside the fitted service time (`lock_hold` records).
//!
//! `--hold-times` runs each big-lock regime measured once more with the
//! lock profiler compiled in, at every measured core count and the smallest
//! delay (short windows), and writes its average hold time per acquisition
//! (`lock_hold` records): the service times the model's prediction band is
//! drawn between (Elphinstone et al. 2016, Figure 4b, measured them so).
//!
//! After the points, one `scale_speedup` record per regime, delay and core
//! count above one ([`speedup`]): the median over the runs against the same
//! regime's on one core, with `none`'s speedup beside it when `none` was
//! measured, the most this machine's cores give a path without a lock.
//!
//! `--lock-stats` runs every point with the lock profiler compiled in (records
//! say `profiled: true`; the throughput then includes the profiler's cost)
//! and adds to each `scale` record what the profile saw over the whole run
//! (warm-up included): lock acquisitions and contended ones, and for `rtm`
//! the transactions started, the aborts, `abort_rate` (aborts per
//! transaction; null without transactions) and the fallbacks to the lock.

pub(crate) mod records;
pub(crate) mod speedup;

use std::borrow::Cow;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Args as ClapArgs;

use self::records::{LockHold, ScaleRecord, WindowProfile};
use super::ipc::{measure, PingSpec};
use super::model::fit::{data_from, fit_records, FitArgs, BIG_LOCK_REGIMES};
use crate::bounds::Counts;
use crate::machine::Machine;
use crate::output::{emit, Format, Record};
use crate::progress;
use crate::regimes::{runnable, selected};
use granule_hosted::granule_kernel::abi::MAX_CORES;

/// Options of `granule scale`.
#[derive(Clone, Debug, ClapArgs)]
pub struct Args {
    #[command(flatten)]
    pub common: super::Common,
    /// Regimes to measure (comma-separated), or all.
    #[arg(long, value_delimiter = ',', default_value = "all", value_parser = crate::regimes::parser(crate::regimes::REGIMES, &[], true))]
    pub regimes: Vec<String>,
    /// Core counts: a range `1..N` (inclusive) or a list `1,2,4`, each at
    /// most this machine's CPUs (and the kernel's 64); default 1..(CPUs of
    /// this machine).
    #[arg(long, value_parser = crate::bounds::counts(MAX_CORES))]
    pub cores: Option<Counts>,
    /// Mean server delays in cycles (comma-separated), each 0..=10^9.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "0,500,1000,2000,4000,8000,16000,32000",
        value_parser = crate::bounds::int::<u64>(0, 1_000_000_000)
    )]
    pub delays: Vec<u64>,
    /// Warm-up before each window, in seconds (0 ≤ s ≤ 3600).
    #[arg(long, default_value_t = 2.0, value_parser = crate::bounds::warmup())]
    pub warmup: f64,
    /// Length of each measured window, in seconds (0 < s ≤ 3600). A window
    /// in which no round trip completed (a loaded machine) is extended, a
    /// window's length at a time, for up to 10 s; `window_s` says how long
    /// it lasted.
    #[arg(long, default_value_t = 1.0, value_parser = crate::bounds::seconds())]
    pub seconds: f64,
    /// Repetitions of every (regime, cores, delay) point, 1..=1000.
    #[arg(long, default_value_t = 1, value_parser = crate::bounds::runs::<usize>())]
    pub runs: usize,
    /// Message words per call, 0..=64.
    #[arg(long, default_value_t = 1, value_parser = crate::bounds::message_words())]
    pub words: usize,
    /// Fit the machine-repairman model to the big-lock regimes' points
    /// (see `granule model fit`), run each of them once more with the lock
    /// profiler at 1 and at the most cores for its average hold time, and
    /// print s, a, R² and the predicted knee.
    #[arg(long)]
    pub fit: bool,
    #[command(flatten)]
    pub fit_args: FitArgs,
    /// Profile each big-lock regime once more at every measured core count
    /// (smallest delay, short window) and write its average lock hold time
    /// per acquisition (`lock_hold` records), for the model's prediction band.
    #[arg(long)]
    pub hold_times: bool,
    /// Run every point with the lock profiler compiled in and report its
    /// acquisitions, and for rtm its transactions, aborts and abort rate.
    #[arg(long)]
    pub lock_stats: bool,
}

/// Run `granule scale`.
pub fn run(a: &Args) -> Result<()> {
    let wanted = selected(&a.regimes)?;
    if a.fit_args.plot.is_some() && !a.fit {
        bail!("--plot draws the fitted model: it needs --fit");
    }
    if let Some(r) = a.fit_args.regime.as_deref().filter(|r| !wanted.contains(r)) {
        bail!("--regime {r} is not among the regimes measured ({})", wanted.join(", "));
    }
    let m = Machine::detect();
    let mut records = vec![m.record()];
    let regimes = runnable(&wanted, &mut records);
    if regimes.is_empty() {
        bail!("none of the selected regimes can run on this machine");
    }
    let cores = match &a.cores {
        Some(c) => c.0.clone(),
        None => (1..=m.cores).collect(),
    };
    if a.delays.is_empty() {
        bail!("--delays needs at least one delay");
    }
    if let Some(&n) = cores.iter().find(|&&n| n > m.cores) {
        bail!(
            "{n} cores: this machine has {} CPUs, and a hosted kernel core needs a CPU of its own (two pinned \
             to one CPU spin against each other and the second never starts); use `granule model` for larger \
             machines",
            m.cores
        );
    }
    // Both are bounded by their parsers (bounds::seconds, bounds::warmup).
    let (window, warmup) = (Duration::from_secs_f64(a.seconds), Duration::from_secs_f64(a.warmup));
    let total = (a.runs * a.delays.len() * cores.len() * regimes.len()) as u64;
    let pb = progress::bar(total, "scale");
    let mut points = Vec::new();
    for run in 1..=a.runs {
        for &delay in &a.delays {
            for &n in &cores {
                for &regime in &regimes {
                    pb.set_message(format!("{regime} {n} cores delay {delay}"));
                    let spec = PingSpec {
                        cores: n,
                        delay_mean_cycles: delay as f64,
                        words: a.words,
                        warmup,
                        window,
                        profile: a.lock_stats,
                    };
                    let r = measure(regime, &spec)
                        .with_context(|| format!("{regime}, {n} cores, delay {delay}, run {run}"))?;
                    let w = &r.window;
                    let secs = w.cycles as f64 / m.tsc_hz;
                    let rate = w.round_trips as f64 / secs;
                    let util = w.utilisation.iter().sum::<f64>() / w.utilisation.len().max(1) as f64;
                    let rec = ScaleRecord {
                        regime: Cow::Borrowed(regime),
                        cores: n,
                        delay_cycles: delay,
                        run,
                        round_trips_per_sec: rate,
                        per_core_per_sec: rate / n as f64,
                        utilisation: util,
                        utilisation_per_core: w
                            .utilisation
                            .iter()
                            .map(|u| format!("{u:.3}"))
                            .collect::<Vec<_>>()
                            .join(" "),
                        xput: if util > 0.0 { rate / util } else { 0.0 },
                        window_s: secs,
                        profiled: a.lock_stats.then_some(regime != "none"),
                        profile: a.lock_stats.then(|| WindowProfile::of(r.profile.as_deref().unwrap_or_default())),
                        platform: None,
                    };
                    records.push(rec.to_map());
                    points.push(rec);
                    pb.inc(1);
                }
            }
        }
    }
    pb.finish_and_clear();
    records.extend(speedup::speedups(&points).iter().map(Record::to_map));
    if a.fit || a.hold_times {
        let spec = PingSpec {
            cores: 1,
            delay_mean_cycles: a.delays.iter().copied().min().unwrap_or(0) as f64,
            words: a.words,
            warmup: warmup.min(Duration::from_millis(200)),
            window: window.min(Duration::from_millis(300)),
            profile: true,
        };
        let profiled = regimes.iter().filter(|r| {
            BIG_LOCK_REGIMES.contains(r) && (a.hold_times || a.fit_args.regime.as_deref().map_or(true, |f| f == **r))
        });
        let mut at: Vec<usize> = if a.hold_times {
            cores.clone()
        } else {
            let max = cores.iter().copied().max().unwrap_or(1);
            vec![1, max]
        };
        if !at.contains(&1) {
            at.push(1);
        }
        at.sort_unstable();
        at.dedup();
        let profiled: Vec<&&str> = profiled.collect();
        let pb = progress::bar((profiled.len() * at.len()) as u64, "lock hold times");
        for regime in profiled {
            for &n in &at {
                pb.set_message(format!("{regime} {n} cores, profiled"));
                let spec = PingSpec { cores: n, ..spec.clone() };
                let r = measure(regime, &spec).with_context(|| format!("{regime}, profiled run on {n} cores"))?;
                records.push(LockHold::new(regime, &spec, r.profile.as_deref().unwrap_or_default()).to_map());
                pb.inc(1);
            }
        }
        pb.finish_and_clear();
    }
    if a.fit {
        let fits = data_from(&crate::input::located("granule scale", &records), a.fit_args.locks_per_round_trip, None)
            .and_then(|data| fit_records(&data, &a.fit_args, a.common.format, None));
        match fits {
            Ok((fits, figure)) => {
                records.extend(fits);
                if let Some(path) = &a.fit_args.plot {
                    figure.write(path)?;
                }
            }
            Err(e) => {
                emit(a.common.format, &records, "")?;
                return Err(e.context("fitting the model"));
            }
        }
    }
    let note = if (a.fit || a.hold_times) && a.common.format == Format::Table {
        "lock_hold: average hold time per acquisition from separate short runs with the lock profiler compiled in \
         (its own cost included), beside the fitted s in model_fit (profiled_hold_*).\n"
    } else {
        ""
    };
    emit(a.common.format, &records, note)?;
    Ok(())
}
