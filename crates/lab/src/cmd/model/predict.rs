//! `granule model predict`: what the machine-repairman model says for a
//! service time `s`, a think time `a` and a range of cores.
//!
//! One `model_predict` record per core count (`cores, throughput,
//! lock_utilisation, queue_length, waiting, response_time, p0, speedup`, and
//! `throughput_per_sec` with `--ghz`), then one `model_knee` record: the
//! saturation point `n* = 1 + a/s` and the bound `1/s`. `--service-dist
//! const` uses the exact constant-service model instead of the seeds'
//! exponential one.

use std::borrow::Cow;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args as ClapArgs;
use granule_model::{knee, FiniteSource, Repairman, ServiceLaw, Solution};
use serde::{Deserialize, Serialize};

use super::Law;
use crate::bounds::Counts;
use crate::machine::Machine;
use crate::output::{emit, Record};
use crate::plot::{Chart, Figure, Series};

/// Options of `granule model predict`.
#[derive(Clone, Debug, ClapArgs)]
pub struct Args {
    #[command(flatten)]
    pub common: crate::cmd::Common,
    /// Mean lock service (hold) time s, in cycles (0 < s ≤ 10^12).
    #[arg(long, value_parser = crate::bounds::positive_cycles())]
    pub service: f64,
    /// Mean think time a between a core's lock requests, in cycles
    /// (0 ≤ a ≤ 10^12).
    #[arg(long, value_parser = crate::bounds::cycles())]
    pub delay: f64,
    /// Core counts: a range `1..N` or a list `1,2,4`, each 1..=4096.
    #[arg(long, default_value = "1..32", value_parser = crate::bounds::counts(super::MAX_MODEL_CORES))]
    pub cores: Counts,
    /// Clock rate in GHz (0 < f ≤ 100): adds throughput per second.
    #[arg(long, value_parser = crate::bounds::ghz())]
    pub ghz: Option<f64>,
    /// Service-time law: exp (the seeds' M/M/1//n) or const (exact M/D/1//n).
    #[arg(long, value_enum, default_value_t = Law::Exp)]
    pub service_dist: Law,
    /// Write an SVG plot of throughput against cores to this file.
    #[arg(long)]
    pub plot: Option<PathBuf>,
}

/// The model's solution for `n` cores.
pub fn solve(n: usize, s: f64, a: f64, law: ServiceLaw) -> Result<Solution> {
    Ok(match law {
        ServiceLaw::Exponential => Repairman::new(n, s, a)?.solve(),
        ServiceLaw::Constant => FiniteSource::new(n, s, a, law)?.solve(),
    })
}

/// Run `granule model predict`.
pub fn run(a: &Args) -> Result<()> {
    // --service, --delay and --ghz are bounded by their parsers.
    let (s, d) = (a.service, a.delay);
    let per_sec = a.ghz.map(|g| g * 1e9);
    let cores = a.cores.0.clone();
    let law: ServiceLaw = a.service_dist.into();
    let mut records = vec![Machine::detect().record()];
    let one = solve(1, s, d, law)?.throughput;
    let mut curve = Vec::with_capacity(cores.len());
    for &n in &cores {
        let sol = solve(n, s, d, law)?;
        let r = PredictRecord {
            service_dist: Cow::Borrowed(law.name()),
            cores: n,
            throughput: sol.throughput,
            throughput_per_sec: per_sec.map(|f| sol.throughput * f),
            lock_utilisation: sol.utilisation,
            queue_length: sol.queue_length,
            waiting: sol.waiting,
            response_time: sol.response_time,
            p0: sol.p0,
            speedup: sol.throughput / one,
        };
        records.push(r.to_map());
        curve.push((n as f64, sol.throughput * per_sec.unwrap_or(1.0)));
    }
    let k = PredictKnee {
        service: s,
        delay: d,
        knee_cores: knee(s, d),
        max_throughput: 1.0 / s,
        max_throughput_per_sec: per_sec.map(|f| 1.0 / s * f),
    };
    records.push(k.to_map());
    if let Some(path) = &a.plot {
        let chart = Chart {
            title: format!("machine-repairman model ({}): s = {s}, a = {d}, knee {:.1} cores", law.name(), knee(s, d)),
            x_label: "cores".into(),
            y_label: if per_sec.is_some() { "lock acquisitions per second" } else { "lock acquisitions per cycle" }
                .into(),
            series: vec![Series { style: 0, label: format!("model, a = {d}"), points: curve, line: true, colour: 0 }],
        };
        Figure { charts: vec![chart] }.write(path)?;
    }
    emit(a.common.format, &records, "")?;
    Ok(())
}

/// `model_predict`: the model's solution for one core count. Times are in
/// the unit of `--service` (cycles); throughput is critical sections per
/// that unit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PredictRecord {
    /// Service-time law: `exp` or `const`.
    pub service_dist: Cow<'static, str>,
    /// Cores.
    pub cores: usize,
    /// Lock throughput, critical sections per cycle.
    pub throughput: f64,
    /// The same per second (with `--ghz`, else null).
    pub throughput_per_sec: Option<f64>,
    /// Fraction of time the lock is held.
    pub lock_utilisation: f64,
    /// Mean cores waiting for or holding the lock.
    pub queue_length: f64,
    /// Mean cores waiting, not holding.
    pub waiting: f64,
    /// Mean time from asking for the lock to releasing it, cycles.
    pub response_time: f64,
    /// Probability that no core waits for or holds the lock.
    pub p0: f64,
    /// Throughput over one core's.
    pub speedup: f64,
}

impl Record for PredictRecord {
    const KIND: &'static str = "model_predict";
}

/// `model_knee` of `granule model predict`: where the big lock saturates.
/// (`granule model fit` writes its own `model_knee`, per fitted delay.)
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PredictKnee {
    /// Mean service time s, cycles.
    pub service: f64,
    /// Mean think time a, cycles.
    pub delay: f64,
    /// The saturation point `n* = 1 + a/s`, cores.
    pub knee_cores: f64,
    /// The bound `1/s`, critical sections per cycle.
    pub max_throughput: f64,
    /// The same per second (with `--ghz`, else null).
    pub max_throughput_per_sec: Option<f64>,
}

impl Record for PredictKnee {
    const KIND: &'static str = "model_knee";
}
