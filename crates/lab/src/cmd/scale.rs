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
//! lock, which is what the queueing model predicts.

use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Args as ClapArgs;

use super::ipc::{measure, secs, PingSpec};
use crate::machine::Machine;
use crate::output::{emit, record};
use crate::progress;
use crate::regimes::{runnable, selected};

/// Options of `granule scale`.
#[derive(Clone, Debug, ClapArgs)]
pub struct Args {
    #[command(flatten)]
    pub common: super::Common,
    /// Regimes to measure (comma-separated): none, bkl (CLH), bkl-ticket,
    /// bkl-mcs, fine, rtm, or all.
    #[arg(long, value_delimiter = ',', default_value = "all")]
    pub regimes: Vec<String>,
    /// Core counts: a range `1..N` (inclusive) or a list `1,2,4`; default
    /// 1..(CPUs of this machine).
    #[arg(long)]
    pub cores: Option<String>,
    /// Mean server delays in cycles (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "0,500,1000,2000,4000,8000,16000,32000")]
    pub delays: Vec<u64>,
    /// Warm-up before each window, in seconds.
    #[arg(long, default_value_t = 2.0)]
    pub warmup: f64,
    /// Length of each measured window, in seconds.
    #[arg(long, default_value_t = 1.0)]
    pub seconds: f64,
    /// Repetitions of every (regime, cores, delay) point.
    #[arg(long, default_value_t = 1)]
    pub runs: usize,
    /// Message words per call.
    #[arg(long, default_value_t = 1)]
    pub words: usize,
}

/// Parse `1..N` (inclusive) or `a,b,c`.
pub fn parse_cores(s: &str) -> Result<Vec<usize>> {
    let s = s.trim();
    let out: Vec<usize> = if let Some((lo, hi)) = s.split_once("..") {
        let lo: usize = lo.trim().parse().with_context(|| format!("bad core range `{s}`"))?;
        let hi: usize = hi.trim().trim_start_matches('=').parse().with_context(|| format!("bad core range `{s}`"))?;
        (lo..=hi).collect()
    } else {
        s.split(',')
            .map(|x| x.trim().parse::<usize>())
            .collect::<Result<_, _>>()
            .with_context(|| format!("bad core list `{s}`"))?
    };
    if out.is_empty() || out.contains(&0) {
        bail!("--cores needs positive core counts, e.g. 1..2 or 1,2");
    }
    if let Some(&c) = out.iter().find(|&&c| c > granule_hosted::granule_kernel::abi::MAX_CORES) {
        bail!("{c} cores: the kernel supports at most {}", granule_hosted::granule_kernel::abi::MAX_CORES);
    }
    Ok(out)
}

/// Run `granule scale`.
pub fn run(a: &Args) -> Result<()> {
    let wanted = selected(&a.regimes)?;
    let m = Machine::detect();
    let mut records = vec![m.record()];
    let regimes = runnable(&wanted, &mut records);
    if regimes.is_empty() {
        bail!("none of the selected regimes can run on this machine");
    }
    let cores = match &a.cores {
        Some(s) => parse_cores(s)?,
        None => (1..=m.cores).collect(),
    };
    if a.delays.is_empty() {
        bail!("--delays needs at least one delay");
    }
    if a.runs == 0 {
        bail!("--runs must be at least 1");
    }
    let window = secs("seconds", a.seconds)?;
    if window.is_zero() {
        bail!("--seconds must be positive");
    }
    let warmup: Duration = secs("warmup", a.warmup)?;
    let total = (a.runs * a.delays.len() * cores.len() * regimes.len()) as u64;
    let pb = progress::bar(total, "scale");
    for run in 1..=a.runs {
        for &delay in &a.delays {
            for &n in &cores {
                for regime in &regimes {
                    pb.set_message(format!("{regime} {n} cores delay {delay}"));
                    let spec = PingSpec {
                        cores: n,
                        delay_mean_cycles: delay as f64,
                        words: a.words,
                        warmup,
                        window,
                        profile: false,
                    };
                    let r = measure(regime, &spec)
                        .with_context(|| format!("{regime}, {n} cores, delay {delay}, run {run}"))?;
                    let w = &r.window;
                    let secs = w.cycles as f64 / m.tsc_hz;
                    let rate = w.round_trips as f64 / secs;
                    let util = w.utilisation.iter().sum::<f64>() / w.utilisation.len().max(1) as f64;
                    let mut rec = record("scale");
                    rec.insert("regime".into(), (*regime).into());
                    rec.insert("cores".into(), n.into());
                    rec.insert("delay_cycles".into(), delay.into());
                    rec.insert("run".into(), run.into());
                    rec.insert("round_trips_per_sec".into(), rate.into());
                    rec.insert("per_core_per_sec".into(), (rate / n as f64).into());
                    rec.insert("utilisation".into(), util.into());
                    rec.insert(
                        "utilisation_per_core".into(),
                        w.utilisation.iter().map(|u| format!("{u:.3}")).collect::<Vec<_>>().join(" ").into(),
                    );
                    rec.insert("xput".into(), if util > 0.0 { rate / util } else { 0.0 }.into());
                    rec.insert("window_s".into(), secs.into());
                    records.push(rec);
                    pb.inc(1);
                }
            }
        }
    }
    pb.finish_and_clear();
    emit(a.common.format, &records, "")?;
    Ok(())
}
