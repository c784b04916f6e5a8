//! `granule model predict`: what the machine-repairman model says for a
//! service time `s`, a think time `a` and a range of cores.
//!
//! One `model_predict` record per core count (`cores, throughput,
//! lock_utilisation, queue_length, waiting, response_time, p0, speedup`, and
//! `throughput_per_sec` with `--ghz`), then one `model_knee` record: the
//! saturation point `n* = 1 + a/s` and the bound `1/s`. `--service-dist
//! const` uses the exact constant-service model instead of the seeds'
//! exponential one.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args as ClapArgs;
use granule_model::{knee, FiniteSource, Repairman, ServiceLaw, Solution};

use super::{put, put_scaled, Law};
use crate::bounds::Counts;
use crate::machine::Machine;
use crate::output::{emit, record};
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
        let mut r = record("model_predict");
        put(&mut r, "service_dist", law.name());
        put(&mut r, "cores", n);
        put(&mut r, "throughput", sol.throughput);
        put_scaled(&mut r, "throughput_per_sec", Some(sol.throughput), per_sec);
        put(&mut r, "lock_utilisation", sol.utilisation);
        put(&mut r, "queue_length", sol.queue_length);
        put(&mut r, "waiting", sol.waiting);
        put(&mut r, "response_time", sol.response_time);
        put(&mut r, "p0", sol.p0);
        put(&mut r, "speedup", sol.throughput / one);
        records.push(r);
        curve.push((n as f64, sol.throughput * per_sec.unwrap_or(1.0)));
    }
    let mut k = record("model_knee");
    put(&mut k, "service", s);
    put(&mut k, "delay", d);
    put(&mut k, "knee_cores", knee(s, d));
    put(&mut k, "max_throughput", 1.0 / s);
    put_scaled(&mut k, "max_throughput_per_sec", Some(1.0 / s), per_sec);
    records.push(k);
    if let Some(path) = &a.plot {
        let chart = Chart {
            title: format!("machine-repairman model ({}): s = {s}, a = {d}, knee {:.1} cores", law.name(), knee(s, d)),
            x_label: "cores".into(),
            y_label: if per_sec.is_some() { "lock throughput / s" } else { "lock throughput / cycle" }.into(),
            series: vec![Series { label: format!("model, a = {d}"), points: curve, line: true, colour: 0 }],
        };
        Figure { charts: vec![chart] }.write(path)?;
    }
    emit(a.common.format, &records, "")?;
    Ok(())
}
